//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/statusapply"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// collectorWrites watches every ConfigMap and EvalRun of namespace from now on and returns a function listing the
// objects some write of the collector's field manager (evalrun-collector: its status apply, its result and shard
// ConfigMap patches) touched, as the API server recorded it in their managedFields.
func collectorWrites(t *testing.T, namespace string) func() []string {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]bool{}
	record := func(kind string) func(watch.Event) {
		return func(ev watch.Event) {
			obj, ok := ev.Object.(client.Object)
			if !ok {
				return
			}
			for _, f := range obj.GetManagedFields() {
				if f.Manager == statusapply.FieldManagerCollector {
					mu.Lock()
					seen[kind+" "+obj.GetName()] = true
					mu.Unlock()
				}
			}
		}
	}
	watchAll(t, &corev1.ConfigMapList{}, namespace, record("ConfigMap"))
	watchAll(t, &evalsv1alpha1.EvalRunList{}, namespace, record("EvalRun"))
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for k := range seen {
			out = append(out, k)
		}
		return out
	}
}

// TestBucketOnlyTenShards: a run of 200 cases in 10 shards with spec.storage.statusFrom: Bucket ends Completed
// with all 200 results, and its pods make no API write: no container of theirs mounts a token, their
// ServiceAccount is bound to no Role, and a watch of every ConfigMap and EvalRun of the namespace sees no write
// of the collector's field manager, while it does see them for a control run with statusFrom Pod (so the watch
// can see such writes). It logs what the manager reads from the bucket and how long the merge took.
func TestBucketOnlyTenShards(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "bucket-only", nil)
	endpoint, fromHost := startBucket(t, ns)
	bucket := evalsv1alpha1.S3Bucket{Endpoint: endpoint, Bucket: bucketName, CredentialsSecret: "evalrun-s3-credentials", Prefix: ptr.To("bucket-only")}
	writes := collectorWrites(t, ns)

	// The control: the same storage with statusFrom Pod, whose collectors write their shard ConfigMaps.
	control := sampleRun("with-status", ns).Inline(testutil.DecisionEval(4)).Shards(2, 0).Storage(bucket).Obj()
	create(t, control)
	got := waitFinished(t, ns, control.Name, runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	if w := writes(); len(w) == 0 {
		t.Fatalf("the watch saw no write of %s for the control run: it could not see one for the bucket-only run either", statusapply.FieldManagerCollector)
	}
	before := len(writes())

	const cases, shards = 200, 10
	w := sampleRun("bucket-only", ns).Inline(testutil.DecisionEval(cases)).Shards(shards, 0).Storage(bucket).Resources(corev1.ResourceRequirements{})
	w.Spec.Storage.StatusFrom = ptr.To(evalsv1alpha1.StatusFromBucket)
	run := w.Obj()
	start := time.Now()
	create(t, run)
	got = waitFinished(t, ns, run.Name, runTimeout)
	elapsed := time.Since(start)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectDiff(t, "summary", counts{Total: cases, Passed: cases}, summaryCounts(got))
	if r := got.Status.Results; r == nil || r.TotalCases != cases || len(r.Objects) != shards {
		t.Errorf("results reference %+v; want %d cases in %d objects", got.Status.Results, cases, shards)
	}
	if s := got.Status.Sharding; s == nil || s.Succeeded != shards {
		t.Errorf("sharding %+v; want %d succeeded", got.Status.Sharding, shards)
	}

	// No write from the pods: the watch saw none, the pods have no token, their ServiceAccount no Role.
	if w := writes(); len(w) != before {
		t.Errorf("writes of %s during the bucket-only run: %v", statusapply.FieldManagerCollector, w)
	}
	sa := run.Name + "-evalrun-collector"
	var lastCollector time.Time
	pods := runPods(t, ns, run.Name)
	if len(pods) != shards {
		t.Errorf("%d pods, want %d", len(pods), shards)
	}
	for _, pod := range pods {
		if pod.Spec.ServiceAccountName != sa || ptr.Deref(pod.Spec.AutomountServiceAccountToken, true) {
			t.Errorf("pod %s: serviceAccountName %s, automountServiceAccountToken %v", pod.Name, pod.Spec.ServiceAccountName, pod.Spec.AutomountServiceAccountToken)
		}
		for _, v := range pod.Spec.Volumes {
			if v.Projected != nil {
				t.Errorf("pod %s has a projected volume %s", pod.Name, v.Name)
			}
		}
		for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
			for _, m := range c.VolumeMounts {
				if strings.HasPrefix(m.MountPath, "/var/run/secrets/kubernetes.io") {
					t.Errorf("pod %s: container %s mounts %s", pod.Name, c.Name, m.MountPath)
				}
			}
		}
		for _, s := range pod.Status.InitContainerStatuses {
			if s.Name == podwire.ContainerCollector && s.State.Terminated != nil && s.State.Terminated.FinishedAt.After(lastCollector) {
				lastCollector = s.State.Terminated.FinishedAt.Time
			}
		}
	}
	var bindings rbacv1.RoleBindingList
	if err := k8s.List(ctxFor(t, time.Minute), &bindings, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, b := range bindings.Items {
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Name == sa {
				t.Errorf("RoleBinding %s binds the bucket-only run's ServiceAccount", b.Name)
			}
		}
	}

	// What the manager reads: each shard's summary.json once, then each results object once to merge.
	store, err := objstore.Open(objstore.Config{Endpoint: fromHost, Bucket: bucketName, Prefix: "bucket-only", PathStyle: true,
		AccessKeyID: bucketAccessKey, SecretAccessKey: objstore.Secret(bucketSecretKey)})
	if err != nil {
		t.Fatal(err)
	}
	objects, err := store.List(ctxFor(t, time.Minute), fmt.Sprintf("%s/%s/%s/shards/", ns, run.Name, got.UID))
	if err != nil {
		t.Fatal(err)
	}
	var summaries, results int
	var summaryBytes, resultBytes int64
	for _, o := range objects {
		switch {
		case strings.HasSuffix(o.Key, "/summary.json"):
			summaries++
			summaryBytes += o.Size
		case strings.HasSuffix(o.Key, "/results.jsonl.gz"):
			results++
			resultBytes += o.Size
		}
	}
	if summaries != shards || results != shards {
		t.Errorf("the bucket holds %d summaries and %d results objects, want %d each", summaries, results, shards)
	}
	done := succeeded(got).LastTransitionTime.Time
	t.Logf("bucket-only: %d cases, %d shards: apply -> Succeeded %s; the manager reads %d summary.json (%d bytes) and %d results objects (%d bytes); "+
		"last collector's end -> Succeeded %s (second-granular timestamps)", cases, shards, elapsed.Round(100*time.Millisecond),
		summaries, summaryBytes, results, resultBytes, done.Sub(lastCollector))
}
