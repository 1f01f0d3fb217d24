package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/bucketpool"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/collect"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/metrics"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/runmemo"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	acv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/statusapply"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// +kubebuilder:rbac:groups=evals.evalrun.io,resources=evalschedules,verbs=get;list;watch
// +kubebuilder:rbac:groups=evals.evalrun.io,resources=evalschedules/status,verbs=get;patch
// +kubebuilder:rbac:groups=evals.evalrun.io,resources=evalruns,verbs=create;delete

// ScheduleControllerName names the EvalSchedule controller (and its event reporter).
const ScheduleControllerName = "evalschedule"

// Event reasons of an EvalSchedule.
const (
	eventRunCreated      = "RunCreated"
	eventRunDeleted      = "RunDeleted"
	eventRunReplaced     = "RunReplaced"
	eventRunSkipped      = "RunSkipped"
	eventMissedSchedule  = "MissedSchedule"
	eventInvalidSchedule = "InvalidSchedule"
	eventStorageCleanup  = "StorageCleanupFailed"
)

// nextTimeSlack is added to the wait for the next scheduled time, so that the reconcile it brings runs after it.
const nextTimeSlack = 100 * time.Millisecond

// EvalScheduleReconciler creates an EvalSchedule's runs at their scheduled times, deletes those beyond its
// history limits and reports the latest outcome.
type EvalScheduleReconciler struct {
	client client.Client
	// apiReader reads uncached: the case history ConfigMap (the cache holds only runs' ConfigMaps); collect reads
	// finished runs' stored results into it.
	apiReader client.Reader
	collect   *collect.Collections
	recorder  recorder.EventRecorder
	clock     clock.PassiveClock
	workers   int
}

// NewEvalScheduleReconciler returns a reconciler; c is the manager's cached client, apiReader reads uncached, rec
// emits events, clk tells the time. opts.ScheduleConcurrentReconciles is how many schedules it reconciles at once;
// opts bounds the bucket calls reading finished runs' results.
func NewEvalScheduleReconciler(c client.Client, apiReader client.Reader, rec recorder.EventRecorder, clk clock.PassiveClock,
	opts options.Options) *EvalScheduleReconciler {
	opts = opts.WithDefaults()
	memo := runmemo.New()
	return &EvalScheduleReconciler{client: c, apiReader: apiReader, recorder: rec, clock: clk, workers: opts.ScheduleConcurrentReconciles,
		collect: collect.New(c, apiReader, memo, bucketpool.NewBounds(clk, opts, memo), clk, opts)}
}

// SetupWithManager registers the reconciler: EvalSchedules and the EvalRuns they control.
func (r *EvalScheduleReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ScheduleControllerName).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.workers}).
		For(&evalsv1alpha1.EvalSchedule{}).
		Owns(&evalsv1alpha1.EvalRun{}).
		Complete(r)
}

// Reconcile lists the schedule's runs, deletes expired ones, creates the run due now (following the concurrency
// policy and the starting deadline), writes the status and waits for the next scheduled time.
func (r *EvalScheduleReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := &evalsv1alpha1.EvalSchedule{}
	if err := r.client.Get(ctx, req.NamespacedName, s); err != nil || !s.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	metrics.NoteScheduleNamespace(s.Namespace)
	log := ctrl.LoggerFrom(ctx).WithValues("evalSchedule", klog.KObj(s))
	ctx = ctrl.LoggerInto(ctx, log)
	now := r.clock.Now()

	runs, err := r.runsOf(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	g := assess.GroupRuns(runs)
	status := s.Status.DeepCopy()
	status.ObservedGeneration = s.Generation

	// 1. History: record the finished runs' case verdicts, then delete the finished runs beyond the limits (not
	// while recording failed: they may not be recorded yet).
	stepErr := r.recordHistory(ctx, s, g, status)
	if stepErr == nil {
		for _, run := range g.Expired(&s.Spec) {
			stepErr = errors.Join(stepErr, r.deleteRun(ctx, s, run, eventRunDeleted, "deleted run %s beyond the history limits"))
		}
	}

	// 2. The schedule itself.
	sched, err := assess.ParseSchedule(&s.Spec)
	if err != nil {
		r.recorder.Eventf(s, nil, corev1.EventTypeWarning, eventInvalidSchedule, "Schedule", "%s", err.Error())
		SetScheduleConditions(status, s.Generation, now, metav1.ConditionFalse, evalsv1alpha1.ScheduleReasonInvalidSchedule, err.Error())
		status.NextScheduleTime = nil
		r.summarize(status, g)
		return ctrl.Result{}, errors.Join(stepErr, r.applyStatus(ctx, s, status))
	}

	// 3. The run due now, if any.
	var requeue time.Duration
	suspended := ptr.Deref(s.Spec.Suspend, false)
	if suspended {
		SetScheduleConditions(status, s.Generation, now, metav1.ConditionTrue, evalsv1alpha1.ScheduleReasonSuspended, "the schedule is suspended")
		status.NextScheduleTime = nil
	} else {
		created, err := r.startDue(ctx, s, sched, &g, status, now)
		stepErr = errors.Join(stepErr, err)
		if created != nil {
			g.Active = append(g.Active, created)
		}
		next := sched.Next(now)
		status.NextScheduleTime = ptr.To(metav1.NewTime(next))
		requeue = next.Sub(now) + nextTimeSlack
		SetScheduleConditions(status, s.Generation, now, metav1.ConditionTrue, evalsv1alpha1.ScheduleReasonScheduled,
			"next run at "+next.UTC().Format(time.RFC3339))
	}
	r.summarize(status, g)
	if err := r.applyStatus(ctx, s, status); err != nil {
		return ctrl.Result{}, errors.Join(stepErr, err)
	}
	r.reportSkip(s, status, g)
	return ctrl.Result{RequeueAfter: requeue}, stepErr
}

// reportSkip counts and announces a scheduled time skipped under concurrencyPolicy Forbid, once: when the status
// just written records a skipped time the schedule's previous status did not.
func (r *EvalScheduleReconciler) reportSkip(s *evalsv1alpha1.EvalSchedule, status *evalsv1alpha1.EvalScheduleStatus, g assess.ScheduleRuns) {
	skipped, before := status.LastSkippedTime, s.Status.LastSkippedTime
	if skipped == nil || (before != nil && skipped.Equal(before)) {
		return
	}
	metrics.ScheduledTimes.WithLabelValues(s.Namespace, "Skipped").Inc()
	blocker := "another run"
	if len(g.Active) > 0 {
		blocker = "run " + g.Active[0].Name
	}
	r.recorder.Eventf(s, nil, corev1.EventTypeNormal, eventRunSkipped, "Schedule",
		"run for %s not started: %s is still in progress (concurrencyPolicy Forbid)", skipped.UTC().Format(time.RFC3339), blocker)
}

// startDue creates the run of the most recent scheduled time not started yet, unless it is past the starting
// deadline or the concurrency policy forbids it. It returns the run it created, if any.
func (r *EvalScheduleReconciler) startDue(ctx context.Context, s *evalsv1alpha1.EvalSchedule, sched interface{ Next(time.Time) time.Time },
	g *assess.ScheduleRuns, status *evalsv1alpha1.EvalScheduleStatus, now time.Time) (*evalsv1alpha1.EvalRun, error) {
	earliest := s.CreationTimestamp.Time
	for _, t := range []*metav1.Time{status.LastScheduleTime, status.LastSkippedTime} {
		if t != nil && t.After(earliest) {
			earliest = t.Time
		}
	}
	if d := s.Spec.StartingDeadlineSeconds; d != nil {
		if floor := now.Add(-time.Duration(*d) * time.Second); floor.After(earliest) {
			earliest = floor
		}
	}
	due, missed := assess.MostRecent(sched, earliest, now)
	if due.IsZero() {
		return nil, nil
	}
	if missed > 1 {
		metrics.ScheduledTimes.WithLabelValues(s.Namespace, "Missed").Add(float64(missed - 1))
		r.recorder.Eventf(s, nil, corev1.EventTypeWarning, eventMissedSchedule, "Schedule",
			"%d scheduled times passed since %s; starting only the latest, %s", missed, earliest.UTC().Format(time.RFC3339), due.UTC().Format(time.RFC3339))
	}
	name := assess.ScheduledRunName(s.Name, due)
	for _, group := range [][]*evalsv1alpha1.EvalRun{g.Active, g.Succeeded, g.Failed} {
		for _, run := range group {
			if run.Name == name {
				status.LastScheduleTime = ptr.To(metav1.NewTime(due))
				return nil, nil
			}
		}
	}
	others := g.Active
	switch policy := s.Spec.ConcurrencyPolicy; {
	case len(others) > 0 && policy == evalsv1alpha1.ConcurrencyForbid:
		// The time is skipped for good: the next reconciles start after it, so it is counted (by reportSkip,
		// once the status holds it) and announced once, and never started late.
		status.LastSkippedTime = ptr.To(metav1.NewTime(due))
		return nil, nil
	case len(others) > 0 && policy == evalsv1alpha1.ConcurrencyReplace:
		var err error
		for _, run := range others {
			err = errors.Join(err, r.deleteRun(ctx, s, run, eventRunReplaced, "deleted run %s in progress to start the next one (concurrencyPolicy Replace)"))
		}
		if err != nil {
			return nil, err
		}
		g.Active = nil
	}
	run := assess.ScheduledRun(s, due, g.LatestSucceeded())
	if err := r.client.Create(ctx, run); err != nil {
		if apierrors.IsAlreadyExists(err) {
			status.LastScheduleTime = ptr.To(metav1.NewTime(due))
			return nil, nil
		}
		return nil, fmt.Errorf("creating run %s: %w", run.Name, err)
	}
	status.LastScheduleTime = ptr.To(metav1.NewTime(due))
	metrics.ScheduledTimes.WithLabelValues(s.Namespace, "Created").Inc()
	r.recorder.Eventf(s, run, corev1.EventTypeNormal, eventRunCreated, "Schedule", "created run %s for %s", run.Name, due.UTC().Format(time.RFC3339))
	ctrl.LoggerFrom(ctx).V(1).Info("Run created", "evalRun", klog.KObj(run), "scheduledTime", due)
	return run, nil
}

// runsOf lists the runs the schedule controls, from the cache.
func (r *EvalScheduleReconciler) runsOf(ctx context.Context, s *evalsv1alpha1.EvalSchedule) ([]*evalsv1alpha1.EvalRun, error) {
	var list evalsv1alpha1.EvalRunList
	if err := r.client.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingLabels{evalsv1alpha1.LabelSchedule: s.Name}); err != nil {
		return nil, fmt.Errorf("listing the runs of EvalSchedule %s: %w", s.Name, err)
	}
	var out []*evalsv1alpha1.EvalRun
	for i := range list.Items {
		if run := &list.Items[i]; metav1.IsControlledBy(run, s) && run.DeletionTimestamp.IsZero() {
			out = append(out, run)
		}
	}
	return out, nil
}

// deleteRun deletes one of the schedule's runs. The Kubernetes garbage collector deletes its ConfigMaps, Job and
// pods; the run's finalizer holds it until the EvalRun controller has deleted what it stored in a bucket (off its
// workers, bounded), so no bucket call is made here and a bucket that hangs never holds this controller.
func (r *EvalScheduleReconciler) deleteRun(ctx context.Context, s *evalsv1alpha1.EvalSchedule, run *evalsv1alpha1.EvalRun, reason, format string) error {
	err := r.client.Delete(ctx, run, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &run.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting run %s: %w", run.Name, err)
	}
	r.recorder.Eventf(s, run, corev1.EventTypeNormal, reason, "Delete", format, run.Name)
	return nil
}

// deleteStored deletes every object the run stored in its bucket.
func deleteStored(ctx context.Context, store *objstore.Store, run *evalsv1alpha1.EvalRun) error {
	prefix, err := objstore.RunRef{Namespace: run.Namespace, Name: run.Name, UID: string(run.UID)}.Prefix()
	if err != nil {
		return err
	}
	if _, err := store.DeletePrefix(ctx, prefix); err != nil {
		return fmt.Errorf("deleting the bucket objects of run %s: %w", run.Name, err)
	}
	return nil
}

// summarize fills status.active, lastFinished, lastSuccessfulTime and cost (the finished runs' summed) from the
// schedule's runs.
func (r *EvalScheduleReconciler) summarize(status *evalsv1alpha1.EvalScheduleStatus, g assess.ScheduleRuns) {
	status.Active = nil
	for _, run := range g.Active {
		if len(status.Active) == evalsv1alpha1.MaxScheduleActive {
			break
		}
		status.Active = append(status.Active, evalsv1alpha1.ScheduledRun{Name: run.Name, ScheduledTime: metav1.NewTime(assess.ScheduledTime(run))})
	}
	if last := g.LastFinished(); last != nil {
		status.LastFinished = assess.FinishedRunStatus(last)
	}
	for _, run := range g.Succeeded {
		if t := run.Status.CompletionTime; t != nil && (status.LastSuccessfulTime == nil || t.After(status.LastSuccessfulTime.Time)) {
			status.LastSuccessfulTime = t.DeepCopy()
		}
	}
	costs := make([]*evalsv1alpha1.RunCost, 0, len(g.Succeeded)+len(g.Failed))
	for _, run := range slices.Concat(g.Succeeded, g.Failed) {
		costs = append(costs, run.Status.Cost)
	}
	status.Cost = results.SumRunCosts(costs)
}

// SetScheduleConditions sets Ready (with status, reason and message) and Stalled (True only for an invalid
// schedule).
func SetScheduleConditions(status *evalsv1alpha1.EvalScheduleStatus, generation int64, now time.Time, ready metav1.ConditionStatus, reason, msg string) {
	stamp := metav1.NewTime(now.UTC().Truncate(time.Second))
	stalled := metav1.ConditionFalse
	if ready == metav1.ConditionFalse {
		stalled = metav1.ConditionTrue
	}
	msg = textbound.Head(assess.OneLine(msg), assess.MaxConditionMessage)
	for _, c := range []metav1.Condition{
		{Type: evalsv1alpha1.ScheduleConditionReady, Status: ready, Reason: reason, Message: msg},
		{Type: evalsv1alpha1.ScheduleConditionStalled, Status: stalled, Reason: reason, Message: msg},
	} {
		c.ObservedGeneration, c.LastTransitionTime = generation, stamp
		meta.SetStatusCondition(&status.Conditions, c)
	}
}

// applyStatus server-side applies the schedule's status when it changed.
func (r *EvalScheduleReconciler) applyStatus(ctx context.Context, s *evalsv1alpha1.EvalSchedule, status *evalsv1alpha1.EvalScheduleStatus) error {
	if equality.Semantic.DeepEqual(&s.Status, status) {
		return nil
	}
	apply := acv1alpha1.EvalSchedule(s.Name, s.Namespace).WithStatus(statusapply.Schedule(status))
	if err := r.client.Status().Apply(ctx, apply, client.FieldOwner(statusapply.FieldManagerSchedule), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying the status of EvalSchedule %s: %w", s.Name, err)
	}
	return nil
}
