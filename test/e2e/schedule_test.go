//go:build e2e

package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// scheduleTimeout bounds waiting for a scheduled run: up to a minute to its time, then the run itself.
const scheduleTimeout = time.Minute + runTimeout

// TestScheduleComparesWithTheLastSuccess runs an every-minute EvalSchedule of the sample runner on the real
// cluster, on six cases it answers right. Its first run has no baseline; before the second, the "model" (the
// runner's SCREENING_FLIP_CASE, from a ConfigMap) regresses on case-002. The second run is compared with the first from their stored results: Regressed=True,
// naming case-002 as the only newly failing case, and the schedule's status shows it.
func TestScheduleComparesWithTheLastSuccess(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "schedule", nil)
	ctx := ctxFor(t, 2*scheduleTimeout)
	model := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "model", Namespace: ns}, Data: map[string]string{"flip-case": ""}}
	if err := k8s.Create(ctx, model); err != nil {
		t.Fatal(err)
	}
	tmpl := sampleRun("template", ns).Inline(testutil.DecisionEval(6)).Obj()
	tmpl.Spec.Target.Env = []corev1.EnvVar{{Name: "SCREENING_FLIP_CASE", ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "model"}, Key: "flip-case"}}}}
	tmpl.Spec.Baseline = &evalsv1alpha1.Baseline{MaxNewFailures: ptr.To[int32](0)}
	schedule := &evalsv1alpha1.EvalSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns},
		Spec: evalsv1alpha1.EvalScheduleSpec{
			Schedule: "* * * * *", ConcurrencyPolicy: evalsv1alpha1.ConcurrencyForbid,
			// A zone the manager's image has no zoneinfo file for: its zone database is compiled in.
			TimeZone: ptr.To("Europe/Paris"),
			Template: evalsv1alpha1.EvalRunTemplate{Spec: tmpl.Spec},
		},
	}
	if err := k8s.Create(ctx, schedule); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // no further runs while the namespace goes
		_ = k8s.Patch(context.Background(), schedule, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":true}}`)))
	})

	first := waitScheduledRun(t, ns, "nightly", nil)
	if first.Spec.Baseline != nil {
		t.Errorf("the first run has baseline %+v; there was no earlier success", first.Spec.Baseline)
	}
	first = waitFinished(t, ns, first.Name, runTimeout)
	expectCondition(t, first, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})

	model.Data["flip-case"] = "case-002"
	if err := k8s.Update(ctx, model); err != nil {
		t.Fatal(err)
	}
	second := waitScheduledRun(t, ns, "nightly", []string{first.Name})
	if b := second.Spec.Baseline; b == nil || ptr.Deref(b.RunName, "") != first.Name {
		t.Fatalf("the second run's baseline %+v; want %s", second.Spec.Baseline, first.Name)
	}
	second = waitRun(t, ns, second.Name, runTimeout, "a decided Regressed condition", func(run *evalsv1alpha1.EvalRun) bool {
		c := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionRegressed)
		return c != nil && c.Reason != evalsv1alpha1.ReasonBaselinePending
	})
	expectCondition(t, second, evalsv1alpha1.ConditionRegressed, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed})
	b := second.Status.Baseline
	if b == nil {
		t.Fatal("no status.baseline")
	}
	expectDiff(t, "baseline comparison", evalsv1alpha1.BaselineComparison{
		RunName: first.Name, RunUID: string(first.UID), EvalFile: evalsv1alpha1.EvalFileSame, SharedCases: 6,
		NewlyFailing: []string{"case-002"}, NewlyFailingCount: 1,
		MeanScore: b.MeanScore, BaselineMeanScore: b.BaselineMeanScore, MeanScoreDelta: b.MeanScoreDelta,
		Test: evalsv1alpha1.BaselineTestCount,
	}, *b)
	if b.MeanScoreDelta == "" || b.MeanScoreDelta[0] != '-' {
		t.Errorf("mean score delta %q: want a drop", b.MeanScoreDelta)
	}
	t.Logf("Regressed: %s", meta.FindStatusCondition(second.Status.Conditions, evalsv1alpha1.ConditionRegressed).Message)

	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		got := &evalsv1alpha1.EvalSchedule{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(schedule), got); err != nil {
			return false, err
		}
		lf := got.Status.LastFinished
		return lf != nil && lf.Name == second.Name && ptr.Deref(lf.Regressed, "") == metav1.ConditionTrue && got.Status.NextScheduleTime != nil, nil
	})
	if err != nil {
		t.Errorf("the schedule's status does not show the regressed run: %v", err)
	}
}

// waitScheduledRun waits for a run of the schedule other than those named in seen, and returns it.
func waitScheduledRun(t *testing.T, ns, schedule string, seen []string) *evalsv1alpha1.EvalRun {
	t.Helper()
	var found *evalsv1alpha1.EvalRun
	err := wait.PollUntilContextCancel(ctxFor(t, scheduleTimeout), pollInterval, true, func(ctx context.Context) (bool, error) {
		var runs evalsv1alpha1.EvalRunList
		if err := k8s.List(ctx, &runs, client.InNamespace(ns), client.MatchingLabels{evalsv1alpha1.LabelSchedule: schedule}); err != nil {
			return false, err
		}
		for i := range runs.Items {
			if !slices.Contains(seen, runs.Items[i].Name) {
				found = &runs.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no new run of EvalSchedule %s (seen %v) within %s: %v", schedule, seen, scheduleTimeout, err)
	}
	return found
}
