package compare_test

import (
	"fmt"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/compare"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// Two nightly runs of 50 one-trial cases (docs/statistics.md quotes this output): 11 cases passed last night and
// fail tonight, 2 the other way round. Count with maxNewFailures 0 calls any of them a regression; Paired asks
// whether 11 of 13 flips going one way is likely by chance.
func ExampleComparison_Decide() {
	b := compare.NewBuilder(evalsv1alpha1.MaxComparisonIDs)
	verdicts := func(i int) (base, run verdict.Verdict) {
		switch {
		case i < 30:
			return verdict.VerdictPass, verdict.VerdictPass
		case i < 41:
			return verdict.VerdictPass, verdict.VerdictFail
		case i < 43:
			return verdict.VerdictFail, verdict.VerdictPass
		}
		return verdict.VerdictFail, verdict.VerdictFail
	}
	line := func(i int, v verdict.Verdict) *results.Line {
		score := 0.25
		if v == verdict.VerdictPass {
			score = 1
		}
		return &results.Line{CaseResult: verdict.CaseResult{ID: fmt.Sprintf("case-%02d", i), Verdict: v, Score: score}}
	}
	for i := range 50 {
		v, _ := verdicts(i)
		b.AddBaseline(line(i, v))
	}
	for i := range 50 {
		_, v := verdicts(i)
		b.AddRun(line(i, v))
	}
	c := b.Finish()
	for _, test := range []evalsv1alpha1.BaselineTest{evalsv1alpha1.BaselineTestCount, evalsv1alpha1.BaselineTestPaired} {
		bounds, _ := compare.BoundsOf(&evalsv1alpha1.Baseline{Test: &test})
		bounds.Seed = 1 // the manager's: compare.Seed(baseline, run)
		d, _ := c.Decide(bounds)
		fmt.Printf("%s: regressed %t: %s\n", test, d.Regressed, d.Why)
		if p := d.Paired; p != nil {
			fmt.Printf("  %s over %d cases, %d worse, %d better, p %s; pass rate %s -> %s (%s, %s to %s)\n", p.Method, p.Cases,
				p.WorseCases, p.BetterCases, p.PValue, p.PassRate.Baseline, p.PassRate.Run, p.PassRate.Delta, p.PassRate.DeltaLow, p.PassRate.DeltaHigh)
		}
	}
	// Output:
	// Count: regressed true: 11 newly failing cases (at most 0 allowed): "case-30", "case-31", "case-32", "case-33", "case-34" and 6 more
	// Paired: regressed true: pass rate fell from 0.82 to 0.64 (-0.18, 95% CI -0.32 to -0.06) over 50 paired cases, 11 worse and 2 better; p = 0.011 < alpha 0.05 (McNemar exact, one-sided); mean score fell from 0.86 to 0.73 (-0.14, 95% CI -0.24 to -0.03)
	//   McNemarExact over 50 cases, 11 worse, 2 better, p 0.011230; pass rate 0.8200 -> 0.6400 (-0.1800, -0.3200 to -0.0600)
}

// The worked example of docs/statistics.md: twelve cases answered five times on two nights, the per-case counts
// over trials fed as they are (compare.Case), with minEffect 0.05.
func ExampleComparison_Decide_trials() {
	base := [][2]float64{{5, 0.98}, {5, 0.95}, {4, 0.84}, {5, 0.97}, {3, 0.66}, {5, 0.92}, {5, 1.00}, {4, 0.81}, {5, 0.94}, {2, 0.47}, {5, 0.99}, {4, 0.86}}
	cur := [][2]float64{{4, 0.86}, {5, 0.96}, {2, 0.55}, {5, 0.95}, {1, 0.38}, {4, 0.83}, {5, 0.99}, {3, 0.70}, {5, 0.93}, {2, 0.49}, {3, 0.71}, {4, 0.88}}
	b := compare.NewBuilder(evalsv1alpha1.MaxComparisonIDs)
	caseOf := func(i int, c [2]float64) compare.Case {
		v := verdict.VerdictFail
		if c[0] == 5 {
			v = verdict.VerdictPass // the case's verdict: every trial passed
		}
		return compare.Case{ID: fmt.Sprintf("case-%02d", i+1), Verdict: v, Score: c[1], Trials: 5, Passed: int(c[0])}
	}
	for i, c := range base {
		b.AddBaselineCase(caseOf(i, c))
	}
	for i, c := range cur {
		b.AddRunCase(caseOf(i, c))
	}
	c := b.Finish()
	paired := evalsv1alpha1.BaselineTestPaired
	minEffect := "0.05"
	bounds, _ := compare.BoundsOf(&evalsv1alpha1.Baseline{Test: &paired, MinEffect: &minEffect})
	bounds.Seed = 1
	d, _ := c.Decide(bounds)
	fmt.Printf("regressed %t (%s, p %s): %s\n", d.Regressed, d.Paired.Method, d.Paired.PValue, d.Why)
	// Output:
	// regressed true (SignFlipExact, p 0.015625): pass rate fell from 0.87 to 0.72 (-0.15, 95% CI -0.25 to -0.07) over 12 paired cases, 6 worse and 0 better; p = 0.016 < alpha 0.05 (sign-flip exact, one-sided), and the drop of 0.15 is at least minEffect 0.05; mean score fell from 0.87 to 0.77 (-0.10, 95% CI -0.17 to -0.03)
}
