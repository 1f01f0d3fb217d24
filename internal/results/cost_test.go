package results

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

func f(v float64) *float64 { return &v }

// The runner's figures are hostile: NaN, negative, infinite and huge values must leave the sums finite,
// non-negative and saturated, never wrapped.
func TestCostSumHostileValues(t *testing.T) {
	tests := []struct {
		name string
		in   []CaseUsage
		want *evalsv1alpha1.RunCost
	}{
		{name: "nothing", in: nil, want: nil},
		{name: "a missing case", in: []CaseUsage{{}}, want: nil},
		{
			name: "ordinary",
			in: []CaseUsage{
				{Recorded: true, TokenUsage: &jsonlresult.TokenUsage{Input: 100, Output: 20, Cached: f(5)}, CostUSD: f(0.0123), DurationMs: f(1500.4)},
				{Recorded: true, TokenUsage: &jsonlresult.TokenUsage{Input: 1, Output: 2}, CostUSD: f(0.1), DurationMs: f(0.6)},
				{Recorded: true},
			},
			want: &evalsv1alpha1.RunCost{Runner: &evalsv1alpha1.RunnerCost{Cases: 3, TokenUsageCases: 2, InputTokens: 101,
				OutputTokens: 22, CachedTokens: 5, TotalTokens: 128, CostCases: 2, CostUSD: "0.1123", DurationCases: 2,
				DurationMilliseconds: 1501}},
		},
		{
			name: "NaN, negative and infinite count as zero; huge saturates",
			in: []CaseUsage{
				{Recorded: true, CostUSD: f(math.NaN()), DurationMs: f(-5), TokenUsage: &jsonlresult.TokenUsage{Input: math.Inf(-1), Output: math.NaN()}},
				{Recorded: true, CostUSD: f(1e308), DurationMs: f(math.Inf(1)), TokenUsage: &jsonlresult.TokenUsage{Input: 1e300, Output: 1e19}},
				{Recorded: true, CostUSD: f(1e308), DurationMs: f(1e308), TokenUsage: &jsonlresult.TokenUsage{Input: 1e300, Output: 1}},
			},
			want: &evalsv1alpha1.RunCost{Runner: &evalsv1alpha1.RunnerCost{Cases: 3, TokenUsageCases: 3, InputTokens: math.MaxInt64,
				OutputTokens: math.MaxInt64, TotalTokens: math.MaxInt64, CostCases: 3, CostUSD: "9223372036.854775807",
				DurationCases: 3, DurationMilliseconds: math.MaxInt64}},
		},
		{
			name: "judges and carried results apart",
			in: []CaseUsage{
				{Recorded: true, Judges: &verdict.Usage{Calls: 2, PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15, LatencyMs: 30}},
				{Recorded: true, Carried: true, CostUSD: f(2), Judges: &verdict.Usage{Calls: 1, TotalTokens: math.MaxInt64}},
				{Recorded: true, Carried: true, Judges: &verdict.Usage{Calls: 1, TotalTokens: math.MaxInt64}},
			},
			want: &evalsv1alpha1.RunCost{
				Runner: &evalsv1alpha1.RunnerCost{Cases: 1, CostUSD: "0"},
				Judges: &evalsv1alpha1.JudgeUsage{Calls: 2, PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15, LatencyMilliseconds: 30},
				Carried: &evalsv1alpha1.CarriedCost{
					Runner: &evalsv1alpha1.RunnerCost{Cases: 2, CostCases: 1, CostUSD: "2"},
					Judges: &evalsv1alpha1.JudgeUsage{Calls: 2, TotalTokens: math.MaxInt64},
				},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s CostSum
			for _, u := range tc.in {
				s.Add(u)
			}
			if diff := cmp.Diff(tc.want, s.Status()); diff != "" {
				t.Errorf("cost (-want +got):\n%s", diff)
			}
		})
	}
}

// 100,000 costs sum to the same exact decimal in any order, within half a nanodollar per case of the exact sum of
// the reported values (float64 summation in order would drift and depend on the order).
func TestCostSumExactAndOrderFree(t *testing.T) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(1, 2))
	costs := make([]float64, n)
	for i := range costs {
		costs[i] = rng.Float64() * 0.05
	}
	sum := func(order []int) string {
		var s CostSum
		for _, i := range order {
			s.Add(CaseUsage{Recorded: true, CostUSD: &costs[i]})
		}
		return s.Status().Runner.CostUSD
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	first := sum(order)
	rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	if second := sum(order); second != first {
		t.Errorf("the sum depends on the order: %s, then %s", first, second)
	}
	// The exact sum of the float64 values, in nanodollars, by pairs of big integers would be the reference; the
	// per-case rounding bounds the difference at n/2 nanodollars.
	var exact float64
	var comp float64 // Neumaier's compensation: accurate to far under a nanodollar here
	for _, c := range costs {
		t := exact + c
		if math.Abs(exact) >= math.Abs(c) {
			comp += (exact - t) + c
		} else {
			comp += (c - t) + exact
		}
		exact = t
	}
	got, err := ParseUSDNanos(first)
	if err != nil {
		t.Fatal(err)
	}
	if diff := math.Abs(float64(got) - (exact+comp)*nanosPerUSD); diff > n/2 {
		t.Errorf("sum %s is %.0f nanodollars from the exact sum", first, diff)
	}
}

func TestFormatAndParseUSDNanos(t *testing.T) {
	for _, tc := range []struct {
		nanos int64
		text  string
	}{{0, "0"}, {1, "0.000000001"}, {12_500_000_000, "12.5"}, {math.MaxInt64, "9223372036.854775807"}} {
		if got := FormatUSDNanos(tc.nanos); got != tc.text {
			t.Errorf("FormatUSDNanos(%d) = %q, want %q", tc.nanos, got, tc.text)
		}
		if got, err := ParseUSDNanos(tc.text); err != nil || got != tc.nanos {
			t.Errorf("ParseUSDNanos(%q) = %d, %v, want %d", tc.text, got, err, tc.nanos)
		}
	}
	if got, err := ParseUSDNanos("99999999999999999999999.5"); err != nil || got != math.MaxInt64 {
		t.Errorf("a huge amount = %d, %v, want the maximum", got, err)
	}
	for _, bad := range []string{"", ".5", "1.", "-1", "1e3", "0.0000000001", "1,5", "NaN"} {
		if _, err := ParseUSDNanos(bad); err == nil {
			t.Errorf("ParseUSDNanos(%q) accepted", bad)
		}
	}
}

// The collector's Builder sums each case's usage into the section, with the budgets its collection reached; the
// Merger sums stored results (carried ones apart) and the budgets of every shard.
func TestSectionCost(t *testing.T) {
	line := func(id string, cost float64, carried string) Line {
		return Line{CaseResult: verdict.CaseResult{ID: id, Verdict: verdict.VerdictPass, Score: 1,
			ModelUsage: &verdict.Usage{Calls: 1, TotalTokens: 10}}, CostUSD: f(cost), CarriedFrom: carried}
	}
	at := metav1.Now()
	b := NewBuilder(Options{ConfigMaps: []string{"r-0"}})
	for i, l := range []Line{line("a", 0.25, ""), line("b", 0.5, "")} {
		if err := b.Add(Case{Index: i, Status: l.Status(), Line: storedLine(t, l), Usage: l.Usage()}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Finish(Tail{Collection: evalsv1alpha1.CollectionStatus{CollectedAt: &at},
		Budgets: []evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetJudgeTokens}})
	if err != nil {
		t.Fatal(err)
	}
	want := &evalsv1alpha1.RunCost{Runner: &evalsv1alpha1.RunnerCost{Cases: 2, CostCases: 2, CostUSD: "0.75"},
		Judges:          &evalsv1alpha1.JudgeUsage{Calls: 2, TotalTokens: 20},
		BudgetsExceeded: []evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetJudgeTokens}}
	if diff := cmp.Diff(want, out.Section.Cost); diff != "" {
		t.Errorf("collector's cost (-want +got):\n%s", diff)
	}

	carried, err := Chunks([]string{"c-0"}, [][]byte{storedLine(t, line("c", 1, "earlier"))})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMerger([]string{"a", "b", "c"}, []string{"r-0", "c-0"}, nil, evalsv1alpha1.DefaultStatusBudgetBytes)
	for _, data := range [][]byte{out.Chunks[0].Data, carried[0].Data} {
		if err := m.AddChunk(data); err != nil {
			t.Fatal(err)
		}
	}
	m.AddCollection(&out.Section, nil, nil)
	m.AddCollection(&Section{Cost: &evalsv1alpha1.RunCost{BudgetsExceeded: []evalsv1alpha1.BudgetKind{
		evalsv1alpha1.BudgetJudgeRequests, evalsv1alpha1.BudgetJudgeTokens}}}, nil, nil)
	merged, err := m.Finish(func(int) string { return "" }, func(int) (int32, bool) { return 0, false }, at)
	if err != nil {
		t.Fatal(err)
	}
	want = &evalsv1alpha1.RunCost{Runner: &evalsv1alpha1.RunnerCost{Cases: 2, CostCases: 2, CostUSD: "0.75"},
		Judges: &evalsv1alpha1.JudgeUsage{Calls: 2, TotalTokens: 20},
		Carried: &evalsv1alpha1.CarriedCost{Runner: &evalsv1alpha1.RunnerCost{Cases: 1, CostCases: 1, CostUSD: "1"},
			Judges: &evalsv1alpha1.JudgeUsage{Calls: 1, TotalTokens: 10}},
		BudgetsExceeded: []evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetJudgeRequests, evalsv1alpha1.BudgetJudgeTokens}}
	if diff := cmp.Diff(want, merged.Cost); diff != "" {
		t.Errorf("merged cost (-want +got):\n%s", diff)
	}
}

// An EvalSchedule's cost sums its finished runs' own figures, saturating; runs without a cost still count as runs.
func TestSumRunCosts(t *testing.T) {
	if got := SumRunCosts(nil); got != nil {
		t.Errorf("no runs: %+v", got)
	}
	got := SumRunCosts([]*evalsv1alpha1.RunCost{
		{Runner: &evalsv1alpha1.RunnerCost{Cases: 2, CostCases: 2, CostUSD: "0.5", InputTokens: math.MaxInt64},
			Judges: &evalsv1alpha1.JudgeUsage{Calls: 3, TotalTokens: 30}},
		nil,
		{Runner: &evalsv1alpha1.RunnerCost{Cases: 1, CostCases: 1, CostUSD: "0.25", InputTokens: 5},
			Carried: &evalsv1alpha1.CarriedCost{Runner: &evalsv1alpha1.RunnerCost{CostUSD: "100"}}},
	})
	want := &evalsv1alpha1.ScheduleCost{Runs: 3,
		Runner: &evalsv1alpha1.RunnerCost{Cases: 3, CostCases: 3, CostUSD: "0.75", InputTokens: math.MaxInt64},
		Judges: &evalsv1alpha1.JudgeUsage{Calls: 3, TotalTokens: 30}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schedule cost (-want +got):\n%s", diff)
	}
}
