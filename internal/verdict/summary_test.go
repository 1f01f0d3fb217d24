package verdict

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummary(t *testing.T) {
	tests := []struct {
		name    string
		results []CaseResult
		want    Summary
	}{
		{name: "empty", want: Summary{}},
		{
			name: "every verdict, bins at their edges, even median",
			results: []CaseResult{
				{Verdict: VerdictPass, Score: 1}, {Verdict: VerdictPass, Score: 0.8}, {Verdict: VerdictFail, Score: 0.7999},
				{Verdict: VerdictFail, Score: 0.6}, {Verdict: VerdictFail, Score: 0.4}, {Verdict: VerdictFail, Score: 0.2},
				{Verdict: VerdictFail, Score: 0.1999}, {Verdict: VerdictFail, Score: 0},
				{Verdict: VerdictSkipped}, ErrorCase("e", "runner failed"), MissingCase("m1"), MissingCase("m2"),
			},
			want: Summary{Total: 12, Passed: 2, Failed: 6, Errored: 3, Skipped: 1, Missing: 2, Judged: 8,
				MeanScore: (1 + 0.8 + 0.7999 + 0.6 + 0.4 + 0.2 + 0.1999) / 8, MedianScore: (0.4 + 0.6) / 2, MinScore: 0, MaxScore: 1,
				Histogram: [5]int{2, 1, 1, 2, 2}},
		},
		{
			name:    "odd median, scores clamped",
			results: []CaseResult{{Verdict: VerdictFail, Score: 0.3}, {Verdict: VerdictPass, Score: 1.5}, {Verdict: VerdictFail, Score: 0.5}},
			want: Summary{Total: 3, Passed: 1, Failed: 2, Judged: 3, MeanScore: 0.6, MedianScore: 0.5, MinScore: 0.3, MaxScore: 1,
				Histogram: [5]int{0, 1, 1, 0, 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.results)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 })); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
	if got := (Summary{Total: 4, Passed: 3}).PassRate(); got != 0.75 {
		t.Errorf("PassRate = %v, want 0.75", got)
	}
}

func BenchmarkSummaryBuilder100k(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var sb SummaryBuilder
		for k := 0; k < 100000; k++ {
			v := VerdictPass
			if k%3 == 0 {
				v = VerdictFail
			}
			sb.Add(CaseResult{Verdict: v, Score: float64(k%1000) / 1000})
		}
		_ = sb.Summary()
	}
}
