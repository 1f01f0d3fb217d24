package controller_test

import (
	"fmt"
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
		MeanScore: "0.8333", BaselineMeanScore: "0.8333", MeanScoreDelta: "0.0000",
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
