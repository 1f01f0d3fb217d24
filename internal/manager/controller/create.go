package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/evalsource"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// createChildren creates the run's children in order: the pinned eval ConfigMap (after validating the eval
// file), the collector's ServiceAccount, Role and RoleBinding (no Role and RoleBinding when the pods make no API
// call: bucketOnly), the result ConfigMaps and the Job. Each create tolerates an existing object this run
// controls, so a reconcile interrupted half-way (or a manager restart) resumes without duplicates. It returns an
// assessment without a Job when the run must wait for its eval file or has failed validation.
func (r *EvalRunReconciler) createChildren(ctx context.Context, run *evalsv1alpha1.EvalRun, now time.Time) (*observed, error) {
	if run.Spec.Storage != nil {
		// The collector could not store a single result without the bucket's credentials: wait for them first.
		if _, _, missing, err := stored.Credentials(ctx, r.apiReader, run.Namespace, run.Spec.Storage.S3.CredentialsSecret); missing != "" || err != nil {
			if err != nil {
				missing = "checking the bucket's credentials: " + assess.OneLine(err.Error())
			}
			return &observed{assessment: assess.Assessment{State: assess.StatePending, Reason: evalsv1alpha1.ReasonPending, Message: missing,
				RecheckAfter: evalsource.Recheck(now.Sub(run.CreationTimestamp.Time))}}, err
		}
	}
	pinned, wait, err := r.pinEvalFile(ctx, run, now)
	if wait != nil {
		return &observed{assessment: *wait}, err
	}
	if err != nil {
		return nil, err
	}
	cfg, err := children.RunConfigFrom(pinned)
	if err != nil {
		return nil, err
	}
	facts := assess.StatusFacts{EvalFileSHA256: evalsource.Digest(pinned), EvalConfigMapName: pinned.Name, Resume: children.ResumeStatusOf(cfg.Resume),
		EvalFileView: evalsv1alpha1.EvalFileView(cfg.EvalFileView), BundleSHA256: evalsource.BundleDigest(cfg), JudgeImage: assess.JudgeImageFacts(run, cfg)}
	if len(cfg.CaseIDs) == 0 && cfg.Resume != nil {
		// Every case is carried from the earlier run: nothing runs; the carried results are the run's.
		merged, err := r.mergeShards(ctx, run, children.PinnedTrials(run, cfg), assess.ShardObservation{}, assess.ShardVerdict{})
		if err != nil {
			return nil, err
		}
		run.Status.Summary, run.Status.Cost = merged.Summary, merged.Cost
		a := assess.Assessment{State: assess.StateSucceeded, Reason: evalsv1alpha1.ReasonCompleted,
			Message: fmt.Sprintf("nothing left to run: every case's result was carried from EvalRun %s", cfg.Resume.From)}
		return &observed{assessment: a, facts: facts}, nil
	}
	objs := []client.Object{children.BuildCollectorServiceAccount(run)}
	if !cfg.BucketOnly {
		// A pod that makes no API call gets no permission at all: no Role, no RoleBinding.
		objs = append(objs, children.BuildCollectorRole(run, cfg))
	}
	for _, cm := range children.BuildResultConfigMaps(run, cfg) {
		objs = append(objs, cm)
	}
	for _, cm := range children.BuildRecordConfigMaps(run, cfg) {
		objs = append(objs, cm)
	}
	for _, cm := range children.BuildShardConfigMaps(run, cfg) {
		objs = append(objs, cm)
	}
	if !r.opts.NoNetworkPolicy {
		// Before the Job: its pods never run without their policy.
		objs = append(objs, children.BuildNetworkPolicy(run, cfg, r.opts.APIServer))
	}
	// These children are independent of each other; the RoleBinding needs the Role (the API server checks that
	// the manager holds every permission of the Role it binds, reading the Role from storage: created at the same
	// time, it may not be there yet), and the Job needs them all.
	if err := r.createAll(ctx, run, objs); err != nil {
		return nil, err
	}
	if !cfg.BucketOnly {
		if _, err := r.createOwned(ctx, run, children.BuildCollectorRoleBinding(run)); err != nil {
			return nil, err
		}
	}
	created, err := r.createOwned(ctx, run, children.BuildJob(run, cfg, r.opts))
	if err != nil {
		return nil, err
	}
	job, ok := created.(*batchv1.Job)
	if !ok {
		return nil, fmt.Errorf("creating the Job of EvalRun %s returned %T", run.Name, created)
	}
	if children.CollectorRestartDropped(job) {
		r.recorder.Eventf(run, job, corev1.EventTypeWarning, eventCollectorNotRestarted, "Create",
			"the API server dropped the collector's restartPolicy OnFailure (Kubernetes before 1.35, or its "+
				"ContainerRestartRules feature gate off): a collector that crashes is not restarted, and the run then ends CollectorFailed")
	}
	return &observed{facts: facts, job: job}, nil
}

// eventCollectorNotRestarted warns that the API server dropped the collector's container restart policy.
const eventCollectorNotRestarted = "CollectorNotRestartable"

// createAll creates the objects concurrently (at most createWorkers at once) and returns every error.
func (r *EvalRunReconciler) createAll(ctx context.Context, run *evalsv1alpha1.EvalRun, objs []client.Object) error {
	errs := make([]error, len(objs))
	// A run of many shards has thousands of children: at most createWorkers requests are in flight at once.
	workqueue.ParallelizeUntil(ctx, createWorkers, len(objs), func(i int) {
		_, errs[i] = r.createOwned(ctx, run, objs[i])
	})
	if err := ctx.Err(); err != nil {
		errs = append(errs, err) // the pieces not started when ctx ended
	}
	return errors.Join(errs...)
}

// createWorkers bounds the concurrent creates of one run's children.
const createWorkers = 16

// createOwned creates obj; when it already exists, it reads it back from the API server and accepts it only if
// run controls it. It returns the object as stored.
func (r *EvalRunReconciler) createOwned(ctx context.Context, run *evalsv1alpha1.EvalRun, obj client.Object) (client.Object, error) {
	kind := reflect.TypeOf(obj).Elem().Name()
	err := r.client.Create(ctx, obj)
	if err == nil {
		return obj, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, createFailure(fmt.Errorf("creating %s %s: %w", kind, obj.GetName(), err))
	}
	existing, ok := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	if !ok {
		return nil, fmt.Errorf("creating %s %s: cannot allocate a %s", kind, obj.GetName(), kind)
	}
	if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return nil, fmt.Errorf("reading existing %s %s: %w", kind, obj.GetName(), err)
	}
	if !metav1.IsControlledBy(existing, run) {
		return nil, children.NotControlled(kind, obj.GetName(), run)
	}
	return existing, nil
}

// forbiddenError is a create the API server refused with 403 Forbidden for a reason other than a quota: the
// manager's own RBAC (a namespaced install missing its RoleBinding), an admission webhook or policy, a namespace
// being deleted. None of these is known to be the spec's, and each may heal (an administrator fixes the RBAC, a
// webhook recovers), so the run waits, Pending with the API's message, and ends CreateForbidden only once the
// refusals have lasted the manager's --pod-rejected-timeout (createForbidden).
type forbiddenError struct{ err error }

func (e *forbiddenError) Error() string { return e.err.Error() }
func (e *forbiddenError) Unwrap() error { return e.err }

// quotaExceeded reports a Forbidden that a ResourceQuota gave: it may free up, and is retried for as long as it
// takes.
func quotaExceeded(err error) bool { return strings.Contains(err.Error(), "exceeded quota") }

// createFailure classifies a failed create (err wraps the API server's error): a forbiddenError for a refusal
// that may heal (createForbidden decides), a children.Error ending the run InvalidSpec for an object the API server
// will never take (the same create fails the same way on every retry: the run ends with the API's message), and
// err itself, retried with backoff, for the rest.
func createFailure(err error) error {
	switch {
	case apierrors.IsForbidden(err) && !quotaExceeded(err):
		return &forbiddenError{err: err}
	case permanentCreateError(err):
		return &children.Error{Reason: evalsv1alpha1.ReasonInvalidSpec, Err: err}
	}
	return err
}

// permanentCreateError reports whether a create error will not heal by itself: the object is invalid (labels or
// annotations from podTemplate, a ConfigMap over the size limit), or the request is malformed. Quota, Forbidden
// (forbiddenError), conflicts, throttling and server errors may heal and are retried.
func permanentCreateError(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsBadRequest(err)
}

// createForbidden decides what becomes of a run whose children the API server refuses with Forbidden (err holds a
// forbiddenError): Pending with the API's message while the refusals last less than PodRejectedTimeout, counted
// from the first this manager process saw in this attempt (a restarted manager counts anew), then Failed
// CreateForbidden. It returns nil for any other error.
func (r *EvalRunReconciler) createForbidden(run *evalsv1alpha1.EvalRun, err error, now time.Time) *assess.Assessment {
	var fe *forbiddenError
	if !errors.As(err, &fe) {
		return nil
	}
	since := r.memo.ForbiddenSince(client.ObjectKeyFromObject(run), run.UID, attemptNumber(run), now)
	timeout := r.opts.PodRejectedTimeout
	msg := assess.OneLine(fe.Error())
	if now.Sub(since) < timeout {
		return &assess.Assessment{State: assess.StatePending, Reason: evalsv1alpha1.ReasonPending,
			Message: textbound.Head("the API server refuses to create the run's objects (retrying): "+msg, assess.MaxConditionMessage)}
	}
	return &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonCreateForbidden,
		Message: textbound.Head(fmt.Sprintf("the API server refused to create the run's objects for %s: %s", timeout, msg), assess.MaxConditionMessage)}
}

// attemptNumber is the run's current attempt, 1 before the manager recorded one.
func attemptNumber(run *evalsv1alpha1.EvalRun) int32 {
	if a := run.Status.Attempt; a != nil {
		return a.Number
	}
	return 1
}

// childFailure turns a child error that retrying cannot heal into a terminal assessment.
func childFailure(err error) (assess.Assessment, bool) {
	var ce *children.Error
	if !errors.As(err, &ce) {
		return assess.Assessment{}, false
	}
	return assess.Assessment{State: assess.StateFailed, Reason: ce.Reason, Message: textbound.Head(assess.OneLine(ce.Error()), assess.MaxConditionMessage)}, true
}
