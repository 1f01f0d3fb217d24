package assess

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// SpecSHA256 is the hex sha256 of the spec's JSON without suspend: what a new attempt is started for.
func SpecSHA256(spec *evalsv1alpha1.EvalRunSpec) string {
	s := spec.DeepCopy()
	s.Suspend = nil
	data, err := json.Marshal(s)
	if err != nil {
		panic(err) // plain data
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// RerunAnnotation is the run's evals.evalrun.io/rerun annotation, nil when unset or empty.
func RerunAnnotation(run *evalsv1alpha1.EvalRun) *string {
	if v := run.Annotations[AnnotationRerun]; v != "" {
		return &v
	}
	return nil
}

// DesiredAttempt is the attempt the status describes: the recorded one, its spec digest and generation kept up
// to date (suspend changes the generation, a newer API version may default more fields: neither starts an
// attempt), or the first attempt of a run that has none recorded.
func DesiredAttempt(run *evalsv1alpha1.EvalRun) *evalsv1alpha1.Attempt {
	cur := run.Status.Attempt
	if cur == nil {
		return &evalsv1alpha1.Attempt{Number: 1, Trigger: evalsv1alpha1.AttemptCreated, SpecSHA256: SpecSHA256(&run.Spec),
			Rerun: RerunAnnotation(run), Generation: run.Generation}
	}
	out := cur.DeepCopy()
	out.SpecSHA256, out.Generation = SpecSHA256(&run.Spec), run.Generation
	return out
}

// NewAttemptTrigger returns what starts a new attempt of a finished run, or "" when nothing does: a new value of
// the rerun annotation, or a spec (other than suspend) that changed since the attempt started.
func NewAttemptTrigger(run *evalsv1alpha1.EvalRun) evalsv1alpha1.AttemptTrigger {
	cur := run.Status.Attempt
	if cur == nil {
		return ""
	}
	if v := RerunAnnotation(run); v != nil && *v != ptr.Deref(cur.Rerun, "") {
		return evalsv1alpha1.AttemptRerun
	}
	if run.Generation != cur.Generation && SpecSHA256(&run.Spec) != cur.SpecSHA256 {
		return evalsv1alpha1.AttemptSpecChanged
	}
	return ""
}

// AnnotationRerun, set to a new value on a finished run, starts a new attempt of it with the same spec.
const AnnotationRerun = "evals.evalrun.io/rerun"

// NewAttemptStatus is the status that starts a new attempt of the finished run, for trigger, at now: the new
// attempt (its number, trigger, spec digest and rerun value), the finished attempt recorded first in
// previousAttempts (at most MaxPreviousAttempts kept), and the conditions in progress from the start, so that
// kstatus, Flux and Argo CD never take the empty status for a result. Everything else (the collector's fields too)
// is gone: the new attempt runs from the start, as a new run.
func NewAttemptStatus(run *evalsv1alpha1.EvalRun, trigger evalsv1alpha1.AttemptTrigger, now metav1.Time) evalsv1alpha1.EvalRunStatus {
	finished := run.Status.Attempt
	record := evalsv1alpha1.AttemptRecord{Number: finished.Number, Trigger: finished.Trigger, Rerun: finished.Rerun,
		StartTime: run.Status.StartTime, RunOutcome: OutcomeOf(run)}
	if d := run.Status.EvalFileSHA256; d != "" {
		record.EvalFileSHA256 = &d
	}
	history := append([]evalsv1alpha1.AttemptRecord{record}, run.Status.PreviousAttempts...)
	if len(history) > evalsv1alpha1.MaxPreviousAttempts {
		history = history[:evalsv1alpha1.MaxPreviousAttempts]
	}
	next := evalsv1alpha1.EvalRunStatus{
		ObservedGeneration: run.Generation,
		Attempt: &evalsv1alpha1.Attempt{Number: finished.Number + 1, Trigger: trigger, SpecSHA256: SpecSHA256(&run.Spec),
			Rerun: RerunAnnotation(run), Generation: run.Generation},
		PreviousAttempts: history,
	}
	msg := fmt.Sprintf("attempt %d is starting", finished.Number+1)
	for _, c := range []metav1.Condition{
		{Type: evalsv1alpha1.ConditionReconciling, Status: metav1.ConditionTrue},
		{Type: evalsv1alpha1.ConditionStalled, Status: metav1.ConditionFalse},
		{Type: evalsv1alpha1.ConditionSucceeded, Status: metav1.ConditionUnknown},
	} {
		c.Reason, c.Message, c.ObservedGeneration, c.LastTransitionTime = evalsv1alpha1.ReasonPending, msg, run.Generation, now
		next.Conditions = append(next.Conditions, c)
	}
	return next
}
