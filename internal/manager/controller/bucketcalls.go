package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// resume, a comparison, a clean-up): long enough to download a 512 MiB eval file at 2 MB/s.

// bucketError is a bucket call that failed or did not answer in time: the endpoint it went to, and why.
type bucketError struct {
	endpoint string
	what     string
	err      error
}

func (e *bucketError) Error() string {
	return fmt.Sprintf("%s at bucket endpoint %s: %v", e.what, e.endpoint, e.err)
}

func (e *bucketError) Unwrap() error { return e.err }

// onBucket wraps a bucket call's error with the endpoint it went to (nil stays nil). A context that ended is
// said in words: the endpoint did not answer in time.
func onBucket(endpoint, what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer in time (%w)", err)
	}
	return &bucketError{endpoint: endpoint, what: what, err: err}
}

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

// preparationDeadline is when a run that has no Job yet must have been prepared (its eval file pinned, its resume
// planned): its deadline (spec.activeDeadlineSeconds or the manager's default) counted from the start of its
// attempt, its creation for the first. The Job's own deadline counts from the Job's start, so time spent waiting in
// a queue is not counted; preparation is not waiting, it is the manager's work. ok is false for a run that is
// prepared or finished.
func (r *EvalRunReconciler) preparationDeadline(run *evalsv1alpha1.EvalRun) (time.Time, bool) {
	if run.Status.JobName != "" || r.memo.JobCreated(client.ObjectKeyFromObject(run), run.UID) {
		return time.Time{}, false
	}
	c := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionSucceeded)
	if c != nil && c.Status != metav1.ConditionUnknown {
		return time.Time{}, false
	}
	start := run.CreationTimestamp.Time
	if a := run.Status.Attempt; a != nil && a.Number > 1 && c != nil {
		start = c.LastTransitionTime.Time
	}
	return start.Add(time.Duration(children.RunDeadline(run, r.opts).Seconds) * time.Second), true
}

// bucketContext bounds one bucket step of run: the manager's bucket call timeout, for a run not prepared yet its
// preparation deadline, and each of until that is set.
func (r *EvalRunReconciler) bucketContext(ctx context.Context, run *evalsv1alpha1.EvalRun, until ...time.Time) (context.Context, context.CancelFunc) {
	deadline := r.clock.Now().Add(r.opts.BucketCallTimeout)
	if d, ok := r.preparationDeadline(run); ok {
		until = append(until, d)
	}
	for _, d := range until {
		if !d.IsZero() && d.Before(deadline) {
			deadline = d
		}
	}
	return context.WithDeadline(ctx, deadline)
}

// laneContext bounds a flight's wait for its bucket lanes: a run not prepared yet waits at most until its
// preparation deadline (then it flies anyway and its bucket calls end at once, so it fails in time).
func (r *EvalRunReconciler) laneContext(run *evalsv1alpha1.EvalRun) func(context.Context) (context.Context, context.CancelFunc) {
	return func(ctx context.Context) (context.Context, context.CancelFunc) {
		if d, ok := r.preparationDeadline(run); ok {
			return context.WithDeadline(ctx, d)
		}
		return context.WithCancel(ctx)
	}
}

// bucketUnavailable is the end of a run that could not be prepared before its preparation deadline because a
// bucket failed or did not answer: nil while the deadline is ahead or err is not a bucket's.
func (r *EvalRunReconciler) bucketUnavailable(run *evalsv1alpha1.EvalRun, err error, now time.Time) *assess.Assessment {
	var be *bucketError
	if !errors.As(err, &be) {
		return nil
	}
	d, ok := r.preparationDeadline(run)
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
