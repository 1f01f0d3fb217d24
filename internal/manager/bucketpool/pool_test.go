package bucketpool

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

// startedPool returns an Pool whose flights end with the test.
func startedPool(t *testing.T, perLane int) *Pool {
	t.Helper()
	o := New(perLane)
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

// asked waits for the next reconcile a flight asks for and returns its run's name.
func asked(t *testing.T, o *Pool) string {
	t.Helper()
	select {
	case ev := <-o.asks:
		return ev.Object.GetName()
	case <-time.After(10 * time.Second):
		t.Fatal("no reconcile asked for within 10s")
		return ""
	}
}

// nothingAsked fails when a flight asks for a reconcile within d.
func nothingAsked(t *testing.T, o *Pool, d time.Duration) {
	t.Helper()
	select {
	case ev := <-o.asks:
		t.Fatalf("a reconcile of %s was asked for", ev.Object.GetName())
	case <-time.After(d):
	}
}

func result(res ctrl.Result, err error) func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
	return func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) { return res, err }
}

// A worker that dispatches a hung reconcile is free at once; the reconciles of runs naming another endpoint are
// not delayed; a hung endpoint's flights are bounded by its lane.
func TestOffWorkerAHungEndpointHoldsNoWorker(t *testing.T) {
	o := startedPool(t, 2)
	hung := make(chan struct{})
	t.Cleanup(func() { close(hung) })
	var hungCalls atomic.Int32
	hang := func(ctx context.Context, _ *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		hungCalls.Add(1)
		select {
		case <-hung:
		case <-ctx.Done():
		}
		return ctrl.Result{RequeueAfter: time.Hour}, ctx.Err()
	}
	for _, name := range []string{"hung-1", "hung-2", "hung-3", "hung-4"} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := o.Reconcile(context.Background(), flightRun(name), []string{"http://black-hole:9000"}, noLaneBound, hang); err != nil {
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

	ran := make(chan struct{})
	fine := func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		close(ran)
		return ctrl.Result{}, nil
	}
	if _, err := o.Reconcile(context.Background(), flightRun("fine"), []string{"http://seaweed:8333"}, noLaneBound, fine); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("a run naming another endpoint waited for the hung one")
	}
	if hungCalls.Load() != 2 {
		t.Fatalf("%d hung reconciles run at once, want the lane's bound 2", hungCalls.Load())
	}
}

// A reconcile asked while its run's flight is in the air starts no second flight, and one more is asked for once
// it lands, so nothing it was asked for is lost; a flight that saw nothing new asks for nothing.
func TestOffWorkerOneFlightPerRun(t *testing.T) {
	o := startedPool(t, 8)
	release := make(chan struct{})
	var calls, inside, most atomic.Int32
	fn := func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
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
		if _, err := o.Reconcile(context.Background(), run, lanes, noLaneBound, fn); err != nil {
			t.Fatal(err)
		}
	}
	if o.InFlight() != 1 {
		t.Fatalf("%d flights in the air, want 1", o.InFlight())
	}
	close(release)
	if got := asked(t, o); got != "run" {
		t.Fatalf("asked for %s", got)
	}
	if _, err := o.Reconcile(context.Background(), run, lanes, noLaneBound, fn); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return o.InFlight() == 0 })
	nothingAsked(t, o, 200*time.Millisecond)
	if calls.Load() != 2 || most.Load() != 1 {
		t.Fatalf("calls = %d (want 2), at most %d at once (want 1)", calls.Load(), most.Load())
	}
}

// A flight follows up on its result as the queue would: an error (a panic too) brings a reconcile after the run's
// backoff, a RequeueAfter after that delay.
func TestOffWorkerFollowsUpItsResult(t *testing.T) {
	o := startedPool(t, 8)
	lanes := []string{"http://x:9000"}
	boom := errors.New("reading the eval file at bucket endpoint http://x:9000: 503")
	if _, err := o.Reconcile(context.Background(), flightRun("failing"), lanes, noLaneBound, result(ctrl.Result{}, boom)); err != nil {
		t.Fatal(err)
	}
	if got := asked(t, o); got != "failing" {
		t.Fatalf("asked for %s", got)
	}
	panicky := func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) { panic("boom") }
	if _, err := o.Reconcile(context.Background(), flightRun("panicky"), lanes, noLaneBound, panicky); err != nil {
		t.Fatal(err)
	}
	if got := asked(t, o); got != "panicky" {
		t.Fatalf("asked for %s", got)
	}
	start := time.Now()
	if _, err := o.Reconcile(context.Background(), flightRun("later"), lanes, noLaneBound, result(ctrl.Result{RequeueAfter: 300 * time.Millisecond}, nil)); err != nil {
		t.Fatal(err)
	}
	if got := asked(t, o); got != "later" || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("asked for %s after %s; want later after 300ms", got, time.Since(start))
	}
}

// A flight whose lane wait ends (its run's preparation deadline) flies anyway, so it can end its run in time; a
// run created again under the same name gets a flight of its own.
func TestOffWorkerLaneDeadlineAndRecreatedRuns(t *testing.T) {
	o := startedPool(t, 1)
	hung := make(chan struct{})
	t.Cleanup(func() { close(hung) })
	lanes := []string{"http://black-hole:9000"}
	hang := func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		<-hung
		return ctrl.Result{RequeueAfter: time.Hour}, nil
	}
	if _, err := o.Reconcile(context.Background(), flightRun("holder"), lanes, noLaneBound, hang); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return o.InFlight() == 1 })
	soon := func(ctx context.Context) (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, 50*time.Millisecond)
	}
	flew := make(chan struct{})
	late := func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		close(flew)
		return ctrl.Result{}, nil
	}
	if _, err := o.Reconcile(context.Background(), flightRun("late"), lanes, soon, late); err != nil {
		t.Fatal(err)
	}
	select {
	case <-flew:
	case <-time.After(10 * time.Second):
		t.Fatal("a flight past its lane deadline did not fly")
	}

	old := flightRun("same-name")
	block := make(chan struct{})
	if _, err := o.Reconcile(context.Background(), old, nil, noLaneBound, func(ctx context.Context, _ *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		<-block
		return ctrl.Result{}, ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	recreated := old.DeepCopy()
	recreated.UID = "same-name-uid-2"
	ranNew := make(chan struct{})
	if _, err := o.Reconcile(context.Background(), recreated, nil, noLaneBound, func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
		close(ranNew)
		return ctrl.Result{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ranNew:
	case <-time.After(10 * time.Second):
		t.Fatal("the recreated run waited for the old run's flight")
	}
	close(block)
	nothingAsked(t, o, 200*time.Millisecond) // the old run's cancelled flight asks for nothing
}

// Without a started Pool (no manager), the reconcile runs on the caller's goroutine.
func TestOffWorkerNotStartedRunsInline(t *testing.T) {
	o := New(0)
	ran := false
	res, err := o.Reconcile(context.Background(), flightRun("run"), []string{"http://x"}, noLaneBound,
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
