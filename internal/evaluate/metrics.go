package evaluate

import (
	"fmt"
	"strconv"

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
	took, threshold := fmtNum(d), fmtNum(cfg.ThresholdMs)
	o := outcome{reasoning: "took " + took + "ms (threshold " + threshold + "ms)"}
	if d <= cfg.ThresholdMs {
		o.score = 1
		o.hits = []string{"duration " + took + "ms <= " + threshold + "ms"}
	} else {
		o.misses = []string{"duration " + took + "ms > " + threshold + "ms"}
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
	// strconv's 'f' format with precision 4 is what %.4f prints.
	spent, budget := strconv.FormatFloat(c, 'f', 4, 64), strconv.FormatFloat(cfg.BudgetUSD, 'f', 4, 64)
	o := outcome{reasoning: "cost $" + spent + " (budget $" + budget + ")"}
	if c <= cfg.BudgetUSD {
		o.score = 1
		o.hits = []string{"cost $" + spent + " <= $" + budget + " budget"}
	} else {
		o.misses = []string{"cost $" + spent + " > $" + budget + " budget"}
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
