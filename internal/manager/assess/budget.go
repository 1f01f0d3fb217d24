package assess

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// HasBudget reports whether the run sets a budget: spec.judging.llm.maxRequests or maxTokens, or
// spec.target.maxCostUSD.
func HasBudget(run *evalsv1alpha1.EvalRun) bool {
	return llmBudget(run) != nil || run.Spec.Target.MaxCostUSD != nil
}

// llmBudget is spec.judging.llm when it sets a budget, else nil.
func llmBudget(run *evalsv1alpha1.EvalRun) *evalsv1alpha1.LLMJudging {
	if j := run.Spec.Judging; j != nil && j.LLM != nil && (j.LLM.MaxRequests != nil || j.LLM.MaxTokens != nil) {
		return j.LLM
	}
	return nil
}

// BudgetCondition is the run's BudgetExceeded condition (without its time) from status.cost: True, with the
// reason of the first budget reached (judge requests, then judge tokens, then the runner's cost), when a collection reached one; False
// (WithinBudget) otherwise. Nil for a run without a budget. It says what was spent; it never touches Passed.
func BudgetCondition(run *evalsv1alpha1.EvalRun) *metav1.Condition {
	if !HasBudget(run) {
		return nil
	}
	c := &metav1.Condition{Type: evalsv1alpha1.ConditionBudgetExceeded, Status: metav1.ConditionFalse,
		Reason: evalsv1alpha1.ReasonWithinBudget, ObservedGeneration: run.Generation}
	var reached []evalsv1alpha1.BudgetKind
	if run.Status.Cost != nil {
		reached = run.Status.Cost.BudgetsExceeded
	}
	var parts []string
	if llm := llmBudget(run); llm != nil {
		for _, b := range []struct {
			kind          evalsv1alpha1.BudgetKind
			reason, field string
			limit         *int64
			what          string
		}{
			{evalsv1alpha1.BudgetJudgeRequests, evalsv1alpha1.ReasonJudgeRequestBudgetSpent, "maxRequests", llm.MaxRequests, "sent the requests of"},
			{evalsv1alpha1.BudgetJudgeTokens, evalsv1alpha1.ReasonJudgeTokenBudgetSpent, "maxTokens", llm.MaxTokens, "spent the tokens of"},
		} {
			if !slices.Contains(reached, b.kind) {
				continue
			}
			if c.Status != metav1.ConditionTrue {
				c.Status, c.Reason = metav1.ConditionTrue, b.reason
			}
			limit := "?"
			if b.limit != nil {
				limit = fmt.Sprint(*b.limit)
			}
			parts = append(parts, fmt.Sprintf("the LLM judges %s spec.judging.llm.%s (%s)", b.what, b.field, limit))
		}
		if len(parts) > 0 {
			parts[len(parts)-1] += spentSuffix(run) + ": the LLM evaluators not judged by then are Skipped and their cases are Errors"
			if sum := run.Status.Summary; sum.UnjudgedByBudget() > 0 {
				parts[len(parts)-1] += fmt.Sprintf(" (%d cases left unjudged)", sum.UnjudgedByBudget())
			}
		}
	}
	if budget := run.Spec.Target.MaxCostUSD; budget != nil && slices.Contains(reached, evalsv1alpha1.BudgetRunnerCost) {
		if c.Status != metav1.ConditionTrue {
			c.Status, c.Reason = metav1.ConditionTrue, evalsv1alpha1.ReasonRunnerCostBudgetSpent
		}
		parts = append(parts, fmt.Sprintf("the runner's reported cost passed spec.target.maxCostUSD (%s USD)%s: "+
			"the launcher stopped it (status.collection.launcher.costBudget)",
			*budget, runnerSpentSuffix(run)))
	}
	if c.Status == metav1.ConditionTrue {
		c.Message = strings.Join(parts, "; ")
	} else {
		c.Message = "the run stayed within its budgets" + spentSuffix(run)
	}
	c.Message = textbound.Head(c.Message, MaxConditionMessage)
	return c
}

// spentSuffix says what status.cost counts of the judges.
func spentSuffix(run *evalsv1alpha1.EvalRun) string {
	if c := run.Status.Cost; c != nil && c.Judges != nil {
		return fmt.Sprintf(" (spent: %d requests, %d tokens)", c.Judges.Calls, c.Judges.TotalTokens)
	}
	return ""
}

// runnerSpentSuffix says what status.cost counts of the runner's reported cost.
func runnerSpentSuffix(run *evalsv1alpha1.EvalRun) string {
	if c := run.Status.Cost; c != nil && c.Runner != nil {
		return fmt.Sprintf(" (reported: %s USD over %d cases)", c.Runner.CostUSD, c.Runner.CostCases)
	}
	return ""
}
