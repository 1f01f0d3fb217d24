package controller

import (
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/kueue"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestStripCachedWorkloadKeepsTheQueueView: the cache's transform drops a Workload's pod template copy and
// managedFields, and QueueView reads the same from what is left; other objects lose their managedFields only.
func TestStripCachedWorkloadKeepsTheQueueView(t *testing.T) {
	wl := queuedWorkload(t, 1)
	want := kueue.QueueView("evals", wl.DeepCopy())
	got, err := StripCachedDefault(wl)
	if err != nil {
		t.Fatal(err)
	}
	stripped := got.(*unstructured.Unstructured)
	if _, found, _ := unstructured.NestedFieldNoCopy(stripped.Object, "spec", "podSets"); found || stripped.GetManagedFields() != nil {
		t.Errorf("stripped Workload still holds spec.podSets or managedFields: %v", stripped.Object)
	}
	if q, _, _ := unstructured.NestedString(stripped.Object, "spec", "queueName"); q != "evals" {
		t.Errorf("spec.queueName %q after the strip, want evals", q)
	}
	if diff := cmp.Diff(want, kueue.QueueView("evals", stripped)); diff != "" {
		t.Errorf("QueueView of the stripped Workload (-whole +stripped):\n%s", diff)
	}
	other := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"podSets": []any{"kept"}}}}
	other.SetGroupVersionKind(kueue.WorkloadGVK.GroupVersion().WithKind("ClusterQueue"))
	other.SetManagedFields(wl.GetManagedFields())
	if _, err := StripCachedDefault(other); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(other.Object, "spec", "podSets"); !found {
		t.Error("the transform changed the spec of an object that is not a Workload")
	}
}
