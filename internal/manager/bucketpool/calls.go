package bucketpool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/runmemo"
)

// CallError is a bucket call that failed or did not answer in time: the endpoint it went to, and why. A run that
// could not be prepared in time because of one ends BucketUnavailable.
type CallError struct {
	endpoint string
	what     string
	err      error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("%s at bucket endpoint %s: %v", e.what, e.endpoint, e.err)
}

func (e *CallError) Unwrap() error { return e.err }

// OnBucket wraps a bucket call's error with the endpoint it went to (nil stays nil). A context that ended is
// said in words: the endpoint did not answer in time.
func OnBucket(endpoint, what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer in time (%w)", err)
	}
	return &CallError{endpoint: endpoint, what: what, err: err}
}

// OnStorage marks err as a bucket error of run's storage when run stores its results in a bucket.
func OnStorage(run *evalsv1alpha1.EvalRun, what string, err error) error {
	if err == nil || run.Spec.Storage == nil {
		return err
	}
	return OnBucket(run.Spec.Storage.S3.Endpoint, what, err)
}

// Bounds bound the bucket calls of a run's reconcile: each step within the manager's bucket call timeout and, for
// a run not prepared yet, within its preparation deadline, so that a bucket that hangs frees its lane in time.
type Bounds struct {
	clock clock.PassiveClock
	opts  options.Options
	memo  *runmemo.Memo
}

// NewBounds returns the bounds of the manager's bucket calls: opts (defaulted) gives the call timeout and the
// default deadline of a run; memo says which runs this process created a Job for already (prepared).
func NewBounds(clk clock.PassiveClock, opts options.Options, memo *runmemo.Memo) Bounds {
	return Bounds{clock: clk, opts: opts, memo: memo}
}

// PreparationDeadline is when a run that has no Job yet must have been prepared (its eval file pinned, its resume
// planned): its deadline (spec.activeDeadlineSeconds or the manager's default) counted from the start of its
// attempt, its creation for the first. The Job's own deadline counts from the Job's start, so time spent waiting in
// a queue is not counted; preparation is not waiting, it is the manager's work. ok is false for a run that is
// prepared or finished.
func (b Bounds) PreparationDeadline(run *evalsv1alpha1.EvalRun) (time.Time, bool) {
	if run.Status.JobName != "" || b.memo.JobCreated(client.ObjectKeyFromObject(run), run.UID) {
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
	return start.Add(time.Duration(children.RunDeadline(run, b.opts).Seconds) * time.Second), true
}

// Context bounds one bucket step of run: the manager's bucket call timeout, for a run not prepared yet its
// preparation deadline, and each of until that is set.
func (b Bounds) Context(ctx context.Context, run *evalsv1alpha1.EvalRun, until ...time.Time) (context.Context, context.CancelFunc) {
	deadline := b.clock.Now().Add(b.opts.BucketCallTimeout)
	if d, ok := b.PreparationDeadline(run); ok {
		until = append(until, d)
	}
	for _, d := range until {
		if !d.IsZero() && d.Before(deadline) {
			deadline = d
		}
	}
	return context.WithDeadline(ctx, deadline)
}

// LaneContext bounds a flight's wait for its bucket lanes (Pool.Reconcile): a run not prepared yet waits at most
// until its preparation deadline (then it flies anyway and its bucket calls end at once, so it fails in time).
func (b Bounds) LaneContext(run *evalsv1alpha1.EvalRun) func(context.Context) (context.Context, context.CancelFunc) {
	return func(ctx context.Context) (context.Context, context.CancelFunc) {
		if d, ok := b.PreparationDeadline(run); ok {
			return context.WithDeadline(ctx, d)
		}
		return context.WithCancel(ctx)
	}
}
