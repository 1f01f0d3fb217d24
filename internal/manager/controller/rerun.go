package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/bucketpool"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
)

// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=delete
// +kubebuilder:rbac:groups="",resources=configmaps;serviceaccounts,verbs=delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=delete

// The manager deletes a finished run's own children (by owner and name) when the run starts a new attempt.

// attemptResetRecheck is how soon a run whose earlier attempt's children are being deleted looks again.
const attemptResetRecheck = time.Second

// eventAttemptStarted is the event of a new attempt.
const eventAttemptStarted = "AttemptStarted"

// startNewAttempt starts a new attempt of a finished run under the same name: it deletes the finished attempt's
// children (Job, ConfigMaps, the collector's identity) and bucket objects, waits until they are gone, then
// replaces the status with the new attempt and the finished one's record. The next reconcile runs the new attempt
// from the start, as for a new run.
func (r *EvalRunReconciler) startNewAttempt(ctx context.Context, run *evalsv1alpha1.EvalRun, trigger evalsv1alpha1.AttemptTrigger,
	now metav1.Time) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	left, err := r.deleteChildren(ctx, run)
	if err != nil || left > 0 {
		log.V(2).Info("Waiting for the finished attempt's children to go", "left", left)
		return ctrl.Result{RequeueAfter: attemptResetRecheck}, err
	}
	if run.Spec.Storage != nil {
		store, missing, err := stored.OpenBucket(ctx, r.apiReader, run.Namespace, run.Spec.Storage.S3)
		switch {
		case err != nil:
			return ctrl.Result{}, fmt.Errorf("opening the bucket of the finished attempt: %w", err)
		case missing != "":
			r.recorder.Eventf(run, nil, corev1.EventTypeWarning, eventStorageCleanup, "Delete",
				"the finished attempt's results stay in the bucket: %s", missing)
		default:
			bctx, cancel := r.bounds.Context(ctx, run)
			err := deleteStored(bctx, store, run)
			cancel()
			if err != nil {
				return ctrl.Result{}, bucketpool.OnBucket(run.Spec.Storage.S3.Endpoint, "deleting the finished attempt's objects", err)
			}
		}
	}
	next := run.DeepCopy()
	next.Status = assess.NewAttemptStatus(run, trigger, now)
	finished, record := run.Status.Attempt, next.Status.PreviousAttempts[0]
	// The whole status is replaced (the collector's fields too), under the run's resourceVersion: a status that
	// changed meanwhile makes this a conflict, retried from a fresh read.
	if err := r.client.Status().Update(ctx, next); err != nil {
		return ctrl.Result{}, fmt.Errorf("starting attempt %d of EvalRun %s: %w", finished.Number+1, run.Name, err)
	}
	r.memo.Forget(client.ObjectKeyFromObject(run))
	why := "its spec changed"
	if trigger == evalsv1alpha1.AttemptRerun {
		why = fmt.Sprintf("annotation %s is %q", assess.AnnotationRerun, *assess.RerunAnnotation(run))
	}
	r.recorder.Eventf(run, nil, corev1.EventTypeNormal, eventAttemptStarted, "Rerun",
		"attempt %d started because %s (attempt %d ended %s)", finished.Number+1, why, finished.Number, record.Reason)
	log.Info("New attempt started", "attempt", finished.Number+1, "trigger", trigger)
	return ctrl.Result{}, nil
}

// deleteChildren deletes the run's children, read from the API server (and the Job from the cache as well, so
// that the next attempt never sees the old one): it returns how many are still there.
func (r *EvalRunReconciler) deleteChildren(ctx context.Context, run *evalsv1alpha1.EvalRun) (int, error) {
	sel := client.MatchingLabels{podwire.LabelRun: children.NamesFor(run.Name).RunLabel}
	lists := []client.ObjectList{&batchv1.JobList{}, &corev1.ConfigMapList{}, &corev1.ServiceAccountList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{}}
	left := 0
	var errs error
	for _, list := range lists {
		if err := r.apiReader.List(ctx, list, client.InNamespace(run.Namespace), sel); err != nil {
			return 0, fmt.Errorf("listing the children of EvalRun %s: %w", run.Name, err)
		}
		items, err := apimeta.ExtractList(list)
		if err != nil {
			return 0, err
		}
		for _, item := range items {
			obj, ok := item.(client.Object)
			if !ok || !metav1.IsControlledBy(obj, run) {
				continue
			}
			left++
			if !obj.GetDeletionTimestamp().IsZero() {
				continue
			}
			uid := obj.GetUID()
			err := r.client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &uid})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = errors.Join(errs, fmt.Errorf("deleting %s: %w", klog.KObj(obj), err))
			}
		}
	}
	if job, err := r.findJob(ctx, run); err != nil || job != nil {
		left++
		errs = errors.Join(errs, err)
	}
	return left, errs
}
