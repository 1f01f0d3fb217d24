// Package bucketpool runs the reconciles of runs that name a bucket off the controller's workers: the manager's
// bucket-call pool; and it bounds each bucket call (Bounds) and names the endpoint of one that failed (CallError).
//
// A bucket call can hang: an endpoint that accepts TCP and never answers holds the call until its deadline. On a
// worker, that holds the worker, and a few such runs hold them all: every other run and schedule of the cluster
// waits. So the reconcile of a run that names a bucket is a flight: a goroutine of its own, started by the worker,
// which is free at once.
//   - One flight per run at a time, as the workqueue guarantees one reconcile per key: a reconcile asked while
//     the run's flight is in the air returns at once and asks for one more flight once it lands, so no event is
//     lost. Any other reconcile starts a flight.
//   - A flight follows up on its own result, as the queue would: after an error it asks again after the run's
//     exponential backoff (the controller's default rate limiter, per run), after a RequeueAfter after that
//     delay, through a channel source. A flight that asked nothing and saw nothing new is the last one.
//   - Flights are bounded per bucket endpoint (a lane): a hung endpoint holds goroutines of the runs that name it,
//     never a worker nor another endpoint's lane.
//   - Each bucket call inside a flight is bounded by its own deadline (Bounds.Context), so a lane frees up.
package bucketpool

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/metrics"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
)

// flight is one reconcile off the workers.
type flight struct {
	uid    types.UID
	cancel context.CancelFunc
	// again records a reconcile asked while the flight was in the air: what it was asked for may be newer than
	// what the flight saw.
	again bool
}

// Pool runs flights and asks for the follow-ups they need.
type Pool struct {
	perLane int64

	mu      sync.Mutex
	base    context.Context
	flights map[types.NamespacedName]*flight
	// later holds the follow-up a landed flight asked for (its backoff or RequeueAfter), stopped when another
	// flight of the run starts.
	later   map[types.NamespacedName]*time.Timer
	lanes   map[string]*semaphore.Weighted
	backoff workqueue.TypedRateLimiter[types.NamespacedName]
	asks    chan event.GenericEvent
}

func New(perLane int) *Pool {
	if perLane <= 0 {
		perLane = options.DefaultBucketConcurrency
	}
	return &Pool{perLane: int64(perLane), flights: map[types.NamespacedName]*flight{},
		later: map[types.NamespacedName]*time.Timer{}, lanes: map[string]*semaphore.Weighted{},
		backoff: workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
		asks:    make(chan event.GenericEvent, 1024)}
}

// Start makes the Pool fly; its flights end with ctx (the manager's). It implements manager.Runnable, so it
// runs where the controllers run (the leader).
func (o *Pool) Start(ctx context.Context) error {
	o.mu.Lock()
	o.base = ctx
	o.mu.Unlock()
	<-ctx.Done()
	return nil
}

// source enqueues the runs whose flights asked for another reconcile.
func (o *Pool) Source() source.Source {
	return source.Channel(o.asks, &handler.EnqueueRequestForObject{})
}

// reconcile is what the worker does for run: while a flight is in the air, it notes that one more is needed;
// otherwise it starts one. lanes are the bucket endpoints the run names; laneCtx bounds the wait for a lane (see
// Bounds.LaneContext): a flight that cannot get a lane before then flies anyway, its bucket calls ending at once.
// Without a started Pool (no manager), fn runs here.
func (o *Pool) Reconcile(ctx context.Context, run *evalsv1alpha1.EvalRun, lanes []string,
	laneCtx func(context.Context) (context.Context, context.CancelFunc),
	fn func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error)) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(run)
	o.mu.Lock()
	if o.base == nil {
		o.mu.Unlock()
		return fn(ctx, run)
	}
	defer o.mu.Unlock()
	if f := o.flights[key]; f != nil {
		if f.uid == run.UID {
			f.again = true
			return ctrl.Result{}, nil
		}
		// A run deleted and created again under the same name: the old flight is no one's.
		f.cancel()
		delete(o.flights, key)
	}
	if t := o.later[key]; t != nil {
		t.Stop()
		delete(o.later, key)
	}
	fctx, cancel := context.WithCancel(ctrl.LoggerInto(o.base, ctrl.LoggerFrom(ctx)))
	f := &flight{uid: run.UID, cancel: cancel}
	o.flights[key] = f
	metrics.FlightsInAir.Inc()
	go o.fly(fctx, f, run.DeepCopy(), o.lanesOf(lanes), laneCtx, fn)
	return ctrl.Result{}, nil
}

// forget cancels the flight of a run that is gone, and any follow-up.
func (o *Pool) Forget(key types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if f := o.flights[key]; f != nil {
		f.cancel()
		delete(o.flights, key)
	}
	if t := o.later[key]; t != nil {
		t.Stop()
		delete(o.later, key)
	}
	o.backoff.Forget(key)
}

// inFlight reports how many flights are in the air (for tests).
func (o *Pool) InFlight() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.flights)
}

// lanesOf returns the semaphores of endpoints, in a fixed order (so two flights never wait on each other).
func (o *Pool) lanesOf(endpoints []string) []*semaphore.Weighted {
	endpoints = slices.Compact(slices.Sorted(slices.Values(endpoints)))
	out := make([]*semaphore.Weighted, 0, len(endpoints))
	for _, e := range endpoints {
		l := o.lanes[e]
		if l == nil {
			l = semaphore.NewWeighted(o.perLane)
			o.lanes[e] = l
		}
		out = append(out, l)
	}
	return out
}

// fly runs one flight: it waits for its lanes (within laneCtx's deadline), runs fn, then asks for what follows.
func (o *Pool) fly(ctx context.Context, f *flight, run *evalsv1alpha1.EvalRun, lanes []*semaphore.Weighted,
	laneCtx func(context.Context) (context.Context, context.CancelFunc),
	fn func(context.Context, *evalsv1alpha1.EvalRun) (ctrl.Result, error)) {
	defer f.cancel()
	started := time.Now()
	res, err := func() (res ctrl.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic in the reconcile of EvalRun %s: %v", run.Name, p)
			}
		}()
		wctx, cancel := laneCtx(ctx)
		held := 0
		for _, l := range lanes {
			if l.Acquire(wctx, 1) != nil {
				break
			}
			held++
		}
		cancel()
		defer func() {
			for _, l := range lanes[:held] {
				l.Release(1)
			}
		}()
		if ctx.Err() != nil {
			return ctrl.Result{}, ctx.Err()
		}
		return fn(ctx, run)
	}()
	metrics.FlightsInAir.Dec()
	metrics.FlightDuration.WithLabelValues(flightResult(res, err)).Observe(time.Since(started).Seconds())
	o.land(ctx, f, run, res, err)
}

// flightResult is the result label of a flight's duration.
func flightResult(res ctrl.Result, err error) string {
	switch {
	case err != nil:
		return "Error"
	case res.RequeueAfter > 0:
		return "Requeue"
	default:
		return "Success"
	}
}

// land ends a flight and asks for the next one it needs: at once when a reconcile was asked meanwhile, after the
// run's backoff after an error, after RequeueAfter; none otherwise.
func (o *Pool) land(ctx context.Context, f *flight, run *evalsv1alpha1.EvalRun, res ctrl.Result, err error) {
	key := client.ObjectKeyFromObject(run)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.flights[key] != f {
		return // forgotten, or replaced by a flight of a new run of the same name
	}
	delete(o.flights, key)
	var wait time.Duration
	switch {
	case err != nil:
		wait = o.backoff.When(key)
		ctrl.LoggerFrom(ctx).Error(err, "Reconciler error (off the workers)", "retryAfter", wait)
	case f.again:
		o.backoff.Forget(key)
	case res.RequeueAfter > 0:
		o.backoff.Forget(key)
		wait = res.RequeueAfter
	default:
		o.backoff.Forget(key)
		return
	}
	ask := event.GenericEvent{Object: run}
	if wait <= 0 || f.again {
		o.send(ask)
		return
	}
	o.later[key] = time.AfterFunc(wait, func() { o.send(ask) })
}

// send asks for a reconcile of the run through the channel source, unless the manager is stopping.
func (o *Pool) send(ask event.GenericEvent) {
	go func() {
		select {
		case o.asks <- ask:
		case <-o.base.Done():
		}
	}()
}
