//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// TestBudgetStopsLLMJudging: a run of five LLM-judged cases with spec.judging.llm.maxRequests 2 sends two
// requests to the judge server; the three other cases' LLM evaluators are Skipped with the reason, those cases are
// Errors counted in summary.budgetUnjudged (a spent budget never leaves a case judged by the rest), the run says
// BudgetExceeded (JudgeRequestBudgetSpent), and status.cost holds the judges' two calls and the runner's reported
// tokens and cost summed over the five records.
func TestBudgetStopsLLMJudging(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "budget", nil)
	baseURL := startJudgeServer(t, ns)

	usage := `,"token_usage":{"input":100,"output":10},"cost_usd":0.1,"duration_ms":1000}`
	answers := `{"id":"capital-right","text":"It is Paris."` + usage + "\n" +
		`{"id":"capital-wrong","text":"It is Lyon."` + usage + "\n" +
		`{"id":"rubric-type","text":"Hello, Ada!"` + usage + "\n" +
		`{"id":"rubric-inline-missed","text":"Hi Ada."` + usage + "\n" +
		`{"id":"no-evaluators","text":"The sky is blue."` + usage + "\n"
	eval := llmEval[:len(llmEval)-len(llmEvalMalformedCase)]
	run := sampleRun("budget", ns).Inline(eval).Command("printf '%s' '" + answers + "' > {OUTPUT_FILE}").MinPassRate("0").Obj()
	run.Spec.Judging = &evalsv1alpha1.Judging{LLM: &evalsv1alpha1.LLMJudging{
		BaseURL: ptr.To(baseURL), Model: ptr.To("rules"), MaxConcurrentRequests: ptr.To[int32](1), TimeoutSeconds: ptr.To[int32](10),
		APIKeySecretRef: &evalsv1alpha1.SecretKeyRef{Name: "judge-api-key", Key: "token"},
		MaxRequests:     ptr.To[int64](2),
	}}
	create(t, run)
	got := waitFinished(t, ns, run.Name, 5*time.Minute)

	expectCondition(t, got, evalsv1alpha1.ConditionBudgetExceeded,
		conditionSummary{Status: "True", Reason: evalsv1alpha1.ReasonJudgeRequestBudgetSpent})
	s := got.Status.Summary
	if s == nil || s.Total != 5 || s.Errored != 3 || s.UnjudgedByBudget() != 3 || s.Skipped != 0 || s.JudgeUsage == nil || s.JudgeUsage.Calls != 2 {
		t.Errorf("summary = %+v, want 5 cases, 3 errored and left unjudged by the budget, 2 judge calls", s)
	}
	for _, c := range got.Status.Cases {
		if c.Verdict != evalsv1alpha1.VerdictError {
			continue
		}
		if !strings.Contains(c.Error, "maxRequests") {
			t.Errorf("case %s: error without the budget: %q", c.ID, c.Error)
		}
		for _, e := range c.Evaluators {
			if e.Verdict == evalsv1alpha1.VerdictSkipped && !strings.Contains(e.Message, "maxRequests") {
				t.Errorf("case %s: evaluator %s skipped without the reason: %q", c.ID, e.Name, e.Message)
			}
		}
	}
	cost := got.Status.Cost
	if cost == nil || cost.Judges == nil || cost.Judges.Calls != 2 {
		t.Fatalf("status.cost = %+v, want the judges' 2 calls", cost)
	}
	wantRunner := &evalsv1alpha1.RunnerCost{Cases: 5, TokenUsageCases: 5, InputTokens: 500, OutputTokens: 50, TotalTokens: 550,
		CostCases: 5, CostUSD: "0.5", DurationCases: 5, DurationMilliseconds: 5000}
	if diff := cmp.Diff(wantRunner, cost.Runner); diff != "" {
		t.Errorf("status.cost.runner (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetJudgeRequests}, cost.BudgetsExceeded); diff != "" {
		t.Errorf("status.cost.budgetsExceeded (-want +got):\n%s", diff)
	}
}
