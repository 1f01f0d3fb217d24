package stats

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// passFail builds one-trial cases named c00, c01, ... from their verdicts.
func passFail(verdicts ...bool) []Case {
	out := make([]Case, len(verdicts))
	for i, v := range verdicts {
		out[i] = Case{ID: fmt.Sprintf("c%02d", i), Trials: 1}
		if v {
			out[i].Passed, out[i].Score = 1, 1
		}
	}
	return out
}

// repeat returns n copies of v.
func repeat(v bool, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// trials builds cases with 5 trials from their passed counts, the score being the pass rate.
func trials(passed ...int) []Case {
	out := make([]Case, len(passed))
	for i, p := range passed {
		out[i] = Case{ID: fmt.Sprintf("c%02d", i), Passed: p, Trials: 5, Score: float64(p) / 5}
	}
	return out
}

func TestPaired(t *testing.T) {
	// 20 cases, one trial: 9 both pass, 9 pass -> fail, 2 fail -> pass.
	baseN1 := passFail(append(repeat(true, 18), repeat(false, 2)...)...)
	curN1 := passFail(append(append(repeat(true, 9), repeat(false, 9)...), repeat(true, 2)...)...)
	// 10 cases, 5 trials: 7 fell by one or two trials, one rose.
	baseN5 := trials(5, 5, 4, 5, 4, 5, 3, 4, 5, 2)
	curN5 := trials(4, 3, 3, 4, 4, 5, 2, 3, 4, 3)
	ignore := cmpopts.IgnoreFields(PairedResult{}, "Effect", "Message")
	tests := []struct {
		name          string
		base, cur     []Case
		opts          PairedOptions
		want          PairedResult
		wantMessage   string
		wantEffectMid float64
	}{
		{
			name: "one trial: McNemar", base: baseN1, cur: curN1,
			want: PairedResult{Test: MethodMcNemar, Metric: MetricPassRate, Pairs: 20, Fell: 9, Rose: 2,
				BaselineMean: 0.9, CurrentMean: 0.55, PValue: 67.0 / 2048, TwoSidedPValue: 134.0 / 2048, Exact: true,
				Alpha: 0.05, Regressed: true},
			wantEffectMid: -0.35,
			wantMessage:   "pass rate fell 35.0 points (95% CI -60.0 to -5.0) over 20 paired cases; p = 0.033 (McNemar exact on 11 discordant cases, one-sided), below alpha 0.05",
		},
		{
			name: "one trial, alpha 0.01: not below", base: baseN1, cur: curN1, opts: PairedOptions{Alpha: 0.01},
			want: PairedResult{Test: MethodMcNemar, Metric: MetricPassRate, Pairs: 20, Fell: 9, Rose: 2,
				BaselineMean: 0.9, CurrentMean: 0.55, PValue: 67.0 / 2048, TwoSidedPValue: 134.0 / 2048, Exact: true,
				Alpha: 0.01},
			wantEffectMid: -0.35,
			wantMessage:   "pass rate fell 35.0 points (95% CI -60.0 to -5.0) over 20 paired cases; p = 0.033 (McNemar exact on 11 discordant cases, one-sided), not below alpha 0.01",
		},
		{
			name: "one trial, a drop below the minimum effect", base: baseN1, cur: curN1, opts: PairedOptions{MinEffect: 0.4},
			want: PairedResult{Test: MethodMcNemar, Metric: MetricPassRate, Pairs: 20, Fell: 9, Rose: 2,
				BaselineMean: 0.9, CurrentMean: 0.55, PValue: 67.0 / 2048, TwoSidedPValue: 134.0 / 2048, Exact: true,
				Alpha: 0.05, MinEffect: 0.4},
			wantEffectMid: -0.35,
			wantMessage:   "pass rate fell 35.0 points (95% CI -60.0 to -5.0) over 20 paired cases; p = 0.033 (McNemar exact on 11 discordant cases, one-sided), below alpha 0.05, but the drop is less than the minimum effect of 40.0 points",
		},
		{
			name: "one trial, a drop of exactly the minimum effect", base: baseN1, cur: curN1, opts: PairedOptions{MinEffect: 0.35},
			want: PairedResult{Test: MethodMcNemar, Metric: MetricPassRate, Pairs: 20, Fell: 9, Rose: 2,
				BaselineMean: 0.9, CurrentMean: 0.55, PValue: 67.0 / 2048, TwoSidedPValue: 134.0 / 2048, Exact: true,
				Alpha: 0.05, MinEffect: 0.35, Regressed: true},
			wantEffectMid: -0.35,
			wantMessage:   "pass rate fell 35.0 points (95% CI -60.0 to -5.0) over 20 paired cases; p = 0.033 (McNemar exact on 11 discordant cases, one-sided), below alpha 0.05, and the drop is at least the minimum effect of 35.0 points",
		},
		{
			name: "five trials: sign-flip on pass rates", base: baseN5, cur: curN5,
			// Differences -0.2 ×6, -0.4, +0.2, 0 ×2 (sum -1.4, -7 steps of 0.2): the seven ±1 steps and one ±2
			// reach -7 only with -2 and six or seven -1s: (7 + 1)/2^8.
			want: PairedResult{Test: MethodSignFlip, Metric: MetricPassRate, Pairs: 10, Fell: 7, Rose: 1,
				BaselineMean: 0.84, CurrentMean: 0.7, PValue: 8.0 / 256, TwoSidedPValue: 16.0 / 256, Exact: true,
				Alpha: 0.05, Regressed: true},
			wantEffectMid: -0.14,
			wantMessage:   "pass rate fell 14.0 points (95% CI -24.0 to -4.0) over 10 paired cases; p = 0.031 (sign-flip, exact, one-sided), below alpha 0.05",
		},
		{
			name: "five trials, the other way round", base: curN5, cur: baseN5,
			want: PairedResult{Test: MethodSignFlip, Metric: MetricPassRate, Pairs: 10, Fell: 1, Rose: 7,
				BaselineMean: 0.7, CurrentMean: 0.84, PValue: 255.0 / 256, TwoSidedPValue: 16.0 / 256, Exact: true,
				Alpha: 0.05},
			wantEffectMid: 0.14,
			wantMessage:   "pass rate rose 14.0 points (95% CI 4.0 to 24.0) over 10 paired cases; p = 0.996 (sign-flip, exact, one-sided), not below alpha 0.05",
		},
		{
			name: "one trial, score metric: the sign-flip test", base: baseN1, cur: curN1, opts: PairedOptions{Metric: MetricScore},
			want: PairedResult{Test: MethodSignFlip, Metric: MetricScore, Pairs: 20, Fell: 9, Rose: 2,
				BaselineMean: 0.9, CurrentMean: 0.55, PValue: 67.0 / 2048, TwoSidedPValue: 134.0 / 2048, Exact: true,
				Alpha: 0.05, Regressed: true},
			wantEffectMid: -0.35,
			wantMessage:   "mean score fell 0.350 (95% CI -0.600 to -0.050) over 20 paired cases; p = 0.033 (sign-flip, exact, one-sided), below alpha 0.05",
		},
		{
			name: "no change", base: baseN5, cur: baseN5,
			want: PairedResult{Test: MethodSignFlip, Metric: MetricPassRate, Pairs: 10,
				BaselineMean: 0.84, CurrentMean: 0.84, PValue: 1, TwoSidedPValue: 1, Exact: true, Alpha: 0.05},
			wantMessage: "pass rate did not change (95% CI 0.0 to 0.0) over 10 paired cases; p = 1 (sign-flip, exact, one-sided), not below alpha 0.05",
		},
		{
			name: "unpaired cases are counted, not compared", base: baseN5[:8], cur: append(trials(0, 0), curN5[2:]...),
			// c00..c07 are in both (c00 and c01 fell 5 -> 0, four others by one trial, two alike); c08 and c09 are
			// in the current run only. All six nonzero differences are negative: p = 1/2^6.
			want: PairedResult{Test: MethodSignFlip, Metric: MetricPassRate, Pairs: 8, OnlyCurrent: 2, Fell: 6,
				BaselineMean: 4.375 / 5, CurrentMean: 2.625 / 5, PValue: 1.0 / 64, TwoSidedPValue: 2.0 / 64, Exact: true,
				Alpha: 0.05, Regressed: true},
			wantEffectMid: -0.35,
			wantMessage:   "pass rate fell 35.0 points (95% CI -60.0 to -12.5) over 8 paired cases; p = 0.016 (sign-flip, exact, one-sided), below alpha 0.05",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Paired(tt.base, tt.cur, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, ignore, approx); diff != "" {
				t.Errorf("Paired (-want +got):\n%s", diff)
			}
			if got.Message != tt.wantMessage {
				t.Errorf("message:\n got %s\nwant %s", got.Message, tt.wantMessage)
			}
			if !near(got.Effect.Estimate, tt.wantEffectMid, 1e-12) || got.Effect.Level != 0.95 ||
				got.Effect.Low > got.Effect.Estimate || got.Effect.High < got.Effect.Estimate {
				t.Errorf("effect %+v; want %v inside a 95%% interval", got.Effect, tt.wantEffectMid)
			}
		})
	}
}

// TestPairedOrder: the result is a function of the cases, not of their order.
func TestPairedOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	base := make([]Case, 300)
	cur := make([]Case, 300)
	for i := range base {
		id := fmt.Sprintf("case-%03d", i)
		base[i] = Case{ID: id, Passed: r.IntN(4), Trials: 3, Score: r.Float64()}
		cur[i] = Case{ID: id, Passed: r.IntN(4), Trials: 3, Score: r.Float64()}
	}
	for _, metric := range []Metric{MetricPassRate, MetricScore} {
		a, err := Paired(base, cur, PairedOptions{Metric: metric, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		r.Shuffle(len(base), func(i, j int) { base[i], base[j] = base[j], base[i] })
		r.Shuffle(len(cur), func(i, j int) { cur[i], cur[j] = cur[j], cur[i] })
		b, err := Paired(base, cur, PairedOptions{Metric: metric, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("%s: shuffled cases (-first +second):\n%s", metric, diff)
		}
		if metric == MetricScore && a.Exact {
			t.Errorf("300 distinct score differences gave an exact test; the Monte Carlo path is not exercised")
		}
	}
}

func TestPairedErrors(t *testing.T) {
	ok := trials(5, 4)
	tests := []struct {
		name      string
		base, cur []Case
		opts      PairedOptions
		want      string
	}{
		{"alpha 1", ok, ok, PairedOptions{Alpha: 1}, "paired comparison: alpha 1 must lie strictly between 0 and 1"},
		{"negative minimum effect", ok, ok, PairedOptions{MinEffect: -0.1}, "paired comparison: minimum effect -0.1 must be a finite number >= 0"},
		{"unknown metric", ok, ok, PairedOptions{Metric: "Latency"}, `paired comparison: metric "Latency" is not one of "PassRate", "Score"`},
		{"no pairs", trials(5), []Case{{ID: "other", Passed: 1, Trials: 1}}, PairedOptions{},
			"paired comparison: no case is in both runs (1 in the baseline only, 1 in the current run only)"},
		{"baseline id twice", append(trials(5), trials(4)...), ok, PairedOptions{}, `paired comparison: baseline case "c00" appears twice`},
		{"current id twice", ok, append(trials(5), trials(4)...), PairedOptions{}, `paired comparison: current case "c00" appears twice`},
		{"invalid baseline case", []Case{{ID: "c00", Passed: 1, Trials: 0}}, ok, PairedOptions{},
			`paired comparison: baseline case "c00": 1 passed of 0 trials: want 0 <= passed <= trials and trials >= 1`},
		{"NaN score", ok, []Case{{ID: "c00", Passed: 1, Trials: 1, Score: nan()}}, PairedOptions{},
			`paired comparison: current case "c00": score NaN is not a finite number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Paired(tt.base, tt.cur, tt.opts)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func nan() float64 {
	var zero float64
	return zero / zero
}

func TestFormatP(t *testing.T) {
	for _, tt := range []struct {
		p    float64
		want string
	}{{1, "p = 1"}, {0.5, "p = 0.5"}, {0.05, "p = 0.05"}, {0.0031, "p = 0.003"}, {0.0327, "p = 0.033"}, {0.001, "p = 0.001"}, {0.00099, "p < 0.001"}, {0.9996, "p = 1"}} {
		if got := formatP(tt.p); got != tt.want {
			t.Errorf("formatP(%v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}
