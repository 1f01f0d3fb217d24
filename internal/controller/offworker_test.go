package controller

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

func flightRun(name string) *evalsv1alpha1.EvalRun {
	return &evalsv1alpha1.EvalRun{ObjectMeta: metav1.ObjectMeta{Namespace: "evals", Name: name, UID: types.UID(name + "-uid")}}
}

// startedOffWorker returns an offWorker whose flights end with the test.
func startedOffWorker(t *testing.T, perLane int) *offWorker {
	t.Helper()
	o := newOffWorker(perLane)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = o.Start(ctx) }()
	t.Cleanup(cancel)
	for {
		o.mu.Lock()
		started := o.base != nil
		o.mu.Unlock()
		if started {
			return o
		}
		time.Sleep(time.Millisecond)
	}
}

func noLaneBound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// landing waits for the next landed flight and returns its run's name.
func landing(t *testing.T, o *offWorker) string {
	t.Helper()
	select {
	case ev := <-o.landed:
		return ev.Object.GetName()
	case <-time.After(10 * time.Second):
		t.Fatal("no flight landed within 10s")
		return ""
	}
}

// A worker that dispatches a hung reconcile is free at once; the reconciles of runs naming another endpoint, or
// no bucket, are not delayed; the result of a landed flight is what the next reconcile of its run returns.
func TestOffWorkerAHungEndpointHoldsNoWorker(t *testing.T) {
	o := startedOffWorker(t, 2)
	hung := make(chan struct{})
	t.Cleanup(func() { close(hung) })
	var hungCalls atomic.Int32
	hang := func(ctx context.Context, _ *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		hungCalls.Add(1)
		select {
		case <-hung:
		case <-ctx.Done():
		}
		return ctrl.Result{RequeueAfter: time.Second}, errors.New("bucket endpoint http://black-hole:9000 did not answer")
	}
	for _, name := range []string{"hung-1", "hung-2", "hung-3", "hung-4"} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := o.reconcile(context.Background(), flightRun(name), []string{"http://black-hole:9000"}, noLaneBound, hang); err != nil {
				t.Errorf("dispatching %s: %v", name, err)
			}
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("dispatching %s held the worker", name)
		}
	}
	// Two of the four hold the black hole's lane; the other two wait for it, off the workers.
	waitFor(t, func() bool { return hungCalls.Load() == 2 })

	fine := func(ctx context.Context, run *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	run := flightRun("fine")
	if _, err := o.reconcile(context.Background(), run, []string{"http://seaweed:8333"}, noLaneBound, fine); err != nil {
		t.Fatal(err)
	}
	if got := landing(t, o); got != "fine" {
		t.Fatalf("landed %s, want fine", got)
	}
	res, err := o.reconcile(context.Background(), run, []string{"http://seaweed:8333"}, noLaneBound, fine)
	if err != nil || res.RequeueAfter != time.Minute {
		t.Fatalf("the landed flight's result = %v, %v; want RequeueAfter 1m", res, err)
	}
	if hungCalls.Load() != 2 {
		t.Fatalf("%d hung reconciles run at once, want the lane's bound 2", hungCalls.Load())
	}
}

// A reconcile asked while its run's flight is in the air starts no second flight, and one more flight follows
// the landing, so nothing it was asked for is lost; a flight's error is handed back (the queue's backoff).
func TestOffWorkerOneFlightPerRun(t *testing.T) {
	o := startedOffWorker(t, 8)
	release := make(chan struct{})
	var calls, inside, most atomic.Int32
	fn := func(ctx context.Context, run *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		n := inside.Add(1)
		defer inside.Add(-1)
		if n > most.Load() {
			most.Store(n)
		}
		if calls.Add(1) == 1 {
			<-release
		}
		return ctrl.Result{}, nil
	}
	run := flightRun("run")
	lanes := []string{"http://seaweed:8333"}
	for range 5 {
		if _, err := o.reconcile(context.Background(), run, lanes, noLaneBound, fn); err != nil {
			t.Fatal(err)
		}
	}
	if o.inFlight() != 1 {
		t.Fatalf("%d flights in the air, want 1", o.inFlight())
	}
	close(release)
	landing(t, o)
	// The reconciles asked meanwhile bring one more flight.
	if _, err := o.reconcile(context.Background(), run, lanes, noLaneBound, fn); err != nil {
		t.Fatal(err)
	}
	landing(t, o)
	if _, err := o.reconcile(context.Background(), run, lanes, noLaneBound, fn); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 || most.Load() != 1 {
		t.Fatalf("calls = %d (want 2), at most %d at once (want 1)", calls.Load(), most.Load())
	}

	failing := flightRun("failing")
	boom := errors.New("reading the eval file at bucket endpoint http://x: 503")
	fail := func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) { return ctrl.Result{}, boom }
	if _, err := o.reconcile(context.Background(), failing, lanes, noLaneBound, fail); err != nil {
		t.Fatal(err)
	}
	landing(t, o)
	if _, err := o.reconcile(context.Background(), failing, lanes, noLaneBound, fail); !errors.Is(err, boom) {
		t.Fatalf("the landed flight's error = %v, want %v", err, boom)
	}
}

// A flight whose lane wait ends (its run's preparation deadline) flies anyway, so it can end its run in time; a
// panic in a flight is an error, not a crash; a run created again under the same name does not get the old
// run's result.
func TestOffWorkerLaneDeadlinePanicAndRecreatedRuns(t *testing.T) {
	o := startedOffWorker(t, 1)
	hung := make(chan struct{})
	t.Cleanup(func() { close(hung) })
	lanes := []string{"http://black-hole:9000"}
	hang := func(ctx context.Context, run *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		<-hung
		return ctrl.Result{}, nil
	}
	if _, err := o.reconcile(context.Background(), flightRun("holder"), lanes, noLaneBound, hang); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return o.inFlight() == 1 })
	soon := func(ctx context.Context) (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, 50*time.Millisecond)
	}
	flew := make(chan struct{})
	late := func(ctx context.Context, run *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		close(flew)
		return ctrl.Result{}, nil
	}
	if _, err := o.reconcile(context.Background(), flightRun("late"), lanes, soon, late); err != nil {
		t.Fatal(err)
	}
	select {
	case <-flew:
	case <-time.After(10 * time.Second):
		t.Fatal("a flight past its lane deadline did not fly")
	}
	landing(t, o)

	panicky := flightRun("panicky")
	boom := func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) { panic("boom") }
	if _, err := o.reconcile(context.Background(), panicky, nil, noLaneBound, boom); err != nil {
		t.Fatal(err)
	}
	landing(t, o)
	if _, err := o.reconcile(context.Background(), panicky, nil, noLaneBound, boom); err == nil {
		t.Fatal("a panicking flight landed without an error")
	}

	old := flightRun("same-name")
	failOld := func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		return ctrl.Result{}, errors.New("old")
	}
	if _, err := o.reconcile(context.Background(), old, nil, noLaneBound, failOld); err != nil {
		t.Fatal(err)
	}
	landing(t, o)
	recreated := old.DeepCopy()
	recreated.UID = "same-name-uid-2"
	if _, err := o.reconcile(context.Background(), recreated, nil, noLaneBound, func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		return ctrl.Result{}, nil
	}); err != nil {
		t.Fatalf("the recreated run got the old run's result: %v", err)
	}
}

// Without a started offWorker (no manager), the reconcile runs on the caller's goroutine.
func TestOffWorkerNotStartedRunsInline(t *testing.T) {
	o := newOffWorker(0)
	ran := false
	res, err := o.reconcile(context.Background(), flightRun("run"), []string{"http://x"}, noLaneBound,
		func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
			ran = true
			return ctrl.Result{RequeueAfter: time.Second}, nil
		})
	if err != nil || !ran || res.RequeueAfter != time.Second {
		t.Fatalf("ran=%v res=%v err=%v", ran, res, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
