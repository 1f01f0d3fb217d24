package controller

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
	if j := run.Spec.Judging; j != nil && j.LLM != nil && (j.LLM.MaxRequests != nil || j.LLM.MaxTokens != nil) {
		return true
	}
	return run.Spec.Target.MaxCostUSD != nil
}

// BudgetCondition is the run's BudgetExceeded condition (without its time) from status.cost: True, with the
// reason of the first budget reached (runner cost, judge requests, judge tokens), when a collection reached one;
// False (WithinBudget) otherwise. Nil for a run without a budget. It says what was spent; it never touches Passed.
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
	for _, k := range []evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetRunnerCost, evalsv1alpha1.BudgetJudgeRequests, evalsv1alpha1.BudgetJudgeTokens} {
		if !slices.Contains(reached, k) {
			continue
		}
		if c.Status != metav1.ConditionTrue {
			c.Status, c.Reason = metav1.ConditionTrue, budgetReason(k)
		}
		parts = append(parts, budgetMessage(run, k))
	}
	if c.Status == metav1.ConditionTrue {
		c.Message = textbound.Head(strings.Join(parts, "; "), maxConditionMessage)
	} else {
		c.Message = "the run stayed within its budgets" + spentSuffix(run)
	}
	return c
}

func budgetReason(k evalsv1alpha1.BudgetKind) string {
	switch k {
	case evalsv1alpha1.BudgetJudgeRequests:
		return evalsv1alpha1.ReasonJudgeRequestBudgetSpent
	case evalsv1alpha1.BudgetJudgeTokens:
		return evalsv1alpha1.ReasonJudgeTokenBudgetSpent
	}
	return evalsv1alpha1.ReasonRunnerCostBudgetSpent
}

func budgetMessage(run *evalsv1alpha1.EvalRun, k evalsv1alpha1.BudgetKind) string {
	llm := &evalsv1alpha1.LLMJudging{}
	if run.Spec.Judging != nil && run.Spec.Judging.LLM != nil {
		llm = run.Spec.Judging.LLM
	}
	switch k {
	case evalsv1alpha1.BudgetJudgeRequests:
		return fmt.Sprintf("the LLM judges sent spec.judging.llm.maxRequests (%d) requests%s: the LLM evaluators not "+
			"judged by then are Skipped", deref(llm.MaxRequests), spentSuffix(run))
	case evalsv1alpha1.BudgetJudgeTokens:
		return fmt.Sprintf("the LLM judges spent spec.judging.llm.maxTokens (%d) tokens%s: the LLM evaluators not "+
			"judged by then are Skipped", deref(llm.MaxTokens), spentSuffix(run))
	}
	limit := ""
	if run.Spec.Target.MaxCostUSD != nil {
		limit = *run.Spec.Target.MaxCostUSD
	}
	return fmt.Sprintf("the runner reported more than spec.target.maxCostUSD (%s USD) and was stopped%s: the cases "+
		"without a record are missing", limit, spentSuffix(run))
}

// spentSuffix says what status.cost counts so far.
func spentSuffix(run *evalsv1alpha1.EvalRun) string {
	c := run.Status.Cost
	if c == nil {
		return ""
	}
	var parts []string
	if r := c.Runner; r != nil {
		parts = append(parts, fmt.Sprintf("runner %s USD over %d cases", r.CostUSD, r.CostCases))
	}
	if j := c.Judges; j != nil {
		parts = append(parts, fmt.Sprintf("judges %d requests, %d tokens", j.Calls, j.TotalTokens))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (spent: " + strings.Join(parts, "; ") + ")"
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
