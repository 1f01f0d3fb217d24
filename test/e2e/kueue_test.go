//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// Runs under a real Kueue (hack/kueue.sh install: Kueue built from the Go module proxy, its own CRDs, webhooks and
// certificates). Each test has its own ClusterQueue with a small quota of pods (and room enough in cpu and memory),
// StrictFIFO, preempting lower priorities within the queue, and a LocalQueue "evals" in its namespace; the
// namespace opts in to Kueue's Job webhook (kueue.evalrun.io/managed=true, hack/kueue/overlay).

const (
	localQueue      = "evals"
	kueueFlavor     = "evalrun-e2e"
	kueueLowClass   = "evalrun-e2e-low"
	kueueHighClass  = "evalrun-e2e-high"
	kueuePriorityLb = "kueue.x-k8s.io/priority-class"
	// kueueTimeout bounds a run that waits behind others in a queue.
	kueueTimeout = 6 * time.Minute
)

var (
	kueueOnce sync.Once
	kueueErr  error
)

// ensureKueue installs Kueue once per test process (a no-op when it is installed and its image unchanged) and the
// shared ResourceFlavor and WorkloadPriorityClasses.
func ensureKueue(t *testing.T) {
	t.Helper()
	kueueOnce.Do(func() {
		start := time.Now()
		cmd := exec.Command(filepath.Join(repoRoot, "hack", "kueue.sh"), "install")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfigPath)
		out, err := cmd.CombinedOutput()
		if err != nil {
			kueueErr = fmt.Errorf("hack/kueue.sh install: %w\n%s", err, out)
			return
		}
		t.Logf("Kueue installed and answering in %s", time.Since(start).Round(100*time.Millisecond))
		for _, doc := range []string{
			"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: " + kueueFlavor + "}\n",
			"apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: " + kueueLowClass + "}\nvalue: 100\n",
			"apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: " + kueueHighClass + "}\nvalue: 1000\n",
		} {
			if err := k8s.Create(context.Background(), kueueObject(t, doc)); err != nil && !apierrors.IsAlreadyExists(err) {
				kueueErr = fmt.Errorf("creating %s: %w", doc, err)
				return
			}
		}
	})
	if kueueErr != nil {
		t.Fatal(kueueErr)
	}
}

// kueueObject decodes one Kueue object from YAML.
func kueueObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatalf("decoding %s: %v", doc, err)
	}
	return obj
}

// kueueNamespace creates a namespace that opts in to Kueue, a ClusterQueue named after it with a quota of pods
// pods, and the LocalQueue "evals" pointing to it. It returns the namespace and the ClusterQueue's name.
func kueueNamespace(t *testing.T, prefix string, pods int) (string, string) {
	t.Helper()
	ensureKueue(t)
	ns := newNamespace(t, prefix, map[string]string{"kueue.evalrun.io/managed": "true"})
	cq := kueueObject(t, fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %s}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %s}}
  queueingStrategy: StrictFIFO
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu, memory, pods]
    flavors:
    - name: %s
      resources:
      - {name: cpu, nominalQuota: "100"}
      - {name: memory, nominalQuota: 100Gi}
      - {name: pods, nominalQuota: %d}
`, ns, ns, kueueFlavor, pods))
	lq := kueueObject(t, fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: %s, namespace: %s}\nspec: {clusterQueue: %s}\n", localQueue, ns, ns))
	ctx := ctxFor(t, 30*time.Second)
	for _, obj := range []*unstructured.Unstructured{cq, lq} {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), cq) })
	return ns, ns
}

// setPodQuota changes the ClusterQueue's quota of pods.
func setPodQuota(t *testing.T, cq string, pods int) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("kueue.x-k8s.io/v1beta2")
	obj.SetKind("ClusterQueue")
	obj.SetName(cq)
	patch := fmt.Sprintf(`{"spec":{"resourceGroups":[{"coveredResources":["cpu","memory","pods"],"flavors":[{"name":%q,"resources":[{"name":"cpu","nominalQuota":"100"},{"name":"memory","nominalQuota":"100Gi"},{"name":"pods","nominalQuota":%d}]}]}]}}`, kueueFlavor, pods)
	if err := k8s.Patch(ctxFor(t, 30*time.Second), obj, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatalf("setting ClusterQueue %s's pods quota to %d: %v", cq, pods, err)
	}
}

// queuedRun is a run of n generated cases in the LocalQueue "evals"; the runner sleeps sleep seconds first.
func queuedRun(t *testing.T, name, ns string, cases, sleep int) *evalsv1alpha1.EvalRun {
	t.Helper()
	return sampleRun(name, ns).Inline(generatedEvalFile(cases)).Queue(localQueue).
		Command(fmt.Sprintf("sleep %d; %s", sleep, sampleCommand)).Obj()
}

// workloadsOf lists the Kueue Workloads of the run's Job.
func workloadsOf(t *testing.T, ns, run string) []unstructured.Unstructured {
	t.Helper()
	ctx := ctxFor(t, 30*time.Second)
	job := &batchv1.Job{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: run + "-evalrun"}, job); err != nil {
		return nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("kueue.x-k8s.io/v1beta2")
	list.SetKind("WorkloadList")
	if err := k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{"kueue.x-k8s.io/job-uid": string(job.UID)}); err != nil {
		t.Fatalf("listing the Workloads of %s: %v", run, err)
	}
	return list.Items
}

// queueOf returns the run's status.queue, or an empty one.
func queueOf(run *evalsv1alpha1.EvalRun) evalsv1alpha1.QueueStatus {
	return ptr.Deref(run.Status.Queue, evalsv1alpha1.QueueStatus{})
}

// activePods counts the pods of the namespace's runs that have not ended.
func activePods(t *testing.T, ns string) int {
	t.Helper()
	var pods corev1.PodList
	if err := k8s.List(ctxFor(t, 30*time.Second), &pods, client.InNamespace(ns), client.HasLabels{podwire.LabelRun}); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

// expectCompleted checks that the run collected all n generated cases and ended Completed.
func expectCompleted(t *testing.T, got *evalsv1alpha1.EvalRun, n int32) {
	t.Helper()
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectDiff(t, got.Name+" summary", counts{Total: n, Passed: n}, summaryCounts(got))
}

// Runs beyond the quota wait, saying so with Kueue's reason, are admitted in the order they were created, one at a
// time, and all end Completed.
func TestKueueQuotaQueuesRunsInOrder(t *testing.T) {
	t.Parallel()
	ns, cq := kueueNamespace(t, "kueue-quota", 1)
	names := []string{"first", "second", "third"}
	created := map[string]time.Time{}
	for _, name := range names {
		created[name] = time.Now()
		create(t, queuedRun(t, name, ns, 6, 6))
		time.Sleep(1100 * time.Millisecond) // distinct creation seconds: StrictFIFO orders by creation time
	}

	// While the first runs, the others wait in the queue; the head of the queue (the second) with Kueue's reason in
	// status.queue and Queued.
	waitRun(t, ns, "third", time.Minute, "waiting in Kueue", func(run *evalsv1alpha1.EvalRun) bool {
		return queueOf(run).Admission == evalsv1alpha1.QueueWaiting && meta.IsStatusConditionTrue(run.Status.Conditions, evalsv1alpha1.ConditionQueued)
	})
	waiting := waitRun(t, ns, "second", time.Minute, "waiting in Kueue with its reason", func(run *evalsv1alpha1.EvalRun) bool {
		q := queueOf(run)
		return q.Admission == evalsv1alpha1.QueueWaiting && q.Reason != "" && meta.IsStatusConditionTrue(run.Status.Conditions, evalsv1alpha1.ConditionQueued)
	})
	q := queueOf(waiting)
	t.Logf("second waits: status.queue %+v; Queued: %s", q, meta.FindStatusCondition(waiting.Status.Conditions, evalsv1alpha1.ConditionQueued).Message)
	if q.Name != localQueue || q.Workload == "" || q.ClusterQueue != "" {
		t.Errorf("waiting run's status.queue %+v: want queue %s, its Workload, no ClusterQueue yet", q, localQueue)
	}
	if c := meta.FindStatusCondition(waiting.Status.Conditions, evalsv1alpha1.ConditionQueued); c.Reason != evalsv1alpha1.ReasonQueued ||
		!strings.HasPrefix(c.Message, "waiting for Kueue to admit the Job in queue evals ("+q.Reason) {
		t.Errorf("Queued condition %s/%q: want Queued with Kueue's reason %s", c.Reason, c.Message, q.Reason)
	}

	// Never more than one run pod at a time, while all three finish.
	maxActive := 0
	finished := map[string]*evalsv1alpha1.EvalRun{}
	ctx := ctxFor(t, kueueTimeout)
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		maxActive = max(maxActive, activePods(t, ns))
		for _, name := range names {
			run := &evalsv1alpha1.EvalRun{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
				return false, err
			}
			if c := succeeded(run); c != nil && c.Status != metav1.ConditionUnknown && finished[name] == nil {
				finished[name] = run
				t.Logf("%s finished %s after its creation", name, time.Since(created[name]).Round(100*time.Millisecond))
			}
		}
		return len(finished) == len(names), nil
	})
	if err != nil {
		t.Fatalf("the queued runs did not all finish within %s: %v (finished: %d)", kueueTimeout, err, len(finished))
	}
	if maxActive > 1 {
		t.Errorf("%d run pods were active at once under a quota of 1 pod", maxActive)
	}
	var starts []time.Time
	for _, name := range names {
		got := finished[name]
		expectCompleted(t, got, 6)
		q := queueOf(got)
		if q.ClusterQueue != cq || (q.Admission != evalsv1alpha1.QueueAdmitted && q.Admission != evalsv1alpha1.QueueFinished) || q.Evictions != 0 {
			t.Errorf("%s's status.queue %+v: want admitted by ClusterQueue %s, never evicted", name, q, cq)
		}
		if got.Status.StartTime == nil {
			t.Fatalf("%s has no startTime", name)
		}
		starts = append(starts, got.Status.StartTime.Time)
	}
	if !slices.IsSortedFunc(starts, func(a, b time.Time) int { return a.Compare(b) }) {
		t.Errorf("runs started at %v: want the order they were created in (%v)", starts, names)
	}
	expectPrinterColumnsWide(t, ns, "first", map[string]string{"QUEUE": localQueue, "ADMISSION": "Admitted", "CLUSTERQUEUE": cq})
}

// expectPrinterColumnsWide reads the run's wide printer columns (kubectl get -o wide).
func expectPrinterColumnsWide(t *testing.T, ns, name string, want map[string]string) {
	t.Helper()
	out, err := kubectl(ctxFor(t, 30*time.Second), t, "-n", ns, "get", "evalrun", name, "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get -o wide printed %q", out)
	}
	// Columns are aligned on the header; an empty cell is blank, so cut the row at the header's column starts.
	header, row := lines[0], lines[1]
	got := map[string]string{}
	for name := range want {
		start := strings.Index(header, " "+name+" ")
		if start < 0 {
			t.Fatalf("kubectl get -o wide has no column %s: %q", name, header)
		}
		start++
		end := start + len(name)
		for end < len(header) && header[end] == ' ' {
			end++
		}
		if end == len(header) || start >= len(row) {
			end = len(row)
		}
		got[strings.ToUpper(name)] = strings.TrimSpace(row[start:min(end, len(row))])
	}
	expectDiff(t, "wide printer columns", want, got)
}

// A sharded run is one Workload whose pod count is the Job's parallelism: a quota smaller than that never admits
// part of it (no pod starts); once the quota fits, it is admitted whole and completes.
func TestKueueShardedRunAdmittedWhole(t *testing.T) {
	t.Parallel()
	ns, cq := kueueNamespace(t, "kueue-sharded", 2)
	run := sampleRun("whole", ns).Inline(generatedEvalFile(6)).Queue(localQueue).Shards(3, 3).
		Command("sleep 3; " + sampleCommand).Obj()
	create(t, run)

	got := waitRun(t, ns, run.Name, time.Minute, "waiting in Kueue", func(run *evalsv1alpha1.EvalRun) bool {
		return queueOf(run).Admission == evalsv1alpha1.QueueWaiting && queueOf(run).Reason != ""
	})
	t.Logf("3 pods under a quota of 2: status.queue %+v", queueOf(got))
	// Held for a while: still waiting, one Workload of 3 pods, no pod at all.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if n := len(runPods(t, ns, run.Name)); n != 0 {
			t.Fatalf("%d pods of a run Kueue has not admitted", n)
		}
		time.Sleep(time.Second)
	}
	wls := workloadsOf(t, ns, run.Name)
	if len(wls) != 1 {
		t.Fatalf("%d Workloads for the sharded run's Job, want 1", len(wls))
	}
	podSets, _, _ := unstructured.NestedSlice(wls[0].Object, "spec", "podSets")
	if len(podSets) != 1 || podSets[0].(map[string]any)["count"] != int64(3) {
		t.Errorf("Workload pod sets %v: want one of 3 pods (the Job's parallelism)", podSets)
	}

	admitted := time.Now()
	setPodQuota(t, cq, 3)
	maxActive := 0
	got = waitRun(t, ns, run.Name, kueueTimeout, "a terminal Succeeded condition", func(run *evalsv1alpha1.EvalRun) bool {
		maxActive = max(maxActive, activePods(t, ns))
		c := succeeded(run)
		return c != nil && c.Status != metav1.ConditionUnknown
	})
	t.Logf("admitted whole and finished %s after the quota grew; at most %d pods at once", time.Since(admitted).Round(100*time.Millisecond), maxActive)
	expectCompleted(t, got, 6)
	if s := got.Status.Sharding; s == nil || s.Shards != 3 || s.Succeeded != 3 {
		t.Errorf("sharding %+v: want 3 shards succeeded", got.Status.Sharding)
	}
	if q := queueOf(got); q.ClusterQueue != cq || q.Evictions != 0 {
		t.Errorf("status.queue %+v: want admitted by %s, never evicted", q, cq)
	}
	if maxActive < 2 {
		t.Errorf("at most %d pods ran at once: want the 3 shards admitted together", maxActive)
	}
}

// A higher-priority Workload preempts a running low-priority sharded run: Kueue evicts it (its Job suspended, the
// running shard's pod stopped), the run says so (Queued, status.queue Evicted/Preempted), the urgent run
// completes, and the preempted run is admitted again, runs only the shard that had not finished and completes with
// every result: the shard collected before the preemption is kept, not run again.
func TestKueuePreemptionRequeuesAndCompletes(t *testing.T) {
	t.Parallel()
	ns, _ := kueueNamespace(t, "kueue-preempt", 1)
	// Shard 1 (g00004-g00006) sleeps, so it is running when the urgent run arrives; shard 0 is quick.
	slowShard := `grep -q 'id: g00006' "$EVAL_FILE" && sleep 20; `
	low := sampleRun("nightly", ns).Inline(generatedEvalFile(6)).Queue(localQueue).Shards(2, 1).
		Label(kueuePriorityLb, kueueLowClass).Command(slowShard + sampleCommand).Obj()
	create(t, low)
	waitRun(t, ns, low.Name, 2*time.Minute, "shard 0 collected", func(run *evalsv1alpha1.EvalRun) bool {
		return len(run.Status.Shards) > 0 && slices.ContainsFunc(run.Status.Shards, func(s evalsv1alpha1.ShardStatus) bool {
			return s.Index == 0 && s.State == "Succeeded"
		})
	})
	stopped := waitShardRunnerRunning(t, ns, low.Name, "1")

	preempted := time.Now()
	urgent := queuedRun(t, "urgent", ns, 3, 0)
	urgent.Labels = map[string]string{kueuePriorityLb: kueueHighClass}
	create(t, urgent)
	evicted := waitRun(t, ns, low.Name, time.Minute, "evicted by Kueue", func(run *evalsv1alpha1.EvalRun) bool {
		return queueOf(run).Admission == evalsv1alpha1.QueueEvicted && meta.IsStatusConditionTrue(run.Status.Conditions, evalsv1alpha1.ConditionQueued)
	})
	c := meta.FindStatusCondition(evicted.Status.Conditions, evalsv1alpha1.ConditionQueued)
	t.Logf("preempted after %s: status.queue %+v; Queued: %s", time.Since(preempted).Round(100*time.Millisecond), queueOf(evicted), c.Message)
	if q := queueOf(evicted); q.Reason != "Preempted" || !strings.Contains(c.Message, "Kueue evicted the Job; ") {
		t.Errorf("evicted run: status.queue %+v, Queued %q: want Kueue's Preempted and the eviction said", q, c.Message)
	}

	gotUrgent := waitFinished(t, ns, urgent.Name, 3*time.Minute)
	expectCompleted(t, gotUrgent, 3)
	got := waitFinished(t, ns, low.Name, kueueTimeout)
	t.Logf("the preempted run finished %s after the preemption", time.Since(preempted).Round(100*time.Millisecond))
	expectCompleted(t, got, 6)
	if q := queueOf(got); q.Evictions < 1 {
		t.Errorf("status.queue %+v: want the eviction counted", q)
	}
	// Shard 0 ran once: its collected results were kept through the preemption; shard 1's pod was stopped and
	// replaced once the run was admitted again.
	byIndex := map[string][]string{}
	for _, pod := range runPods(t, ns, low.Name) {
		index := pod.Annotations[podwire.AnnotationJobCompletionIndex]
		byIndex[index] = append(byIndex[index], pod.Name)
	}
	if len(byIndex["0"]) != 1 || len(byIndex["1"]) != 1 || byIndex["1"][0] == stopped {
		t.Errorf("pods per shard %v: want shard 0's one pod, and shard 1's pod %s replaced after the preemption", byIndex, stopped)
	}
	expectAllResultsInConfigMaps(t, got, 6)
}

// waitShardRunnerRunning waits until the runner container of the run's pod for the shard index runs, and returns
// the pod's name.
func waitShardRunnerRunning(t *testing.T, ns, run, index string) string {
	t.Helper()
	ctx := ctxFor(t, 2*time.Minute)
	var name string
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(context.Context) (bool, error) {
		for _, pod := range runPods(t, ns, run) {
			if pod.Annotations[podwire.AnnotationJobCompletionIndex] != index {
				continue
			}
			if s := containerStatus(&pod, podwire.ContainerRunner); s != nil && s.State.Running != nil {
				name = pod.Name
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("shard %s's runner of %s did not start: %v", index, run, err)
	}
	return name
}

// spec.suspend and Kueue's suspension do not fight: with spec.queueName, Kueue alone decides. A run created with
// spec.suspend true is admitted and runs; flipping spec.suspend while it runs changes nothing; the Job's
// spec.suspend goes from true to false once, and the Workload is never evicted.
func TestKueueSuspendDoesNotFight(t *testing.T) {
	t.Parallel()
	ns, cq := kueueNamespace(t, "kueue-suspend", 1)
	run := queuedRun(t, "suspended", ns, 6, 10)
	run.Spec.Suspend = ptr.To(true)
	// Every value the Job's spec.suspend takes, from a watch started before the run exists (polling could miss
	// the few milliseconds the Job is suspended before Kueue admits it).
	suspends := watchJobSuspend(t, ns, run.Name+"-evalrun")
	create(t, run)
	waitRun(t, ns, run.Name, 2*time.Minute, "admitted and running", func(r *evalsv1alpha1.EvalRun) bool {
		return queueOf(r).Admission == evalsv1alpha1.QueueAdmitted && condition(r, evalsv1alpha1.ConditionSucceeded).Reason == evalsv1alpha1.ReasonRunning
	})
	for _, s := range []bool{false, true} {
		current := &evalsv1alpha1.EvalRun{}
		if err := k8s.Get(ctxFor(t, 10*time.Second), client.ObjectKeyFromObject(run), current); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(current.DeepCopy())
		current.Spec.Suspend = ptr.To(s)
		if err := k8s.Patch(ctxFor(t, 10*time.Second), current, patch); err != nil {
			t.Fatalf("setting spec.suspend %v: %v", s, err)
		}
		time.Sleep(time.Second)
	}
	got := waitRun(t, ns, run.Name, 3*time.Minute, "a terminal Succeeded condition", func(r *evalsv1alpha1.EvalRun) bool {
		c := succeeded(r)
		return c != nil && c.Status != metav1.ConditionUnknown
	})
	expectCompleted(t, got, 6)
	expectDiff(t, "the Job's spec.suspend over time", []bool{true, false}, suspends())
	if q := queueOf(got); q.ClusterQueue != cq || q.Evictions != 0 {
		t.Errorf("status.queue %+v: want admitted once by %s, never evicted", q, cq)
	}
}

// watchJobSuspend watches the Job name in namespace from now on and returns a function that gives every value its
// spec.suspend took, in order, repeats left out.
func watchJobSuspend(t *testing.T, namespace, name string) func() []bool {
	t.Helper()
	var mu sync.Mutex
	var seen []bool
	watchNamed(t, &batchv1.JobList{}, namespace, name, func(ev watch.Event) {
		job, ok := ev.Object.(*batchv1.Job)
		if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
			return
		}
		s := ptr.Deref(job.Spec.Suspend, false)
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 || seen[len(seen)-1] != s {
			seen = append(seen, s)
		}
	})
	return func() []bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}
