package controller

import (
	"context"
	"time"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/kueue"

	batchv1 "k8s.io/api/batch/v1"
)

// queueOf returns status.queue for a run with spec.queueName and its Job: from the Job's Workload where Kueue's
// API is served, else the queue's name only; a waiting Workload's position where Kueue's visibility API is
// served (kueuevisibility.go). It returns nil for a run without a queue.
func (r *EvalRunReconciler) queueOf(ctx context.Context, run *evalsv1alpha1.EvalRun, job *batchv1.Job, now time.Time) (*evalsv1alpha1.QueueStatus, error) {
	if run.Spec.QueueName == "" {
		return nil, nil
	}
	if job == nil || !r.kueue.Ready(now) {
		return kueue.QueueView(run.Spec.QueueName, nil), nil
	}
	wl, err := r.kueue.WorkloadOf(ctx, job)
	if err != nil {
		return nil, err
	}
	q := kueue.QueueView(run.Spec.QueueName, wl)
	if q.Admission == evalsv1alpha1.QueueWaiting || q.Admission == evalsv1alpha1.QueueEvicted {
		q.Position = r.visibility.Position(ctx, run.Namespace, run.Spec.QueueName, q.Workload, now)
	}
	return q, nil
}
