package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/browser"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// writeReport renders in into a file of the test's and returns its file:// URL and size.
func writeReport(t *testing.T, in HTMLInput) (string, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, in); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return "file://" + path, st.Size()
}

// rows is how many case rows the table has in the DOM.
const rows = `document.querySelectorAll("#case-rows tr.case").length`

// setSelect chooses a value of a select and fires its change event.
func setSelect(id, value string) string {
	return fmt.Sprintf(`(function(){var s=document.getElementById(%q); s.value=%q; s.dispatchEvent(new Event("change")); return true})()`, id, value)
}

// setText types into the text filter (the input event; the page waits 150 ms before filtering).
func setText(value string) string {
	return fmt.Sprintf(`(function(){var s=document.getElementById("f-text"); s.value=%q; s.dispatchEvent(new Event("input")); return true})()`, value)
}

// TestHTMLReportInBrowser opens a report in chromium: the counts, the verdict, evaluator and text filters, a case
// opened to its evaluators, and runner answers that are markup and script shown as text, with no dialog and a
// console free of errors (the CSP refusing the inline script would be one).
func TestHTMLReportInBrowser(t *testing.T) {
	b := browser.Start(t, 1280, 1000)
	lines := sampleLines()
	for i, h := range hostile {
		lines = append(lines, &results.Line{CaseResult: verdict.CaseResult{ID: fmt.Sprintf("hostile-%d", i), Verdict: verdict.VerdictFail,
			Evaluators: []verdict.EvaluatorResult{{Name: "judge", Type: "llm_judge", Verdict: verdict.VerdictFail, Misses: []string{h}, Reasoning: h}}},
			Answer: h})
	}
	run := reportRun(lines)
	run.Status.Summary = &evalsv1alpha1.RunSummary{Total: 10, Passed: 1, Failed: 6, Errored: 2, Skipped: 1, Missing: 1, PassRate: "0.1000", MeanScore: "0.2500"}
	run.Status.Cost = &evalsv1alpha1.RunCost{
		Runner: &evalsv1alpha1.RunnerCost{Cases: 10, CostCases: 3, CostUSD: "1.2", TokenUsageCases: 10, TotalTokens: 550, InputTokens: 500, OutputTokens: 50},
		Judges: &evalsv1alpha1.JudgeUsage{Calls: 2, TotalTokens: 300, PromptTokens: 200, CompletionTokens: 100},
	}
	long := strings.Repeat("long answer ", 20_000)
	lines[0].Answer = long
	url, _ := writeReport(t, HTMLInput{Run: run, Lines: lines, Generated: time.Now(), MaxTextBytes: 10 * minCaseText,
		Cases: map[string]CaseText{"hostile-0": {Input: hostile[1], Expected: hostile[2]}}})
	b.Open(t, url)
	b.Poll(t, `document.body.dataset.ready === "true"`)

	if got := browser.Eval[string](t, b, `document.querySelector('[data-count="failed"]').textContent`); got != "6" {
		t.Errorf("failed count %q, want 6", got)
	}
	if got := browser.Eval[int](t, b, rows); got != 10 {
		t.Errorf("%d rows, want every case (10)", got)
	}
	// The cost section, as the browser shows it.
	for _, want := range []string{"1.2 USD (3 of 10 cases)", "2 requests; 300 tokens: 200 prompt, 100 completion"} {
		if !browser.Eval[bool](t, b, fmt.Sprintf("document.body.innerText.includes(%q)", want)) {
			t.Errorf("the page does not show %q", want)
		}
	}
	if got := browser.Eval[string](t, b, `document.querySelector("#case-rows tr.case td:nth-child(3)").textContent`); got != "Fail" {
		t.Errorf("first row's verdict %q, want Fail (failing first)", got)
	}
	browser.Eval[bool](t, b, setSelect("f-verdict", "Error"))
	if got := browser.Eval[int](t, b, rows); got != 2 {
		t.Errorf("%d rows with verdict Error, want 2 (the error and the missing case)", got)
	}
	browser.Eval[bool](t, b, setSelect("f-verdict", ""))
	browser.Eval[bool](t, b, setSelect("f-evaluator", "policy"))
	if got := browser.Eval[int](t, b, rows); got != 1 {
		t.Errorf("%d rows judged by policy, want 1", got)
	}
	browser.Eval[bool](t, b, setSelect("f-evaluator", ""))
	browser.Eval[bool](t, b, setText("</SCRIPT>"))
	b.Poll(t, rows+` === 1`)
	if got := browser.Eval[string](t, b, `document.querySelector("#case-rows tr.case").dataset.id`); got != "hostile-0" {
		t.Errorf("the text filter kept %q, want hostile-0", got)
	}

	// The hostile case opens to its input, answer, expected answer and evaluator, all as text.
	browser.Eval[bool](t, b, `(document.querySelector("#case-rows tr.case").click(), true)`)
	b.Poll(t, `document.querySelector("tr.detail")`)
	detail := browser.Eval[string](t, b, `document.querySelector("tr.detail").textContent`)
	for _, want := range []string{hostile[0], hostile[1], hostile[2], "judge", "Misses:", "Runner's answer", "Expected answer"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the opened case does not show %q: %s", want, detail)
		}
	}
	if n := browser.Eval[int](t, b, `document.querySelectorAll("img, a[href], iframe").length`); n != 0 {
		t.Errorf("%d img, a or iframe elements: runner text became markup", n)
	}
	if n := browser.Eval[int](t, b, `document.scripts.length`); n != 2 {
		t.Errorf("%d script elements, want the page's 2", n)
	}

	// A cut text says so.
	browser.Eval[bool](t, b, setText("case-001"))
	b.Poll(t, `document.querySelector("#case-rows tr.case").dataset.id === "case-001"`)
	browser.Eval[bool](t, b, `(document.querySelector("#case-rows tr.case").click(), true)`)
	b.Poll(t, `document.querySelector("tr.detail .cut")`)
	if got := browser.Eval[string](t, b, `document.querySelector("tr.detail .cut").textContent`); !strings.Contains(got, "240,000 bytes") {
		t.Errorf("the cut mark %q does not give the answer's length %d", got, len(long))
	}
	if !strings.Contains(browser.Eval[string](t, b, `document.getElementById("cut-note").textContent`), "1 cases") {
		t.Error("the summary does not say how many cases were cut")
	}
	b.Screenshot(t, "report-sample")
	b.Clean(t)
}

// TestHTMLReportChartInBrowser: a schedule's kept runs are a chart with a point per run and series.
func TestHTMLReportChartInBrowser(t *testing.T) {
	b := browser.Start(t, 1280, 900)
	s := &evalsv1alpha1.EvalSchedule{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "evals"}}
	s.Spec.Schedule = "0 2 * * *"
	var history []KeptRun
	// Listed newest first: the chart orders them by time.
	for i, rate := range []string{"0.2500", "1.0000", "0.7500", "0.5000"} {
		r := &evalsv1alpha1.EvalRun{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("nightly-%d", 3-i), Namespace: "evals"}}
		r.Status.Summary = &evalsv1alpha1.RunSummary{Total: 4, PassRate: rate, MeanScore: rate}
		history = append(history, KeptRun{Run: r, ScheduledTime: time.Date(2026, 11, 23-i, 2, 0, 0, 0, time.UTC)})
	}
	url, _ := writeReport(t, HTMLInput{Schedule: s, History: history, Generated: time.Now()})
	b.Open(t, url)
	if n := browser.Eval[int](t, b, `document.querySelectorAll("#history-chart .pass-rate circle").length`); n != 4 {
		t.Errorf("%d pass-rate points, want 4", n)
	}
	got := browser.Eval[[]string](t, b, `Array.from(document.querySelectorAll("#history-chart .pass-rate circle")).map(c => c.dataset.run + "=" + c.dataset.value)`)
	want := []string{"nightly-0=0.5000", "nightly-1=0.7500", "nightly-2=1.0000", "nightly-3=0.2500"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("points %v, want %v", got, want)
	}
	// The highest pass rate is the highest point.
	top := browser.Eval[string](t, b, `Array.from(document.querySelectorAll("#history-chart .pass-rate circle")).sort((a, c) => a.getBoundingClientRect().top - c.getBoundingClientRect().top)[0].dataset.run`)
	if top != "nightly-2" {
		t.Errorf("the highest point is %s, want nightly-2", top)
	}
	b.Screenshot(t, "report-schedule")
	b.Clean(t)
}

// TestHTMLReportHundredThousandCases opens a report of 100,000 cases: at most a page of rows in the DOM, filters
// that answer, and the file's size and time to first paint logged.
func TestHTMLReportHundredThousandCases(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 cases in a browser")
	}
	b := browser.Start(t, 1280, 1000)
	lines := manyLines(100_000)
	run := reportRun(lines)
	start := time.Now()
	url, size := writeReport(t, HTMLInput{Run: run, Lines: lines, Generated: time.Now()})
	t.Logf("100,000 cases: %.1f MiB rendered in %s", float64(size)/(1<<20), time.Since(start).Round(time.Millisecond))
	opened := time.Now()
	b.Open(t, url)
	b.Poll(t, `document.body.dataset.ready === "true"`)
	ready := time.Since(opened)
	paint := browser.Eval[float64](t, b, `(performance.getEntriesByName("first-contentful-paint")[0] || performance.getEntriesByType("paint")[0] || {startTime: -1}).startTime`)
	t.Logf("100,000 cases: first contentful paint %.0f ms, table ready %s after navigation", paint, ready.Round(time.Millisecond))
	t.Logf("100,000 cases: navigation timing %s; the table's script ran %s ms", browser.Eval[string](t, b,
		`(function(){var n=performance.getEntriesByType("navigation")[0]; return "response end "+Math.round(n.responseEnd)+" ms, DOM interactive "+Math.round(n.domInteractive)+" ms, DOMContentLoaded "+Math.round(n.domContentLoadedEventEnd)+" ms, load "+Math.round(n.loadEventEnd)+" ms"})()`),
		browser.Eval[string](t, b, `document.body.dataset.scriptMs`))
	if paint < 0 {
		t.Error("the browser recorded no paint")
	}
	if n := browser.Eval[int](t, b, `document.querySelectorAll("#case-rows tr").length`); n > maxPageSize || n == 0 {
		t.Errorf("%d rows in the DOM, want at most %d", n, maxPageSize)
	}
	filter := time.Now()
	browser.Eval[bool](t, b, setSelect("f-verdict", "Fail"))
	if got := browser.Eval[string](t, b, `document.getElementById("shown").textContent`); !strings.Contains(got, "of 10,000 matching") {
		t.Errorf("after filtering Fail: %q, want 10,000 matching", got)
	}
	browser.Eval[bool](t, b, setSelect("f-verdict", ""))
	browser.Eval[bool](t, b, setText("case-099999"))
	b.Poll(t, rows+` === 1`)
	t.Logf("100,000 cases: a verdict filter and a text search took %s", time.Since(filter).Round(time.Millisecond))
	browser.Eval[bool](t, b, setText(""))
	b.Poll(t, `document.getElementById("shown").textContent.includes("of 100,000 matching")`)
	browser.Eval[bool](t, b, setSelect("f-size", "200"))
	if n := browser.Eval[int](t, b, rows); n != 200 {
		t.Errorf("%d rows at 200 a page", n)
	}
	b.Clean(t)
}

// manyLines are n cases, every tenth failing, with an answer and reasoning of a realistic size.
func manyLines(n int) []*results.Line {
	lines := make([]*results.Line, n)
	for i := range lines {
		l := &results.Line{CaseResult: verdict.CaseResult{ID: fmt.Sprintf("case-%06d", i), Verdict: verdict.VerdictPass, Score: 1,
			Evaluators: []verdict.EvaluatorResult{{Name: "decision", Type: "field_accuracy", Verdict: verdict.VerdictPass, Score: 1, Hits: []string{"decision"}}}},
			Answer: fmt.Sprintf(`{"decision":"CLEAR","explanation":"case %d: the amount and the origin country are within the policy"}`, i)}
		if i%10 == 0 {
			l.Verdict, l.Score = verdict.VerdictFail, 0
			l.Evaluators[0] = verdict.EvaluatorResult{Name: "decision", Type: "field_accuracy", Verdict: verdict.VerdictFail,
				Misses: []string{`decision: want "REVIEW", got "CLEAR"`}, Reasoning: "the decision field differs from the expected answer"}
		}
		lines[i] = l
	}
	return lines
}
