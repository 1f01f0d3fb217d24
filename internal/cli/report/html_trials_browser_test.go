package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/testutil/browser"
)

// clickRow searches for text and opens the first case row, which must be id's.
func clickRow(t *testing.T, b *browser.Browser, text, id string) {
	t.Helper()
	browser.Eval[bool](t, b, setText(text))
	b.Poll(t, fmt.Sprintf(`document.querySelector("#case-rows tr.case") && document.querySelector("#case-rows tr.case").dataset.id === %q`, id))
	browser.Eval[bool](t, b, `(document.querySelector("#case-rows tr.case").click(), true)`)
	b.Poll(t, `document.querySelector("tr.detail")`)
}

// TestHTMLReportTrialsInBrowser opens the report of a run of three trials per case against a baseline under the
// Paired test: the intervals in the header, a row of trial marks per case, the flaky flag and filter, the trials
// column's sort, each trial's answer and verdicts in a case's detail, the Paired test, and hostile answers of a
// trial shown as text with no dialog and a clean console.
func TestHTMLReportTrialsInBrowser(t *testing.T) {
	b := browser.Start(t, 1280, 1000)
	run, lines := trialRun()
	url, _ := writeReport(t, HTMLInput{Run: run, Lines: lines, Baseline: pairedBaseline(run), Generated: time.Now(),
		Cases: map[string]CaseText{"case-b": {Input: "question b", Expected: "REVIEW"}, "hostile-0": {Input: hostile[1], Expected: hostile[2]}}})
	b.Open(t, url)
	b.Poll(t, `document.body.dataset.ready === "true"`)

	for sel, want := range map[string]string{
		"#pass-rate-ci":             "95% CI 0.0968 to 0.7000 (Wilson)",
		"#mean-score-ci":            "95% CI 0.4167 to 1.0000 (bootstrap)",
		"#pass-at-n":                "0.5000",
		"#pass-hat-n":               "0.3333",
		"#flaky-card .value":        "1",
		"#paired-p-value":           "0.062500",
		"#paired-pass-rate":         "0.4444 (baseline 1.0000): change -0.5556, 95% CI -0.8889 to -0.1667",
		`[data-count="worseCases"]`: "4",
	} {
		if got := browser.Eval[string](t, b, fmt.Sprintf(`document.querySelector(%q).textContent`, sel)); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	heads := browser.Eval[[]string](t, b, `Array.from(document.querySelectorAll("#case-table thead th")).map(th => th.textContent)`)
	if diff := cmp.Diff([]string{"#", "Case", "Verdict", "Trials", "Score", "Δ vs nightly-base", "Evaluators", "Message"}, heads); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if got := browser.Eval[int](t, b, rows); got != 11 {
		t.Errorf("%d rows, want a row per case (11), not one per trial", got)
	}
	// Failing first: case-b, its trials passed, failed, passed; flaky.
	first := browser.Eval[[]string](t, b, `Array.from(document.querySelectorAll("#case-rows tr.case")[0].children).map(td => td.textContent)`)
	if diff := cmp.Diff([]string{"1", "case-bnewly failingflaky", "Fail", "✓✗✓ 2/3", "0.8333", "-0.1667", "decision=2/3", "trial 2 of 3: decision: decision: want REVIEW"}, first); diff != "" {
		t.Errorf("case-b's row (-want +got):\n%s", diff)
	}
	marks := browser.Eval[string](t, b, `Array.from(document.querySelectorAll('#case-rows tr.case[data-id="case-c"] .mk')).map(m => m.dataset.o + ":" + m.title).join(" | ")`)
	if want := "Error:trial 1: Error | Error:trial 2: Error | Missing:trial 3: Missing"; marks != want {
		t.Errorf("case-c's marks %q, want %q", marks, want)
	}

	// The flaky filter, alone and with a verdict.
	browser.Eval[bool](t, b, `(document.getElementById("f-flaky").click(), true)`)
	if got := browser.Eval[string](t, b, `document.getElementById("shown").textContent`); !strings.Contains(got, "of 6 matching cases (11 stored)") {
		t.Errorf("flaky only: %q, want 6 matching", got)
	}
	browser.Eval[bool](t, b, setSelect("f-verdict", "Pass"))
	if got := browser.Eval[int](t, b, rows); got != 0 {
		t.Errorf("%d flaky passing rows, want 0", got)
	}
	browser.Eval[bool](t, b, setSelect("f-verdict", ""))
	browser.Eval[bool](t, b, `(document.getElementById("f-flaky").click(), true)`)
	browser.Eval[bool](t, b, setSelect("f-verdict", "Error"))
	if got := browser.Eval[int](t, b, rows); got != 2 {
		t.Errorf("%d rows with verdict Error, want 2 (case-c and the missing case-d)", got)
	}
	browser.Eval[bool](t, b, setSelect("f-verdict", ""))

	// Sorted by trials passed, fewest first.
	browser.Eval[bool](t, b, `(document.querySelector('#case-table th[data-sort="trials"]').click(), true)`)
	order := browser.Eval[[]string](t, b, `Array.from(document.querySelectorAll("#case-rows tr.case")).map(tr => tr.dataset.id)`)
	if diff := cmp.Diff([]string{"case-f", "case-c", "case-d", "case-b", "hostile-0", "hostile-1", "hostile-2", "hostile-3", "hostile-4", "case-e", "case-a"}, order); diff != "" {
		t.Errorf("sorted by trials (-want +got):\n%s", diff)
	}

	// A trial's answer is found by the text search and shown in the case's detail, the failing trial open.
	clickRow(t, b, "b2", "case-b")
	detail := browser.Eval[string](t, b, `document.querySelector("tr.detail").textContent`)
	for _, want := range []string{"Fail over 3 trials: 2 passed, 1 failed; mean score 0.8333", "flaky: its trials disagree",
		"question b", "REVIEW", "Trial 1: Pass", "Trial 2: Fail", "b1", "b2", "b3", "decision: want REVIEW"} {
		if !strings.Contains(detail, want) {
			t.Errorf("case-b's detail does not show %q: %s", want, detail)
		}
	}
	open := browser.Eval[[]string](t, b, `Array.from(document.querySelectorAll("tr.detail details.trial")).map(d => d.dataset.trial + "=" + d.open)`)
	if diff := cmp.Diff([]string{"1=false", "2=true", "3=false"}, open); diff != "" {
		t.Errorf("open trials (-want +got):\n%s", diff)
	}
	// A trial without a stored result says so.
	browser.Eval[bool](t, b, `(document.querySelector("#case-rows tr.case").click(), true)`)
	clickRow(t, b, "case-c", "case-c")
	if got := browser.Eval[string](t, b, `document.querySelector('tr.detail details.trial[data-trial="3"]').textContent`); !strings.Contains(got, "no stored result") {
		t.Errorf("case-c's third trial: %q", got)
	}
	browser.Eval[bool](t, b, `(document.querySelector("#case-rows tr.case").click(), true)`)

	// The hostile trial: every text shown as text, nothing became markup.
	clickRow(t, b, "hostile-0", "hostile-0")
	browser.Eval[bool](t, b, `(document.querySelectorAll("tr.detail details.trial").forEach(d => d.open = true), true)`)
	detail = browser.Eval[string](t, b, `document.querySelector("tr.detail").textContent`)
	for _, want := range []string{hostile[0], hostile[1], hostile[2], "carried from " + hostile[0]} {
		if !strings.Contains(detail, want) {
			t.Errorf("the hostile case's detail does not show %q: %s", want, detail)
		}
	}
	if n := browser.Eval[int](t, b, `document.querySelectorAll("img, a[href], iframe").length`); n != 0 {
		t.Errorf("%d img, a or iframe elements: runner text became markup", n)
	}
	if n := browser.Eval[int](t, b, `document.scripts.length`); n != 2 {
		t.Errorf("%d script elements, want the page's 2", n)
	}
	b.Screenshot(t, "report-trials")
	b.Clean(t)
}
