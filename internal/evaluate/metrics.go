package evaluate

import (
	"fmt"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
)

// latency passes when the reported duration_ms is at most the threshold.
func latency(cfg *evalfile.LatencyConfig, resp *jsonlresult.Response) outcome {
	if resp.DurationMs == nil {
		return outcome{misses: []string{"the runner reported no duration_ms for this case"},
			reasoning: "latency needs duration_ms in the runner's record"}
	}
	d := *resp.DurationMs
	o := outcome{reasoning: fmt.Sprintf("took %sms (threshold %sms)", fmtNum(d), fmtNum(cfg.ThresholdMs))}
	if d <= cfg.ThresholdMs {
		o.score = 1
		o.hits = []string{fmt.Sprintf("duration %sms <= %sms", fmtNum(d), fmtNum(cfg.ThresholdMs))}
	} else {
		o.misses = []string{fmt.Sprintf("duration %sms > %sms", fmtNum(d), fmtNum(cfg.ThresholdMs))}
	}
	return o
}

// cost passes when the reported cost_usd is at most the budget.
func cost(cfg *evalfile.CostConfig, resp *jsonlresult.Response) outcome {
	if resp.CostUSD == nil {
		return outcome{misses: []string{"the runner reported no cost_usd for this case"},
			reasoning: "cost needs cost_usd in the runner's record"}
	}
	c := *resp.CostUSD
	o := outcome{reasoning: fmt.Sprintf("cost $%.4f (budget $%.4f)", c, cfg.BudgetUSD)}
	if c <= cfg.BudgetUSD {
		o.score = 1
		o.hits = []string{fmt.Sprintf("cost $%.4f <= $%.4f budget", c, cfg.BudgetUSD)}
	} else {
		o.misses = []string{fmt.Sprintf("cost $%.4f > $%.4f budget", c, cfg.BudgetUSD)}
	}
	return o
}

// tokenUsage passes when every set limit holds. The total counts input, output and cached tokens.
func tokenUsage(cfg *evalfile.TokenUsageConfig, resp *jsonlresult.Response) outcome {
	if resp.TokenUsage == nil {
		return outcome{misses: []string{"the runner reported no token_usage for this case"},
			reasoning: "token_usage needs token_usage in the runner's record"}
	}
	u := resp.TokenUsage
	cached := 0.0
	if u.Cached != nil {
		cached = *u.Cached
	}
	total := u.Input + u.Output + cached
	var o outcome
	check := func(label string, value float64, limit *float64) {
		if limit == nil {
			return
		}
		if value <= *limit {
			o.hits = append(o.hits, fmt.Sprintf("%s tokens %s <= %s", label, fmtNum(value), fmtNum(*limit)))
		} else {
			o.misses = append(o.misses, fmt.Sprintf("%s tokens %s > %s", label, fmtNum(value), fmtNum(*limit)))
		}
	}
	check("input", u.Input, cfg.MaxInput)
	check("output", u.Output, cfg.MaxOutput)
	check("total", total, cfg.MaxTotal)
	if len(o.misses) == 0 {
		o.score = 1
	}
	o.reasoning = fmt.Sprintf("tokens: input %s, output %s, cached %s, total %s", fmtNum(u.Input), fmtNum(u.Output), fmtNum(cached), fmtNum(total))
	return o
}
