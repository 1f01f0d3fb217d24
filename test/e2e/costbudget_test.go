//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// costEval is an eval file of n cases judged by the cost evaluator (cost_usd within 1 USD).
func costEval(n int) string {
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\nexecution:\n  evaluators:\n    - {name: spend, type: cost, budget: 1}\nevalcases:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - {id: c%d, input_messages: [{role: user, content: \"question %d\"}], expected_messages: [{role: assistant, content: \"a\"}]}\n", i, i)
	}
	return b.String()
}

// TestCostBudgetStopsABatchedRunner: a Batched runner that reports 0.4 USD with each record, one record every
// 3 s, and would go on for 10 minutes, under spec.target.maxCostUSD "1": the launcher stops it after the third
// record (1.2 USD), the run fails with CostBudgetExceeded naming the figure and the budget, BudgetExceeded is True
// (RunnerCostBudgetSpent), the three answered cases are judged (Pass) and the three others are missing.
func TestCostBudgetStopsABatchedRunner(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "costbudget", nil)
	command := `for i in 1 2 3 4 5 6; do printf '{"id":"c%s","text":"a","cost_usd":0.4}\n' $i >> {OUTPUT_FILE}; sleep 3; done; sleep 600`
	run := sampleRun("costbudget", ns).Inline(costEval(6)).Command(command).MinPassRate("0").Obj()
	run.Spec.Target.MaxCostUSD = ptr.To("1")
	create(t, run)
	start := time.Now()
	got := waitFinished(t, ns, run.Name, 4*time.Minute)
	if elapsed := time.Since(start); elapsed > 3*time.Minute {
		t.Errorf("the run took %s: the runner was not stopped at the budget", elapsed)
	}

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded,
		conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonCostBudgetExceeded})
	expectCondition(t, got, evalsv1alpha1.ConditionBudgetExceeded,
		conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonRunnerCostBudgetSpent})
	if c := succeeded(got); c == nil || !strings.Contains(c.Message, "1.2 USD") || !strings.Contains(c.Message, "(1 USD") {
		t.Errorf("Succeeded message %q does not name the figure (1.2 USD) and the budget (1 USD)", c.Message)
	}
	col := got.Status.Collection
	if col == nil || col.Launcher == nil {
		t.Fatalf("status.collection = %+v, want the launcher's report", col)
	}
	if diff := cmp.Diff(&evalsv1alpha1.CostBudgetStop{CostUSD: "1.2", MaxCostUSD: "1", Cases: 3}, col.Launcher.CostBudget); diff != "" {
		t.Errorf("status.collection.launcher.costBudget (-want +got):\n%s", diff)
	}
	expectDiff(t, "summary", counts{Total: 6, Passed: 3, Errored: 3, Missing: 3}, summaryCounts(got))
	want := map[string]evalsv1alpha1.Verdict{"c1": evalsv1alpha1.VerdictPass, "c2": evalsv1alpha1.VerdictPass, "c3": evalsv1alpha1.VerdictPass}
	for id, v := range verdicts(got) {
		if w, ok := want[id]; ok && v != w {
			t.Errorf("case %s: verdict %s, want %s (answered before the stop, judged as usual)", id, v, w)
		}
	}
	cost := got.Status.Cost
	if cost == nil || cost.Runner == nil || cost.Runner.CostUSD != "1.2" || cost.Runner.CostCases != 3 {
		t.Errorf("status.cost = %+v, want the runner's 1.2 USD over 3 cases", cost)
	}
	if cost != nil && !cmp.Equal([]evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetRunnerCost}, cost.BudgetsExceeded) {
		t.Errorf("status.cost.budgetsExceeded = %v, want [RunnerCost]", cost.BudgetsExceeded)
	}
}
