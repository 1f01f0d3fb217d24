package compare

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/stats"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

const testSeed = 20260424

// runs are a baseline's and a run's cases, with what the Paired test should read of them: the per-case pass-rate
// differences of the tested cases and the score differences of those scored in both, by id. The tests take the
// expected intervals from stats.BootstrapMean over these, so a wrong pairing, order, seed or stream shows.
type runs struct {
	base, run             []Case
	passDiffs, scoreDiffs []float64
}

// letterCase is one trial of a case by its letter: P Pass (score 1), F Fail (score 0.25), E Error (score 0.5,
// counted 0), S Skipped, M no record.
func letterCase(id string, letter byte) Case {
	switch letter {
	case 'P':
		return CaseOf(line(id, verdict.VerdictPass, 1))
	case 'F':
		return CaseOf(line(id, verdict.VerdictFail, 0.25))
	case 'E':
		return CaseOf(line(id, verdict.VerdictError, 0.5))
	case 'S':
		return CaseOf(line(id, verdict.VerdictSkipped, 0))
	case 'M':
		return CaseOf(missing(id))
	}
	panic("unknown letter " + string(letter))
}

// oneTrial builds one-trial runs from pairs of letters, each repeated: ("PF", 9) is nine cases that passed in the
// baseline and fail in the run.
func oneTrial(spec ...any) runs {
	var r runs
	passes := func(l byte) float64 {
		if l == 'P' {
			return 1
		}
		return 0
	}
	scores := map[byte]float64{'P': 1, 'F': 0.25, 'E': 0}
	for i := 0; i < len(spec); i += 2 {
		letters, n := spec[i].(string), spec[i+1].(int)
		for range n {
			id := fmt.Sprintf("c%05d", len(r.base))
			r.base = append(r.base, letterCase(id, letters[0]))
			r.run = append(r.run, letterCase(id, letters[1]))
			if strings.ContainsRune(letters, 'S') {
				continue
			}
			r.passDiffs = append(r.passDiffs, passes(letters[1])-passes(letters[0]))
			if !strings.ContainsAny(letters, "M") {
				r.scoreDiffs = append(r.scoreDiffs, scores[letters[1]]-scores[letters[0]])
			}
		}
	}
	return r
}

// manyTrials builds runs of cases with trials from (baseline passed, run passed, trials) triples, each repeated
// n times: (5, 3, 5, 2) is two cases that passed 5 of 5 trials in the baseline and 3 of 5 now. A case's score is
// its pass rate.
func manyTrials(spec ...[4]int) runs {
	var r runs
	for _, s := range spec {
		for range s[3] {
			id := fmt.Sprintf("c%05d", len(r.base))
			b := Case{ID: id, Verdict: verdict.VerdictFail, Trials: s[2], Passed: s[0], Score: float64(s[0]) / float64(s[2])}
			c := Case{ID: id, Verdict: verdict.VerdictFail, Trials: s[2], Passed: s[1], Score: float64(s[1]) / float64(s[2])}
			r.base, r.run = append(r.base, b), append(r.run, c)
			r.passDiffs = append(r.passDiffs, c.Score-b.Score)
			r.scoreDiffs = append(r.scoreDiffs, c.Score-b.Score)
		}
	}
	return r
}

func (r runs) compare() *Comparison {
	b := NewBuilder(0)
	for _, c := range r.base {
		b.AddBaselineCase(c)
	}
	for _, c := range r.run {
		b.AddRunCase(c)
	}
	c := b.Finish()
	return &c
}

func pairedBounds(alpha string, minEffect string) Bounds {
	b, err := BoundsOf(&evalsv1alpha1.Baseline{Test: ptrTest(evalsv1alpha1.BaselineTestPaired), Alpha: &alpha, MinEffect: &minEffect})
	if err != nil {
		panic(err)
	}
	b.Seed = testSeed
	return b
}

func ptrTest(t evalsv1alpha1.BaselineTest) *evalsv1alpha1.BaselineTest { return &t }

// interval is the oracle's interval of a metric's change, as the status and the message spell it.
type interval struct{ status, text [2]string }

func oracle(t *testing.T, diffs []float64, seed uint64, digits int) interval {
	t.Helper()
	iv, err := stats.BootstrapMean(diffs, stats.BootstrapOptions{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return interval{status: [2]string{signed(iv.Low, 4), signed(iv.High, 4)}, text: [2]string{signed(iv.Low, digits), signed(iv.High, digits)}}
}

// TestDecidePaired runs the Paired test over one-trial and many-trial runs, hostile ones included, and checks
// status.baseline.paired and the message in full. The p-values are exact: k/2^n for McNemar's and the exact
// sign-flip test (checked against scipy and statsmodels in internal/stats), the intervals those of the oracle.
func TestDecidePaired(t *testing.T) {
	mcnemar3010, err := stats.McNemar(30, 10)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		runs   runs
		bounds Bounds
		// digits are the message's decimals; the want strings name the intervals {pass} and {score}.
		digits    int
		regressed bool
		why       string
		want      evalsv1alpha1.PairedComparison
	}{
		{
			// statsmodels: mcnemar([[9, 9], [2, 0]], exact=True) gives 0.0654 two-sided; one-sided 67/2048.
			name: "one trial: 9 worse and 2 better of 20 is a regression", runs: oneTrial("PP", 9, "PF", 9, "FP", 2),
			bounds: pairedBounds("0.05", "0"), digits: 2, regressed: true,
			why: "pass rate fell from 0.90 to 0.55 (-0.35, 95% CI {pass}) over 20 paired cases, 9 worse and 2 better; " +
				"p = 0.033 < alpha 0.05 (McNemar exact, one-sided); mean score fell from 0.93 to 0.66 (-0.26, 95% CI {score})",
			want: evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedMcNemarExact, Cases: 20, WorseCases: 9, BetterCases: 2,
				PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "0.9000", Run: "0.5500", Delta: "-0.3500"},
				MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "0.9250", Run: "0.6625", Delta: "-0.2625"},
				PValue:    "0.032715"},
		},
		{
			// What Count with maxNewFailures 0 calls a regression (TestPairedAgainstCount): 5/16 by chance (its float,
			// 0.31249999..., reads 0.312).
			name: "one trial: 3 worse and 1 better of 20 is chance", runs: oneTrial("PP", 16, "PF", 3, "FP", 1),
			bounds: pairedBounds("0.05", "0"), digits: 2,
			why: "pass rate fell from 0.95 to 0.85 (-0.10, 95% CI {pass}) over 20 paired cases, 3 worse and 1 better; " +
				"p = 0.312, not below alpha 0.05 (McNemar exact, one-sided); mean score fell from 0.96 to 0.89 (-0.07, 95% CI {score})",
			want: evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedMcNemarExact, Cases: 20, WorseCases: 3, BetterCases: 1,
				PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "0.9500", Run: "0.8500", Delta: "-0.1000"},
				MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "0.9625", Run: "0.8875", Delta: "-0.0750"},
				PValue:    "0.312500"},
		},
		{
			name: "a drop unlikely by chance but below minEffect", runs: oneTrial("PP", 900, "PF", 30, "FP", 10, "FF", 60),
			bounds: pairedBounds("0.05", "0.05"), digits: 3,
			why: fmt.Sprintf("pass rate fell from 0.930 to 0.910 (-0.020, 95%% CI {pass}) over 1000 paired cases, 30 worse and 10 better; "+
				"p = %s < alpha 0.05 (McNemar exact, one-sided), but the drop of 0.020 is less than minEffect 0.05; "+
				"mean score fell from 0.948 to 0.932 (-0.015, 95%% CI {score})", fixed(mcnemar3010.Worse, 3)),
			want: evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedMcNemarExact, Cases: 1000, WorseCases: 30, BetterCases: 10,
				PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "0.9300", Run: "0.9100", Delta: "-0.0200"},
				MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "0.9475", Run: "0.9325", Delta: "-0.0150"},
				PValue:    fixed(mcnemar3010.Worse, 6)},
		},
		{
			name: "the same drop at least minEffect", runs: oneTrial("PP", 900, "PF", 30, "FP", 10, "FF", 60),
			bounds: pairedBounds("0.05", "0.01"), digits: 3, regressed: true,
			why: fmt.Sprintf("pass rate fell from 0.930 to 0.910 (-0.020, 95%% CI {pass}) over 1000 paired cases, 30 worse and 10 better; "+
				"p = %s < alpha 0.05 (McNemar exact, one-sided), and the drop of 0.020 is at least minEffect 0.01; "+
				"mean score fell from 0.948 to 0.932 (-0.015, 95%% CI {score})", fixed(mcnemar3010.Worse, 3)),
			want: evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedMcNemarExact, Cases: 1000, WorseCases: 30, BetterCases: 10,
				PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "0.9300", Run: "0.9100", Delta: "-0.0200"},
				MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "0.9475", Run: "0.9325", Delta: "-0.0150"},
				PValue:    fixed(mcnemar3010.Worse, 6)},
		},
		{
			// docs/statistics.md's worked example: six cases fell, none rose; 1 of the 2^6 sign patterns is as low.
			name: "five trials: the sign-flip test, exact", runs: manyTrials([4]int{5, 4, 5, 1}, [4]int{5, 5, 5, 1}, [4]int{4, 2, 5, 1},
				[4]int{5, 5, 5, 1}, [4]int{3, 1, 5, 1}, [4]int{5, 4, 5, 1}, [4]int{5, 5, 5, 1}, [4]int{4, 3, 5, 1}, [4]int{5, 5, 5, 1},
				[4]int{2, 2, 5, 1}, [4]int{5, 3, 5, 1}, [4]int{4, 4, 5, 1}),
			bounds: pairedBounds("0.05", "0.05"), digits: 2, regressed: true,
			why: "pass rate fell from 0.87 to 0.72 (-0.15, 95% CI {pass}) over 12 paired cases, 6 worse and 0 better; " +
				"p = 0.016 < alpha 0.05 (sign-flip exact, one-sided), and the drop of 0.15 is at least minEffect 0.05; " +
				"mean score fell from 0.87 to 0.72 (-0.15, 95% CI {score})",
			want: evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedSignFlipExact, Cases: 12, WorseCases: 6,
				PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "0.8667", Run: "0.7167", Delta: "-0.1500"},
				MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "0.8667", Run: "0.7167", Delta: "-0.1500"},
				PValue:    "0.015625"},
		},
		{
			// 111^3 classes of sign patterns (three magnitudes of 110 cases each) are more than 2^20: Monte Carlo,
			// where no random pattern is as low as every case falling, so p = 1/10001.
			name: "three trials, too many patterns: Monte Carlo", runs: manyTrials([4]int{3, 2, 3, 110}, [4]int{3, 1, 3, 110}, [4]int{3, 0, 3, 110}),
			bounds: pairedBounds("0.01", "0.1"), digits: 3, regressed: true,
			why: "pass rate fell from 1.000 to 0.333 (-0.667, 95% CI {pass}) over 330 paired cases, 330 worse and 0 better; " +
				"p < 0.001 < alpha 0.01 (sign-flip Monte Carlo, 10000 resamples, one-sided), and the drop of 0.667 is at least minEffect 0.1; " +
				"mean score fell from 1.000 to 0.333 (-0.667, 95% CI {score})",
			want: evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedSignFlipMonteCarlo, Cases: 330, WorseCases: 330,
				PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "1.0000", Run: "0.3333", Delta: "-0.6667"},
				MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "1.0000", Run: "0.3333", Delta: "-0.6667"},
				PValue:    "0.000100"},
		},
		{
			name: "one trial against three: the sign-flip test", runs: func() runs {
				r := manyTrials([4]int{3, 1, 3, 4})
				for i := range r.run {
					r.run[i].Trials, r.run[i].Passed, r.run[i].Score = 1, 0, 0
					r.passDiffs[i], r.scoreDiffs[i] = -1, -1
				}
				return r
			}(),
			bounds: pairedBounds("0.05", "0"), digits: 2,
			why: "pass rate fell from 1.00 to 0.00 (-1.00, 95% CI {pass}) over 4 paired cases, 4 worse and 0 better; " +
				"p = 0.062, not below alpha 0.05 (sign-flip exact, one-sided); mean score fell from 1.00 to 0.00 (-1.00, 95% CI {score})",
			want: evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedSignFlipExact, Cases: 4, WorseCases: 4,
				PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "1.0000", Run: "0.0000", Delta: "-1.0000"},
				MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "1.0000", Run: "0.0000", Delta: "-1.0000"},
				PValue:    "0.062500"},
		},
		{
			// With alpha above 1/2 a p-value can be below alpha with no drop at all: not a regression.
			name: "p below a large alpha, but nothing fell", runs: oneTrial("PP", 6, "PF", 2, "FP", 2),
			bounds: pairedBounds("0.9", "0"), digits: 2,
			why: "pass rate stayed at 0.80 (change 95% CI {pass}) over 10 paired cases, 2 worse and 2 better; " +
				"p = 0.688 < alpha 0.9 (McNemar exact, one-sided), but the pass rate did not fall; " +
				"mean score stayed at 0.85 (change 95% CI {score})",
			want: evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedMcNemarExact, Cases: 10, WorseCases: 2, BetterCases: 2,
				PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "0.8000", Run: "0.8000", Delta: "0.0000"},
				MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "0.8500", Run: "0.8500", Delta: "0.0000"},
				PValue:    "0.687500"},
		},
		{
			name: "disjoint ids: nothing to test", runs: func() runs {
				r := oneTrial("PP", 5)
				for i := range r.run {
					r.run[i].ID = "other-" + r.run[i].ID
				}
				r.passDiffs, r.scoreDiffs = nil, nil
				return r
			}(),
			bounds: pairedBounds("0.05", "0"),
			why:    "no case has a judged result in both runs, so there is nothing to test; left out: 5 only in the baseline, 5 only in this run",
			want:   evalsv1alpha1.PairedComparison{OnlyInBaselineCases: 5, OnlyInRunCases: 5},
		},
		{
			name: "both empty: nothing to test", runs: oneTrial(), bounds: pairedBounds("0.05", "0"),
			why: "no case has a judged result in both runs, so there is nothing to test",
		},
		{
			name: "every case Skipped in one run or both", runs: oneTrial("SS", 4, "PS", 3, "SF", 3), bounds: pairedBounds("0.05", "0"),
			why:  "no case has a judged result in both runs, so there is nothing to test; left out: 10 Skipped in one of them",
			want: evalsv1alpha1.PairedComparison{SkippedCases: 10},
		},
		{
			name: "no records in either run: failed trials, nothing changed", runs: oneTrial("MM", 10), bounds: pairedBounds("0.05", "0"), digits: 2,
			why: "pass rate stayed at 0.00 (change 95% CI {pass}) over 10 paired cases, 0 worse and 0 better; " +
				"p = 1, not below alpha 0.05 (McNemar exact, one-sided)",
			want: evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedMcNemarExact, Cases: 10,
				PassRate: &evalsv1alpha1.PairedEffect{Baseline: "0.0000", Run: "0.0000", Delta: "0.0000"}, PValue: "1.000000"},
		},
		{
			name: "no records in the run: every case failed", runs: oneTrial("PM", 10, "MM", 1, "SM", 2), bounds: pairedBounds("0.05", "0"), digits: 2,
			regressed: true,
			why: "pass rate fell from 0.91 to 0.00 (-0.91, 95% CI {pass}) over 11 paired cases, 10 worse and 0 better; " +
				"p = 0.001 < alpha 0.05 (McNemar exact, one-sided); left out: 2 Skipped in one of them",
			want: evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedMcNemarExact, Cases: 11, WorseCases: 10, SkippedCases: 2,
				PassRate: &evalsv1alpha1.PairedEffect{Baseline: "0.9091", Run: "0.0000", Delta: "-0.9091"}, PValue: "0.000977"},
		},
		{
			name: "errors score 0, cases without a record have no score", runs: oneTrial("PE", 6, "EP", 1, "PM", 2, "FF", 3),
			bounds: pairedBounds("0.05", "0"), digits: 2, regressed: true,
			why: "pass rate fell from 0.67 to 0.08 (-0.58, 95% CI {pass}) over 12 paired cases, 8 worse and 1 better; " +
				"p = 0.02 < alpha 0.05 (McNemar exact, one-sided); mean score fell from 0.68 to 0.17 (-0.50, 95% CI {score}) over the 10 scored in both",
			want: evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedMcNemarExact, Cases: 12, WorseCases: 8, BetterCases: 1,
				PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "0.6667", Run: "0.0833", Delta: "-0.5833"},
				MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "0.6750", Run: "0.1750", Delta: "-0.5000"},
				PValue:    "0.019531"},
		},
		{
			// Counts far beyond one trial's: the pass rates stay exact fractions, shown with 4 decimals.
			name: "huge trial counts", runs: manyTrials([4]int{1 << 40, 1 << 39, 1 << 40, 3}, [4]int{1 << 40, 1 << 40, 1 << 40, 2}),
			bounds: pairedBounds("0.05", "0"), digits: 4,
			why: "pass rate fell from 1.0000 to 0.7000 (-0.3000, 95% CI {pass}) over 5 paired cases, 3 worse and 0 better; " +
				"p = 0.125, not below alpha 0.05 (sign-flip exact, one-sided); mean score fell from 1.0000 to 0.7000 (-0.3000, 95% CI {score})",
			want: evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedSignFlipExact, Cases: 5, WorseCases: 3,
				PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "1.0000", Run: "0.7000", Delta: "-0.3000"},
				MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "1.0000", Run: "0.7000", Delta: "-0.3000"},
				PValue:    "0.125000"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.runs.compare()
			d, err := c.Decide(tc.bounds)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			why := tc.why
			if len(tc.runs.passDiffs) > 0 {
				p := oracle(t, tc.runs.passDiffs, testSeed, tc.digits)
				want.PassRate.DeltaLow, want.PassRate.DeltaHigh = p.status[0], p.status[1]
				why = strings.Replace(why, "{pass}", p.text[0]+" to "+p.text[1], 1)
			}
			if len(tc.runs.scoreDiffs) > 0 && want.MeanScore != nil {
				s := oracle(t, tc.runs.scoreDiffs, testSeed^scoreStream, tc.digits)
				want.MeanScore.DeltaLow, want.MeanScore.DeltaHigh = s.status[0], s.status[1]
				why = strings.Replace(why, "{score}", s.text[0]+" to "+s.text[1], 1)
			}
			wantDecision := Decision{Test: evalsv1alpha1.BaselineTestPaired, Regressed: tc.regressed, Why: why, Paired: &want}
			if diff := cmp.Diff(wantDecision, d); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
			st := c.Status()
			d.Record(&st)
			if st.Test != evalsv1alpha1.BaselineTestPaired || st.Paired != d.Paired {
				t.Errorf("Record: test %q, paired %p; want Paired, %p", st.Test, st.Paired, d.Paired)
			}
		})
	}
}

// TestPairedAgainstCount: on the same runs, Count with maxNewFailures 0 calls 3 new failures of 20 a regression;
// Paired does not, as p = 5/16.
func TestPairedAgainstCount(t *testing.T) {
	c := oneTrial("PP", 16, "PF", 3, "FP", 1).compare()
	count, err := c.Decide(Bounds{Test: evalsv1alpha1.BaselineTestCount})
	if err != nil || !count.Regressed {
		t.Errorf("Count: %+v, %v; want regressed", count, err)
	}
	paired, err := c.Decide(pairedBounds("0.05", "0"))
	if err != nil || paired.Regressed {
		t.Errorf("Paired: %+v, %v; want not regressed", paired, err)
	}
}

// TestPairedRepeats: the same runs and seed give the same decision whatever order the results come in; another
// seed moves only the Monte Carlo p-value and the intervals.
func TestPairedRepeats(t *testing.T) {
	r := manyTrials([4]int{3, 2, 3, 120}, [4]int{2, 3, 3, 100}, [4]int{3, 1, 3, 110}, [4]int{1, 3, 3, 105}, [4]int{3, 0, 3, 115}, [4]int{0, 3, 3, 110})
	first, err := r.compare().Decide(pairedBounds("0.05", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if first.Paired.Method != evalsv1alpha1.PairedSignFlipMonteCarlo {
		t.Fatalf("method %s, want the Monte Carlo test", first.Paired.Method)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3 {
		rng.Shuffle(len(r.base), func(i, j int) { r.base[i], r.base[j] = r.base[j], r.base[i] })
		rng.Shuffle(len(r.run), func(i, j int) { r.run[i], r.run[j] = r.run[j], r.run[i] })
		again, err := r.compare().Decide(pairedBounds("0.05", "0"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, again); diff != "" {
			t.Errorf("shuffle %d (-first +again):\n%s", i, diff)
		}
	}
	other := pairedBounds("0.05", "0")
	other.Seed++
	moved, err := r.compare().Decide(other)
	if err != nil {
		t.Fatal(err)
	}
	if moved.Paired.PValue == first.Paired.PValue && moved.Paired.PassRate.DeltaLow == first.Paired.PassRate.DeltaLow {
		t.Errorf("another seed gave the same p-value %s and interval: is the seed used?", moved.Paired.PValue)
	}
	if moved.Paired.PassRate.Delta != first.Paired.PassRate.Delta || moved.Paired.WorseCases != first.Paired.WorseCases {
		t.Errorf("another seed moved the effect: %+v, was %+v", moved.Paired.PassRate, first.Paired.PassRate)
	}
}

// TestPairedManyCases runs McNemar's test over 20,000 cases: the counts and the p-value are statsmodels' (by way
// of stats.McNemar, checked against it).
func TestPairedManyCases(t *testing.T) {
	c := oneTrial("PP", 15_000, "PF", 260, "FP", 200, "FF", 4_540).compare()
	d, err := c.Decide(pairedBounds("0.01", "0"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := stats.McNemar(260, 200)
	if err != nil {
		t.Fatal(err)
	}
	p := d.Paired
	if p.Cases != 20_000 || p.WorseCases != 260 || p.BetterCases != 200 || p.PValue != statusP(m.Worse, 0.01) || p.PassRate.Delta != "-0.0030" {
		t.Errorf("paired %+v, pass rate %+v; want 20000 cases, 260 worse, 200 better, p %s, delta -0.0030", p, p.PassRate, statusP(m.Worse, 0.01))
	}
	if d.Regressed != (m.Worse < 0.01) {
		t.Errorf("regressed %t with p %v and alpha 0.01", d.Regressed, m.Worse)
	}
}

// TestPairedRefusesImpossibleCounts: a case with more passed trials than trials comes from no stored result; the
// test refuses it, naming the case, rather than computing with it.
func TestPairedRefusesImpossibleCounts(t *testing.T) {
	r := manyTrials([4]int{3, 2, 3, 2})
	r.run[1].Passed = 4
	_, err := r.compare().Decide(pairedBounds("0.05", "0"))
	if err == nil || !strings.Contains(err.Error(), `"c00001"`) {
		t.Errorf("Decide = %v, want an error naming case c00001", err)
	}
}

// TestPText: the p-value beside alpha never reads as the other side of it.
func TestPText(t *testing.T) {
	for _, tc := range []struct {
		p     float64
		alpha string
		want  string
	}{
		{0.0107, "0.05", "p = 0.011 < alpha 0.05"},
		{0.0496, "0.05", "p = 0.0496 < alpha 0.05"},
		{0.0499999, "0.05", "p = 0.0499999 < alpha 0.05"},
		{0.05, "0.05", "p = 0.05, not below alpha 0.05"},
		{0.3126, "0.05", "p = 0.313, not below alpha 0.05"},
		{0.0625, "0.05", "p = 0.062, not below alpha 0.05"}, // ties round to even
		{1, "0.05", "p = 1, not below alpha 0.05"},
		{0.0004, "0.05", "p < 0.001 < alpha 0.05"},
		{0.00012, "0.0005", "p = 0.0001 < alpha 0.0005"},
		{0.00049996, "0.0005", "p = 0.00049996 < alpha 0.0005"},
		{4e-7, "0.000001", "p = 0.0000004 < alpha 0.000001"},
		{1e-300, "0.000001", "p < 0.0000001 < alpha 0.000001"},
		{1e-300, "0.05", "p < 0.001 < alpha 0.05"},
	} {
		alpha, _ := fraction(tc.alpha)
		rate, _ := alpha.Float64()
		if got := pText(tc.p, tc.alpha, rate); got != tc.want {
			t.Errorf("pText(%v, %s) = %q, want %q", tc.p, tc.alpha, got, tc.want)
		}
	}
}

// TestTruncated: rounding down is exact, on the float's binary value.
func TestTruncated(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want string
	}{
		{67.0 / 2048, "0.032714"},
		{0.05, "0.050000"},                 // 0.05 as a float64 is 0.05000000000000000277
		{0.049999999999999996, "0.049999"}, // the float64 just below
		{1, "1.000000"},
		{0, "0.000000"},
		{1e-300, "0.000000"},
	} {
		if got := truncated(tc.p, 6); got != tc.want {
			t.Errorf("truncated(%v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// TestStatusP: the status's p-value is rounded, and below alpha exactly when p is.
func TestStatusP(t *testing.T) {
	for _, tc := range []struct {
		p, alpha float64
		want     string
	}{
		{0.31249999999999994, 0.05, "0.312500"}, // McNemar's 5/16 as the incomplete beta gives it
		{0.0499999, 0.05, "0.049999"},           // rounds to 0.050000: rounded down instead
		{0.05, 0.05, "0.050000"},
		{0.0500004, 0.05, "0.050000"},
		{0.0000004, 0.000001, "0.000000"},
		{0.0000009, 0.000001, "0.000000"}, // rounds to alpha: rounded down
		{0.0000009, 0.05, "0.000001"},
		{1, 0.05, "1.000000"},
	} {
		if got := statusP(tc.p, tc.alpha); got != tc.want {
			t.Errorf("statusP(%v, %v) = %q, want %q", tc.p, tc.alpha, got, tc.want)
		}
	}
}

func TestClamp32(t *testing.T) {
	if clamp32(1<<40) != 1<<31-1 || clamp32(7) != 7 {
		t.Errorf("clamp32: %d, %d", clamp32(1<<40), clamp32(7))
	}
}

// BenchmarkPaired100k is the Paired test over two runs of 100,000 one-trial cases (every 50th case flipped): what
// the manager adds to the Count comparison for test: Paired.
func BenchmarkPaired100k(b *testing.B) {
	const n = 100_000
	r := oneTrial("PP", n/2, "PF", n/100, "FP", n/200, "FF", n/2-n/100-n/200)
	c := r.compare()
	bounds := pairedBounds("0.05", "0")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Decide(bounds); err != nil {
			b.Fatal(err)
		}
	}
}
