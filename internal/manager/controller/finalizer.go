package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/bucketpool"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
)

// +kubebuilder:rbac:groups=evals.evalrun.io,resources=evalruns,verbs=update;patch
// +kubebuilder:rbac:groups=evals.evalrun.io,resources=evalruns/finalizers,verbs=update

// FinalizerBucketObjects holds a run that stores results in a bucket until the manager has deleted its objects
// there (the Kubernetes garbage collector deletes its ConfigMaps, Job and pods; nothing else knows its bucket).
const FinalizerBucketObjects = "evals.evalrun.io/bucket-objects"

// DefaultBucketCleanupDeadline bounds how long a deleted run waits for its bucket objects to be deleted, counted
// from its deletion: a bucket that fails or hangs never holds a namespace's deletion longer. The objects then
// stay, and a Warning event says so.
const DefaultBucketCleanupDeadline = 2 * time.Minute

// ensureFinalizer adds FinalizerBucketObjects to a run that stores results in a bucket, before anything is stored.
// It reports whether it changed the run (the update brings another reconcile).
func (r *EvalRunReconciler) ensureFinalizer(ctx context.Context, run *evalsv1alpha1.EvalRun) (bool, error) {
	if run.Spec.Storage == nil || controllerutil.ContainsFinalizer(run, FinalizerBucketObjects) {
		return false, nil
	}
	patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(run, FinalizerBucketObjects)
	if err := r.client.Patch(ctx, run, patch); err != nil {
		if apierrors.IsConflict(err) {
			// The run changed meanwhile: its watch event brings the next reconcile, which adds it.
			return true, nil
		}
		return false, fmt.Errorf("adding finalizer %s to EvalRun %s: %w", FinalizerBucketObjects, run.Name, err)
	}
	return true, nil
}

// finalize deletes the bucket objects of a deleted run, then lets it go. A failure is retried until the clean-up
// deadline (DefaultBucketCleanupDeadline after the deletion); then, or when the bucket's credentials are gone
// already, the objects stay, a Warning event names them, and the run goes.
func (r *EvalRunReconciler) finalize(ctx context.Context, run *evalsv1alpha1.EvalRun) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(run, FinalizerBucketObjects) {
		return ctrl.Result{}, nil
	}
	deadline := run.DeletionTimestamp.Add(DefaultBucketCleanupDeadline)
	if err := r.deleteBucketObjects(ctx, run, deadline); err != nil {
		if r.clock.Now().Before(deadline) {
			return ctrl.Result{}, err
		}
		r.recorder.Eventf(run, nil, corev1.EventTypeWarning, eventStorageCleanup, "Delete",
			"the results of run %s stay in its bucket: %s", run.Name, assess.OneLine(err.Error()))
	}
	patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(run, FinalizerBucketObjects)
	if err := r.client.Patch(ctx, run, patch); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Bucket objects of a deleted run cleaned up")
	return ctrl.Result{}, nil
}

// deleteBucketObjects deletes every object run stored in its bucket, bounded by the bucket call timeout and by
// until. Credentials that are gone are an error (the objects cannot be deleted).
func (r *EvalRunReconciler) deleteBucketObjects(ctx context.Context, run *evalsv1alpha1.EvalRun, until time.Time) error {
	st := run.Spec.Storage.S3
	store, missing, err := stored.OpenBucket(ctx, r.apiReader, run.Namespace, st)
	if err != nil {
		return bucketpool.OnBucket(st.Endpoint, "opening the bucket", err)
	}
	if missing != "" {
		return fmt.Errorf("cannot delete them: %s", missing)
	}
	bctx, cancel := r.bounds.Context(ctx, run, until)
	defer cancel()
	return bucketpool.OnBucket(st.Endpoint, "deleting the run's objects", deleteStored(bctx, store, run))
}
