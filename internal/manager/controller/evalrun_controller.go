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
	"github.com/evalrun-operator/evalrun-operator/internal/manager/evalsource"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/kueue"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/metrics"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/runmemo"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/statusapply"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// +kubebuilder:rbac:groups=evals.evalrun.io,resources=evalruns,verbs=get;list;watch
// +kubebuilder:rbac:groups=evals.evalrun.io,resources=evalruns/status,verbs=get;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;create
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list
// +kubebuilder:rbac:groups="",resources=services,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=list
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch

// The manager holds configmaps update and patch only because Kubernetes lets it create the collector's Role
// (which grants them by name) only if it holds them itself; it never updates a ConfigMap.

// EvalRunReconciler turns an EvalRun into its children and its Job, and reports how the run went.
type EvalRunReconciler struct {
	client    client.Client
	apiReader client.Reader
	recorder  recorder.EventRecorder
	clock     clock.PassiveClock
	opts      options.Options
	memo      *runmemo.Memo
	// off runs the reconciles of runs that name a bucket off the workers; bounds bounds each bucket call.
	off    *bucketpool.Pool
	bounds bucketpool.Bounds
	// source reads runs' eval files (internal/manager/evalsource); collect their collections and stored results
	// (internal/manager/collect).
	source  *evalsource.Reader
	collect *collect.Collections
	// kueue reads the Workloads of queued runs' Jobs, once Kueue's API is served (nil until SetupWithManager).
	kueue *kueue.Watch
	// visibility reads waiting runs' positions from Kueue's visibility API, where it is served (nil until
	// SetupWithManager: no position).
	visibility *kueue.Visibility
}

// NewEvalRunReconciler returns a reconciler. c is the manager's (cached) client; apiReader reads uncached (the
// source ConfigMap of an eval file, and confirmations of objects missing from the cache); rec emits events.
func NewEvalRunReconciler(c client.Client, apiReader client.Reader, rec recorder.EventRecorder, clk clock.PassiveClock,
	opts options.Options) *EvalRunReconciler {
	opts = opts.WithDefaults()
	memo := runmemo.New()
	bounds := bucketpool.NewBounds(clk, opts, memo)
	return &EvalRunReconciler{client: c, apiReader: apiReader, recorder: rec, clock: clk, opts: opts, memo: memo,
		off: bucketpool.New(opts.BucketConcurrency), bounds: bounds, source: evalsource.NewReader(apiReader, bounds),
		collect: collect.New(c, apiReader, memo, bounds, clk, opts)}
}

// observed is what one reconcile learned: the assessment to report, the facts to record and the Job, if any.
type observed struct {
	assessment assess.Assessment
	facts      assess.StatusFacts
	job        *batchv1.Job
	// runnerEnded is when the last runner container ended, when the pods say so (for the collection latency).
	runnerEnded time.Time
}

// Reconcile gets the run and reconciles it: on this worker, or, for a run that names a bucket, off the workers
// (internal/manager/bucketpool), so that a bucket that hangs never holds a worker.
func (r *EvalRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	run := &evalsv1alpha1.EvalRun{}
	if err := r.client.Get(ctx, req.NamespacedName, run); err != nil {
		if apierrors.IsNotFound(err) {
			r.memo.Forget(req.NamespacedName)
			r.off.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	metrics.NoteRunNamespace(run.Namespace)
	if endpoints := r.bucketEndpoints(ctx, run); len(endpoints) > 0 {
		return r.off.Reconcile(ctx, run, endpoints, r.bounds.LaneContext(run), r.reconcileRun)
	}
	return r.reconcileRun(ctx, run)
}

// reconcileRun observes and advances the run, writes its status once if it changed, then acts on the outcome
// (stop a failed run's Job) and emits events for transitions.
func (r *EvalRunReconciler) reconcileRun(ctx context.Context, run *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(run)}
	log := ctrl.LoggerFrom(ctx).WithValues("evalRun", klog.KObj(run))
	ctx = ctrl.LoggerInto(ctx, log)
	if !run.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, run)
	}
	if changed, err := r.ensureFinalizer(ctx, run); changed || err != nil {
		return ctrl.Result{}, err
	}
	now := r.clock.Now()
	if _, done := assess.TerminalAssessment(run); done {
		if trigger := assess.NewAttemptTrigger(run); trigger != "" {
			return r.startNewAttempt(ctx, run, trigger, metav1.NewTime(now.UTC().Truncate(time.Second)))
		}
	}

	obs, stepErr := r.step(ctx, run, now)
	if obs == nil {
		return ctrl.Result{}, stepErr
	}
	if obs.assessment.State.Terminal() && assess.NeedsComparison(run) {
		if err := r.compareWithBaseline(ctx, run, obs); err != nil {
			stepErr = errors.Join(stepErr, err)
		}
	}
	// Transitions are stamped when they were observed: a reconcile off the workers may have waited on a bucket.
	desired := assess.DesiredManagerStatus(run, obs.assessment, obs.facts, r.clock.Now())
	// A status equal to the one this process last applied means the cache has not caught up yet: its watch event
	// will bring another reconcile, so nothing is written twice.
	changed := assess.StatusChanged(run, &desired) && !r.memo.AlreadyApplied(req.NamespacedName, run.UID, &desired)
	recheck := obs.assessment.RecheckAfter
	if changed && !obs.assessment.State.Terminal() && len(obs.assessment.StopPods) == 0 &&
		(obs.job != nil && children.ManagerMerges(runWithJobTrials(run, obs.job)) || assess.ProgressOnly(run, &desired)) {
		// Progress is written in batches, at most once per interval: shards' while they run, and a one-pod run's
		// within one state (a pod's start goes pending, starting, running in a moment); a change of state, the
		// end, and a shard stopped, at once (docs/design/per-run-cost.md).
		if wait := assess.ProgressStatusWait(r.memo.AppliedAt(req.NamespacedName, run.UID), r.clock.Now(), r.opts.ProgressStatusInterval); wait > 0 {
			changed = false
			if recheck <= 0 || wait < recheck {
				recheck = wait
			}
		}
	}
	if changed {
		if err := r.applyStatus(ctx, run, &desired); err != nil {
			return ctrl.Result{}, errors.Join(stepErr, err)
		}
		r.memo.MarkApplied(req.NamespacedName, run.UID, &desired, r.clock.Now())
		r.emitTransitions(run, &desired)
		metrics.RecordDecisions(run, &desired, obs.runnerEnded, now, func(what string) bool {
			return r.memo.FirstTime(req.NamespacedName, run.UID, what)
		})
		log.V(2).Info("Status written", "state", obs.assessment.State, "reason", obs.assessment.Reason)
	}
	var stopErr error
	if obs.assessment.StopJob && obs.job != nil {
		stopErr = r.stopJob(ctx, obs.job)
	}
	if obs.assessment.RetryPod != "" && obs.job != nil {
		stopErr = errors.Join(stopErr, r.retryPod(ctx, obs.job, obs.assessment.RetryPod, obs.assessment.RetryIndex))
	}
	if len(obs.assessment.StopPods) > 0 && obs.job != nil {
		stopErr = errors.Join(stopErr, r.stopShards(ctx, run, obs.job, obs.assessment.StopPods))
	}
	if len(obs.assessment.ReleasePods) > 0 {
		stopErr = errors.Join(stopErr, r.releasePods(ctx, run, obs.assessment.ReleasePods))
	}
	return ctrl.Result{RequeueAfter: recheck}, errors.Join(stepErr, stopErr)
}

// step runs the numbered steps of one reconcile: it observes the run's Job and pods, creates the children that are
// missing (createChildren), and assesses what it saw (assess.Classify). It returns nil only when there is nothing
// to report.
func (r *EvalRunReconciler) step(ctx context.Context, run *evalsv1alpha1.EvalRun, now time.Time) (*observed, error) {
	// 1. A finished run keeps its outcome; its Job is stopped when it has no more to do.
	if a, done := assess.TerminalAssessment(run); done {
		return r.observeDecided(ctx, run, a, now)
	}

	// 2. The Job, through the owner index; a Job we recorded that is gone ends the run.
	job, err := r.findJob(ctx, run)
	if err != nil {
		return nil, err
	}
	key := client.ObjectKeyFromObject(run)
	if job == nil && (run.Status.JobName != "" || r.memo.JobCreated(key, run.UID)) {
		if job, err = r.getLiveJob(ctx, run); err != nil {
			return nil, err
		}
		if job == nil {
			return r.observeJobGone(ctx, run)
		}
	}

	// 3. No Job yet: pin the eval file, create the collector's access, the result ConfigMaps and the Job.
	facts := assess.StatusFactsFrom(run)
	if job == nil {
		created, err := r.create(ctx, run, facts, now)
		if created == nil || created.job == nil || err != nil {
			return created, err
		}
		job, facts = created.job, created.facts
		r.memo.MarkJobCreated(key, run.UID)
	} else if facts.EvalFileSHA256 == "" {
		if facts, err = evalsource.PinnedFacts(ctx, r.apiReader, run); err != nil {
			return nil, err
		}
	}
	facts.JobName = job.Name
	facts.StartTime = jobStartTime(job)
	facts.CompletionTime = job.Status.CompletionTime
	if d := assess.JobDeadline(run, job); d != nil {
		facts.ActiveDeadline = d
	}

	// 4. Keep the Job's suspension in line with spec.suspend, unless Kueue owns it; read Kueue's view of it.
	if err := r.syncSuspend(ctx, run, job); err != nil {
		return nil, err
	}
	if facts.Queue, err = r.queueOf(ctx, run, job, now); err != nil {
		return nil, err
	}

	// 5. Classify from the Job, its pods and what the collector (or each shard's) recorded.
	pods, err := r.podsOf(ctx, job)
	if err != nil {
		return nil, err
	}
	obs := assess.Observation{Run: run, Job: job, Pods: pods, Now: now, Queue: facts.Queue}
	if len(pods) == 0 && !assess.JobFinished(job) && !ptr.Deref(job.Spec.Suspend, false) {
		// A Job without a pod may have had it rejected at creation; only its events say why.
		if obs.PodCreateFailures, err = r.podCreateFailures(ctx, job); err != nil {
			return nil, err
		}
	}
	if trials := children.JobTrials(run, job); children.ManagerMerges(children.RunWithTrials(run, trials)) {
		o, err := r.observeShards(ctx, run, trials, obs, facts)
		if o != nil {
			o.runnerEnded = metrics.LastRunnerEnd(pods)
		}
		return o, err
	}
	a := assess.Classify(obs, r.opts)
	if len(pods) == 0 && a.RecheckAfter == 0 && !a.State.Terminal() && !ptr.Deref(job.Spec.Suspend, false) {
		a.RecheckAfter = assess.PodRejectedRecheck
	}
	return &observed{assessment: a, facts: facts, job: job, runnerEnded: metrics.LastRunnerEnd(pods)}, nil
}

// create runs step 3 for a run without a Job: it creates the children and says what became of the run. The
// observed has a Job only when everything was created.
func (r *EvalRunReconciler) create(ctx context.Context, run *evalsv1alpha1.EvalRun, facts assess.StatusFacts, now time.Time) (*observed, error) {
	if msg := evalsource.ReadingBucket(run); msg != "" && len(run.Status.Conditions) == 0 {
		// Reading a bucket may take until the run's preparation deadline: say so first, so a new run never
		// waits without a status.
		a := assess.Assessment{State: assess.StatePending, Reason: evalsv1alpha1.ReasonPending, Message: textbound.Head(msg, assess.MaxConditionMessage)}
		if err := r.applyStatus(ctx, run, ptr.To(assess.DesiredManagerStatus(run, a, facts, now))); err != nil {
			return nil, err
		}
	}
	created, err := r.createChildren(ctx, run, now)
	if a, ok := childFailure(err); ok {
		return &observed{assessment: a, facts: facts}, nil
	}
	if a := r.createForbidden(run, err, now); a != nil {
		// Pending while the queue retries with backoff (the error), until the refusals outlast the timeout.
		if a.State.Terminal() {
			err = nil
		}
		return &observed{assessment: *a, facts: facts}, err
	}
	if a := r.bucketUnavailable(run, err, r.clock.Now()); a != nil {
		// A bucket the run needs failed or hung until the run's preparation deadline: the run ends.
		return &observed{assessment: *a, facts: facts}, nil
	}
	if created == nil && err != nil {
		// Shown while the queue retries with backoff, so a run never waits silently.
		a := assess.Assessment{State: assess.StatePending, Reason: evalsv1alpha1.ReasonPending,
			Message: textbound.Head("retrying: "+assess.OneLine(err.Error()), assess.MaxConditionMessage)}
		return &observed{assessment: a, facts: facts}, err
	}
	return created, err
}

// observeDecided handles a run whose Succeeded condition is already terminal: its Job is stopped at once while its
// failed runner may still run, otherwise once the collector and the judge had time to wrap up.
func (r *EvalRunReconciler) observeDecided(ctx context.Context, run *evalsv1alpha1.EvalRun, a assess.Assessment, now time.Time) (*observed, error) {
	job, err := r.findJob(ctx, run)
	if err != nil {
		return nil, err
	}
	if job == nil || !job.DeletionTimestamp.IsZero() {
		return &observed{assessment: a, facts: assess.StatusFactsFrom(run), job: job}, nil
	}
	merges := children.ManagerMerges(runWithJobTrials(run, job))
	release := a.State == assess.StateSucceeded && (merges || r.opts.ReleaseSucceededPods)
	if !assess.JobFinished(job) || release {
		pods, err := r.podsOf(ctx, job)
		if err != nil {
			return nil, err
		}
		if !assess.JobFinished(job) {
			decidedAt := now
			if c := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionSucceeded); c != nil {
				decidedAt = c.LastTransitionTime.Time
			}
			a.StopJob, a.RecheckAfter = assess.StopFinishedRun(a, pods, decidedAt, now)
		}
		switch {
		case release && merges:
			// The shards' pods the Job counted after the run was decided.
			a.ReleasePods = assess.ReleasableOfSucceededRun(pods, job)
		case release:
			a.ReleasePods = assess.ReleasableOfOnePodRun(pods, job)
		}
	}
	return &observed{assessment: a, facts: assess.StatusFactsFrom(run), job: job}, nil
}

// observeJobGone handles a run whose Job was deleted. The cache may not show yet the terminal status a reconcile
// wrote before deleting the Job, so the API server's copy of the run decides. Results the collector persisted
// stand, whoever deleted the Job afterwards (ttlSecondsAfterFinished: 0, a user, a manager that was away
// meanwhile), except that they succeed only with the kubelet's exit code of the runner recorded; a run without
// them was cancelled.
func (r *EvalRunReconciler) observeJobGone(ctx context.Context, run *evalsv1alpha1.EvalRun) (*observed, error) {
	live := &evalsv1alpha1.EvalRun{}
	if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(run), live); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if live.UID != run.UID {
		return nil, nil
	}
	if a, done := assess.TerminalAssessment(live); done {
		return &observed{assessment: a, facts: assess.StatusFactsFrom(live)}, nil
	}
	trials, err := r.pinnedTrials(ctx, live)
	if err != nil {
		return nil, err
	}
	if children.ManagerMerges(children.RunWithTrials(live, trials)) {
		return r.observeShardsWithoutJob(ctx, live, trials)
	}
	return &observed{assessment: assess.ClassifyWithoutJob(live), facts: assess.StatusFactsFrom(live)}, nil
}

// runWithJobTrials is the run as the manager runs it (children.RunWithTrials) with the trials its Job records.
func runWithJobTrials(run *evalsv1alpha1.EvalRun, job *batchv1.Job) *evalsv1alpha1.EvalRun {
	return children.RunWithTrials(run, children.JobTrials(run, job))
}

// pinnedTrials is the trials of a run without a Job, as its pinned run.json records them (children.PinnedTrials);
// the spec's alone when it pinned none. run.json is read only when the eval file's trials could count.
func (r *EvalRunReconciler) pinnedTrials(ctx context.Context, run *evalsv1alpha1.EvalRun) (children.RunTrials, error) {
	if !children.FileTrialsCount(run) {
		return children.JobTrials(run, nil), nil
	}
	pinned, err := evalsource.PinnedConfigMap(ctx, r.apiReader, run)
	if err != nil || pinned == nil {
		return children.JobTrials(run, nil), err
	}
	cfg, err := children.RunConfigFrom(pinned)
	if err != nil {
		// A run.json that cannot be read is the merge's to report.
		return children.JobTrials(run, nil), nil
	}
	return children.PinnedTrials(run, cfg), nil
}

// compareWithBaseline compares a finished run with its baseline (collect.CompareWithBaseline) and records what
// it found in obs: the comparison and the Regressed condition in its facts, and a recheck while the baseline runs.
func (r *EvalRunReconciler) compareWithBaseline(ctx context.Context, run *evalsv1alpha1.EvalRun, obs *observed) error {
	c, err := r.collect.CompareWithBaseline(ctx, run)
	if c.Regressed != nil {
		obs.facts.Regressed = c.Regressed
	}
	if c.Baseline != nil {
		obs.facts.Baseline = c.Baseline
	}
	if c.RecheckAfter > 0 && (obs.assessment.RecheckAfter <= 0 || c.RecheckAfter < obs.assessment.RecheckAfter) {
		obs.assessment.RecheckAfter = c.RecheckAfter
	}
	return err
}

// jobStartTime is the Job's start time, or its creation time while it has not started.
func jobStartTime(job *batchv1.Job) *metav1.Time {
	if job.Status.StartTime != nil {
		return job.Status.StartTime.DeepCopy()
	}
	t := job.CreationTimestamp
	return &t
}

// findJob returns the Job controlled by run, from the cache through the owner index, or nil.
func (r *EvalRunReconciler) findJob(ctx context.Context, run *evalsv1alpha1.EvalRun) (*batchv1.Job, error) {
	var jobs batchv1.JobList
	if err := r.client.List(ctx, &jobs, client.InNamespace(run.Namespace), client.MatchingFields{OwnerUIDIndex: string(run.UID)}); err != nil {
		return nil, fmt.Errorf("listing the Jobs of EvalRun %s: %w", run.Name, err)
	}
	want := children.NamesFor(run.Name).Job
	for i := range jobs.Items {
		if jobs.Items[i].Name == want {
			return &jobs.Items[i], nil
		}
	}
	return nil, nil
}

// getLiveJob reads the run's Job from the API server, bypassing the cache; nil when it does not exist or is not
// controlled by run.
func (r *EvalRunReconciler) getLiveJob(ctx context.Context, run *evalsv1alpha1.EvalRun) (*batchv1.Job, error) {
	job := &batchv1.Job{}
	err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: children.NamesFor(run.Name).Job}, job)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Job %s: %w", children.NamesFor(run.Name).Job, err)
	}
	if !metav1.IsControlledBy(job, run) {
		return nil, nil
	}
	return job, nil
}

// podsOf lists the Job's pods from the cache through the owner index.
func (r *EvalRunReconciler) podsOf(ctx context.Context, job *batchv1.Job) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingFields{OwnerUIDIndex: string(job.UID)}); err != nil {
		return nil, fmt.Errorf("listing the pods of Job %s: %w", job.Name, err)
	}
	return pods.Items, nil
}

// podCreateFailures lists the Job's FailedCreate events from the API server (events are not cached), oldest first.
func (r *EvalRunReconciler) podCreateFailures(ctx context.Context, job *batchv1.Job) ([]assess.PodCreateFailure, error) {
	var events corev1.EventList
	err := r.apiReader.List(ctx, &events, client.InNamespace(job.Namespace), client.MatchingFields{
		"involvedObject.uid": string(job.UID), "reason": "FailedCreate",
	})
	if err != nil {
		return nil, fmt.Errorf("listing the events of Job %s: %w", job.Name, err)
	}
	out := make([]assess.PodCreateFailure, 0, len(events.Items))
	for i := range events.Items {
		e := &events.Items[i]
		first := e.FirstTimestamp.Time
		if first.IsZero() {
			first = e.EventTime.Time
		}
		if first.IsZero() {
			first = e.CreationTimestamp.Time
		}
		out = append(out, assess.PodCreateFailure{First: first, Message: e.Message})
	}
	slices.SortFunc(out, func(a, b assess.PodCreateFailure) int { return a.First.Compare(b.First) })
	return out, nil
}

// syncSuspend sets the Job's spec.suspend to the run's, for a Job that is not Kueue's and has not finished.
func (r *EvalRunReconciler) syncSuspend(ctx context.Context, run *evalsv1alpha1.EvalRun, job *batchv1.Job) error {
	if run.Spec.QueueName != "" || job.Labels[podwire.LabelKueueQueue] != "" || assess.JobFinished(job) {
		return nil
	}
	want := run.Spec.Suspend != nil && *run.Spec.Suspend
	if job.Spec.Suspend != nil && *job.Spec.Suspend == want {
		return nil
	}
	patch := client.MergeFrom(job.DeepCopy())
	job.Spec.Suspend = &want
	if err := r.client.Patch(ctx, job, patch); err != nil {
		return fmt.Errorf("setting suspend=%t on Job %s: %w", want, job.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Job suspension changed", "job", klog.KObj(job), "suspend", want)
	return nil
}

// applyStatus server-side applies the manager's status fields (statusapply.Manager) with the manager's field
// owner.
func (r *EvalRunReconciler) applyStatus(ctx context.Context, run *evalsv1alpha1.EvalRun, s *evalsv1alpha1.EvalRunStatus) error {
	ac := statusapply.EvalRun(run.Namespace, run.Name, "", statusapply.Manager(s))
	if err := r.client.Status().Apply(ctx, ac, client.FieldOwner(statusapply.FieldManagerManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying the status of EvalRun %s: %w", run.Name, err)
	}
	return nil
}
