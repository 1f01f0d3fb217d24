package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// CaseUsage is what one case's result says was spent on it: the runner's metrics from its record and the LLM
// judges' model usage.
type CaseUsage struct {
	// Recorded is true when the case had a record of the runner (it is not missing).
	Recorded bool
	// Carried is true for a result a resumed run carried from an earlier run.
	Carried bool
	// TokenUsage, CostUSD and DurationMs are the record's metrics, nil when absent or invalid.
	TokenUsage *jsonlresult.TokenUsage
	CostUSD    *float64
	DurationMs *float64
	// Judges is the model usage of the case's LLM judges, nil when none called a model.
	Judges *verdict.Usage
}

// Usage is what l says was spent on its case.
func (l *Line) Usage() CaseUsage {
	return CaseUsage{Recorded: !l.Missing, Carried: l.CarriedFrom != "", TokenUsage: l.TokenUsage, CostUSD: l.CostUSD,
		DurationMs: l.DurationMs, Judges: l.ModelUsage}
}

// nanosPerUSD is the unit costs are summed in: a nanodollar (jsonlresult.CostNanos).
const nanosPerUSD = jsonlresult.NanosPerUSD

// CostSum sums the usage of a run's cases exactly: every figure is converted to an integer (tokens and
// milliseconds rounded, costs rounded to a nanodollar) and summed with saturation, so the sum does not depend on
// the order of the cases, a hostile value (1e308, a huge token count) cannot make it infinite, NaN or negative,
// and each case adds at most half a unit of rounding. The zero value is an empty sum.
type CostSum struct {
	own, carried usageSum
	budgets      []evalsv1alpha1.BudgetKind
}

// usageSum is the integer sums of one group of cases.
type usageSum struct {
	cases, tokenCases, costCases, durationCases int64
	input, output, cached, total                int64
	costNanos, durationMs                       int64
	judged                                      bool
	judges                                      verdict.Usage
}

// Add adds one case's usage.
func (c *CostSum) Add(u CaseUsage) {
	s := &c.own
	if u.Carried {
		s = &c.carried
	}
	s.add(u)
}

// AddBudgets records budgets a collection reached (each kind once).
func (c *CostSum) AddBudgets(kinds ...evalsv1alpha1.BudgetKind) {
	for _, k := range kinds {
		if !slices.Contains(c.budgets, k) {
			c.budgets = append(c.budgets, k)
		}
	}
	slices.Sort(c.budgets)
}

func (s *usageSum) add(u CaseUsage) {
	if u.Recorded {
		s.cases = satAdd(s.cases, 1)
	}
	if t := u.TokenUsage; t != nil {
		in, out := units(t.Input), units(t.Output)
		var cached int64
		if t.Cached != nil {
			cached = units(*t.Cached)
		}
		s.tokenCases = satAdd(s.tokenCases, 1)
		s.input, s.output, s.cached = satAdd(s.input, in), satAdd(s.output, out), satAdd(s.cached, cached)
		s.total = satAdd(s.total, satAdd(satAdd(in, out), cached))
	}
	if u.CostUSD != nil {
		s.costCases = satAdd(s.costCases, 1)
		s.costNanos = satAdd(s.costNanos, jsonlresult.CostNanos(*u.CostUSD))
	}
	if u.DurationMs != nil {
		s.durationCases = satAdd(s.durationCases, 1)
		s.durationMs = satAdd(s.durationMs, units(*u.DurationMs))
	}
	if j := u.Judges; j != nil {
		s.judged = true
		s.judges = verdict.Usage{
			Calls:            satAdd(s.judges.Calls, max(j.Calls, 0)),
			PromptTokens:     satAdd(s.judges.PromptTokens, max(j.PromptTokens, 0)),
			CompletionTokens: satAdd(s.judges.CompletionTokens, max(j.CompletionTokens, 0)),
			TotalTokens:      satAdd(s.judges.TotalTokens, max(j.TotalTokens, 0)),
			LatencyMs:        satAdd(s.judges.LatencyMs, max(j.LatencyMs, 0)),
		}
	}
}

// Status is the sum as status.cost; nil when nothing was recorded, judged or reached.
func (c *CostSum) Status() *evalsv1alpha1.RunCost {
	out := &evalsv1alpha1.RunCost{Runner: c.own.runner(), Judges: c.own.judgeUsage(), BudgetsExceeded: slices.Clone(c.budgets)}
	if r, j := c.carried.runner(), c.carried.judgeUsage(); r != nil || j != nil {
		out.Carried = &evalsv1alpha1.CarriedCost{Runner: r, Judges: j}
	}
	if out.Runner == nil && out.Judges == nil && out.Carried == nil && len(out.BudgetsExceeded) == 0 {
		return nil
	}
	return out
}

// CostUSDNanos is the run's own runner cost in nanodollars (carried results left out).
func (c *CostSum) CostUSDNanos() int64 { return c.own.costNanos }

func (s *usageSum) runner() *evalsv1alpha1.RunnerCost {
	if s.cases == 0 && s.tokenCases == 0 && s.costCases == 0 && s.durationCases == 0 {
		return nil
	}
	return &evalsv1alpha1.RunnerCost{
		Cases: clamp32(s.cases), TokenUsageCases: clamp32(s.tokenCases),
		InputTokens: s.input, OutputTokens: s.output, CachedTokens: s.cached, TotalTokens: s.total,
		CostCases: clamp32(s.costCases), CostUSD: FormatUSDNanos(s.costNanos),
		DurationCases: clamp32(s.durationCases), DurationMilliseconds: s.durationMs,
	}
}

func (s *usageSum) judgeUsage() *evalsv1alpha1.JudgeUsage {
	if !s.judged {
		return nil
	}
	u := s.judges
	return &evalsv1alpha1.JudgeUsage{Calls: u.Calls, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		TotalTokens: u.TotalTokens, LatencyMilliseconds: u.LatencyMs}
}

// units rounds a reported count (tokens, milliseconds) to an integer: 0 for a value that is not a non-negative
// number, math.MaxInt64 for one past it. (Costs are nanodollars from jsonlresult.CostNanos.)
func units(v float64) int64 {
	if !(v >= 0) { // NaN or negative: the parser drops these, the sum never trusts that it did
		return 0
	}
	x := math.Round(v)
	if x >= math.MaxInt64 { // also +Inf
		return math.MaxInt64
	}
	return int64(x)
}

// satAdd is a + b for non-negative a and b, at most math.MaxInt64.
func satAdd(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

func clamp32(n int64) int32 { return int32(min(n, math.MaxInt32)) }

// FormatUSDNanos formats nanodollars as status.cost's decimal string (jsonlresult.FormatNanoUSD).
func FormatUSDNanos(n int64) string { return jsonlresult.FormatNanoUSD(n) }

// ParseUSDNanos reads a decimal dollar amount (status.cost's costUSD) as nanodollars:
// digits, optionally a point and at most nine more. Larger amounts saturate at math.MaxInt64.
func ParseUSDNanos(s string) (int64, error) {
	whole, frac, hasPoint := strings.Cut(s, ".")
	if whole == "" || (hasPoint && (frac == "" || len(frac) > 9)) || !allDigits(whole) || !allDigits(frac) {
		return 0, fmt.Errorf("%q is not a dollar amount (digits, and at most nine after a point)", s)
	}
	var n int64
	for _, d := range whole {
		if n > (math.MaxInt64-int64(d-'0'))/10 {
			return math.MaxInt64, nil
		}
		n = n*10 + int64(d-'0')
	}
	if n > math.MaxInt64/nanosPerUSD {
		return math.MaxInt64, nil
	}
	n *= nanosPerUSD
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	}
	return satAdd(n, f), nil
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// SumRunCosts sums finished runs' own status.cost (carried results left out) as an EvalSchedule's status.cost,
// with the same saturating integer sums; nil without runs.
func SumRunCosts(costs []*evalsv1alpha1.RunCost) *evalsv1alpha1.ScheduleCost {
	if len(costs) == 0 {
		return nil
	}
	var s usageSum
	for _, c := range costs {
		if c == nil {
			continue
		}
		if r := c.Runner; r != nil {
			nanos, err := ParseUSDNanos(r.CostUSD)
			if err != nil {
				nanos = 0 // written by the collector or the merge; an unreadable figure adds nothing
			}
			s.cases = satAdd(s.cases, int64(max(r.Cases, 0)))
			s.tokenCases = satAdd(s.tokenCases, int64(max(r.TokenUsageCases, 0)))
			s.input, s.output = satAdd(s.input, max(r.InputTokens, 0)), satAdd(s.output, max(r.OutputTokens, 0))
			s.cached, s.total = satAdd(s.cached, max(r.CachedTokens, 0)), satAdd(s.total, max(r.TotalTokens, 0))
			s.costCases, s.costNanos = satAdd(s.costCases, int64(max(r.CostCases, 0))), satAdd(s.costNanos, nanos)
			s.durationCases = satAdd(s.durationCases, int64(max(r.DurationCases, 0)))
			s.durationMs = satAdd(s.durationMs, max(r.DurationMilliseconds, 0))
		}
		if j := c.Judges; j != nil {
			s.add(CaseUsage{Judges: &verdict.Usage{Calls: j.Calls, PromptTokens: j.PromptTokens, CompletionTokens: j.CompletionTokens,
				TotalTokens: j.TotalTokens, LatencyMs: j.LatencyMilliseconds}})
		}
	}
	return &evalsv1alpha1.ScheduleCost{Runs: clamp32(int64(len(costs))), Runner: s.runner(), Judges: s.judgeUsage()}
}
