package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/compare"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/collect"
)

// TestScheduleCaseHistoryAndQuarantine: an hourly schedule whose case-001 passes, fails, then passes again records
// each finished run's verdicts in its history ConfigMap (once each, however often it reconciles) and lists
// case-001 as its flakiest case; the fourth run, whose spec.baseline.quarantine.flakyOver is 0.3, fails case-001
// again and is not Regressed: case-001 is quarantined, counted in status.baseline and in the condition message.
func TestScheduleCaseHistoryAndQuarantine(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	s := newSchedule("flaky", ns, evalsv1alpha1.ConcurrencyForbid)
	s.Spec.Template.Spec.Baseline = &evalsv1alpha1.Baseline{MaxNewFailures: ptr.To[int32](0),
		Quarantine: &evalsv1alpha1.BaselineQuarantine{FlakyOver: "0.3"}}
	if err := k8s.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	night := func(case1 string) *evalsv1alpha1.EvalRun {
		t.Helper()
		at := advanceToHalfPast(t, 1)
		pokeSchedule(t, s)
		name := assess.ScheduledRunName(s.Name, at)
		eventually(t, "run "+name, func() error {
			if !slices.Contains(scheduleRunNames(t, ns), name) {
				return fmt.Errorf("runs %v", scheduleRunNames(t, ns))
			}
			return nil
		})
		run := getRunNamed(t, ns, name)
		finishShards(t, run, func(id string) string {
			if id == "case-001" {
				return case1
			}
			return "CLEAR"
		})
		waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
		return run
	}
	waitHistory := func(runs int32) *evalsv1alpha1.EvalSchedule {
		t.Helper()
		var got *evalsv1alpha1.EvalSchedule
		eventually(t, fmt.Sprintf("%d runs in the case history", runs), func() error {
			got = getSchedule(t, s)
			if got.Status.HistoryRuns != runs {
				return fmt.Errorf("historyRuns %d", got.Status.HistoryRuns)
			}
			return nil
		})
		return got
	}
	history := func() (*compare.History, *corev1.ConfigMap) {
		t.Helper()
		h, cm, err := collect.ReadHistory(context.Background(), k8s, ns, s.Name)
		if err != nil || cm == nil {
			t.Fatalf("reading the case history: %v (ConfigMap %v)", err, cm)
		}
		return h, cm
	}

	runs := []*evalsv1alpha1.EvalRun{night("CLEAR")}
	waitHistory(1)
	runs = append(runs, night("REVIEW"))
	waitRegressed(t, runs[1], metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed)
	waitHistory(2)
	runs = append(runs, night("CLEAR"))
	got := waitHistory(3)

	h, cm := history()
	if !metav1.IsControlledBy(cm, got) {
		t.Errorf("the history ConfigMap's owners %v; want the schedule", cm.OwnerReferences)
	}
	var uids []string
	for _, r := range runs {
		uids = append(uids, string(r.UID))
	}
	if !slices.Equal(h.Runs, uids) || h.Cases["case-001"] != "PFP" || h.Cases["case-000"] != "PPP" || h.Cases["case-002"] != "PPP" {
		t.Errorf("history runs %v (want %v), cases %v", h.Runs, uids, h.Cases)
	}
	want := []evalsv1alpha1.FlakyCase{{ID: "case-001", Flips: 2, Runs: 3, FlipRate: "1.0000"}}
	if !slices.Equal(got.Status.Flakiest, want) {
		t.Errorf("status.flakiest %+v, want %+v", got.Status.Flakiest, want)
	}
	// A reconcile repeated (after a crash, say) records nothing twice.
	pokeSchedule(t, s)
	if again, _ := history(); !slices.Equal(again.Runs, uids) || again.Cases["case-001"] != "PFP" {
		t.Errorf("after another reconcile: runs %v, case-001 %q", again.Runs, again.Cases["case-001"])
	}

	fourth := night("REVIEW")
	run := waitRegressed(t, fourth, metav1.ConditionFalse, evalsv1alpha1.ReasonNotRegressed)
	b := run.Status.Baseline
	if b == nil || b.QuarantinedCount != 1 || !slices.Equal(b.Quarantined, []string{"case-001"}) || b.NewlyFailingCount != 0 || b.SharedCases != 2 {
		t.Fatalf("status.baseline %+v", b)
	}
	if c := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionRegressed); !strings.Contains(c.Message, "1 flaky cases quarantined") {
		t.Errorf("Regressed message %q does not say how many cases were quarantined", c.Message)
	}
	got = waitHistory(4)
	if h, _ := history(); h.Cases["case-001"] != "PFPF" {
		t.Errorf("case-001 after the fourth run: %q", h.Cases["case-001"])
	}
	if f := got.Status.Flakiest; len(f) != 1 || f[0].Flips != 3 || f[0].Runs != 4 {
		t.Errorf("status.flakiest %+v", f)
	}
}
