package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/bucketpool"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// bucketEndpoints are the bucket endpoints a reconcile of run may call: its eval file's (or eval bundle's), its storage's, and those
// of the runs it resumes from or compares with (read from the cache; a run not found names none).
func (r *EvalRunReconciler) bucketEndpoints(ctx context.Context, run *evalsv1alpha1.EvalRun) []string {
	var out []string
	if o := run.Spec.EvalFile.S3; o != nil {
		out = append(out, o.Endpoint)
	}
	if b := run.Spec.EvalFile.Bundle; b != nil && b.S3 != nil {
		out = append(out, b.S3.Endpoint)
	}
	if st := run.Spec.Storage; st != nil {
		out = append(out, st.S3.Endpoint)
	}
	for _, name := range []string{resumeSource(run), assess.BaselineName(run)} {
		if name == "" {
			continue
		}
		other := &evalsv1alpha1.EvalRun{}
		if err := r.client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, other); err == nil && other.Spec.Storage != nil {
			out = append(out, other.Spec.Storage.S3.Endpoint)
		}
	}
	return out
}

func resumeSource(run *evalsv1alpha1.EvalRun) string {
	if run.Spec.Resume == nil {
		return ""
	}
	return run.Spec.Resume.From
}

// bucketUnavailable is the end of a run that could not be prepared before its preparation deadline because a
// bucket failed or did not answer: nil while the deadline is ahead or err is not a bucket's.
func (r *EvalRunReconciler) bucketUnavailable(run *evalsv1alpha1.EvalRun, err error, now time.Time) *assess.Assessment {
	var be *bucketpool.CallError
	if !errors.As(err, &be) {
		return nil
	}
	d, ok := r.bounds.PreparationDeadline(run)
	if !ok || now.Before(d) {
		return nil
	}
	deadline := children.RunDeadline(run, r.opts)
	msg := fmt.Sprintf("the run could not be prepared within its deadline (%ds from its start, %s): %s",
		deadline.Seconds, deadlineSourceWords(deadline), assess.OneLine(be.Error()))
	return &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonBucketUnavailable, Message: textbound.Head(msg, assess.MaxConditionMessage)}
}

// deadlineSourceWords says where a deadline came from.
func deadlineSourceWords(d evalsv1alpha1.ActiveDeadline) string {
	if d.Source == evalsv1alpha1.DeadlineFromManagerDefault {
		return "the manager's --default-active-deadline-seconds"
	}
	return "spec.activeDeadlineSeconds"
}
