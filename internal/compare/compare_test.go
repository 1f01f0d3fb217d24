package compare

import (
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

func line(id string, v verdict.Verdict, score float64) *results.Line {
	return &results.Line{CaseResult: verdict.CaseResult{ID: id, Verdict: v, Score: score}}
}

func missing(id string) *results.Line {
	return &results.Line{CaseResult: verdict.CaseResult{ID: id, Verdict: verdict.VerdictError, Missing: true}}
}

// TestComparison covers every transition a case can make between the baseline and the run: a repeated id keeps
// its first line (a hostile repeat cannot turn a failure into a pass), Skipped leaves a case out of the means,
// Error counts 0, a missing record is missing, and the lists stop at the limit while the counts go on.
func TestComparison(t *testing.T) {
	b := NewBuilder(2)
	for _, l := range []*results.Line{
		line("pass-pass", verdict.VerdictPass, 1), line("pass-fail", verdict.VerdictPass, 0.9),
		line("pass-error", verdict.VerdictPass, 1), line("fail-pass", verdict.VerdictFail, 0.2),
		line("pass-missing", verdict.VerdictPass, 1), missing("missing-pass"), line("skip-pass", verdict.VerdictSkipped, 0),
		line("pass-gone", verdict.VerdictPass, 1), line("pass-gone-2", verdict.VerdictPass, 1), line("pass-gone-3", verdict.VerdictPass, 1),
		line("pass-fail", verdict.VerdictFail, 0),
	} {
		b.AddBaseline(l)
	}
	for _, l := range []*results.Line{
		line("pass-pass", verdict.VerdictPass, 0.8), line("pass-fail", verdict.VerdictFail, 0.4),
		line("pass-error", verdict.VerdictError, 0.7), line("fail-pass", verdict.VerdictPass, 1),
		missing("pass-missing"), line("missing-pass", verdict.VerdictPass, 1), line("skip-pass", verdict.VerdictPass, 1),
		line("new", verdict.VerdictFail, 0), line("pass-fail", verdict.VerdictPass, 1),
	} {
		b.AddRun(l)
	}
	c := b.Finish()
	want := Comparison{
		Shared:       7,
		NewlyFailing: []string{"pass-fail", "pass-error"}, NewlyFailingCount: 3,
		NewlyPassing: []string{"fail-pass", "missing-pass"}, NewlyPassingCount: 3,
		MissingInRun: []string{"pass-missing", "pass-gone"}, MissingInRunCount: 4,
		MissingInBaseline: []string{"missing-pass", "new"}, MissingInBaselineCount: 2,
		// pass-pass, pass-fail, pass-error, fail-pass: run 0.8+0.4+0+1, baseline 1+0.9+1+0.2.
		Scored: 4, MeanScore: 2.2 / 4, BaselineMeanScore: 3.1 / 4,
	}
	if diff := cmp.Diff(want, c, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("comparison (-want +got):\n%s", diff)
	}
	st := c.Status()
	if st.MeanScore != "0.5500" || st.BaselineMeanScore != "0.7750" || st.MeanScoreDelta != "-0.2250" {
		t.Errorf("scores %s %s %s", st.MeanScore, st.BaselineMeanScore, st.MeanScoreDelta)
	}
}

func TestRegressed(t *testing.T) {
	c := Comparison{NewlyFailing: []string{"a", "b"}, NewlyFailingCount: 7, Scored: 3, MeanScore: 0.5, BaselineMeanScore: 0.75}
	for _, tc := range []struct {
		name   string
		bounds Bounds
		want   bool
		msg    string
	}{
		{"new failures over the bound", Bounds{MaxNewFailures: 6}, true, `7 newly failing cases (at most 6 allowed): "a", "b" and 5 more`},
		{"new failures within", Bounds{MaxNewFailures: 7}, false, "7 newly failing cases (at most 7 allowed)"},
		{"score drop over", Bounds{MaxNewFailures: 7, MaxScoreDrop: big.NewRat(1, 5)}, true,
			"7 newly failing cases (at most 7 allowed); mean score fell by 0.2500 (at most 0.2000 allowed)"},
		{"score drop exactly at the bound", Bounds{MaxNewFailures: 7, MaxScoreDrop: big.NewRat(1, 4)}, false,
			"7 newly failing cases (at most 7 allowed); mean score delta -0.2500 (a fall of at most 0.2500 allowed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := c.Regressed(tc.bounds)
			if got != tc.want || msg != tc.msg {
				t.Errorf("Regressed = %t, %q; want %t, %q", got, msg, tc.want, tc.msg)
			}
		})
	}
}

func TestBoundsOf(t *testing.T) {
	drop, n := "0.05", int32(2)
	b, err := BoundsOf(&evalsv1alpha1.Baseline{MaxNewFailures: &n, MaxScoreDrop: &drop})
	if err != nil || b.MaxNewFailures != 2 || b.MaxScoreDrop.Cmp(big.NewRat(1, 20)) != 0 {
		t.Errorf("BoundsOf = %+v, %v", b, err)
	}
	bad := "-1"
	if _, err := BoundsOf(&evalsv1alpha1.Baseline{MaxScoreDrop: &bad}); err == nil {
		t.Error("a negative maxScoreDrop was accepted")
	}
}
