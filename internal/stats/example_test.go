package stats_test

import (
	"fmt"

	"github.com/evalrun-operator/evalrun-operator/internal/stats"
)

// The worked example of docs/statistics.md: twelve cases, five trials each, a baseline night and the current one.
// The docs quote this output; the test keeps them honest. Every number was checked against scipy and statsmodels
// (the t intervals, Wilson intervals and exact sign-flip p-values agree to the printed digits).
var (
	exampleBaseline = []stats.Case{
		{ID: "case-01", Passed: 5, Trials: 5, Score: 0.98}, {ID: "case-02", Passed: 5, Trials: 5, Score: 0.95},
		{ID: "case-03", Passed: 4, Trials: 5, Score: 0.84}, {ID: "case-04", Passed: 5, Trials: 5, Score: 0.97},
		{ID: "case-05", Passed: 3, Trials: 5, Score: 0.66}, {ID: "case-06", Passed: 5, Trials: 5, Score: 0.92},
		{ID: "case-07", Passed: 5, Trials: 5, Score: 1.00}, {ID: "case-08", Passed: 4, Trials: 5, Score: 0.81},
		{ID: "case-09", Passed: 5, Trials: 5, Score: 0.94}, {ID: "case-10", Passed: 2, Trials: 5, Score: 0.47},
		{ID: "case-11", Passed: 5, Trials: 5, Score: 0.99}, {ID: "case-12", Passed: 4, Trials: 5, Score: 0.86},
	}
	exampleCurrent = []stats.Case{
		{ID: "case-01", Passed: 4, Trials: 5, Score: 0.86}, {ID: "case-02", Passed: 5, Trials: 5, Score: 0.96},
		{ID: "case-03", Passed: 2, Trials: 5, Score: 0.55}, {ID: "case-04", Passed: 5, Trials: 5, Score: 0.95},
		{ID: "case-05", Passed: 1, Trials: 5, Score: 0.38}, {ID: "case-06", Passed: 4, Trials: 5, Score: 0.83},
		{ID: "case-07", Passed: 5, Trials: 5, Score: 0.99}, {ID: "case-08", Passed: 3, Trials: 5, Score: 0.70},
		{ID: "case-09", Passed: 5, Trials: 5, Score: 0.93}, {ID: "case-10", Passed: 2, Trials: 5, Score: 0.49},
		{ID: "case-11", Passed: 3, Trials: 5, Score: 0.71}, {ID: "case-12", Passed: 4, Trials: 5, Score: 0.88},
	}
)

func ExampleCase_Stats() {
	for _, c := range exampleCurrent[:5] {
		s, _ := c.Stats()
		fmt.Printf("%s: %d/%d passed, pass@1 %.2f, pass@5 %.2f, pass^5 %.2f, flaky %v\n", c.ID, c.Passed, c.Trials, s.PassRate, s.PassAtN, s.PassHatN, c.Flaky())
	}
	at2, _ := stats.PassAtK(5, 2, 2)
	hat2, _ := stats.PassHatK(5, 2, 2)
	fmt.Printf("case-03: pass@2 %.2f, pass^2 %.2f\n", at2, hat2)
	// Output:
	// case-01: 4/5 passed, pass@1 0.80, pass@5 1.00, pass^5 0.00, flaky true
	// case-02: 5/5 passed, pass@1 1.00, pass@5 1.00, pass^5 1.00, flaky false
	// case-03: 2/5 passed, pass@1 0.40, pass@5 1.00, pass^5 0.00, flaky true
	// case-04: 5/5 passed, pass@1 1.00, pass@5 1.00, pass^5 1.00, flaky false
	// case-05: 1/5 passed, pass@1 0.20, pass@5 1.00, pass^5 0.00, flaky true
	// case-03: pass@2 0.70, pass^2 0.10
}

func ExampleSummarize() {
	for _, run := range []struct {
		name  string
		cases []stats.Case
	}{{"baseline", exampleBaseline}, {"current", exampleCurrent}} {
		s, _ := stats.Summarize(run.cases, stats.SummaryOptions{})
		fmt.Printf("%s: %d of %d cases pass every trial: %.1f%% (95%% CI %.1f%% to %.1f%%); %d of %d trials passed; mean score %.3f (95%% CI %.3f to %.3f); flaky: %v\n",
			run.name, s.PassedCases, s.Cases, 100*s.PassRate.Estimate, 100*s.PassRate.Low, 100*s.PassRate.High,
			s.PassedTrials, s.Trials, s.MeanScore.Estimate, s.MeanScore.Low, s.MeanScore.High, s.Flaky)
	}
	// Output:
	// baseline: 7 of 12 cases pass every trial: 58.3% (95% CI 32.0% to 80.7%); 52 of 60 trials passed; mean score 0.866 (95% CI 0.765 to 0.966); flaky: [case-03 case-05 case-08 case-10 case-12]
	// current: 4 of 12 cases pass every trial: 33.3% (95% CI 13.8% to 60.9%); 43 of 60 trials passed; mean score 0.769 (95% CI 0.640 to 0.898); flaky: [case-01 case-03 case-05 case-06 case-08 case-10 case-11 case-12]
}

func ExamplePaired() {
	for _, metric := range []stats.Metric{stats.MetricPassRate, stats.MetricScore} {
		r, _ := stats.Paired(exampleBaseline, exampleCurrent, stats.PairedOptions{Metric: metric, MinEffect: 0.05})
		fmt.Printf("%s: %s exact=%v fell=%d rose=%d p=%.4f two-sided=%.4f regressed=%v\n  %s\n",
			metric, r.Test, r.Exact, r.Fell, r.Rose, r.PValue, r.TwoSidedPValue, r.Regressed, r.Message)
	}
	// Output:
	// PassRate: SignFlip exact=true fell=6 rose=0 p=0.0156 two-sided=0.0312 regressed=true
	//   pass rate fell 15.0 points (95% CI -25.0 to -6.7) over 12 paired cases; p = 0.016 (sign-flip, exact, one-sided), below alpha 0.05, and the drop is at least the minimum effect of 5.0 points
	// Score: SignFlip exact=true fell=9 rose=3 p=0.0107 two-sided=0.0215 regressed=true
	//   mean score fell 0.097 (95% CI -0.167 to -0.034) over 12 paired cases; p = 0.011 (sign-flip, exact, one-sided), below alpha 0.05, and the drop is at least the minimum effect of 0.050
}

func ExampleMcNemar() {
	// One trial per case, 40 cases: 9 passed in the baseline and fail now, 2 the other way round.
	m, _ := stats.McNemar(9, 2)
	fmt.Printf("two-sided %.4f (statsmodels' mcnemar, exact), worse %.4f (one-sided, what Regressed uses)\n", m.TwoSided, m.Worse)
	// Output:
	// two-sided 0.0654 (statsmodels' mcnemar, exact), worse 0.0327 (one-sided, what Regressed uses)
}
