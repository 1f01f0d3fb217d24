package evaluate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/llm"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// budgetStarvedFile: an early case the runner spends the budget on, then "capital of France?" judged by a cheap
// latency evaluator and an llm_judge (directly, in a weighted composite, and under an llm_judge aggregator).
const budgetStarvedFile = `evalcases:
  - id: spender
    input_messages: [{role: user, content: "Write anything."}]
    evaluators:
      - {name: judge, type: llm_judge}
  - id: france
    expected_outcome: names the capital
    input_messages: [{role: user, content: "What is the capital of France?"}]
    expected_messages: [{role: assistant, content: Paris}]
    evaluators:
      - {name: fast, type: latency, threshold: 1000}
      - {name: judge, type: llm_judge}
  - id: france-composite
    expected_outcome: names the capital
    input_messages: [{role: user, content: "What is the capital of France?"}]
    expected_messages: [{role: assistant, content: Paris}]
    evaluators:
      - name: both
        type: composite
        aggregator: {type: weighted_average}
        evaluators:
          - {name: fast, type: latency, threshold: 1000}
          - {name: judge, type: llm_judge}
  - id: france-rubric
    expected_outcome: names the capital
    input_messages: [{role: user, content: "What is the capital of France?"}]
    evaluators:
      - {name: fast, type: latency, threshold: 1000}
      - {name: capital, type: rubric, rubrics: [{id: paris, expected_outcome: names Paris, required: true}]}
`

// TestSpentBudgetNeverPassesACase is issue 37's starvation: the real LLM client against a local judge that scores
// everything 0, a request budget the runner's first case spends (its replies are made invalid, so each is asked
// again), then "Berlin" for "capital of France?". Before, the llm_judge was Skipped and left out of the mean, and
// the latency evaluator alone made the case Pass with score 1.0. Now every case the budget left unjudged is an
// Error that says so, counted in the summary, however deep the skipped evaluator sits.
func TestSpentBudgetNeverPassesACase(t *testing.T) {
	m := newModelServer(t, func(n int, _, user string) (string, string) {
		if strings.Contains(user, "Write anything.") {
			return "not JSON: asked again", "" // the spender's replies are never valid: 3 requests
		}
		return `{"score": 0, "hits": [], "misses": ["Berlin is not the capital of France"], "reasoning": "wrong"}`, ""
	})
	client, err := llm.New(llm.Config{BaseURL: m.srv.URL + "/v1", Model: "judge-model", BaseBackoff: time.Millisecond,
		Budget: llm.NewBudget(3, 0)})
	if err != nil {
		t.Fatal(err)
	}
	j := &Judge{Threshold: verdict.DefaultThreshold, LLM: client}
	f, err := evalfile.Parse([]byte(budgetStarvedFile))
	if err != nil {
		t.Fatal(err)
	}
	fast := 5.0
	var results []verdict.CaseResult
	for i := range f.NumCases() {
		c := f.CaseAt(i)
		text := "Berlin"
		if c.ID == "spender" {
			text = strings.Repeat("spend ", 1000)
		}
		results = append(results, j.JudgeCase(context.Background(), c, &jsonlresult.Response{ID: c.ID, Text: text, DurationMs: &fast}, nil))
	}
	if n := len(m.bodies()); n != 3 {
		t.Fatalf("sent %d requests, want the budget's 3 (all the spender's)", n)
	}
	if r := results[0]; r.Verdict != verdict.VerdictError || r.BudgetUnjudged {
		t.Errorf("spender = %s (budgetUnjudged %v), want Error for its invalid replies, judged", r.Verdict, r.BudgetUnjudged)
	}
	for _, r := range results[1:] {
		if r.Verdict != verdict.VerdictError || !r.BudgetUnjudged {
			t.Errorf("%s = %s score %v (budgetUnjudged %v): a case the budget left unjudged must be an Error, never Pass",
				r.ID, r.Verdict, r.Score, r.BudgetUnjudged)
		}
		if !strings.Contains(r.Error, "maxRequests") || !strings.Contains(r.Error, "not judged") {
			t.Errorf("%s error %q does not say the budget left it unjudged", r.ID, r.Error)
		}
	}
	// The skipped evaluator (or member) carries its cause; the composite inherits it.
	if e := results[1].Evaluators[1]; e.Verdict != verdict.VerdictSkipped || e.SkipCause != verdict.SkipBudgetSpent {
		t.Errorf("france's llm_judge = %s (%q), want Skipped for the budget", e.Verdict, e.SkipCause)
	}
	if e := results[2].Evaluators[0]; e.Verdict != verdict.VerdictPass || e.Members[1].SkipCause != verdict.SkipBudgetSpent {
		t.Errorf("the composite = %s, members %+v", e.Verdict, e.Members)
	}
	s := verdict.Summarize(results)
	if s.Passed != 0 || s.Errored != 4 || s.BudgetUnjudged != 3 || s.PassRate() != 0 {
		t.Errorf("summary = %+v, want nothing passed and 3 cases counted as left unjudged", s)
	}
}

// Skips that do not come from the budget keep their meaning and their verdicts: a case whose only LLM judge has no
// model is judged by the rest (as before, and as AgentV's `collector check` users expect); code judges that
// `collector check` does not run are Skipped with their own cause, and never count as unjudged by the budget.
func TestSkipCauses(t *testing.T) {
	f, err := evalfile.Parse([]byte(`evalcases:
  - id: c1
    input_messages: [{role: user, content: q}]
    evaluators:
      - {name: fast, type: latency, threshold: 1000}
      - {name: judge, type: llm_judge}
      - {name: script, type: code_judge, script: "exit 1"}
      - name: agg
        type: composite
        aggregator: {type: llm_judge}
        evaluators: [{name: inner, type: latency, threshold: 1000}]
      - name: zero
        type: composite
        aggregator: {type: weighted_average, weights: {inner: 0}}
        evaluators: [{name: inner, type: latency, threshold: 1000}]
`))
	if err != nil {
		t.Fatal(err)
	}
	fast := 5.0
	j := &Judge{Threshold: verdict.DefaultThreshold}
	res := j.JudgeCase(context.Background(), f.CaseAt(0), &jsonlresult.Response{ID: "c1", Text: "a", DurationMs: &fast}, nil)
	got := map[string]verdict.SkipCause{}
	for _, e := range res.Evaluators {
		got[e.Name] = e.SkipCause
	}
	want := map[string]verdict.SkipCause{"fast": "", "judge": verdict.SkipNoModel, "script": verdict.SkipNotRunHere, "agg": verdict.SkipNoModel, "zero": verdict.SkipZeroWeight}
	for name, cause := range want {
		if got[name] != cause {
			t.Errorf("%s: skip cause %q, want %q", name, got[name], cause)
		}
	}
	if res.Verdict != verdict.VerdictPass || res.BudgetUnjudged {
		t.Errorf("case = %s (budgetUnjudged %v), want Pass from latency alone", res.Verdict, res.BudgetUnjudged)
	}
}
