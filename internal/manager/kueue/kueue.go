// Package kueue is what the manager reads of Kueue (docs/kueue.md): a queued Job's Workload through a watch started
// only once Kueue's API is served (Watch), status.queue from it (QueueView), and a waiting run's position from the
// visibility API where it is served (Visibility: one read of a LocalQueue serves every run waiting in it).
package kueue

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// Kueue's view of a run (status.queue). The manager reads the Workload Kueue makes for a queued run's Job as
// unstructured data: it imports nothing of Kueue, and it watches Workloads only once their API is served, so it
// starts and works on a cluster without Kueue. Kueue installed after the manager started is found by the first
// reconcile of a queued run that comes later than kueueRecheck after the last look.

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch

// WorkloadGVK is the Kueue Workload version the manager reads.
var WorkloadGVK = schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "Workload"}

// JobUIDLabel is the label Kueue sets on a Job's Workload: the Job's UID.
const JobUIDLabel = "kueue.x-k8s.io/job-uid"

// kueueRecheck is how often a manager without Kueue's Workload API looks for it again.
const kueueRecheck = 30 * time.Second

// Kueue's Workload condition types the view reads.
const (
	workloadQuotaReserved = "QuotaReserved"
	workloadAdmitted      = "Admitted"
	workloadEvicted       = "Evicted"
	workloadFinished      = "Finished"
)

// QueueView returns status.queue for a run submitted to the LocalQueue name, from its Job's Workload wl (nil while
// Kueue has made none, or where the manager cannot read Workloads: then only the name is known). It is pure.
func QueueView(name string, wl *unstructured.Unstructured) *evalsv1alpha1.QueueStatus {
	q := &evalsv1alpha1.QueueStatus{Name: name}
	if wl == nil {
		return q
	}
	q.Workload = wl.GetName()
	conds := workloadConditions(wl)
	is := func(t string) bool { return meta.IsStatusConditionTrue(conds, t) }
	explain := func(c *metav1.Condition) {
		if c != nil {
			q.Reason = textbound.Head(c.Reason, assess.MaxQueueReason)
			q.Message = textbound.Head(c.Message, assess.MaxQueueMessage)
		}
	}
	switch {
	case is(workloadFinished):
		q.Admission = evalsv1alpha1.QueueFinished
	case is(workloadAdmitted):
		q.Admission = evalsv1alpha1.QueueAdmitted
	case is(workloadQuotaReserved):
		q.Admission = evalsv1alpha1.QueueQuotaReserved
	case is(workloadEvicted):
		q.Admission = evalsv1alpha1.QueueEvicted
		explain(meta.FindStatusCondition(conds, workloadEvicted))
	default:
		q.Admission = evalsv1alpha1.QueueWaiting
		explain(meta.FindStatusCondition(conds, workloadQuotaReserved))
	}
	if q.Admission != evalsv1alpha1.QueueWaiting && q.Admission != evalsv1alpha1.QueueEvicted {
		if cq, _, _ := unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue"); cq != "" {
			q.ClusterQueue = textbound.Head(cq, assess.MaxQueueClusterQueue)
		}
	}
	q.Evictions = workloadEvictions(wl)
	return q
}

// workloadConditions reads the Workload's status.conditions; entries that are not conditions are skipped.
func workloadConditions(wl *unstructured.Unstructured) []metav1.Condition {
	items := nestedSlice(wl, "status", "conditions")
	out := make([]metav1.Condition, 0, len(items))
	for _, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		c := metav1.Condition{}
		c.Type, _ = m["type"].(string)
		status, _ := m["status"].(string)
		c.Status = metav1.ConditionStatus(status)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		if c.Type != "" {
			out = append(out, c)
		}
	}
	return out
}

// nestedSlice returns the list at path in wl, read in place (not copied), or nil when there is none.
func nestedSlice(wl *unstructured.Unstructured, path ...string) []any {
	v, _, _ := unstructured.NestedFieldNoCopy(wl.Object, path...)
	items, _ := v.([]any)
	return items
}

// workloadEvictions adds up the Workload's status.schedulingStats.evictions counts (every reason, every cause).
func workloadEvictions(wl *unstructured.Unstructured) int32 {
	items := nestedSlice(wl, "status", "schedulingStats", "evictions")
	var n int64
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			if c, ok := m["count"].(int64); ok && c > 0 {
				n += c
			}
		}
	}
	return int32(min(n, int64(1<<31-1)))
}

// NewWatch returns a Watch that finds Kueue's Workload API with mapper, starts the watch with start (the
// controller's Watch on the Workload informer) and reads Workloads with reader (that informer).
func NewWatch(mapper meta.RESTMapper, reader client.Reader, start func() error) *Watch {
	return &Watch{mapper: mapper, reader: reader, start: start}
}

// Watch starts the manager's watch on Workloads the first time Kueue's Workload API is found, and reads the
// Workloads from the manager's cache once it has.
type Watch struct {
	mapper meta.RESTMapper
	// start starts the watch (the controller's Watch on the Workload informer); reader reads that informer.
	start  func() error
	reader client.Reader

	mu        sync.Mutex
	started   bool
	lastCheck time.Time
}

// Ready reports whether Workloads can be read: the watch runs, or Kueue's API was found now and the watch started.
// Without Kueue it asks the API server at most once per kueueRecheck.
func (w *Watch) Ready(now time.Time) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		return true
	}
	if !w.lastCheck.IsZero() && now.Sub(w.lastCheck) < kueueRecheck {
		return false
	}
	w.lastCheck = now
	if _, err := w.mapper.RESTMapping(WorkloadGVK.GroupKind(), WorkloadGVK.Version); err != nil {
		return false
	}
	if err := w.start(); err != nil {
		return false
	}
	w.started = true
	return true
}

// workloadOf returns the Workload Kueue made for job (labelled with the Job's UID and controlled by it), or nil.
func (w *Watch) WorkloadOf(ctx context.Context, job *batchv1.Job) (*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(WorkloadGVK.GroupVersion().WithKind(WorkloadGVK.Kind + "List"))
	if err := w.reader.List(ctx, list, client.InNamespace(job.Namespace), client.MatchingLabels{JobUIDLabel: string(job.UID)}); err != nil {
		return nil, fmt.Errorf("listing the Kueue Workloads of Job %s: %w", job.Name, err)
	}
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == job.UID {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// NewWorkload returns an empty Workload object of WorkloadGVK (what the watch and the cache are keyed by).
func NewWorkload() *unstructured.Unstructured {
	wl := &unstructured.Unstructured{}
	wl.SetGroupVersionKind(WorkloadGVK)
	return wl
}
