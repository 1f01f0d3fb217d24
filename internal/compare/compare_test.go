package compare

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

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
		OnlyInBaseline: 3, OnlyInRun: 1,
	}
	if diff := cmp.Diff(want, c, cmpopts.EquateApprox(0, 1e-12), cmpopts.IgnoreUnexported(Comparison{})); diff != "" {
		t.Errorf("comparison (-want +got):\n%s", diff)
	}
	// The shared cases as the Paired test reads them, in the run's order: a missing record is a failed trial with
	// no score, a Skipped result no trial at all, an Error a failed trial scoring 0.
	wantPairs := []pair{
		{"pass-pass", trials{1, 1, 1, true}, trials{1, 1, 0.8, true}},
		{"pass-fail", trials{1, 1, 0.9, true}, trials{0, 1, 0.4, true}},
		{"pass-error", trials{1, 1, 1, true}, trials{0, 1, 0, true}},
		{"fail-pass", trials{0, 1, 0.2, true}, trials{1, 1, 1, true}},
		{"pass-missing", trials{1, 1, 1, true}, trials{0, 1, 0, false}},
		{"missing-pass", trials{0, 1, 0, false}, trials{1, 1, 1, true}},
		{"skip-pass", trials{0, 0, 0, false}, trials{1, 1, 1, true}},
	}
	if diff := cmp.Diff(wantPairs, c.pairs, cmp.AllowUnexported(pair{}, trials{})); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}
	st := c.Status()
	if st.MeanScore != "0.5500" || st.BaselineMeanScore != "0.7750" || st.MeanScoreDelta != "-0.2250" {
		t.Errorf("scores %s %s %s", st.MeanScore, st.BaselineMeanScore, st.MeanScoreDelta)
	}
}

// TestCaseOf: a stored line is one trial, passed only when Pass, not counted when Skipped.
func TestCaseOf(t *testing.T) {
	for _, tc := range []struct {
		line *results.Line
		want Case
	}{
		{line("a", verdict.VerdictPass, 0.9), Case{ID: "a", Verdict: verdict.VerdictPass, Score: 0.9, Trials: 1, Passed: 1}},
		{line("b", verdict.VerdictFail, 0.3), Case{ID: "b", Verdict: verdict.VerdictFail, Score: 0.3, Trials: 1}},
		{line("c", verdict.VerdictError, 0), Case{ID: "c", Verdict: verdict.VerdictError, Trials: 1}},
		{line("d", verdict.VerdictSkipped, 0), Case{ID: "d", Verdict: verdict.VerdictSkipped}},
		{missing("e"), Case{ID: "e", Verdict: verdict.VerdictError, Missing: true, Trials: 1}},
		// A hostile line that is both missing and Pass is still not a pass.
		{&results.Line{CaseResult: verdict.CaseResult{ID: "f", Verdict: verdict.VerdictPass, Missing: true}},
			Case{ID: "f", Verdict: verdict.VerdictPass, Missing: true, Trials: 1}},
	} {
		if diff := cmp.Diff(tc.want, CaseOf(tc.line), cmp.AllowUnexported(Case{})); diff != "" {
			t.Errorf("CaseOf(%s) (-want +got):\n%s", tc.line.ID, diff)
		}
	}
}

// TestDecideCount is the Count test through Decide: newly failing cases against maxNewFailures, the mean score
// against maxScoreDrop; it sets no paired result.
func TestDecideCount(t *testing.T) {
	c := Comparison{NewlyFailing: []string{"a", "b"}, NewlyFailingCount: 7, Scored: 3, MeanScore: 0.5, BaselineMeanScore: 0.75}
	count := evalsv1alpha1.BaselineTestCount
	for _, tc := range []struct {
		name   string
		bounds Bounds
		want   bool
		msg    string
	}{
		{"new failures over the bound", Bounds{Test: count, MaxNewFailures: 6}, true, `7 newly failing cases (at most 6 allowed): "a", "b" and 5 more`},
		{"new failures within", Bounds{Test: count, MaxNewFailures: 7}, false, "7 newly failing cases (at most 7 allowed)"},
		{"score drop over", Bounds{Test: count, MaxNewFailures: 7, MaxScoreDrop: big.NewRat(1, 5)}, true,
			"7 newly failing cases (at most 7 allowed); mean score fell by 0.2500 (at most 0.2000 allowed)"},
		{"score drop exactly at the bound", Bounds{Test: count, MaxNewFailures: 7, MaxScoreDrop: big.NewRat(1, 4)}, false,
			"7 newly failing cases (at most 7 allowed); mean score delta -0.2500 (a fall of at most 0.2500 allowed)"},
		{"the zero Bounds is Count", Bounds{}, true, `7 newly failing cases (at most 0 allowed): "a", "b" and 5 more`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := c.Decide(tc.bounds)
			if err != nil {
				t.Fatal(err)
			}
			want := Decision{Test: count, Regressed: tc.want, Why: tc.msg}
			if diff := cmp.Diff(want, d); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBoundsOf(t *testing.T) {
	s := func(v string) *string { return &v }
	paired := evalsv1alpha1.BaselineTestPaired
	n := int32(2)
	for _, tc := range []struct {
		name    string
		spec    evalsv1alpha1.Baseline
		want    Bounds
		wantErr string
	}{
		{name: "unset: the API's defaults", want: Bounds{Test: evalsv1alpha1.BaselineTestCount, Alpha: "0.05", AlphaRate: 0.05, MinEffect: "0"}},
		{name: "count bounds", spec: evalsv1alpha1.Baseline{MaxNewFailures: &n, MaxScoreDrop: s("0.05")},
			want: Bounds{Test: evalsv1alpha1.BaselineTestCount, MaxNewFailures: 2, MaxScoreDrop: big.NewRat(1, 20), Alpha: "0.05", AlphaRate: 0.05, MinEffect: "0"}},
		{name: "paired", spec: evalsv1alpha1.Baseline{Test: &paired, Alpha: s("0.01"), MinEffect: s("0.125")},
			want: Bounds{Test: paired, Alpha: "0.01", AlphaRate: 0.01, MinEffect: "0.125", MinEffectRate: 0.125}},
		{name: "alpha with six decimals", spec: evalsv1alpha1.Baseline{Test: &paired, Alpha: s("0.000001")},
			want: Bounds{Test: paired, Alpha: "0.000001", AlphaRate: 1e-6, MinEffect: "0"}},
		{name: "minEffect 1", spec: evalsv1alpha1.Baseline{MinEffect: s("1")},
			want: Bounds{Test: evalsv1alpha1.BaselineTestCount, Alpha: "0.05", AlphaRate: 0.05, MinEffect: "1", MinEffectRate: 1}},
		{name: "unknown test", spec: evalsv1alpha1.Baseline{Test: ptr.To[evalsv1alpha1.BaselineTest]("Bayes")},
			wantErr: `baseline.test "Bayes" is not one of Count, Paired`},
		{name: "negative maxNewFailures", spec: evalsv1alpha1.Baseline{MaxNewFailures: ptr.To[int32](-1)},
			wantErr: `baseline.maxNewFailures "-1" is not a count of at least 0`},
		{name: "negative maxScoreDrop", spec: evalsv1alpha1.Baseline{MaxScoreDrop: s("-1")},
			wantErr: `baseline.maxScoreDrop "-1" is not a decimal in [0, 1]`},
		{name: "maxScoreDrop above 1", spec: evalsv1alpha1.Baseline{MaxScoreDrop: s("2")},
			wantErr: `baseline.maxScoreDrop "2" is not a decimal in [0, 1]`},
		{name: "alpha 0", spec: evalsv1alpha1.Baseline{Alpha: s("0.000")}, wantErr: `baseline.alpha "0.000" is not a decimal strictly between 0 and 1`},
		{name: "alpha 1", spec: evalsv1alpha1.Baseline{Alpha: s("1")}, wantErr: `baseline.alpha "1" is not a decimal strictly between 0 and 1`},
		{name: "alpha as a fraction", spec: evalsv1alpha1.Baseline{Alpha: s("1/20")}, wantErr: `baseline.alpha "1/20" is not`},
		{name: "alpha with an exponent", spec: evalsv1alpha1.Baseline{Alpha: s("5e-2")}, wantErr: `baseline.alpha "5e-2" is not`},
		{name: "alpha with a sign", spec: evalsv1alpha1.Baseline{Alpha: s("+0.05")}, wantErr: `baseline.alpha "+0.05" is not`},
		{name: "alpha empty", spec: evalsv1alpha1.Baseline{Alpha: s("")}, wantErr: `baseline.alpha "" is not`},
		{name: "alpha a bare point", spec: evalsv1alpha1.Baseline{Alpha: s(".05")}, wantErr: `baseline.alpha ".05" is not`},
		{name: "minEffect above 1", spec: evalsv1alpha1.Baseline{MinEffect: s("1.5")}, wantErr: `baseline.minEffect "1.5" is not a decimal in [0, 1]`},
		{name: "minEffect NaN", spec: evalsv1alpha1.Baseline{MinEffect: s("NaN")}, wantErr: `baseline.minEffect "NaN" is not a decimal in [0, 1]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BoundsOf(&tc.spec)
			if tc.wantErr != "" {
				var fe *FieldError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &fe) {
					t.Fatalf("BoundsOf = %v, want a *FieldError containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b *big.Rat) bool { return (a == nil && b == nil) || (a != nil && b != nil && a.Cmp(b) == 0) })); diff != "" {
				t.Errorf("BoundsOf (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSeed: the seed is a function of both runs' names and uids, in their roles.
func TestSeed(t *testing.T) {
	run := func(name, uid string) *evalsv1alpha1.EvalRun {
		r := &evalsv1alpha1.EvalRun{}
		r.Name, r.UID = name, types.UID(uid)
		return r
	}
	a, b := run("nightly-1", "u1"), run("nightly-2", "u2")
	seed := Seed(a, b)
	if Seed(run("nightly-1", "u1"), run("nightly-2", "u2")) != seed {
		t.Error("the same runs gave another seed")
	}
	for name, other := range map[string]uint64{
		"roles swapped":        Seed(b, a),
		"another uid":          Seed(run("nightly-1", "u3"), b),
		"another name":         Seed(a, run("nightly-3", "u2")),
		"parts run together":   Seed(run("nightly-1u", "1"), b),
		"name and uid swapped": Seed(run("u1", "nightly-1"), b),
	} {
		if other == seed {
			t.Errorf("%s: the same seed %x", name, seed)
		}
	}
}

// trialLine is a stored result of one trial (omitted for trial 1, as the collector writes it).
func trialLine(id string, trial int, v verdict.Verdict, score float64) *results.Line {
	l := line(id, v, score)
	if trial > 1 {
		l.Trial = trial
	}
	return l
}

// TestComparisonWithTrials: the lines of a run with trials are grouped by case, stored pod by pod (every case's
// first trial, then every case's second, ...): each case is decided over its trials by its run's rule (a lost trial
// a failed one, a repeated trial's first line kept), Count compares those verdicts, and the Paired test reads each
// case's passed trials of its trials and its mean score. A baseline of one trial a case compares with it as is.
func TestComparisonWithTrials(t *testing.T) {
	three := results.TrialRule{Count: 3, PassRate: 1}
	cases := []struct {
		name         string
		baselineRule results.TrialRule
		baseline     []*results.Line
		wantBase     map[string]trials
	}{
		{
			name: "both with 3 trials", baselineRule: three,
			baseline: []*results.Line{
				trialLine("a", 1, verdict.VerdictPass, 1), trialLine("b", 1, verdict.VerdictPass, 1), trialLine("c", 1, verdict.VerdictFail, 0),
				trialLine("a", 2, verdict.VerdictPass, 1), trialLine("b", 2, verdict.VerdictPass, 1), trialLine("c", 2, verdict.VerdictFail, 0),
				trialLine("a", 3, verdict.VerdictPass, 1), trialLine("b", 3, verdict.VerdictPass, 1), trialLine("c", 3, verdict.VerdictFail, 0.3),
			},
			wantBase: map[string]trials{"a": {3, 3, 1, true}, "b": {3, 3, 1, true}, "c": {0, 3, 0.1, true}},
		},
		{
			name: "a baseline of one trial", baselineRule: results.TrialRule{},
			baseline: []*results.Line{line("a", verdict.VerdictPass, 1), line("b", verdict.VerdictPass, 1), line("c", verdict.VerdictFail, 0.1)},
			wantBase: map[string]trials{"a": {1, 1, 1, true}, "b": {1, 1, 1, true}, "c": {0, 1, 0.1, true}},
		},
	}
	run := []*results.Line{
		trialLine("a", 1, verdict.VerdictPass, 1), trialLine("b", 1, verdict.VerdictPass, 1), trialLine("c", 1, verdict.VerdictPass, 0.9),
		trialLine("a", 2, verdict.VerdictFail, 0.4), trialLine("b", 2, verdict.VerdictPass, 1), trialLine("c", 2, verdict.VerdictPass, 0.9),
		// b's third trial was lost with its pod; a hostile repeat of b's first trial is not a second chance.
		trialLine("a", 3, verdict.VerdictPass, 1), trialLine("c", 3, verdict.VerdictPass, 0.9), trialLine("b", 1, verdict.VerdictFail, 0),
	}
	wantRun := map[string]trials{"a": {2, 3, 0.8, true}, "b": {2, 3, 1, true}, "c": {3, 3, 0.9, true}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuilder(0)
			b.Trials(tc.baselineRule, three)
			for _, l := range tc.baseline {
				b.AddBaseline(l)
			}
			for _, l := range run {
				b.AddRun(l)
			}
			c := b.Finish()
			// a fails (a failed trial), b errs (a lost trial), c passes every trial now.
			if diff := cmp.Diff([]string{"a", "b"}, c.NewlyFailing); diff != "" || c.NewlyFailingCount != 2 || c.Shared != 3 {
				t.Errorf("newly failing %d of %d shared (-want +got):\n%s", c.NewlyFailingCount, c.Shared, diff)
			}
			if diff := cmp.Diff([]string{"c"}, c.NewlyPassing); diff != "" {
				t.Errorf("newly passing (-want +got):\n%s", diff)
			}
			var want []pair
			for _, id := range []string{"a", "b", "c"} {
				want = append(want, pair{id, tc.wantBase[id], wantRun[id]})
			}
			if diff := cmp.Diff(want, c.pairs, cmp.AllowUnexported(pair{}, trials{}), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("pairs (-want +got):\n%s", diff)
			}
			d, err := c.Decide(Bounds{Test: evalsv1alpha1.BaselineTestPaired, Alpha: "0.05", AlphaRate: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			if d.Paired == nil || d.Paired.Method != evalsv1alpha1.PairedSignFlipExact || d.Paired.Cases != 3 {
				t.Errorf("paired %+v: want the sign-flip test over 3 cases of several trials", d.Paired)
			}
		})
	}
}

// TestTrialRuleOf: a run's rule is its status.trials', one trial without it.
func TestTrialRuleOf(t *testing.T) {
	run := &evalsv1alpha1.EvalRun{}
	if got := TrialRuleOf(run); got.N() != 1 {
		t.Errorf("no status.trials: %+v, want one trial", got)
	}
	run.Status.Trials = &evalsv1alpha1.TrialsStatus{Count: 5, PassRate: "0.6"}
	if diff := cmp.Diff(results.TrialRule{Count: 5, PassRate: 0.6, PassRateText: "0.6"}, TrialRuleOf(run)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	run.Status.Trials = &evalsv1alpha1.TrialsStatus{Count: 500, PassRate: "x"}
	if got := TrialRuleOf(run); got.N() != 100 || got.PassRate != 1 {
		t.Errorf("a status the manager did not write: %+v, want 100 trials, every one required", got)
	}
}
