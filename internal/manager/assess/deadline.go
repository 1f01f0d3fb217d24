package assess

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// JobDeadline is status.activeDeadline for the run's Job as it exists: its activeDeadlineSeconds (the manager's
// flag may have changed since it was created), from the spec when the spec sets one; nil for a Job without a
// deadline (created before the manager had a default).
func JobDeadline(run *evalsv1alpha1.EvalRun, job *batchv1.Job) *evalsv1alpha1.ActiveDeadline {
	if job == nil || job.Spec.ActiveDeadlineSeconds == nil {
		return nil
	}
	d := &evalsv1alpha1.ActiveDeadline{Seconds: *job.Spec.ActiveDeadlineSeconds, Source: evalsv1alpha1.DeadlineFromManagerDefault}
	if s := run.Spec.ActiveDeadlineSeconds; s != nil && *s == d.Seconds {
		d.Source = evalsv1alpha1.DeadlineFromSpec
	}
	return d
}

// deadlineMessage says, for a Job that ran past its deadline, which deadline it was and where it came from.
func deadlineMessage(run *evalsv1alpha1.EvalRun, job *batchv1.Job) string {
	d := JobDeadline(run, job)
	if d == nil {
		return "the Job ran longer than its activeDeadlineSeconds"
	}
	if d.Source == evalsv1alpha1.DeadlineFromManagerDefault {
		return fmt.Sprintf("the Job ran longer than the manager's default deadline "+
			"(--default-active-deadline-seconds=%d; set spec.activeDeadlineSeconds to change it)", d.Seconds)
	}
	return fmt.Sprintf("the Job ran longer than spec.activeDeadlineSeconds (%d)", d.Seconds)
}
