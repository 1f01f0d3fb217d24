package evaluate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
)

// latency passes when the case's duration is at most the threshold: the invocation's wall time as the launcher
// measured it (PerCase: Response.MeasuredDurationMs), else the duration_ms the runner's record claims (Batched: the
// launcher runs one invocation for every case and cannot measure a case), and its notes say which.
func latency(cfg *evalfile.LatencyConfig, resp *jsonlresult.Response) outcome {
	measured := resp.MeasuredDurationMs != nil
	var d float64
	switch {
	case measured:
		d = float64(*resp.MeasuredDurationMs)
	case resp.DurationMs != nil:
		d = *resp.DurationMs
	default:
		return outcome{misses: []string{"the runner reported no duration_ms for this case"},
			reasoning: "latency needs duration_ms in the runner's record (the launcher measures only PerCase invocations)"}
	}
	var buf [3][24]byte
	took, threshold := appendNum(buf[0][:0], d), appendNum(buf[1][:0], cfg.ThresholdMs)
	within := d <= cfg.ThresholdMs
	cmp := " > "
	if within {
		cmp = " <= "
	}
	// The reasoning and the note in one allocation: "took Xms as the launcher measured the invocation (threshold
	// Yms)" then "measured duration Xms <= Yms"; for a claim "took Xms by the runner's own duration_ms, ..." then
	// "claimed duration Xms <= Yms".
	var b strings.Builder
	b.Grow(2*len(took) + 2*len(threshold) + 160)
	b.WriteString("took ")
	b.Write(took)
	if measured {
		b.WriteString("ms as the launcher measured the invocation (threshold ")
		b.Write(threshold)
		b.WriteString("ms")
		if resp.DurationMs != nil {
			b.WriteString("; the runner claimed ")
			b.Write(appendNum(buf[2][:0], *resp.DurationMs))
			b.WriteString("ms")
		}
		b.WriteString(")")
	} else {
		b.WriteString("ms by the runner's own duration_ms, a claim the launcher did not measure (threshold ")
		b.Write(threshold)
		b.WriteString("ms)")
	}
	k := b.Len()
	if measured {
		b.WriteString("measured duration ")
	} else {
		b.WriteString("claimed duration ")
	}
	b.Write(took)
	b.WriteString("ms")
	b.WriteString(cmp)
	b.Write(threshold)
	b.WriteString("ms")
	both := b.String()
	o := outcome{reasoning: both[:k]}
	if within {
		o.score = 1
		o.hits = []string{both[k:]}
	} else {
		o.misses = []string{both[k:]}
	}
	return o
}

// appendNum appends fmtNum(f).
func appendNum(b []byte, f float64) []byte { return strconv.AppendFloat(b, f, 'g', 6, 64) }

// cost passes when the reported cost_usd is at most the budget.
func cost(cfg *evalfile.CostConfig, resp *jsonlresult.Response) outcome {
	if resp.CostUSD == nil {
		return outcome{misses: []string{"the runner reported no cost_usd for this case"},
			reasoning: "cost needs cost_usd in the runner's record"}
	}
	c := *resp.CostUSD
	// strconv's 'f' format with precision 4 is what %.4f prints.
	var buf [2][32]byte
	spent, budget := strconv.AppendFloat(buf[0][:0], c, 'f', 4, 64), strconv.AppendFloat(buf[1][:0], cfg.BudgetUSD, 'f', 4, 64)
	within := c <= cfg.BudgetUSD
	cmp := " > $"
	if within {
		cmp = " <= $"
	}
	// The reasoning and the note in one allocation: "cost $X (budget $Y)" then "cost $X <= $Y budget".
	var b strings.Builder
	b.Grow(2*len(spent) + 2*len(budget) + 40)
	b.WriteString("cost $")
	b.Write(spent)
	b.WriteString(" (budget $")
	b.Write(budget)
	b.WriteString(")")
	k := b.Len()
	b.WriteString("cost $")
	b.Write(spent)
	b.WriteString(cmp)
	b.Write(budget)
	b.WriteString(" budget")
	both := b.String()
	o := outcome{reasoning: both[:k]}
	if within {
		o.score = 1
		o.hits = []string{both[k:]}
	} else {
		o.misses = []string{both[k:]}
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
