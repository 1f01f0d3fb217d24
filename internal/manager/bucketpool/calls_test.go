package bucketpool

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/runmemo"
)

// TestPreparationDeadline: a run without a Job must be prepared within its deadline from the start of its attempt
// (its creation for the first); a run with a Job, or finished, has no preparation deadline.
func TestPreparationDeadline(t *testing.T) {
	created := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	restarted := created.Add(3 * time.Hour)
	opts := options.Options{DefaultActiveDeadlineSeconds: 600}.WithDefaults()
	succeeded := func(status metav1.ConditionStatus, at time.Time) func(*evalsv1alpha1.EvalRun) {
		return func(r *evalsv1alpha1.EvalRun) {
			r.Status.Conditions = []metav1.Condition{{Type: evalsv1alpha1.ConditionSucceeded, Status: status, LastTransitionTime: metav1.NewTime(at)}}
		}
	}
	tests := []struct {
		name       string
		mutate     []func(*evalsv1alpha1.EvalRun)
		jobCreated bool
		want       time.Time
		wantOK     bool
	}{
		{name: "a new run: the manager's default from its creation", want: created.Add(600 * time.Second), wantOK: true},
		{name: "spec.activeDeadlineSeconds", mutate: []func(*evalsv1alpha1.EvalRun){func(r *evalsv1alpha1.EvalRun) {
			r.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
		}}, want: created.Add(time.Minute), wantOK: true},
		{name: "a later attempt: from its start", mutate: []func(*evalsv1alpha1.EvalRun){succeeded(metav1.ConditionUnknown, restarted),
			func(r *evalsv1alpha1.EvalRun) { r.Status.Attempt = &evalsv1alpha1.Attempt{Number: 2} }},
			want: restarted.Add(600 * time.Second), wantOK: true},
		{name: "the first attempt in progress: from its creation", mutate: []func(*evalsv1alpha1.EvalRun){succeeded(metav1.ConditionUnknown, restarted)},
			want: created.Add(600 * time.Second), wantOK: true},
		{name: "a Job recorded", mutate: []func(*evalsv1alpha1.EvalRun){func(r *evalsv1alpha1.EvalRun) { r.Status.JobName = "run-evalrun" }}},
		{name: "a Job this process created", jobCreated: true},
		{name: "finished", mutate: []func(*evalsv1alpha1.EvalRun){succeeded(metav1.ConditionFalse, created)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := flightRun("run")
			run.CreationTimestamp = metav1.NewTime(created)
			for _, m := range tc.mutate {
				m(run)
			}
			memo := runmemo.New()
			if tc.jobCreated {
				memo.MarkJobCreated(client.ObjectKeyFromObject(run), run.UID)
			}
			got, ok := NewBounds(clocktesting.NewFakePassiveClock(created), opts, memo).PreparationDeadline(run)
			if ok != tc.wantOK || !got.Equal(tc.want) {
				t.Errorf("PreparationDeadline = %s, %v; want %s, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestBoundsContext: a bucket step ends at the soonest of the call timeout, the run's preparation deadline and
// the deadlines given; a zero deadline given is none.
func TestBoundsContext(t *testing.T) {
	now := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	opts := options.Options{BucketCallTimeout: time.Minute, DefaultActiveDeadlineSeconds: 600}.WithDefaults()
	prepared := func() *evalsv1alpha1.EvalRun {
		r := flightRun("run")
		r.CreationTimestamp, r.Status.JobName = metav1.NewTime(now), "run-evalrun"
		return r
	}
	unprepared := func(created time.Time) *evalsv1alpha1.EvalRun {
		r := flightRun("run")
		r.CreationTimestamp = metav1.NewTime(created)
		return r
	}
	tests := []struct {
		name  string
		run   *evalsv1alpha1.EvalRun
		until []time.Time
		want  time.Time
	}{
		{name: "the call timeout", run: prepared(), want: now.Add(time.Minute)},
		{name: "a zero deadline given", run: prepared(), until: []time.Time{{}}, want: now.Add(time.Minute)},
		{name: "a sooner deadline given", run: prepared(), until: []time.Time{now.Add(time.Hour), now.Add(10 * time.Second)}, want: now.Add(10 * time.Second)},
		{name: "the preparation deadline", run: unprepared(now.Add(-590 * time.Second)), want: now.Add(10 * time.Second)},
		{name: "a preparation deadline past", run: unprepared(now.Add(-time.Hour)), want: now.Add(-time.Hour + 600*time.Second)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBounds(clocktesting.NewFakePassiveClock(now), opts, runmemo.New())
			ctx, cancel := b.Context(context.Background(), tc.run, tc.until...)
			defer cancel()
			got, ok := ctx.Deadline()
			if !ok || !got.Equal(tc.want) {
				t.Errorf("deadline %s (%v), want %s", got, ok, tc.want)
			}
		})
	}
}

// TestOnBucket: a bucket call's error names its endpoint and what was done, says in words that a call ran out of
// time, and still wraps the cause; nil stays nil, and a run without a bucket of its own leaves its error alone.
func TestOnBucket(t *testing.T) {
	cause := errors.New("503 Slow Down")
	stored := flightRun("run")
	stored.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: evalsv1alpha1.S3Bucket{Endpoint: "http://s3.example"}}
	tests := []struct {
		name  string
		err   error
		want  string
		cause error
	}{
		{name: "an error", err: OnBucket("http://s3.example", "reading x", cause),
			want: "reading x at bucket endpoint http://s3.example: 503 Slow Down", cause: cause},
		{name: "out of time", err: OnBucket("http://s3.example", "reading x", fmt.Errorf("get: %w", context.DeadlineExceeded)),
			want: "reading x at bucket endpoint http://s3.example: no answer in time (get: context deadline exceeded)", cause: context.DeadlineExceeded},
		{name: "the run's storage", err: OnStorage(stored, "reading its results", cause),
			want: "reading its results at bucket endpoint http://s3.example: 503 Slow Down", cause: cause},
		{name: "a run without storage", err: OnStorage(flightRun("plain"), "reading its results", cause), want: "503 Slow Down", cause: cause},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.err.Error()); diff != "" || !errors.Is(tc.err, tc.cause) {
				t.Errorf("error (-want +got):\n%s; wraps %v: %v", diff, tc.cause, errors.Is(tc.err, tc.cause))
			}
		})
	}
	if OnBucket("http://s3.example", "x", nil) != nil || OnStorage(stored, "x", nil) != nil {
		t.Error("a nil error did not stay nil")
	}
	var ce *CallError
	if !errors.As(OnStorage(stored, "x", cause), &ce) || errors.As(OnStorage(flightRun("plain"), "x", cause), &ce) {
		t.Error("only a bucket's error is a CallError")
	}
}
