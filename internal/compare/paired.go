package compare

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/stats"
)

// tiny is how far a mean of differences may be from 0 by rounding alone (a sum of thirds) and still be no change;
// stats.Paired allows the same in its minimum-effect check.
const tiny = 1e-9

// scoreStream tells the mean score's bootstrap from the pass rate's, which internal/stats draws from the seed
// itself: the two intervals are then not computed from the same resampled cases.
const scoreStream uint64 = 0x53434f5245 // "SCORE"

// pairedTest is the Paired test (docs/statistics.md): the shared cases with a counted trial in both runs are
// compared by their pass rates over their trials, by McNemar's exact test when every one of them has one trial
// in both runs and by the sign-flip test otherwise, one-sided ("this run is worse"); the run regressed when
// p < alpha and the pass rate fell by at least minEffect (internal/stats decides both). The mean score's change
// is reported with its interval beside it. With no case to test there is no evidence of a drop: not regressed.
func (c *Comparison) pairedTest(b Bounds) (Decision, error) {
	out := &evalsv1alpha1.PairedComparison{OnlyInBaselineCases: clamp32(c.OnlyInBaseline), OnlyInRunCases: clamp32(c.OnlyInRun)}
	d := Decision{Test: evalsv1alpha1.BaselineTestPaired, Paired: out}
	// By id, so that nothing depends on the order the results were read in (stats.Paired sorts its own pairs).
	slices.SortFunc(c.pairs, func(a, b pair) int { return strings.Compare(a.id, b.id) })
	base := make([]stats.Case, 0, len(c.pairs))
	run := make([]stats.Case, 0, len(c.pairs))
	var scoreDiffs []float64
	var baseScore, runScore float64
	maxTrials, skipped := 1, 0
	for i := range c.pairs {
		p := &c.pairs[i]
		if p.baseline.trials <= 0 || p.run.trials <= 0 {
			skipped++
			continue
		}
		base = append(base, stats.Case{ID: p.id, Passed: p.baseline.passed, Trials: p.baseline.trials, Score: p.baseline.score})
		run = append(run, stats.Case{ID: p.id, Passed: p.run.passed, Trials: p.run.trials, Score: p.run.score})
		maxTrials = max(maxTrials, p.baseline.trials, p.run.trials)
		if p.baseline.scored && p.run.scored {
			scoreDiffs = append(scoreDiffs, p.run.score-p.baseline.score)
			baseScore += p.baseline.score
			runScore += p.run.score
		}
	}
	out.SkippedCases = clamp32(skipped)
	left := c.leftOut(skipped)
	if len(base) == 0 {
		d.Why = "no case has a judged result in both runs, so there is nothing to test" + left
		return d, nil
	}
	res, err := stats.Paired(base, run, stats.PairedOptions{Alpha: b.AlphaRate, MinEffect: b.MinEffectRate, Seed: b.Seed})
	if err != nil {
		return Decision{}, fmt.Errorf("the paired test: %w", err)
	}
	out.Cases, out.WorseCases, out.BetterCases = clamp32(res.Pairs), clamp32(res.Fell), clamp32(res.Rose)
	switch {
	case res.Test == stats.MethodMcNemar:
		out.Method = evalsv1alpha1.PairedMcNemarExact
	case res.Exact:
		out.Method = evalsv1alpha1.PairedSignFlipExact
	default:
		out.Method = evalsv1alpha1.PairedSignFlipMonteCarlo
	}
	out.PValue = statusP(res.PValue, b.AlphaRate)
	out.PassRate = effectStatus(res.BaselineMean, res.CurrentMean, res.Effect)
	digits := decimalsFor(len(base), maxTrials)
	var b2 strings.Builder
	b2.WriteString(effectText("pass rate", res.BaselineMean, res.CurrentMean, res.Effect, digits))
	fmt.Fprintf(&b2, " over %d paired %s, %d worse and %d better; ", res.Pairs, plural(res.Pairs, "case", "cases"), res.Fell, res.Rose)
	b2.WriteString(pText(res.PValue, b.Alpha, b.AlphaRate))
	fmt.Fprintf(&b2, " (%s, one-sided)", methodText(res))
	// stats.Paired's decision, and a fall at all: with alpha above 1/2 a p-value can be below it with no drop.
	drop := -res.Effect.Estimate
	regressed := res.Regressed && drop > tiny
	switch {
	case regressed && b.MinEffectRate > 0:
		fmt.Fprintf(&b2, ", and the drop of %s is at least minEffect %s", fixed(drop, digits), b.MinEffect)
	case res.PValue < res.Alpha && drop <= tiny:
		b2.WriteString(", but the pass rate did not fall")
	case res.PValue < res.Alpha && !regressed:
		fmt.Fprintf(&b2, ", but the drop of %s is less than minEffect %s", fixed(drop, digits), b.MinEffect)
	}
	if len(scoreDiffs) > 0 {
		n := float64(len(scoreDiffs))
		iv, err := stats.BootstrapMean(scoreDiffs, stats.BootstrapOptions{Seed: b.Seed ^ scoreStream})
		if err != nil {
			return Decision{}, fmt.Errorf("the mean score's interval: %w", err)
		}
		out.MeanScore = effectStatus(baseScore/n, runScore/n, iv)
		b2.WriteString("; " + effectText("mean score", baseScore/n, runScore/n, iv, digits))
		if len(scoreDiffs) != len(base) {
			fmt.Fprintf(&b2, " over the %d scored in both", len(scoreDiffs))
		}
	}
	b2.WriteString(left)
	d.Regressed, d.Why = regressed, b2.String()
	return d, nil
}

// leftOut says which shared or unshared cases the test left out, or nothing when it left none out.
func (c *Comparison) leftOut(skipped int) string {
	var parts []string
	if c.OnlyInBaseline > 0 {
		parts = append(parts, fmt.Sprintf("%d only in the baseline", c.OnlyInBaseline))
	}
	if c.OnlyInRun > 0 {
		parts = append(parts, fmt.Sprintf("%d only in this run", c.OnlyInRun))
	}
	if skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d Skipped in one of them", skipped))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; left out: " + strings.Join(parts, ", ")
}

// effectStatus is one metric's change as status.baseline.paired spells it (4 decimals, as the scores).
func effectStatus(baseline, run float64, effect stats.Interval) *evalsv1alpha1.PairedEffect {
	return &evalsv1alpha1.PairedEffect{
		Baseline: fixed(baseline, 4), Run: fixed(run, 4),
		Delta: signed(effect.Estimate, 4), DeltaLow: signed(effect.Low, 4), DeltaHigh: signed(effect.High, 4),
	}
}

// effectText says one metric's change: "pass rate fell from 0.82 to 0.64 (-0.18, 95% CI -0.29 to -0.07)".
func effectText(name string, baseline, run float64, effect stats.Interval, digits int) string {
	ci := fmt.Sprintf("95%% CI %s to %s", signed(effect.Low, digits), signed(effect.High, digits))
	switch {
	case effect.Estimate < -tiny:
		return fmt.Sprintf("%s fell from %s to %s (%s, %s)", name, fixed(baseline, digits), fixed(run, digits), signed(effect.Estimate, digits), ci)
	case effect.Estimate > tiny:
		return fmt.Sprintf("%s rose from %s to %s (%s, %s)", name, fixed(baseline, digits), fixed(run, digits), signed(effect.Estimate, digits), ci)
	}
	return fmt.Sprintf("%s stayed at %s (change %s)", name, fixed(run, digits), ci)
}

// methodText names the test that gave the p-value.
func methodText(r stats.PairedResult) string {
	switch {
	case r.Test == stats.MethodMcNemar:
		return "McNemar exact"
	case r.Exact:
		return "sign-flip exact"
	}
	return fmt.Sprintf("sign-flip Monte Carlo, %d resamples", r.Resamples)
}

// pText compares the p-value with alpha in words, "p = 0.011 < alpha 0.05" or "p = 0.31, not below alpha 0.05".
// The p-value is rounded to 3 decimals, or as many as alpha has. A p-value below alpha gets more decimals while
// rounding would carry it up to alpha; one too small to show beside alpha is "p < 0.001 < alpha 0.05".
func pText(p float64, alpha string, alphaRate float64) string {
	digits := 3
	if i := strings.IndexByte(alpha, '.'); i >= 0 {
		digits = max(digits, len(alpha)-i-1)
	}
	if p >= alphaRate {
		return fmt.Sprintf("p = %s, not below alpha %s", trimZeros(fixed(p, digits)), alpha)
	}
	for ; digits <= 9; digits++ {
		s := fixed(p, digits)
		v, _ := strconv.ParseFloat(s, 64)
		bound := math.Pow10(-digits)
		switch {
		case v > 0 && v < alphaRate:
			return fmt.Sprintf("p = %s < alpha %s", trimZeros(s), alpha)
		case v == 0 && bound < alphaRate:
			return fmt.Sprintf("p < %s < alpha %s", trimZeros(strconv.FormatFloat(bound, 'f', digits, 64)), alpha)
		}
	}
	return fmt.Sprintf("p = %s < alpha %s", strconv.FormatFloat(p, 'g', 3, 64), alpha)
}

// decimalsFor is how many decimals show a mean over cases with up to trials trials each without hiding its last
// step: 2 up to 100 observations, 3 up to 1,000, 4 beyond.
func decimalsFor(cases, trials int) int {
	switch {
	case trials <= 100 && cases*trials <= 100:
		return 2
	case trials <= 1000 && cases*trials <= 1000:
		return 3
	}
	return 4
}

// fixed formats v with the given decimals, without a minus sign on a value that rounds to zero.
func fixed(v float64, digits int) string {
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	return s
}

// signed formats a change with its sign ("+0.1250", "-0.0500"), and a change that rounds to zero unsigned.
func signed(v float64, digits int) string {
	s := fixed(v, digits)
	if v > 0 && strings.Trim(s, "0.") != "" {
		return "+" + s
	}
	return s
}

// statusP formats the p-value for the status: 6 decimals, rounded, except that one below alpha is rounded down
// where rounding would carry it up to alpha. Alpha has at most 6 decimals, so the status's p-value is below alpha
// exactly when the test's is.
func statusP(p, alphaRate float64) string {
	s := fixed(p, 6)
	if v, _ := strconv.ParseFloat(s, 64); p < alphaRate && v >= alphaRate {
		return truncated(p, 6)
	}
	return s
}

// truncated formats p in [0, 1] with the given decimals, rounded down exactly (p's binary value, not a product
// rounded again), so that it is below a decimal of at most that many decimals exactly when p is.
func truncated(p float64, digits int) string {
	r := new(big.Rat).SetFloat64(p)
	if r == nil {
		return "0"
	}
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil)
	floor := new(big.Int).Quo(new(big.Int).Mul(r.Num(), scale), r.Denom())
	return new(big.Rat).SetFrac(floor, scale).FloatString(digits)
}

// trimZeros drops a decimal's trailing zeros (and a trailing point).
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// clamp32 is a count as the status's int32 holds it.
func clamp32(n int) int32 {
	return int32(min(n, math.MaxInt32))
}
