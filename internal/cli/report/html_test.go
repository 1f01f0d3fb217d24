package report

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// hostile are runner answers that would run script or load something if a report put them into markup.
var hostile = []string{
	`</script><script>alert(1)</script>`,
	`<img src=x onerror=alert(2)>`,
	`<a href="javascript:alert(3)">click</a>`,
	"line\u2028separator\u2029paragraph <!-- <script>",
	`]]></style><style>body{display:none}</style>`,
}

// reportRun is a finished run of lines with a summary.
func reportRun(lines []*results.Line) *evalsv1alpha1.EvalRun {
	start := metav1.NewTime(time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC))
	end := metav1.NewTime(start.Add(90 * time.Second))
	run := &evalsv1alpha1.EvalRun{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "evals"}}
	run.Status = evalsv1alpha1.EvalRunStatus{StartTime: &start, CompletionTime: &end, EvalFileSHA256: "ab12",
		Summary: &evalsv1alpha1.RunSummary{Total: int32(len(lines)), PassRate: "0.2000", MeanScore: "0.6250",
			JudgeUsage: &evalsv1alpha1.JudgeUsage{Calls: 3, TotalTokens: 1234}},
		Conditions: []metav1.Condition{{Type: evalsv1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue,
			Reason: evalsv1alpha1.ReasonCompleted, Message: "done <b>", LastTransitionTime: end}}}
	return run
}

// dataOf is the report's embedded JSON.
func dataOf(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no report data in the page")
	}
	return m[1]
}

func TestWriteHTMLEscapesRunnerText(t *testing.T) {
	lines := sampleLines()
	for i, h := range hostile {
		lines = append(lines, &results.Line{CaseResult: verdict.CaseResult{ID: fmt.Sprintf("hostile-%d", i), Verdict: verdict.VerdictFail,
			Evaluators: []verdict.EvaluatorResult{{Name: h, Type: "llm_judge", Verdict: verdict.VerdictFail, Misses: []string{h}, Reasoning: h}}},
			Answer: h, CarriedFrom: h})
	}
	var b bytes.Buffer
	in := HTMLInput{Run: reportRun(lines), Lines: lines, Cases: map[string]CaseText{"hostile-0": {Input: hostile[0], Expected: hostile[1]}}, Generated: time.Now()}
	in.Run.Status.ParseErrors = []evalsv1alpha1.ParseError{{Line: 3, Excerpt: hostile[0], Message: hostile[1]}}
	in.Run.Status.UnexpectedIDs = []string{hostile[1]}
	if err := WriteHTML(&b, in); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	// The page's own elements, and no other: one inline script, the JSON data element, one style sheet.
	if n := strings.Count(page, "<script"); n != 2 {
		t.Errorf("%d <script elements, want 2 (the data and the page's script)", n)
	}
	if n := strings.Count(page, "</script>"); n != 2 {
		t.Errorf("%d </script> in the page, want 2", n)
	}
	for _, bad := range []string{"<img", "<a href", "<!--", "</style><style>", "\u2028", "\u2029"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
	data := dataOf(t, page)
	for _, want := range []string{`\u003c/script\u003e\u003cscript\u003ealert(1)`, `\u003cimg src=x onerror=alert(2)\u003e`, `\u2028`, `\u0026`} {
		if !strings.Contains(data, want) {
			t.Errorf("the data does not hold %s", want)
		}
	}
	if !strings.Contains(page, "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the parse error's excerpt is not escaped as text")
	}
}

func TestWriteHTMLContentSecurityPolicy(t *testing.T) {
	var b bytes.Buffer
	lines := sampleLines()
	if err := WriteHTML(&b, HTMLInput{Run: reportRun(lines), Lines: lines, Generated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	m := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no Content-Security-Policy meta")
	}
	policy := html.UnescapeString(m[1])
	for _, want := range []string{"default-src 'none'", "script-src '" + hashSource(pageScript) + "'", "style-src '" + hashSource(pageStyle) + "'", "base-uri 'none'", "form-action 'none'"} {
		if !strings.Contains(policy, want) {
			t.Errorf("policy %q lacks %q", policy, want)
		}
	}
	if !strings.Contains(page, "<script>"+pageScript+"</script>") || !strings.Contains(page, "<style>"+pageStyle+"</style>") {
		t.Error("the inline script or style is not byte for byte the one hashed")
	}
	for _, bad := range []string{"http://", "https://", "src=", "@import", "url("} {
		if i := strings.Index(page, bad); i >= 0 && !strings.Contains(page[max(0, i-40):i], "xmlns") {
			t.Errorf("the page names %q: %s", bad, page[max(0, i-40):min(len(page), i+40)])
		}
	}
}

// BenchmarkWriteHTML renders the report of 1,000 and 100,000 cases (every tenth failing).
func BenchmarkWriteHTML(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		lines := manyLines(n)
		in := HTMLInput{Run: reportRun(lines), Lines: lines, Generated: time.Now()}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var out bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				if err := WriteHTML(&out, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out.Len()), "bytes/page")
		})
	}
}

// The report says how many cases the LLM judging budget left unjudged, and only when it left some.
func TestWriteHTMLCountsCasesTheBudgetLeftUnjudged(t *testing.T) {
	row := `<td data-count="budgetUnjudged">`
	for _, n := range []int32{0, 3} {
		lines := sampleLines()
		in := HTMLInput{Run: reportRun(lines), Lines: lines, Generated: time.Now()}
		in.Run.Status.Summary.BudgetUnjudged = &n
		var b bytes.Buffer
		if err := WriteHTML(&b, in); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		switch {
		case n == 0 && strings.Contains(page, row):
			t.Error("the row is shown when the budget left nothing unjudged")
		case n > 0 && !strings.Contains(page, row+"3</td>"):
			t.Errorf("no row saying the budget left %d cases unjudged", n)
		}
	}
}
