package controller_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/controller"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// newSchedule returns an hourly schedule (at minute 0) of DecisionEval(3) runs.
func newSchedule(name, ns string, policy evalsv1alpha1.ConcurrencyPolicy) *evalsv1alpha1.EvalSchedule {
	tmpl := testutil.MakeEvalRun("template", ns).Inline(testutil.DecisionEval(3)).Obj()
	return &evalsv1alpha1.EvalSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: evalsv1alpha1.EvalScheduleSpec{
			Schedule: "0 * * * *", ConcurrencyPolicy: policy,
			SuccessfulRunsHistoryLimit: ptr.To[int32](1), FailedRunsHistoryLimit: ptr.To[int32](1),
			Template: evalsv1alpha1.EvalRunTemplate{
				Metadata: &evalsv1alpha1.TemplateMetadata{Labels: map[string]string{"team": "search"}},
				Spec:     tmpl.Spec,
			},
		},
	}
}

// advanceToHalfPast moves the manager's clock to the next hh:30 at least hours ahead of now, undone at cleanup:
// an hourly schedule (minute 0) is then half an hour past its latest time, whatever the real time is.
func advanceToHalfPast(t *testing.T, hours int) time.Time {
	t.Helper()
	now := clk.Now()
	target := now.Truncate(time.Hour).Add(time.Duration(hours)*time.Hour + 30*time.Minute)
	if target.Sub(now) < time.Duration(hours)*time.Hour {
		target = target.Add(time.Hour)
	}
	d := target.Sub(now)
	clk.advance(d)
	t.Cleanup(func() { clk.advance(-d) })
	return target.Truncate(time.Hour)
}

// scheduleReconciles is how many reconciles the EvalSchedule controller has finished.
func scheduleReconciles() float64 {
	return metricValue("controller_runtime_reconcile_total", "controller", controller.ScheduleControllerName)
}

// pokeSchedule makes the schedule controller reconcile s once more and waits until it is idle again.
func pokeSchedule(t *testing.T, s *evalsv1alpha1.EvalSchedule) {
	t.Helper()
	before := scheduleReconciles()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.evalrun.io/poke":%q}}}`, time.Now().Format(time.RFC3339Nano))
	if err := k8s.Patch(context.Background(), s.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatalf("poking EvalSchedule %s: %v", s.Name, err)
	}
	eventually(t, "the schedule controller reconciled", func() error {
		if n := scheduleReconciles(); n <= before {
			return fmt.Errorf("%v reconciles, waiting for more than %v", n, before)
		}
		if active := metricValue("controller_runtime_active_workers", "controller", controller.ScheduleControllerName); active != 0 {
			return fmt.Errorf("%v active workers", active)
		}
		return nil
	})
}

// scheduleRunNames lists the names of the runs in namespace ns, sorted.
func scheduleRunNames(t *testing.T, ns string) []string {
	t.Helper()
	var runs evalsv1alpha1.EvalRunList
	if err := k8s.List(context.Background(), &runs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range runs.Items {
		if r.DeletionTimestamp.IsZero() {
			out = append(out, r.Name)
		}
	}
	slices.Sort(out)
	return out
}

// waitRuns waits until namespace ns holds exactly the runs named.
func waitRuns(t *testing.T, ns string, want ...string) {
	t.Helper()
	slices.Sort(want)
	eventually(t, fmt.Sprintf("runs %v", want), func() error {
		if got := scheduleRunNames(t, ns); !slices.Equal(got, want) {
			return fmt.Errorf("runs %v", got)
		}
		return nil
	})
}

func getSchedule(t *testing.T, s *evalsv1alpha1.EvalSchedule) *evalsv1alpha1.EvalSchedule {
	t.Helper()
	got := &evalsv1alpha1.EvalSchedule{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(s), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func getRunNamed(t *testing.T, ns, name string) *evalsv1alpha1.EvalRun {
	t.Helper()
	return getRun(t, &evalsv1alpha1.EvalRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
}

// TestScheduleRunsComparesAndKeepsHistory: an hourly schedule, its clock moved past two scheduled times one at a
// time, creates one run per time with a deterministic name, its labels and the scheduled time; the second run is
// compared with the first (the schedule's latest success), regresses on one case, and the first run is deleted
// beyond successfulRunsHistoryLimit 1 only once that comparison is done. A lost status write creates nothing twice.
func TestScheduleRunsComparesAndKeepsHistory(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	s := newSchedule("nightly", ns, evalsv1alpha1.ConcurrencyForbid)
	s.Spec.Template.Spec.Baseline = &evalsv1alpha1.Baseline{MaxNewFailures: ptr.To[int32](0)}
	if err := k8s.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Ready and a next schedule time", func() error {
		got := getSchedule(t, s)
		if !meta.IsStatusConditionTrue(got.Status.Conditions, evalsv1alpha1.ScheduleConditionReady) || got.Status.NextScheduleTime == nil {
			return fmt.Errorf("status %+v", got.Status)
		}
		return nil
	})
	if runs := scheduleRunNames(t, ns); len(runs) != 0 {
		t.Fatalf("runs before the first scheduled time: %v", runs)
	}

	first := advanceToHalfPast(t, 1)
	pokeSchedule(t, s)
	firstName := assess.ScheduledRunName("nightly", first)
	waitRuns(t, ns, firstName)
	run1 := getRunNamed(t, ns, firstName)
	if run1.Labels[evalsv1alpha1.LabelSchedule] != "nightly" || run1.Labels["team"] != "search" ||
		run1.Annotations[evalsv1alpha1.AnnotationScheduledTime] != first.UTC().Format(time.RFC3339) || !metav1.IsControlledBy(run1, getSchedule(t, s)) {
		t.Errorf("run metadata: labels %v, annotations %v, owners %v", run1.Labels, run1.Annotations, run1.OwnerReferences)
	}
	if run1.Spec.Baseline != nil {
		t.Errorf("the first run has baseline %+v; there is no earlier success", run1.Spec.Baseline)
	}
	if st := getSchedule(t, s).Status; len(st.Active) != 1 || st.Active[0].Name != firstName || !st.LastScheduleTime.Time.Equal(first) {
		t.Errorf("status after the first run: %+v", st)
	}
	finishShards(t, run1, func(string) string { return "CLEAR" })
	waitReason(t, run1, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)

	// A manager that restarts after creating the run but before its status write lands sees the same scheduled
	// time again (lastScheduleTime back before it): the run's name is the idempotency key, no second run.
	eventually(t, "lastScheduleTime set back", func() error {
		lost := getSchedule(t, s)
		lost.Status.LastScheduleTime = &lost.CreationTimestamp
		return k8s.Status().Update(context.Background(), lost)
	})
	pokeSchedule(t, s)
	waitRuns(t, ns, firstName)
	if st := getSchedule(t, s).Status; st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(first) {
		t.Errorf("lastScheduleTime %v after the lost write; want %v", st.LastScheduleTime, first)
	}

	second := advanceToHalfPast(t, 1)
	pokeSchedule(t, s)
	secondName := assess.ScheduledRunName("nightly", second)
	waitRuns(t, ns, firstName, secondName)
	run2 := getRunNamed(t, ns, secondName)
	if b := run2.Spec.Baseline; b == nil || ptr.Deref(b.RunName, "") != firstName {
		t.Fatalf("the second run's baseline %+v; want %s", run2.Spec.Baseline, firstName)
	}
	finishShards(t, run2, func(id string) string {
		if id == "case-001" {
			return "REVIEW"
		}
		return "CLEAR"
	})
	got := waitRegressed(t, run2, metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed)
	if b := got.Status.Baseline; b == nil || !slices.Equal(b.NewlyFailing, []string{"case-001"}) {
		t.Errorf("status.baseline %+v", got.Status.Baseline)
	}
	// Compared, the first run is beyond the history limit and goes; the schedule reports the second.
	waitRuns(t, ns, secondName)
	eventually(t, "lastFinished is the second run", func() error {
		st := getSchedule(t, s).Status
		lf := st.LastFinished
		if lf == nil || lf.Name != secondName || lf.Succeeded != metav1.ConditionTrue || ptr.Deref(lf.Regressed, "") != metav1.ConditionTrue ||
			lf.Summary == nil || lf.Summary.Failed != 1 || len(st.Active) != 0 || st.LastSuccessfulTime == nil {
			return fmt.Errorf("status %+v, lastFinished %+v", st, lf)
		}
		return nil
	})
}

// TestSchedulePolicies: Forbid skips a run due while one is in progress, counts it once and never starts it
// late; Replace deletes the one in progress
// and starts the new one; after three missed hours only the latest is started (with an event); a starting
// deadline shorter than the time since the latest scheduled time starts none; suspend starts none; an invalid
// schedule is Stalled.
func TestSchedulePolicies(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	ctx := context.Background()

	forbid := newSchedule("forbid", ns, evalsv1alpha1.ConcurrencyForbid)
	replace := newSchedule("replace", ns, evalsv1alpha1.ConcurrencyReplace)
	late := newSchedule("late", ns, evalsv1alpha1.ConcurrencyAllow)
	late.Spec.StartingDeadlineSeconds = ptr.To[int64](600)
	suspended := newSchedule("suspended", ns, evalsv1alpha1.ConcurrencyAllow)
	suspended.Spec.Suspend = ptr.To(true)
	for _, s := range []*evalsv1alpha1.EvalSchedule{forbid, replace, late, suspended} {
		if err := k8s.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// Three scheduled times pass: each schedule starts only the latest one (the late one none: 30 minutes > 600s).
	third := advanceToHalfPast(t, 3)
	for _, s := range []*evalsv1alpha1.EvalSchedule{forbid, replace, late, suspended} {
		pokeSchedule(t, s)
	}
	name := func(s string, at time.Time) string { return assess.ScheduledRunName(s, at) }
	waitRuns(t, ns, name("forbid", third), name("replace", third))
	waitEvent(t, forbid, "MissedSchedule")
	if st := getSchedule(t, late).Status; st.LastScheduleTime != nil {
		t.Errorf("the late schedule recorded a run at %v", st.LastScheduleTime)
	}

	// The next hour, with both runs still in progress.
	next := advanceToHalfPast(t, 1)
	pokeSchedule(t, forbid)
	pokeSchedule(t, replace)
	waitRuns(t, ns, name("forbid", third), name("replace", next))
	waitEvent(t, forbid, "RunSkipped")
	waitEvent(t, replace, "RunReplaced")

	// The skipped time is counted once, however often the schedule is reconciled, and is not started when the
	// run in progress finishes before the next scheduled time.
	skipped := func() float64 {
		return metricValue("evalrun_schedule_runs_total", "namespace", ns, "outcome", "Skipped")
	}
	for range 3 {
		pokeSchedule(t, forbid)
	}
	if n := skipped(); n != 1 {
		t.Errorf("skipped scheduled times counted %v times after three more reconciles; want 1", n)
	}
	if st := getSchedule(t, forbid).Status; st.LastSkippedTime == nil || !st.LastSkippedTime.Time.Equal(next) ||
		!st.LastScheduleTime.Time.Equal(third) {
		t.Errorf("lastSkippedTime %v, lastScheduleTime %v; want %v and %v", st.LastSkippedTime, st.LastScheduleTime, next, third)
	}
	inProgress := getRunNamed(t, ns, name("forbid", third))
	finishShards(t, inProgress, func(string) string { return "CLEAR" })
	waitReason(t, inProgress, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	pokeSchedule(t, forbid)
	waitRuns(t, ns, name("forbid", third), name("replace", next))
	if n := skipped(); n != 1 {
		t.Errorf("skipped scheduled times counted %v times after the run in progress finished; want 1", n)
	}

	// An invalid schedule stalls, saying why.
	bad := getSchedule(t, forbid)
	bad.Spec.Schedule = "61 * * * *"
	if err := k8s.Update(ctx, bad); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Stalled InvalidSchedule", func() error {
		c := meta.FindStatusCondition(getSchedule(t, forbid).Status.Conditions, evalsv1alpha1.ScheduleConditionStalled)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != evalsv1alpha1.ScheduleReasonInvalidSchedule {
			return fmt.Errorf("Stalled %+v", c)
		}
		return nil
	})
}

// waitEvent waits for an event with reason about obj.
func waitEvent(t *testing.T, obj client.Object, reason string) {
	t.Helper()
	eventually(t, reason+" event", func() error { return hasEvent(context.Background(), obj.GetNamespace(), obj.GetName(), reason) })
}
