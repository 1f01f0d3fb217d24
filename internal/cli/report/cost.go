package report

import (
	"fmt"
	"strings"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// costRow is one row of the report's cost table: whose spending (this run's own, or the results it carried),
// what the runner reported and what the LLM judges used, each said in one line.
type costRow struct {
	What, Runner, Judges string
}

// costRows are the rows of status.cost: the run's own spending, then what its carried results cost the run that
// made them (kept apart: that run spent it). None without status.cost.
func costRows(c *evalsv1alpha1.RunCost) []costRow {
	if c == nil {
		return nil
	}
	rows := []costRow{{What: "This run", Runner: RunnerCostText(c.Runner), Judges: JudgeUsageText(c.Judges)}}
	if cc := c.Carried; cc != nil {
		rows = append(rows, costRow{What: "Carried", Runner: RunnerCostText(cc.Runner), Judges: JudgeUsageText(cc.Judges)})
	}
	return rows
}

// RunnerCostText says what the runner reported, each figure with the count of cases that reported it:
// "1.2 USD (3 of 5 cases); 550 tokens: 500 input, 50 output, 0 cached (5 cases); 5000 ms (5 cases)"; "-" for nil.
func RunnerCostText(r *evalsv1alpha1.RunnerCost) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%s USD (%s); %d tokens: %d input, %d output, %d cached (%s); %d ms (%s)",
		r.CostUSD, ofCases(r.CostCases, r.Cases), r.TotalTokens, r.InputTokens, r.OutputTokens, r.CachedTokens,
		ofCases(r.TokenUsageCases, r.Cases), r.DurationMilliseconds, ofCases(r.DurationCases, r.Cases))
}

// JudgeUsageText says what the LLM judges used: "2 requests; 300 tokens: 200 prompt, 100 completion"; "-" for nil.
func JudgeUsageText(j *evalsv1alpha1.JudgeUsage) string {
	if j == nil {
		return "-"
	}
	return fmt.Sprintf("%d requests; %d tokens: %d prompt, %d completion", j.Calls, j.TotalTokens, j.PromptTokens, j.CompletionTokens)
}

// ofCases is "n of total cases" ("n cases" when they are all).
func ofCases(n, total int32) string {
	if n == total {
		return plural(int(n), "case", "cases")
	}
	return fmt.Sprintf("%d of %d cases", n, total)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// budgetsText says the run's budgets and which were reached: spec.target.maxCostUSD with the launcher's stop,
// spec.judging.llm.maxRequests and maxTokens; "" when the run sets none.
func budgetsText(run *evalsv1alpha1.EvalRun) string {
	var parts []string
	if m := run.Spec.Target.MaxCostUSD; m != nil {
		s := "runner cost at most " + *m + " USD"
		if col := run.Status.Collection; col != nil && col.Launcher != nil && col.Launcher.CostBudget != nil {
			b := col.Launcher.CostBudget
			s += fmt.Sprintf(" (stopped the runner at %s USD over %s; budget %s USD)", b.CostUSD, plural(int(b.Cases), "case", "cases"), b.MaxCostUSD)
		}
		parts = append(parts, s)
	}
	if j := run.Spec.Judging; j != nil && j.LLM != nil {
		if m := j.LLM.MaxRequests; m != nil {
			parts = append(parts, fmt.Sprintf("at most %d judge requests", *m))
		}
		if m := j.LLM.MaxTokens; m != nil {
			parts = append(parts, fmt.Sprintf("at most %d judge tokens", *m))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ")
	if c := run.Status.Cost; c != nil && len(c.BudgetsExceeded) > 0 {
		kinds := make([]string, len(c.BudgetsExceeded))
		for i, k := range c.BudgetsExceeded {
			kinds[i] = string(k)
		}
		s += "; reached: " + strings.Join(kinds, ", ")
	}
	if line := UnjudgedLine(run); line != "" {
		s += "; " + line
	}
	return s
}

// UnjudgedLine says how many cases the LLM judging budget left unjudged (status.summary.budgetUnjudged: Errors,
// never Pass); "" when it left none.
func UnjudgedLine(run *evalsv1alpha1.EvalRun) string {
	sum := run.Status.Summary
	if sum.UnjudgedByBudget() <= 0 {
		return ""
	}
	return fmt.Sprintf("%s left unjudged by the LLM judging budget (verdict Error)", plural(int(sum.UnjudgedByBudget()), "case", "cases"))
}

// shardRow is a shard of the shards table with its spending said in one line each.
type shardRow struct {
	evalsv1alpha1.ShardStatus
	Runner, Judges string
}

// shardRows are the shards' rows.
func shardRows(shards []evalsv1alpha1.ShardStatus) []shardRow {
	rows := make([]shardRow, len(shards))
	for i, s := range shards {
		rows[i] = shardRow{ShardStatus: s, Runner: "-", Judges: "-"}
		if c := s.Cost; c != nil {
			rows[i].Runner, rows[i].Judges = RunnerCostText(c.Runner), JudgeUsageText(c.Judges)
		}
	}
	return rows
}

// CostLines are status.cost said for a terminal, one line per row of the report's cost table ("Cost of this run:
// runner ...; LLM judges ..."); none without status.cost.
func CostLines(c *evalsv1alpha1.RunCost) []string {
	rows := costRows(c)
	if len(rows) == 0 {
		return nil
	}
	out := make([]string, 0, len(rows))
	for i, r := range rows {
		what := "Cost of this run"
		if i > 0 {
			what = "Cost of the carried results (spent by the earlier run)"
		}
		out = append(out, fmt.Sprintf("%s: runner %s; LLM judges %s", what, r.Runner, r.Judges))
	}
	return out
}
