package gitops

import (
	"slices"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/controller"
)

// scheduleCase is one EvalSchedule as Argo CD reads it, and the health schedule-health.lua should show.
type scheduleCase struct {
	name string
	obj  map[string]any
	argo argoHealth
}

// newSchedule returns a schedule as the API server holds it right after it was created: generation 1, no status.
func newSchedule() *evalsv1alpha1.EvalSchedule {
	return &evalsv1alpha1.EvalSchedule{
		TypeMeta: metav1.TypeMeta{APIVersion: evalsv1alpha1.GroupVersion.String(), Kind: "EvalSchedule"},
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "evals", Generation: 1,
			CreationTimestamp: metav1.NewTime(now.Add(-24 * time.Hour))},
		Spec: evalsv1alpha1.EvalScheduleSpec{Schedule: "0 2 * * *"},
	}
}

// scheduled writes the schedule's conditions as the schedule controller does (controller.SetScheduleConditions).
func scheduled(s *evalsv1alpha1.EvalSchedule, ready metav1.ConditionStatus, reason, msg string) *evalsv1alpha1.EvalSchedule {
	s.Status.ObservedGeneration = s.Generation
	controller.SetScheduleConditions(&s.Status, s.Generation, now, ready, reason, msg)
	return s
}

// lastFinished records run, a run of the schedule that finished, as the schedule controller does.
func lastFinished(s *evalsv1alpha1.EvalSchedule, run *evalsv1alpha1.EvalRun) *evalsv1alpha1.EvalSchedule {
	run.Name = "nightly-20261125-0200"
	s.Status.LastFinished = assess.FinishedRunStatus(run)
	return s
}

const nextRun = "next run at 2026-11-26T02:00:00Z"

// scheduleCases are the statuses the schedule controller writes, with the latest run's every kind of outcome.
func scheduleCases(t *testing.T) []scheduleCase {
	t.Helper()
	var cases []scheduleCase
	add := func(name string, s *evalsv1alpha1.EvalSchedule, argo argoHealth) {
		cases = append(cases, scheduleCase{name: name, obj: toMap(s), argo: argo})
	}
	fresh := toMap(newSchedule())
	delete(fresh, "status")
	cases = append(cases, scheduleCase{name: "created, no status yet", obj: fresh,
		argo: argoHealth{argoProgressing, "Waiting for the EvalRun operator to report the schedule's status"}})

	creates := "The schedule creates runs (Scheduled): " + nextRun
	add("scheduled, no run finished yet", scheduled(newSchedule(), metav1.ConditionTrue, evalsv1alpha1.ScheduleReasonScheduled, nextRun),
		argoHealth{argoHealthy, creates + "; no run has finished yet"})

	passing := complete(newRun(), 2, 2, false)
	add("scheduled, the latest run passed", lastFinished(scheduled(newSchedule(), metav1.ConditionTrue, evalsv1alpha1.ScheduleReasonScheduled, nextRun), passing),
		argoHealth{argoHealthy, creates + "; The latest finished run nightly-20261125-0200 completed and met its success policy"})

	notPassing := complete(newRun(), 1, 2, false)
	add("scheduled, the latest run did not meet its success policy",
		lastFinished(scheduled(newSchedule(), metav1.ConditionTrue, evalsv1alpha1.ScheduleReasonScheduled, nextRun), notPassing),
		argoHealth{argoDegraded, "The latest finished run nightly-20261125-0200 completed but did not meet its success policy"})

	failedRun := newRun()
	started(failedRun)
	advance(failedRun, assess.StateFailed, evalsv1alpha1.ReasonRunnerFailed, "the runner exited with code 1")
	add("scheduled, the latest run failed",
		lastFinished(scheduled(newSchedule(), metav1.ConditionTrue, evalsv1alpha1.ScheduleReasonScheduled, nextRun), failedRun),
		argoHealth{argoDegraded, "The latest finished run nightly-20261125-0200 failed (RunnerFailed)"})

	regressedRun := complete(newRun(), 2, 2, false)
	regressedRun.Status.Conditions = append(regressedRun.Status.Conditions, metav1.Condition{Type: evalsv1alpha1.ConditionRegressed,
		Status: metav1.ConditionTrue, Reason: evalsv1alpha1.ReasonRegressed, Message: "1 case newly failing"})
	add("scheduled, the latest run regressed",
		lastFinished(scheduled(newSchedule(), metav1.ConditionTrue, evalsv1alpha1.ScheduleReasonScheduled, nextRun), regressedRun),
		argoHealth{argoDegraded, "The latest finished run nightly-20261125-0200 regressed against its baseline"})

	suspended := newSchedule()
	suspended.Spec.Suspend = ptrTo(true)
	add("suspended", scheduled(suspended, metav1.ConditionTrue, evalsv1alpha1.ScheduleReasonSuspended, "the schedule is suspended"),
		argoHealth{argoSuspended, "The schedule is suspended"})
	suspended = newSchedule()
	suspended.Spec.Suspend = ptrTo(true)
	add("suspended, the latest run failed", lastFinished(scheduled(suspended, metav1.ConditionTrue, evalsv1alpha1.ScheduleReasonSuspended, "the schedule is suspended"), failedRun),
		argoHealth{argoSuspended, "The schedule is suspended; The latest finished run nightly-20261125-0200 failed (RunnerFailed)"})

	invalid := "expected exactly 5 fields, found 4: [0 2 * *]"
	add("invalid schedule", scheduled(newSchedule(), metav1.ConditionFalse, evalsv1alpha1.ScheduleReasonInvalidSchedule, invalid),
		argoHealth{argoDegraded, "The schedule cannot create runs (InvalidSchedule): " + invalid})

	changed := scheduled(newSchedule(), metav1.ConditionTrue, evalsv1alpha1.ScheduleReasonScheduled, nextRun)
	changed.Generation = 2
	add("spec changed, not yet observed", changed,
		argoHealth{argoProgressing, "Waiting for the EvalRun operator to observe generation 2 (it last observed generation 1)"})
	return cases
}

// scheduleMalformedCases are objects no operator writes: the script must answer, never fail.
func scheduleMalformedCases(t *testing.T) []scheduleCase {
	t.Helper()
	waiting := argoHealth{argoProgressing, "Waiting for the EvalRun operator to report the schedule's status"}
	const head = `"apiVersion": "evals.evalrun.io/v1alpha1", "kind": "EvalSchedule", "metadata": {"name": "s", "generation": 1}`
	cases := []struct{ name, json string }{
		{"empty object", `{}`},
		{"status a string", `{` + head + `, "status": "Ready"}`},
		{"status empty", `{` + head + `, "status": {}}`},
		{"conditions a string", `{` + head + `, "status": {"observedGeneration": 1, "conditions": "Ready"}}`},
		{"lastFinished a string", `{` + head + `, "status": {"observedGeneration": 1, "lastFinished": "x"}}`},
		{"lastFinished of wrong types", `{` + head + `, "status": {"observedGeneration": 1, "lastFinished": {"name": 3, "succeeded": true}}}`},
	}
	out := make([]scheduleCase, 0, len(cases)+1)
	for _, c := range cases {
		out = append(out, scheduleCase{name: "malformed: " + c.name, obj: decodeJSON(t, c.json), argo: waiting})
	}
	out = append(out, scheduleCase{name: "malformed: a failed lastFinished without a name",
		obj:  decodeJSON(t, `{`+head+`, "status": {"observedGeneration": 1, "lastFinished": {"succeeded": "False"}}}`),
		argo: argoHealth{argoDegraded, "The latest finished run (unnamed) failed"}})
	return out
}

func TestArgoCDScheduleHealth(t *testing.T) {
	script := readRepoFile(t, scheduleHealthScript)
	for _, c := range append(scheduleCases(t), scheduleMalformedCases(t)...) {
		t.Run(c.name, func(t *testing.T) {
			got, err := runHealthScript(script, c.obj)
			if err != nil {
				t.Fatalf("schedule-health.lua failed (Argo CD would show this error instead of a health): %v", err)
			}
			if diff := cmp.Diff(c.argo, got); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}
}

// Every reason of an EvalSchedule's conditions appears in a case: a new reason needs a decision about its health.
func TestScheduleCasesCoverEveryReason(t *testing.T) {
	var seen []string
	for _, c := range scheduleCases(t) {
		status, _ := c.obj["status"].(map[string]any)
		conds, _ := status["conditions"].([]any)
		for _, cond := range conds {
			if r, ok := cond.(map[string]any)["reason"].(string); ok {
				seen = append(seen, r)
			}
		}
	}
	for _, r := range apiConstantsIn(t, "evalschedule_types.go", "ScheduleReason") {
		if !slices.Contains(seen, r) {
			t.Errorf("no schedule case has a condition with reason %s: decide its health in schedule-health.lua and add a case", r)
		}
	}
}
