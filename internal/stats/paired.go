package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// DefaultAlpha is the significance level Paired uses when left at zero.
const DefaultAlpha = 0.05

// Metric is the per-case number Paired compares.
type Metric string

// Metrics.
const (
	// MetricPassRate compares each case's pass rate over its trials (0 or 1 with one trial).
	MetricPassRate Metric = "PassRate"
	// MetricScore compares each case's mean score over its trials.
	MetricScore Metric = "Score"
)

// Method is the test Paired ran.
type Method string

// Methods.
const (
	// MethodMcNemar is McNemar's exact test on the discordant cases: pass rate with one trial per case on both sides.
	MethodMcNemar Method = "McNemarExact"
	// MethodSignFlip is the sign-flip (paired permutation) test on per-case differences: trials or scores.
	MethodSignFlip Method = "SignFlip"
)

// PairedOptions tune Paired. The zero value is the default: pass rate, alpha 0.05, no minimum effect, seed 0.
type PairedOptions struct {
	// Alpha is the significance level (0: DefaultAlpha); a one-sided p-value below it is "unlikely by chance".
	Alpha float64
	// MinEffect is the smallest drop that counts, in the metric's units (a pass rate as a fraction: 0.05 is 5
	// points), at least 0. Regressed needs a drop of at least MinEffect (to 1e-9) as well as p < Alpha.
	MinEffect float64
	// Metric is the per-case number compared ("": MetricPassRate).
	Metric Metric
	// Seed seeds the sign-flip test's Monte Carlo draws and the bootstrap (separate streams).
	Seed uint64
	// Resamples and ExactPatterns tune the sign-flip test (SignFlipOptions); BootstrapResamples the effect's
	// interval (BootstrapOptions.Resamples).
	Resamples, ExactPatterns, BootstrapResamples int
}

// PairedResult is a run compared with its baseline, case by case.
type PairedResult struct {
	Test   Method
	Metric Metric
	// Pairs counts the cases in both runs, the only ones compared; OnlyBaseline and OnlyCurrent the others.
	Pairs, OnlyBaseline, OnlyCurrent int
	// Fell counts the paired cases whose metric is lower now, Rose those whose metric is higher (with McNemar's
	// test: pass -> fail and fail -> pass, the discordant cases).
	Fell, Rose int
	// BaselineMean and CurrentMean are the metric's means over the paired cases.
	BaselineMean, CurrentMean float64
	// Effect is the mean of current - baseline over the paired cases (CurrentMean - BaselineMean) with its 95%
	// paired bootstrap interval (cases resampled, so clustered by case).
	Effect Interval
	// PValue is the one-sided p-value for "current is worse" (the side Regressed uses); TwoSidedPValue the
	// two-sided one, for the record (statsmodels' for McNemar, scipy's permutation_test's for the sign-flip).
	PValue, TwoSidedPValue float64
	// Exact: the p-values are exact; otherwise Resamples Monte Carlo draws gave them, with standard error MCError.
	Exact     bool
	Resamples int
	MCError   float64
	// Alpha and MinEffect are the ones the decision used.
	Alpha, MinEffect float64
	// Regressed: PValue < Alpha and the drop (-Effect.Estimate) is at least MinEffect.
	Regressed bool
	// Message says it in one sentence.
	Message string
}

// Paired compares a run with its baseline, paired by case id (cases in only one of them are counted, not
// compared): with the pass-rate metric and one trial per case on both sides, McNemar's exact test on the
// discordant cases; otherwise the sign-flip test on per-case differences of the metric. Both are one-sided
// ("current is worse"), and Regressed needs p < Alpha and a drop of at least MinEffect. The effect's interval is
// the paired bootstrap's. The result does not depend on the order of the cases.
func Paired(baseline, current []Case, opts PairedOptions) (PairedResult, error) {
	alpha := opts.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	if !(alpha > 0 && alpha < 1) {
		return PairedResult{}, fmt.Errorf("paired comparison: alpha %v must lie strictly between 0 and 1", opts.Alpha)
	}
	if !(opts.MinEffect >= 0) || math.IsInf(opts.MinEffect, 0) {
		return PairedResult{}, fmt.Errorf("paired comparison: minimum effect %v must be a finite number >= 0", opts.MinEffect)
	}
	metric := opts.Metric
	switch metric {
	case "":
		metric = MetricPassRate
	case MetricPassRate, MetricScore:
	default:
		return PairedResult{}, fmt.Errorf("paired comparison: metric %q is not one of %q, %q", opts.Metric, MetricPassRate, MetricScore)
	}
	pairs, onlyBaseline, onlyCurrent, err := pairCases(baseline, current)
	if err != nil {
		return PairedResult{}, fmt.Errorf("paired comparison: %w", err)
	}
	if len(pairs) == 0 {
		return PairedResult{}, fmt.Errorf("paired comparison: no case is in both runs (%d in the baseline only, %d in the current run only)",
			onlyBaseline, onlyCurrent)
	}
	res := PairedResult{
		Metric: metric, Pairs: len(pairs), OnlyBaseline: onlyBaseline, OnlyCurrent: onlyCurrent,
		Alpha: alpha, MinEffect: opts.MinEffect,
	}
	base := make([]float64, len(pairs))
	cur := make([]float64, len(pairs))
	diffs := make([]float64, len(pairs))
	singleTrial := true
	for i, p := range pairs {
		if metric == MetricPassRate {
			base[i], cur[i] = p.baseline.PassRate(), p.current.PassRate()
		} else {
			base[i], cur[i] = p.baseline.Score, p.current.Score
		}
		diffs[i] = cur[i] - base[i]
		switch {
		case diffs[i] < 0:
			res.Fell++
		case diffs[i] > 0:
			res.Rose++
		}
		singleTrial = singleTrial && p.baseline.Trials == 1 && p.current.Trials == 1
	}
	res.BaselineMean, res.CurrentMean = meanOf(base), meanOf(cur)

	if metric == MetricPassRate && singleTrial {
		m, err := McNemar(res.Fell, res.Rose)
		if err != nil {
			return PairedResult{}, fmt.Errorf("paired comparison: %w", err)
		}
		res.Test, res.Exact = MethodMcNemar, true
		res.PValue, res.TwoSidedPValue = m.Worse, m.TwoSided
	} else {
		sf, err := SignFlip(diffs, SignFlipOptions{Seed: opts.Seed, Resamples: opts.Resamples, ExactPatterns: opts.ExactPatterns})
		if err != nil {
			return PairedResult{}, fmt.Errorf("paired comparison: %w", err)
		}
		res.Test, res.Exact, res.Resamples, res.MCError = MethodSignFlip, sf.Exact, sf.Resamples, sf.MCError
		res.PValue, res.TwoSidedPValue = sf.Less, sf.TwoSided
	}
	res.Effect, err = BootstrapMean(diffs, BootstrapOptions{Seed: opts.Seed, Resamples: opts.BootstrapResamples})
	if err != nil {
		return PairedResult{}, fmt.Errorf("paired comparison: %w", err)
	}
	res.Regressed = res.PValue < alpha && -res.Effect.Estimate >= opts.MinEffect-1e-9
	res.Message = pairedMessage(res)
	return res, nil
}

// casePair is one case of both runs.
type casePair struct{ baseline, current Case }

// pairCases pairs the cases by id, sorted by id, and counts the unpaired ones. A repeated id or an invalid case
// is an error.
func pairCases(baseline, current []Case) (pairs []casePair, onlyBaseline, onlyCurrent int, err error) {
	byID := make(map[string]int, len(baseline))
	for i, c := range baseline {
		if err := c.validate(); err != nil {
			return nil, 0, 0, fmt.Errorf("baseline %w", err)
		}
		if _, dup := byID[c.ID]; dup {
			return nil, 0, 0, fmt.Errorf("baseline case %q appears twice", c.ID)
		}
		byID[c.ID] = i
	}
	pairs = make([]casePair, 0, min(len(baseline), len(current)))
	seen := make(map[string]bool, len(current))
	for _, c := range current {
		if err := c.validate(); err != nil {
			return nil, 0, 0, fmt.Errorf("current %w", err)
		}
		if seen[c.ID] {
			return nil, 0, 0, fmt.Errorf("current case %q appears twice", c.ID)
		}
		seen[c.ID] = true
		i, ok := byID[c.ID]
		if !ok {
			onlyCurrent++
			continue
		}
		pairs = append(pairs, casePair{baseline: baseline[i], current: c})
	}
	onlyBaseline = len(baseline) - len(pairs)
	slices.SortFunc(pairs, func(a, b casePair) int { return strings.Compare(a.current.ID, b.current.ID) })
	return pairs, onlyBaseline, onlyCurrent, nil
}

// pairedMessage says the comparison in one sentence, as "pass rate fell 12.0 points (95% CI -20.1 to -3.9) over
// 40 paired cases; p = 0.003 (sign-flip, exact, one-sided), below alpha 0.05".
func pairedMessage(r PairedResult) string {
	name, amount := "mean score", func(v float64) string { return fixed(v, 3) }
	unit := ""
	if r.Metric == MetricPassRate {
		name, amount = "pass rate", func(v float64) string { return fixed(100*v, 1) }
		unit = " points"
	}
	var b strings.Builder
	b.WriteString(name)
	switch e := r.Effect.Estimate; {
	case amount(e) == amount(0):
		b.WriteString(" did not change")
	case e < 0:
		b.WriteString(" fell " + amount(-e) + unit)
	default:
		b.WriteString(" rose " + amount(e) + unit)
	}
	fmt.Fprintf(&b, " (%s%% CI %s to %s) over %d paired case", fixed(100*r.Effect.Level, 0), amount(r.Effect.Low), amount(r.Effect.High), r.Pairs)
	if r.Pairs != 1 {
		b.WriteString("s")
	}
	b.WriteString("; " + formatP(r.PValue) + " (")
	switch {
	case r.Test == MethodMcNemar:
		fmt.Fprintf(&b, "McNemar exact on %d discordant case", r.Fell+r.Rose)
		if r.Fell+r.Rose != 1 {
			b.WriteString("s")
		}
	case r.Exact:
		b.WriteString("sign-flip, exact")
	default:
		fmt.Fprintf(&b, "sign-flip, %d resamples", r.Resamples)
	}
	alpha := strconv.FormatFloat(r.Alpha, 'g', -1, 64)
	switch {
	case r.PValue >= r.Alpha:
		b.WriteString(", one-sided), not below alpha " + alpha)
	case r.Regressed:
		b.WriteString(", one-sided), below alpha " + alpha)
		if r.MinEffect > 0 {
			b.WriteString(", and the drop is at least the minimum effect of " + amount(r.MinEffect) + unit)
		}
	default:
		b.WriteString(", one-sided), below alpha " + alpha + ", but the drop is less than the minimum effect of " + amount(r.MinEffect) + unit)
	}
	return b.String()
}

// fixed formats v with the given decimals, without a minus sign on a value that rounds to zero.
func fixed(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	return s
}

// formatP formats a p-value as people read it: three decimals without trailing zeros, "p < 0.001" below.
func formatP(p float64) string {
	if p < 0.001 {
		return "p < 0.001"
	}
	s := strings.TrimRight(strconv.FormatFloat(p, 'f', 3, 64), "0")
	return "p = " + strings.TrimSuffix(s, ".")
}
