package controller

import (
	"context"
	"fmt"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/collect"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/kueue"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/metrics"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// OwnerUIDIndex is the field index holding the UID of an object's controller owner.
const OwnerUIDIndex = ".metadata.controller.uid"

// ControllerName names the controller (and its event reporter).
const ControllerName = "evalrun"

// ParseNamespaces splits a comma-separated list of namespaces (the manager's --watch-namespaces), dropping blanks.
func ParseNamespaces(list string) []string {
	var out []string
	for _, ns := range strings.Split(list, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// CacheOptions is the manager's cache: the objects of CacheByObject, in the given namespaces only (all when
// none are given). Limited to namespaces, the manager lists and watches nothing elsewhere, so its ClusterRole can
// be granted per namespace with RoleBindings (config/rbac/README.md).
func CacheOptions(namespaces []string) cache.Options {
	opts := cache.Options{ByObject: CacheByObject(), DefaultTransform: StripCachedDefault}
	for _, ns := range namespaces {
		if opts.DefaultNamespaces == nil {
			opts.DefaultNamespaces = map[string]cache.Config{}
		}
		opts.DefaultNamespaces[ns] = cache.Config{}
	}
	return opts
}

// SetupManager registers the field indexes and the EvalRun and EvalSchedule controllers with mgr, the reconcilers
// using mgr's client, API reader and event recorders.
func SetupManager(ctx context.Context, mgr ctrl.Manager, clk clock.PassiveClock, opts options.Options) error {
	if err := IndexFields(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("registering field indexes: %w", err)
	}
	metrics.Register(mgr.GetClient(), mgr.Elected())
	r := NewEvalRunReconciler(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorder(ControllerName), clk, opts)
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the EvalRun controller: %w", err)
	}
	s := NewEvalScheduleReconciler(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorder(ScheduleControllerName), clk, opts)
	if err := s.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the EvalSchedule controller: %w", err)
	}
	return nil
}

// CacheByObject restricts the manager's cache of Jobs, pods and ConfigMaps to objects carrying the run label,
// so the manager never lists or watches the rest of the cluster's.
func CacheByObject() map[client.Object]cache.ByObject {
	req, err := labels.NewRequirement(podwire.LabelRun, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid label key
	}
	sel := labels.NewSelector().Add(*req)
	return map[client.Object]cache.ByObject{
		&batchv1.Job{}:           {Label: sel, Transform: StripCachedJob},
		&corev1.Pod{}:            {Label: sel, Transform: StripCachedPod},
		&corev1.ConfigMap{}:      {Label: sel, Transform: stripConfigMapData},
		&evalsv1alpha1.EvalRun{}: {Transform: StripCollectedResults},
	}
}

// StripCollectedResults drops from a cached EvalRun what reconciling never reads: the per-case results, the id
// and parse-error lists the collector writes (up to the 512 KiB status budget per run) and managedFields. The
// manager writes its own status fields by server-side apply, so the cached copy need not hold the rest; the
// summary, the collection facts and the conditions stay.
func StripCollectedResults(obj any) (any, error) {
	run, ok := obj.(*evalsv1alpha1.EvalRun)
	if !ok {
		return obj, nil
	}
	run.ManagedFields = nil
	run.Status.Cases = nil
	run.Status.MissingIDs = nil
	run.Status.ParseErrors = nil
	run.Status.UnexpectedIDs = nil
	return run, nil
}

// StripCachedJob drops from a cached Job its managedFields and its pod template's spec (about 15 KB of 18.5 per
// run): the manager builds the template once (BuildJob) and never reads it back; it changes Jobs only by merge
// patches computed against the cached copy, which leave what the cache dropped untouched.
func StripCachedJob(obj any) (any, error) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return obj, nil
	}
	job.ManagedFields = nil
	job.Spec.Template.Spec = corev1.PodSpec{}
	return job, nil
}

// StripCachedPod drops from a cached pod its managedFields and its spec but the node's name (all the classifier
// reads of it); the status, labels and annotations stay.
func StripCachedPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	pod.ManagedFields = nil
	pod.Spec = corev1.PodSpec{NodeName: pod.Spec.NodeName}
	return pod, nil
}

// StripCachedDefault is the transform of every cached type CacheByObject does not name: managedFields dropped
// (the manager writes by server-side apply and never reads them), and Kueue's Workloads reduced to what QueueView
// reads. Workloads are read as unstructured, and their type cannot be named in CacheByObject (the cache resolves
// its types at start, and the manager starts where Kueue's CRDs are absent). A Workload's spec holds a copy of the
// Job's pod template: with a thousand runs queued, about 50 KB of maps each in the cache.
func StripCachedDefault(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok && o.GetManagedFields() != nil {
		o.SetManagedFields(nil)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok && u.GroupVersionKind() == kueue.WorkloadGVK {
		unstructured.RemoveNestedField(u.Object, "spec", "podSets")
		unstructured.RemoveNestedField(u.Object, "status", "admission", "podSetAssignments")
	}
	return obj, nil
}

// stripConfigMapData drops the data of cached ConfigMaps: the manager only checks that its children exist
// (pinned eval files and result ConfigMaps can be a MiB each); it reads a pinned eval file from the API server.
// A shard ConfigMap keeps its data: its collection section (at most podwire.ShardSectionBudgetBytes) is what the
// manager classifies a shard by.
func stripConfigMapData(obj any) (any, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return obj, nil
	}
	cm.ManagedFields = nil
	cm.BinaryData = nil
	if !isShardConfigMap(cm) {
		cm.Data = nil
	}
	return cm, nil
}

// isShardConfigMap reports a shard ConfigMap of a sharded or resumed run.
func isShardConfigMap(obj client.Object) bool {
	return obj.GetLabels()[podwire.LabelComponent] == children.ComponentShard
}

// IndexFields registers the owner index on Jobs (owned by EvalRuns) and pods (owned by Jobs), and the baseline
// index on EvalRuns.
func IndexFields(ctx context.Context, indexer client.FieldIndexer) error {
	for _, obj := range []client.Object{&batchv1.Job{}, &corev1.Pod{}} {
		if err := indexer.IndexField(ctx, obj, OwnerUIDIndex, controllerUID); err != nil {
			return err
		}
	}
	return indexer.IndexField(ctx, &evalsv1alpha1.EvalRun{}, collect.BaselineIndex, func(obj client.Object) []string {
		if run, ok := obj.(*evalsv1alpha1.EvalRun); ok && run.Spec.Baseline != nil && run.Spec.Baseline.RunName != nil {
			return []string{*run.Spec.Baseline.RunName}
		}
		return nil
	})
}

func controllerUID(obj client.Object) []string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}

// SetupWithManager registers the reconciler: EvalRuns, the Jobs they own, and the pods of those Jobs (mapped
// to their run through the Job's controller reference).
func (r *EvalRunReconciler) SetupWithManager(mgr ctrl.Manager) error {
	// The reconciles of runs that name a bucket fly off the workers, where the controllers run (the leader).
	if err := mgr.Add(r.off); err != nil {
		return err
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.MaxConcurrentReconciles}).
		For(&evalsv1alpha1.EvalRun{}).
		Owns(&batchv1.Job{}).
		Owns(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(isShardConfigMap))).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.runOfPod),
			builder.WithPredicates(predicate.ResourceVersionChangedPredicate{})).
		Watches(&evalsv1alpha1.EvalRun{}, handler.EnqueueRequestsFromMapFunc(r.runsComparedWith)).
		WatchesRawSource(r.off.Source()).
		Build(r)
	if err != nil {
		return err
	}
	// Kueue's Workloads are watched only once their API is served (internal/manager/kueue): no watch fails where Kueue is absent.
	r.kueue = kueue.NewWatch(mgr.GetRESTMapper(), mgr.GetCache(), func() error {
		return c.Watch(source.Kind[client.Object](mgr.GetCache(), kueue.NewWorkload(), handler.EnqueueRequestsFromMapFunc(r.runOfPod),
			predicate.ResourceVersionChangedPredicate{}))
	})
	if r.visibility, err = kueue.NewVisibility(mgr.GetRESTMapper(), mgr.GetConfig()); err != nil {
		return err
	}
	return nil
}

// runsComparedWith maps an EvalRun to the runs that name it as their baseline, so that they compare once it
// finishes.
func (r *EvalRunReconciler) runsComparedWith(ctx context.Context, obj client.Object) []reconcile.Request {
	var runs evalsv1alpha1.EvalRunList
	if err := r.client.List(ctx, &runs, client.InNamespace(obj.GetNamespace()), client.MatchingFields{collect.BaselineIndex: obj.GetName()}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(runs.Items))
	for i := range runs.Items {
		if assess.NeedsComparison(&runs.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&runs.Items[i])})
		}
	}
	return out
}

// runOfPod maps a pod, or a Kueue Workload, to the EvalRun controlling the Job controlling it.
func (r *EvalRunReconciler) runOfPod(ctx context.Context, obj client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "Job" {
		return nil
	}
	job := &batchv1.Job{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, job); err != nil {
		return nil
	}
	owner := metav1.GetControllerOf(job)
	if owner == nil || owner.Kind != children.EvalRunGVK.Kind || owner.APIVersion != evalsv1alpha1.GroupVersion.String() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: job.Namespace, Name: owner.Name}}}
}
