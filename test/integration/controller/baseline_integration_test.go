package controller_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// waitRegressed waits for the run's Regressed condition to have status and reason, and returns the run.
func waitRegressed(t *testing.T, run *evalsv1alpha1.EvalRun, status metav1.ConditionStatus, reason string) *evalsv1alpha1.EvalRun {
	t.Helper()
	var got *evalsv1alpha1.EvalRun
	eventually(t, "Regressed="+string(status)+" "+reason, func() error {
		got = getRun(t, run)
		c := runCondition(got, evalsv1alpha1.ConditionRegressed)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("conditions %v", conditionSummary(got.Status.Conditions))
		}
		return nil
	})
	return got
}

// TestBaselineComparison compares a 3-shard run with a baseline of the same eval file from its stored results:
// case-001 newly fails, case-004 newly passes, case-005 is missing in the run; with maxNewFailures 0 and
// regression: Fail the run is Regressed and does not pass, naming the case.
func TestBaselineComparison(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	eval := testutil.DecisionEval(7)
	base := createRun(t, testutil.MakeEvalRun("nightly-1", ns).Inline(eval))
	finishShards(t, base, func(id string) string {
		if id == "case-004" {
			return "REVIEW"
		}
		return "CLEAR"
	})
	waitReason(t, base, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)

	run := createRun(t, testutil.MakeEvalRun("nightly-2", ns).Inline(eval).Shards(3, 0).Baseline("nightly-1", 0, "0.5").FailWhenRegressed())
	finishShards(t, run, func(id string) string {
		switch id {
		case "case-001":
			return "REVIEW"
		case "case-005":
			return ""
		}
		return "CLEAR"
	})
	got := waitRegressed(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed)
	want := &evalsv1alpha1.BaselineComparison{
		RunName: "nightly-1", RunUID: string(base.UID), EvalFile: evalsv1alpha1.EvalFileSame, SharedCases: 7,
		NewlyFailing: []string{"case-001", "case-005"}, NewlyFailingCount: 2,
		NewlyPassing: []string{"case-004"}, NewlyPassingCount: 1,
		MissingInRun: []string{"case-005"}, MissingInRunCount: 1,
		MeanScore: "0.8333", BaselineMeanScore: "0.8333", MeanScoreDelta: "0.0000", Test: evalsv1alpha1.BaselineTestCount,
	}
	if diff := cmp.Diff(want, got.Status.Baseline, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("status.baseline (-want +got):\n%s", diff)
	}
	c := runCondition(got, evalsv1alpha1.ConditionRegressed)
	if !strings.Contains(c.Message, `"case-001"`) || !strings.Contains(c.Message, "2 newly failing cases (at most 0 allowed)") {
		t.Errorf("Regressed message %q does not name the newly failing cases", c.Message)
	}
	if p := runCondition(got, evalsv1alpha1.ConditionPassed); p == nil || p.Status != metav1.ConditionFalse || !strings.Contains(p.Message, "regressed against baseline EvalRun nightly-1") {
		t.Errorf("Passed %+v; want False for the regression", p)
	}

	// Allowing two new failures, the same results do not regress; the eval file differs (one case more), so only
	// the shared ids are compared and case-007 is missing in the baseline.
	third := createRun(t, testutil.MakeEvalRun("nightly-3", ns).Inline(testutil.DecisionEval(8)).Baseline("nightly-2", 2, ""))
	finishShards(t, third, func(id string) string { return "CLEAR" })
	got = waitRegressed(t, third, metav1.ConditionFalse, evalsv1alpha1.ReasonNotRegressed)
	if b := got.Status.Baseline; b == nil || b.EvalFile != evalsv1alpha1.EvalFileDifferent || b.SharedCases != 7 ||
		b.NewlyPassingCount != 2 || b.NewlyFailingCount != 0 || b.MissingInBaselineCount != 2 ||
		!cmp.Equal(b.MissingInBaseline, []string{"case-005", "case-007"}) {
		t.Errorf("status.baseline %+v", got.Status.Baseline)
	}
	if c := runCondition(got, evalsv1alpha1.ConditionRegressed); !strings.Contains(c.Message, "case ids both have only") {
		t.Errorf("Regressed message %q does not say the eval files differ", c.Message)
	}
}

// TestBaselinePaired compares two runs with one baseline of 20 cases (17 passing) by the Paired test: 3 cases
// newly failing and 1 newly passing is chance (McNemar's one-sided p = 5/16, where Count with maxNewFailures 0
// would call it a regression); 8 newly failing and none passing is not (p = 1/256), and with regression: Fail the
// run does not pass. status.baseline carries the test, the counts, the pass rates with the change's interval and
// the p-value; the condition says it in words.
func TestBaselinePaired(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	eval := testutil.DecisionEval(20)
	// answer passes case i unless it is in fail.
	answer := func(fail ...int) func(string) string {
		return func(id string) string {
			for _, i := range fail {
				if id == testutil.CaseID(i) {
					return "REVIEW"
				}
			}
			return "CLEAR"
		}
	}
	base := createRun(t, testutil.MakeEvalRun("nightly-1", ns).Inline(eval))
	finishShards(t, base, answer(17, 18, 19))
	waitReason(t, base, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)

	t.Run("chance", func(t *testing.T) {
		run := createRun(t, testutil.MakeEvalRun("nightly-2", ns).Inline(eval).Shards(2, 0).PairedBaseline("nightly-1", "", "").MinPassRate("0.7").FailWhenRegressed())
		finishShards(t, run, answer(0, 1, 2, 18, 19))
		got := waitRegressed(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonNotRegressed)
		b := got.Status.Baseline
		if b == nil || b.Test != evalsv1alpha1.BaselineTestPaired || b.Paired == nil {
			t.Fatalf("status.baseline %+v; want a Paired result", b)
		}
		checkPaired(t, b.Paired, evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedMcNemarExact, Cases: 20, WorseCases: 3, BetterCases: 1,
			PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "0.8500", Run: "0.7500", Delta: "-0.1000"},
			MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "0.8500", Run: "0.7500", Delta: "-0.1000"},
			PValue:    "0.312500"})
		if b.NewlyFailingCount != 3 || b.NewlyPassingCount != 1 {
			t.Errorf("the counts beside the test: %d newly failing, %d newly passing; want 3 and 1", b.NewlyFailingCount, b.NewlyPassingCount)
		}
		c := runCondition(got, evalsv1alpha1.ConditionRegressed)
		for _, want := range []string{"compared with baseline EvalRun nightly-1 over 20 shared cases: pass rate fell from 0.85 to 0.75 (-0.10, 95% CI ",
			"over 20 paired cases, 3 worse and 1 better; p = 0.312, not below alpha 0.05 (McNemar exact, one-sided)"} {
			if !strings.Contains(c.Message, want) {
				t.Errorf("Regressed message %q does not say %q", c.Message, want)
			}
		}
		if p := runCondition(got, evalsv1alpha1.ConditionPassed); p == nil || p.Status != metav1.ConditionTrue {
			t.Errorf("Passed %+v; want True: 15 of 20 pass (at least 0.7) and the run did not regress", p)
		}
	})

	t.Run("regressed", func(t *testing.T) {
		run := createRun(t, testutil.MakeEvalRun("nightly-3", ns).Inline(eval).PairedBaseline("nightly-1", "0.01", "0.2").FailWhenRegressed())
		finishShards(t, run, answer(0, 1, 2, 3, 4, 5, 6, 7, 17, 18, 19))
		got := waitRegressed(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed)
		checkPaired(t, got.Status.Baseline.Paired, evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedMcNemarExact, Cases: 20, WorseCases: 8,
			PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "0.8500", Run: "0.4500", Delta: "-0.4000"},
			MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "0.8500", Run: "0.4500", Delta: "-0.4000"},
			PValue:    "0.003906"})
		c := runCondition(got, evalsv1alpha1.ConditionRegressed)
		want := "8 worse and 0 better; p = 0.004 < alpha 0.01 (McNemar exact, one-sided), and the drop of 0.40 is at least minEffect 0.2"
		if !strings.Contains(c.Message, want) {
			t.Errorf("Regressed message %q does not say %q", c.Message, want)
		}
		if p := runCondition(got, evalsv1alpha1.ConditionPassed); p == nil || p.Status != metav1.ConditionFalse || !strings.Contains(p.Message, "regressed against baseline EvalRun nightly-1") {
			t.Errorf("Passed %+v; want False for the regression", p)
		}
	})
}

// checkPaired compares status.baseline.paired with want, whose intervals are left out: they come from the seeded
// bootstrap (internal/compare's tests check them); here they hold the change and lie in [-1, 1].
func checkPaired(t *testing.T, got *evalsv1alpha1.PairedComparison, want evalsv1alpha1.PairedComparison) {
	t.Helper()
	if got == nil {
		t.Fatal("status.baseline.paired is unset")
	}
	for _, e := range []*evalsv1alpha1.PairedEffect{got.PassRate, got.MeanScore} {
		if e == nil {
			continue
		}
		low, errLow := strconv.ParseFloat(e.DeltaLow, 64)
		high, errHigh := strconv.ParseFloat(e.DeltaHigh, 64)
		delta, errDelta := strconv.ParseFloat(e.Delta, 64)
		if err := errors.Join(errLow, errHigh, errDelta); err != nil || low < -1 || low > delta || delta > high || high > 1 {
			t.Errorf("interval %s to %s of the change %s (%v); want -1 <= low <= change <= high <= 1", e.DeltaLow, e.DeltaHigh, e.Delta, err)
		}
	}
	if diff := cmp.Diff(&want, got, cmpopts.IgnoreFields(evalsv1alpha1.PairedEffect{}, "DeltaLow", "DeltaHigh")); diff != "" {
		t.Errorf("status.baseline.paired (-want +got):\n%s", diff)
	}
}

// TestBaselineWaitsAndUnavailable: a run whose baseline is still running waits (Regressed and Passed Unknown,
// BaselinePending) and compares once the baseline finishes; a baseline that does not exist leaves Regressed
// Unknown with BaselineUnavailable for good.
func TestBaselineWaitsAndUnavailable(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	eval := testutil.DecisionEval(3)
	base := createRun(t, testutil.MakeEvalRun("base", ns).Inline(eval))
	run := createRun(t, testutil.MakeEvalRun("run", ns).Inline(eval).Baseline("base", 0, "").FailWhenRegressed())
	finishShards(t, run, func(string) string { return "CLEAR" })
	got := waitRegressed(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonBaselinePending)
	if p := runCondition(got, evalsv1alpha1.ConditionPassed); p == nil || p.Status != metav1.ConditionUnknown || p.Reason != evalsv1alpha1.ReasonBaselinePending {
		t.Errorf("Passed %+v while the baseline runs; want Unknown BaselinePending", p)
	}
	if s := runCondition(got, evalsv1alpha1.ConditionSucceeded); s == nil || s.Status != metav1.ConditionTrue {
		t.Errorf("Succeeded %+v; the run itself finished", s)
	}
	finishShards(t, base, func(id string) string { return "REVIEW" })
	got = waitRegressed(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonNotRegressed)
	if p := runCondition(got, evalsv1alpha1.ConditionPassed); p == nil || p.Status != metav1.ConditionTrue {
		t.Errorf("Passed %+v after the comparison", p)
	}
	if b := got.Status.Baseline; b == nil || b.NewlyPassingCount != 3 || b.MeanScoreDelta != "+1.0000" {
		t.Errorf("status.baseline %+v", got.Status.Baseline)
	}

	orphan := createRun(t, testutil.MakeEvalRun("orphan", ns).Inline(eval).Baseline("nowhere", 0, "").FailWhenRegressed())
	finishShards(t, orphan, func(string) string { return "CLEAR" })
	got = waitRegressed(t, orphan, metav1.ConditionUnknown, evalsv1alpha1.ReasonBaselineUnavailable)
	if p := runCondition(got, evalsv1alpha1.ConditionPassed); p == nil || p.Status != metav1.ConditionFalse || !strings.Contains(p.Message, "does not exist") {
		t.Errorf("Passed %+v without a baseline; want False saying why", p)
	}
}
