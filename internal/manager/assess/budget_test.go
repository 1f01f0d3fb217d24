package assess

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

func TestBudgetCondition(t *testing.T) {
	withBudget := func(requests, tokens *int64, cost *evalsv1alpha1.RunCost) *evalsv1alpha1.EvalRun {
		run := &evalsv1alpha1.EvalRun{Spec: evalsv1alpha1.EvalRunSpec{Judging: &evalsv1alpha1.Judging{
			LLM: &evalsv1alpha1.LLMJudging{MaxRequests: requests, MaxTokens: tokens}}}}
		run.Status.Cost = cost
		return run
	}
	judges := &evalsv1alpha1.JudgeUsage{Calls: 10, TotalTokens: 1200}
	tests := []struct {
		name string
		run  *evalsv1alpha1.EvalRun
		want *metav1.Condition
	}{
		{name: "no budget", run: withBudget(nil, nil, &evalsv1alpha1.RunCost{Judges: judges}), want: nil},
		{name: "within", run: withBudget(ptr.To[int64](10), nil, &evalsv1alpha1.RunCost{Judges: judges}),
			want: &metav1.Condition{Type: "BudgetExceeded", Status: "False", Reason: "WithinBudget",
				Message: "the run stayed within its budgets (spent: 10 requests, 1200 tokens)"}},
		{name: "within, nothing spent", run: withBudget(nil, ptr.To[int64](5), nil),
			want: &metav1.Condition{Type: "BudgetExceeded", Status: "False", Reason: "WithinBudget",
				Message: "the run stayed within its budgets"}},
		{name: "requests", run: withBudget(ptr.To[int64](10), nil, &evalsv1alpha1.RunCost{Judges: judges,
			BudgetsExceeded: []evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetJudgeRequests}}),
			want: &metav1.Condition{Type: "BudgetExceeded", Status: "True", Reason: "JudgeRequestBudgetSpent",
				Message: "the LLM judges sent the requests of spec.judging.llm.maxRequests (10) (spent: 10 requests, " +
					"1200 tokens): the LLM evaluators not judged by then are Skipped and their cases are Errors"}},
		{name: "requests, cases left unjudged", run: func() *evalsv1alpha1.EvalRun {
			run := withBudget(ptr.To[int64](10), nil, &evalsv1alpha1.RunCost{Judges: judges,
				BudgetsExceeded: []evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetJudgeRequests}})
			run.Status.Summary = &evalsv1alpha1.RunSummary{Total: 9, Errored: 7, BudgetUnjudged: ptr.To[int32](7)}
			return run
		}(),
			want: &metav1.Condition{Type: "BudgetExceeded", Status: "True", Reason: "JudgeRequestBudgetSpent",
				Message: "the LLM judges sent the requests of spec.judging.llm.maxRequests (10) (spent: 10 requests, " +
					"1200 tokens): the LLM evaluators not judged by then are Skipped and their cases are Errors (7 cases left unjudged)"}},
		{name: "both: requests named first", run: withBudget(ptr.To[int64](10), ptr.To[int64](1000), &evalsv1alpha1.RunCost{
			Judges: judges, BudgetsExceeded: []evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetJudgeTokens, evalsv1alpha1.BudgetJudgeRequests}}),
			want: &metav1.Condition{Type: "BudgetExceeded", Status: "True", Reason: "JudgeRequestBudgetSpent",
				Message: "the LLM judges sent the requests of spec.judging.llm.maxRequests (10); the LLM judges spent the " +
					"tokens of spec.judging.llm.maxTokens (1000) (spent: 10 requests, 1200 tokens): the LLM evaluators " +
					"not judged by then are Skipped and their cases are Errors"}},
	}
	costRun := func(cost *evalsv1alpha1.RunCost) *evalsv1alpha1.EvalRun {
		run := &evalsv1alpha1.EvalRun{Spec: evalsv1alpha1.EvalRunSpec{Target: evalsv1alpha1.Target{MaxCostUSD: ptr.To("1.5")}}}
		run.Status.Cost = cost
		return run
	}
	runner := &evalsv1alpha1.RunnerCost{Cases: 4, CostCases: 4, CostUSD: "1.6"}
	tests = append(tests, []struct {
		name string
		run  *evalsv1alpha1.EvalRun
		want *metav1.Condition
	}{
		{name: "runner cost within", run: costRun(&evalsv1alpha1.RunCost{Runner: runner}),
			want: &metav1.Condition{Type: "BudgetExceeded", Status: "False", Reason: "WithinBudget",
				Message: "the run stayed within its budgets"}},
		{name: "runner cost spent", run: costRun(&evalsv1alpha1.RunCost{Runner: runner,
			BudgetsExceeded: []evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetRunnerCost}}),
			want: &metav1.Condition{Type: "BudgetExceeded", Status: "True", Reason: "RunnerCostBudgetSpent",
				Message: "the runner's reported cost passed spec.target.maxCostUSD (1.5 USD) (reported: 1.6 USD over 4 cases): " +
					"the launcher stopped it (status.collection.launcher.costBudget)"}},
	}...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, BudgetCondition(tc.run)); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
		})
	}
}
