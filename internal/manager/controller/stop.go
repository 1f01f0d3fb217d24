package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// The acts on a run's Job and pods that an assessment asks for: count a retry and replace a pod, stop shards,
// release succeeded shards' pods, stop a failed run's Job.

// retryPod counts an infrastructure retry of completion index on the Job, then evicts the pod: the eviction marks
// it DisruptionTarget, which the Job's pod failure policy ignores, so the Job replaces it without spending its
// backoffLimit. The count is written first (with the pod's name, under an optimistic lock), so a retry is never
// made without being counted, and a pod seen again before it is gone is evicted again without being counted twice.
func (r *EvalRunReconciler) retryPod(ctx context.Context, job *batchv1.Job, podName string, index int) error {
	byIndex := assess.ParseIndexRetries(job.Annotations[podwire.AnnotationInfrastructureRetriesByIndex])
	n := byIndex[index].Count
	if byIndex[index].Pod != podName {
		job = job.DeepCopy()
		patch := client.MergeFromWithOptions(job.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if job.Annotations == nil {
			job.Annotations = map[string]string{}
		}
		n++
		byIndex[index] = assess.IndexRetry{Count: n, Pod: podName}
		total, _ := strconv.Atoi(job.Annotations[podwire.AnnotationInfrastructureRetries])
		job.Annotations[podwire.AnnotationInfrastructureRetries] = strconv.Itoa(total + 1)
		job.Annotations[podwire.AnnotationInfrastructureRetriedPod] = podName
		job.Annotations[podwire.AnnotationInfrastructureRetriesByIndex] = assess.FormatIndexRetries(byIndex)
		if err := r.client.Patch(ctx, job, patch); err != nil {
			return fmt.Errorf("counting an infrastructure retry on Job %s: %w", job.Name, err)
		}
	}
	if err := r.evict(ctx, job.Namespace, podName); err != nil {
		return fmt.Errorf("evicting pod %s after an infrastructure failure: %w", podName, err)
	}
	ctrl.LoggerFrom(ctx).Info("Pod replaced after an infrastructure failure", "pod", klog.KRef(job.Namespace, podName), "index", index, "retry", n)
	return nil
}

// stopShards stops the pods of shards decided failed while they still run or wait, without stopping the others:
// it records the shards on the Job (AnnotationStoppedShards, under an optimistic lock, so a stopped shard keeps its
// reason once its pods are gone), sets PodConditionShardStopped on each pod, then evicts it. The Job's pod failure
// policy fails the index of a pod with that condition (FailIndex), which neither replaces it nor spends another
// index's retries.
func (r *EvalRunReconciler) stopShards(ctx context.Context, run *evalsv1alpha1.EvalRun, job *batchv1.Job, stops []assess.PodStop) error {
	stopped := assess.ParseStoppedShards(job.Annotations[podwire.AnnotationStoppedShards])
	record := false
	for _, s := range stops {
		if stopped[s.Index] != s.Reason {
			stopped[s.Index], record = s.Reason, true
		}
	}
	if record {
		job = job.DeepCopy()
		patch := client.MergeFromWithOptions(job.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if job.Annotations == nil {
			job.Annotations = map[string]string{}
		}
		job.Annotations[podwire.AnnotationStoppedShards] = assess.FormatStoppedShards(stopped)
		if err := r.client.Patch(ctx, job, patch); err != nil {
			return fmt.Errorf("recording the stopped shards on Job %s: %w", job.Name, err)
		}
	}
	key := client.ObjectKeyFromObject(run)
	var errs error
	for _, s := range stops {
		if r.memo.PodStopped(key, run.UID, s.Pod) {
			continue // marked and evicted already; the cache has not caught up yet
		}
		err := r.stopPod(ctx, job.Namespace, s)
		if err == nil {
			r.memo.MarkPodStopped(key, run.UID, s.Pod)
		}
		errs = errors.Join(errs, err)
	}
	return errs
}

// releasePods deletes succeeded pods that have nothing left to tell (ReleasableShardPods, ReleasableOfOnePodRun), through the
// eviction API the manager already uses (a finished pod is evicted at once, whatever its disruption budget), each
// under its UID, so a pod that replaced it under the same name is never touched. A pod this process released
// already is not evicted again while the cache still shows it.
func (r *EvalRunReconciler) releasePods(ctx context.Context, run *evalsv1alpha1.EvalRun, pods []assess.PodRelease) error {
	key := client.ObjectKeyFromObject(run)
	var errs error
	released := 0
	for _, p := range pods {
		if r.memo.PodStopped(key, run.UID, p.Pod) {
			continue
		}
		if err := r.evictUID(ctx, run.Namespace, p.Pod, p.UID); err != nil {
			errs = errors.Join(errs, fmt.Errorf("releasing pod %s of succeeded completion index %d: %w", p.Pod, p.Index, err))
			continue
		}
		r.memo.MarkPodStopped(key, run.UID, p.Pod)
		released++
	}
	if released > 0 {
		ctrl.LoggerFrom(ctx).Info("Succeeded pods released", "pods", released)
	}
	return errs
}

// stopPod sets PodConditionShardStopped on a pod of a stopped shard, then evicts it.
func (r *EvalRunReconciler) stopPod(ctx context.Context, namespace string, s assess.PodStop) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: s.Pod}}
	cond := corev1.PodCondition{Type: podwire.PodConditionShardStopped, Status: corev1.ConditionTrue, Reason: s.Reason,
		Message: s.Message, LastTransitionTime: metav1.NewTime(r.clock.Now().UTC().Truncate(time.Second))}
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{cond}}})
	if err != nil {
		return fmt.Errorf("encoding the stop condition of pod %s: %w", s.Pod, err)
	}
	// A strategic merge patch adds the one condition (the list merges on type), leaving the kubelet's.
	err = r.client.Status().Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, body))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("marking pod %s of stopped shard %d: %w", s.Pod, s.Index, err)
	}
	if err := r.evict(ctx, namespace, s.Pod); err != nil {
		return fmt.Errorf("evicting pod %s of stopped shard %d: %w", s.Pod, s.Index, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Pod of a stopped shard evicted", "pod", klog.KRef(namespace, s.Pod), "index", s.Index, "reason", s.Reason)
	return nil
}

// evict evicts a pod (the Eviction API: the pod gets DisruptionTarget); a pod that is gone is fine.
func (r *EvalRunReconciler) evict(ctx context.Context, namespace, name string) error {
	return r.evictUID(ctx, namespace, name, "")
}

// evictUID is evict, and with a uid only the pod of that UID: another pod under the same name (a conflict) is
// left alone, as a pod that is gone.
func (r *EvalRunReconciler) evictUID(ctx context.Context, namespace, name string, uid types.UID) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	ev := &policyv1.Eviction{}
	if uid != "" {
		ev.DeleteOptions = &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
	}
	err := r.client.SubResource("eviction").Create(ctx, pod, ev)
	if err != nil && !apierrors.IsNotFound(err) && (uid == "" || !apierrors.IsConflict(err)) {
		return err
	}
	return nil
}

// stopJob deletes a failed run's Job (and, in the background, its pods) so nothing keeps running or waiting.
func (r *EvalRunReconciler) stopJob(ctx context.Context, job *batchv1.Job) error {
	err := r.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &job.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting Job %s of a failed run: %w", job.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Job of a failed run deleted", "job", klog.KObj(job))
	return nil
}
