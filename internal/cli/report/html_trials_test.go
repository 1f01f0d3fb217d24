package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// trialsStatus is status.trials as the merge writes it for trialRunLines (figures of the test's choosing).
func trialsStatus() *evalsv1alpha1.TrialsStatus {
	return &evalsv1alpha1.TrialsStatus{Count: 3, PassRate: "1", Cases: 6,
		RunPassRate:       &evalsv1alpha1.TrialsEstimate{Value: "0.3333", Low: "0.0968", High: "0.7000"},
		MeanTrialPassRate: &evalsv1alpha1.TrialsEstimate{Value: "0.3889", Low: "0.1111", High: "0.6667"},
		MeanScore:         &evalsv1alpha1.TrialsEstimate{Value: "0.7917", Low: "0.4167", High: "1.0000"},
		PassAtN:           "0.5000", PassHatN: "0.3333", FlakyCases: 1, Flaky: []string{"case-b"}}
}

// trialRun is a finished run of trialRunLines, its hostile answers in a flaky case's failing trial.
func trialRun() (*evalsv1alpha1.EvalRun, []*results.Line) {
	lines := trialRunLines()
	for i, h := range hostile {
		id := fmt.Sprintf("hostile-%d", i)
		bad := trialLine(id, 2, verdict.VerdictFail, 0, h)
		bad.Evaluators[0].Name, bad.Evaluators[0].Reasoning, bad.Evaluators[0].Misses = h, h, []string{h}
		bad.Error, bad.CarriedFrom = h, h
		lines = append(lines, trialLine(id, 1, verdict.VerdictPass, 1, h), bad, trialLine(id, 3, verdict.VerdictPass, 1, h))
	}
	run := reportRun(lines)
	run.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](3)}
	run.Status.Summary = &evalsv1alpha1.RunSummary{Total: 11, Passed: 2, Failed: 7, Errored: 2, Missing: 1, PassRate: "0.1818", MeanScore: "0.7917"}
	run.Status.Trials = trialsStatus()
	return run, lines
}

// pairedBaseline is a baseline run of one trial per case, every case passing, and the run's status.baseline and
// Regressed condition as the manager writes them under a Paired test.
func pairedBaseline(run *evalsv1alpha1.EvalRun) *Baseline {
	var lines []*results.Line
	for _, id := range []string{"case-a", "case-b", "case-c", "case-d", "case-e", "case-f"} {
		lines = append(lines, trialLine(id, 1, verdict.VerdictPass, 1, "base"))
	}
	base := &evalsv1alpha1.EvalRun{ObjectMeta: metav1.ObjectMeta{Name: "nightly-base", Namespace: "evals", UID: "base-uid"}}
	base.Status.EvalFileSHA256 = run.Status.EvalFileSHA256
	run.UID = "run-uid"
	run.Spec.Baseline = &evalsv1alpha1.Baseline{RunName: ptr.To(base.Name), Test: ptr.To(evalsv1alpha1.BaselineTestPaired),
		Alpha: ptr.To("0.1"), MinEffect: ptr.To("0.05")}
	run.Status.Conditions = append(run.Status.Conditions, metav1.Condition{Type: evalsv1alpha1.ConditionRegressed,
		Status: metav1.ConditionTrue, Reason: evalsv1alpha1.ReasonRegressed, Message: "the pass rate fell <b>"})
	return &Baseline{Run: base, Lines: lines}
}

func TestWriteHTMLTrials(t *testing.T) {
	run, lines := trialRun()
	in := HTMLInput{Run: run, Lines: lines, Baseline: pairedBaseline(run), Generated: time.Now(),
		Cases: map[string]CaseText{"case-b": {Input: "question b", Expected: "REVIEW"}}}
	var b bytes.Buffer
	if err := WriteHTML(&b, in); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<div class="sub" id="pass-rate-ci">95% CI 0.0968 to 0.7000 (Wilson)</div>`,
		`<div class="sub" id="mean-score-ci">95% CI 0.4167 to 1.0000 (bootstrap)</div>`,
		`<div class="card" id="trials-card"><div class="label">Trials per case</div><div class="value">3</div><div class="sub">a case passes when every trial passes</div></div>`,
		`<td id="trials-pass-rate">0.3333 (0.0968 to 0.7000)</td>`,
		`<td id="trials-trial-pass-rate">0.3889 (0.1111 to 0.6667)</td>`,
		`<tr><th>pass@3: some trial passed</th><td id="pass-at-n">0.5000</td></tr>`,
		`<tr><th>pass^3: every trial passed</th><td id="pass-hat-n">0.3333</td></tr>`,
		`<td data-count="flaky">1</td>`,
		`<td id="stored">11 (32 trial results) · Fail 7 · Error 1 · Missing 1 · Skipped 0 · Pass 2</td>`,
		// The Paired test, run by the report on the stored results with the manager's bounds and seed: a run of three
		// trials against a baseline of one, so the sign-flip test on the per-case pass rates.
		`<td id="paired-method">the exact sign-flip test on the per-case pass-rate changes (SignFlipExact)</td>`,
		`<span data-count="worseCases">4</span> worse, <span data-count="betterCases">0</span> better`,
		`<td id="paired-p-value">0.062500</td>`,
		`<tr><th>Bounds</th><td>alpha 0.1, minEffect 0.05</td></tr>`,
		`<td id="paired-regressed">True (Regressed): the pass rate fell &lt;b&gt;</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, `id="flaky-ids"`) {
		t.Error("the status's flaky ids are listed though the cases are stored (the filter finds them)")
	}

	var data pageData
	if err := json.Unmarshal([]byte(dataOf(t, page)), &data); err != nil {
		t.Fatal(err)
	}
	if data.Trials != 3 || data.TrialPassRate != "1" || len(data.Cases) != 11 {
		t.Fatalf("trials %d, pass rate %q, %d cases; want 3, 1 and 11", data.Trials, data.TrialPassRate, len(data.Cases))
	}
	type row struct {
		ID, Outcome, Score, Marks, Base string
		Passed                          int
		Flaky                           bool
	}
	var got []row
	for _, c := range data.Cases {
		marks := ""
		for i, tr := range c.Trials {
			if tr.Trial != i+1 {
				t.Errorf("%s: trial %d at %d", c.ID, tr.Trial, i)
			}
			marks += tr.Outcome[:2]
			if tr.Absent {
				marks += "_"
			}
		}
		got = append(got, row{c.ID, c.Outcome, c.Score, marks, c.BaseOutcome + c.Newly, c.Passed, c.Flaky})
	}
	want := []row{
		{"case-b", "Fail", "0.8333", "PaFaPa", "PassNewlyFailing", 2, true},
		{"case-f", "Fail", "0.3333", "FaFaFa", "PassNewlyFailing", 0, false},
		{"hostile-0", "Fail", "0.6667", "PaFaPa", "", 2, true},
		{"hostile-1", "Fail", "0.6667", "PaFaPa", "", 2, true},
		{"hostile-2", "Fail", "0.6667", "PaFaPa", "", 2, true},
		{"hostile-3", "Fail", "0.6667", "PaFaPa", "", 2, true},
		{"hostile-4", "Fail", "0.6667", "PaFaPa", "", 2, true},
		{"case-c", "Error", "", "ErErMi_", "PassNewlyFailing", 0, false},
		{"case-d", "Missing", "", "MiMiMi", "PassNewlyFailing", 0, false},
		{"case-a", "Pass", "1.0000", "PaPaPa", "Pass", 3, false},
		{"case-e", "Pass", "1.0000", "PaSkPa", "Pass", 2, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	b1 := data.Cases[0]
	if b1.Answer != nil || b1.Evaluators != nil || b1.Input == nil || b1.Input.Text != "question b" || b1.Trials[1].Answer.Text != "b2" ||
		b1.Trials[1].Evaluators[0].Misses[0] != "decision: want REVIEW" || b1.Message != "trial 2 of 3: decision: decision: want REVIEW" {
		t.Errorf("case-b: the texts are not the trials' %+v", b1)
	}
}

// Hostile runner text in a trial's answer, error, evaluator and carried-from stays data: escaped in the JSON, and
// no element of the page comes from it.
func TestWriteHTMLTrialsEscapesRunnerText(t *testing.T) {
	run, lines := trialRun()
	run.Status.Trials.Flaky = append(run.Status.Trials.Flaky, hostile...)
	var b bytes.Buffer
	// No stored lines of the baseline: status.baseline stands, its ids hostile too.
	run.Status.Baseline = &evalsv1alpha1.BaselineComparison{RunName: hostile[0], Test: evalsv1alpha1.BaselineTestPaired,
		NewlyFailing: []string{hostile[1]}, Paired: &evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedMethod(hostile[2]), PValue: hostile[3]}}
	if err := WriteHTML(&b, HTMLInput{Run: run, Lines: lines, Generated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	checkNoHostileMarkup(t, b.String())

	// The status's flaky ids, listed when nothing is stored, are escaped too.
	b.Reset()
	if err := WriteHTML(&b, HTMLInput{Run: run, LinesNote: "gone", Generated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	checkNoHostileMarkup(t, page)
	if !strings.Contains(page, `<td class="ids mono" id="flaky-ids"><span>case-b</span> <span>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</span>`) {
		t.Error("the status's flaky ids are not listed as text")
	}
}

// checkNoHostileMarkup: the page has its own two script elements and no element or comment from the hostile
// texts, and its JSON data no line separator (which would end a line of script).
func checkNoHostileMarkup(t *testing.T, page string) {
	t.Helper()
	if data := dataOf(t, page); strings.ContainsAny(data, "\u2028\u2029") {
		t.Error("the data holds a line or paragraph separator unescaped")
	}
	if n := strings.Count(page, "<script"); n != 2 {
		t.Errorf("%d <script elements, want 2", n)
	}
	if n := strings.Count(page, "</script>"); n != 2 {
		t.Errorf("%d </script>, want 2", n)
	}
	for _, bad := range []string{"<img", "<a href", "<!--", "</style><style>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
}

// A run of one trial with a Count baseline renders as before trials existed: no trials figures, no trial data, no
// Paired section.
func TestWriteHTMLOneTrialUnchanged(t *testing.T) {
	lines := sampleLines()
	run := reportRun(lines)
	run.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](1)}
	base := &Baseline{Run: &evalsv1alpha1.EvalRun{ObjectMeta: metav1.ObjectMeta{Name: "base"}}, Lines: sampleLines()}
	run.Spec.Baseline = &evalsv1alpha1.Baseline{RunName: ptr.To("base")}
	var b bytes.Buffer
	if err := WriteHTML(&b, HTMLInput{Run: run, Lines: lines, Baseline: base, Generated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, absent := range []string{`id="pass-rate-ci"`, `id="mean-score-ci"`, `id="trials-card"`, `id="trials"`, `trial results`, `id="paired"`} {
		if strings.Contains(page, absent) {
			t.Errorf("a run of one trial shows %s", absent)
		}
	}
	for _, absent := range []string{`"tr":`, `"trials":`, `"f":`, `"tp":`} {
		if strings.Contains(dataOf(t, page), absent) {
			t.Errorf("the data of a run of one trial has %s", absent)
		}
	}
	if !strings.Contains(page, `<td id="stored">5 · Fail 1 · Error 1 · Missing 1 · Skipped 1 · Pass 1</td>`) {
		t.Error("the stored cases are not counted as before")
	}
}

// BenchmarkWriteHTMLTrials renders the report of 1,000 cases of 5 trials (every third case flaky).
func BenchmarkWriteHTMLTrials(b *testing.B) {
	lines := manyTrialLines(1_000, 5)
	run := reportRun(lines)
	run.Status.Trials = &evalsv1alpha1.TrialsStatus{Count: 5, PassRate: "1", Cases: 1_000}
	in := HTMLInput{Run: run, Lines: lines, Generated: time.Now()}
	var out bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		if err := WriteHTML(&out, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(out.Len()), "bytes/page")
}

// manyTrialLines are n cases of trials trials each, stored trial by trial; every third case fails its last trial.
func manyTrialLines(n, trials int) []*results.Line {
	one := manyLines(n)
	out := make([]*results.Line, 0, n*trials)
	for t := 1; t <= trials; t++ {
		for i, l := range one {
			c := *l
			c.Evaluators = []verdict.EvaluatorResult{{Name: "decision", Type: "field_accuracy", Verdict: verdict.VerdictPass, Score: 1, Hits: []string{"decision"}}}
			c.Verdict, c.Score = verdict.VerdictPass, 1
			if t > 1 {
				c.Trial = t
			}
			if i%3 == 0 && t == trials {
				c.Verdict, c.Score = verdict.VerdictFail, 0
				c.Evaluators = []verdict.EvaluatorResult{{Name: "decision", Type: "field_accuracy", Verdict: verdict.VerdictFail,
					Misses: []string{`decision: want "REVIEW", got "CLEAR"`}, Reasoning: "the decision field differs from the expected answer"}}
			}
			out = append(out, &c)
		}
	}
	return out
}

// Whatever a runner answers in any trial and whatever its case ids are, the report of a run with trials keeps its
// own two script elements, its data stays JSON that reads back to the texts, and no text ends the data element.
func FuzzWriteHTMLTrials(f *testing.F) {
	for _, h := range hostile {
		f.Add("case-1", h, h, uint8(3))
	}
	f.Add("</script>", "\u2028", "<!--", uint8(0))
	f.Fuzz(func(t *testing.T, id, answer, reasoning string, trials uint8) {
		n := int(trials%4) + 2
		var lines []*results.Line
		for trial := 1; trial <= n; trial++ {
			v := verdict.VerdictPass
			if trial%2 == 0 {
				v = verdict.VerdictFail
			}
			l := trialLine(id, trial, v, 0.5, answer)
			l.Evaluators[0].Name, l.Evaluators[0].Reasoning = reasoning, reasoning
			lines = append(lines, l)
		}
		run := reportRun(lines)
		run.Status.Trials = &evalsv1alpha1.TrialsStatus{Count: int32(n), PassRate: "1", Cases: 1, FlakyCases: 1, Flaky: []string{id}}
		var b bytes.Buffer
		if err := WriteHTML(&b, HTMLInput{Run: run, Lines: lines, Generated: time.Now()}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		if c := strings.Count(page, "<script"); c != 2 {
			t.Fatalf("%d <script elements, want 2", c)
		}
		raw := dataOf(t, page)
		if strings.ContainsAny(raw, "<>&\u2028\u2029") {
			t.Fatalf("the data holds an unescaped <, >, &, U+2028 or U+2029")
		}
		var data pageData
		if err := json.Unmarshal([]byte(raw), &data); err != nil {
			t.Fatalf("the data is not JSON: %v", err)
		}
		if len(data.Cases) != 1 || len(data.Cases[0].Trials) != n {
			t.Fatalf("%d cases, want one of %d trials", len(data.Cases), n)
		}
		if utf8.ValidString(id) && data.Cases[0].ID != id {
			t.Errorf("the id reads back as %q, want %q", data.Cases[0].ID, id)
		}
		if a := data.Cases[0].Trials[0].Answer; utf8.ValidString(answer) && answer != "" && (a == nil || !strings.HasPrefix(answer, strings.TrimSuffix(a.Text, "…"))) {
			t.Errorf("trial 1's answer reads back as %+v, want %q", a, answer)
		}
	})
}
