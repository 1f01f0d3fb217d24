//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// Every run ends, and ends right: faults that used to leave a run hanging or mislabelled.

// 17. A user's ConfigMap named <run>-eval (the name round one reserved) is just the eval file now; an object
// that does clash with a child's name ends that run with ChildConflict naming it, within seconds.
func TestChildNames(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "names", nil)
	createEvalConfigMap(t, ns, "mine-eval", sampleEvalFile(t))
	run := sampleRun("mine", ns).FromConfigMap("mine-eval", "eval.yaml").MinPassRate("0.8").Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))

	createEvalConfigMap(t, ns, "clash-evalrun-eval", "not the pinned copy")
	clash := sampleRun("clash", ns).Inline(sampleEvalFile(t)).Obj()
	start := time.Now()
	create(t, clash)
	got = waitFinished(t, ns, clash.Name, time.Minute)
	t.Logf("fault: name clash -> terminal %s in %s", condition(got, evalsv1alpha1.ConditionSucceeded).Reason, time.Since(start).Round(10*time.Millisecond))
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonChildConflict})
	if c := succeeded(got); c == nil || !strings.Contains(c.Message, "clash-evalrun-eval") {
		t.Errorf("condition %+v does not name the clashing ConfigMap", c)
	}
}

// 18. A namespace whose ResourceQuota allows no pods: the run says why at once, and ends PodRejected after the
// manager's --pod-rejected-timeout (2m by default), its Job stopped.
func TestQuotaRejectsPod(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "quota", nil)
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "none", Namespace: ns},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}}
	if err := k8s.Create(ctxFor(t, 30*time.Second), quota); err != nil {
		t.Fatal(err)
	}
	run := sampleRun("quota", ns).Inline(sampleEvalFile(t)).Obj()
	start := time.Now()
	create(t, run)
	expectPodRejected(t, ns, run.Name, "quota", "exceeded quota", start)
}

// expectPodRejected waits until the run shows why its pod is not created (a message holding fragment, within a
// minute of start, in Succeeded and Reconciling), then until it ends PodRejected with it after the manager's
// --pod-rejected-timeout (2m by default), and logs both times from start.
func expectPodRejected(t *testing.T, ns, name, fault, fragment string, start time.Time) {
	t.Helper()
	shown := waitRun(t, ns, name, time.Minute, "the admission's message", func(r *evalsv1alpha1.EvalRun) bool {
		c := succeeded(r)
		return c != nil && c.Status == metav1.ConditionUnknown && strings.Contains(c.Message, fragment)
	})
	t.Logf("fault: %s -> %s message shown in %s: %s", fault, succeeded(shown).Reason, time.Since(start).Round(10*time.Millisecond),
		succeeded(shown).Message)
	if r := meta.FindStatusCondition(shown.Status.Conditions, evalsv1alpha1.ConditionReconciling); r == nil || !strings.Contains(r.Message, fragment) {
		t.Errorf("Reconciling condition %+v does not show the admission's message %q", r, fragment)
	}
	got := waitFinished(t, ns, name, 4*time.Minute)
	t.Logf("fault: %s -> terminal %s in %s", fault, condition(got, evalsv1alpha1.ConditionSucceeded).Reason, time.Since(start).Round(10*time.Millisecond))
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonPodRejected})
	if c := succeeded(got); c == nil || !strings.Contains(c.Message, fragment) {
		t.Errorf("Succeeded condition %+v does not carry the admission's message %q", c, fragment)
	}
	if pods := runPods(t, ns, name); len(pods) != 0 {
		t.Errorf("%d pods exist for a run whose pod was rejected", len(pods))
	}
}

// 19. ttlSecondsAfterFinished: 0 deletes the Job as soon as it finishes: the collected outcome stands.
func TestJobDeletedAfterCollection(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "ttl", nil)
	run := sampleRun("ttl", ns).Inline(sampleEvalFile(t)).MinPassRate("0.8").Obj()
	run.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	// Once the Job is gone, later reconciles keep the outcome.
	waitRun(t, ns, run.Name, time.Minute, "its Job deleted by the TTL", func(*evalsv1alpha1.EvalRun) bool { return len(runPods(t, ns, run.Name)) == 0 })
	again := waitFinished(t, ns, run.Name, time.Minute)
	expectCondition(t, again, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
}

// 20. The pod is evicted (Eviction API) while the runner runs: the Job replaces it without spending its
// backoffLimit, and the run ends with the replacement's outcome, never RunnerFailed.
func TestPodEvictedMidRun(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "evict", nil)
	run := sampleRun("evict", ns).Inline(sampleEvalFile(t)).Command(sampleCommand + " --delay-ms 700").MinPassRate("0.8").Obj()
	start := time.Now()
	create(t, run)
	first := waitRunnerRunning(t, ns, run.Name)
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: first.Name, Namespace: ns}}
	if err := clientset.CoreV1().Pods(ns).EvictV1(ctxFor(t, 30*time.Second), ev); err != nil {
		t.Fatalf("evicting %s: %v", first.Name, err)
	}
	got := waitFinished(t, ns, run.Name, runTimeout)
	t.Logf("fault: pod evicted mid-run -> terminal %s in %s", condition(got, evalsv1alpha1.ConditionSucceeded).Reason, time.Since(start).Round(10*time.Millisecond))
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	if r := got.Status.Runner; r == nil || r.PodName == first.Name {
		t.Errorf("runner facts %+v, want the replacement pod's (not %s)", got.Status.Runner, first.Name)
	}
	if c := got.Status.Collection; c == nil || c.PodName == first.Name {
		t.Errorf("collection %+v, want the replacement pod's", got.Status.Collection)
	}
}

// waitRunnerRunning waits until a pod of the run has its runner container running and returns that pod.
func waitRunnerRunning(t *testing.T, ns, name string) corev1.Pod {
	t.Helper()
	var running corev1.Pod
	waitRun(t, ns, name, runTimeout, "its runner running", func(*evalsv1alpha1.EvalRun) bool {
		for _, p := range runPods(t, ns, name) {
			if s := containerStatus(&p, podwire.ContainerRunner); s != nil && s.State.Running != nil {
				running = p
				return true
			}
		}
		return false
	})
	return running
}

// 21. kube-apiserver is stopped for 30 s (SIGSTOP; the local cluster's processes are ours) right when the
// collector starts collecting: its writes are retried with backoff and land once the API server is back; the run
// ends with the true outcome, never RunnerFailed. Sequential: every other test's API calls would stall too.
func TestAPIServerAwayDuringCollection(t *testing.T) {
	pid := apiServerPID(t)
	ns := newNamespace(t, "apiaway", nil)
	run := sampleRun("apiaway", ns).Inline(sampleEvalFile(t)).Command(sampleCommand + " --delay-ms 300").MinPassRate("0.8").Obj()
	start := time.Now()
	create(t, run)
	pod := waitPod(t, ns, run.Name)
	waitRunnerEndedNote(t, pod)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("stopping kube-apiserver (pid %d): %v", pid, err)
	}
	stopped := time.Now()
	time.Sleep(30 * time.Second) // the fault itself: the API server away for 30 s
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatalf("resuming kube-apiserver (pid %d): %v", pid, err)
	}
	t.Logf("fault: kube-apiserver stopped for %s during collection", time.Since(stopped).Round(100*time.Millisecond))
	got := waitFinished(t, ns, run.Name, runTimeout)
	t.Logf("fault: API server away 30 s -> terminal %s in %s", condition(got, evalsv1alpha1.ConditionSucceeded).Reason, time.Since(start).Round(10*time.Millisecond))
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	expectAllResultsInConfigMaps(t, got, 12)
}

// apiServerPID returns the local cluster's kube-apiserver pid (skipping the test on another cluster).
func apiServerPID(t *testing.T) int {
	t.Helper()
	pidData, err := os.ReadFile("/run/evalrun-cluster/pids/kube-apiserver.pid")
	if err != nil {
		t.Skipf("no kube-apiserver pid file of the local cluster: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidData)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// podVolumeFile is a file in one of the pod's emptyDir volumes on this host; rel is a podwire.PodIn("") path.
func podVolumeFile(pod corev1.Pod, rel string) string {
	return filepath.Join(kubeletRoot, "pods", string(pod.UID), "volumes", "kubernetes.io~empty-dir", rel)
}

// waitRunnerEndedNote waits until the pod's collector noted the runner's end in its snapshot volume: it is
// collecting from then on.
func waitRunnerEndedNote(t *testing.T, pod corev1.Pod) {
	t.Helper()
	ended := podVolumeFile(pod, podwire.PodIn("").RunnerEnded())
	if err := wait.PollUntilContextCancel(ctxFor(t, runTimeout), 10*time.Millisecond, true, func(context.Context) (bool, error) {
		_, err := os.Stat(ended)
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the collector never noted the runner's end (%s): %v", ended, err)
	}
}

// 22. The node is drained (kubectl drain, restricted by --pod-selector to the run's pod so that the manager stays)
// while the runner runs, then uncordoned: the drain evicts the pod, the Job replaces it without spending its
// backoffLimit once the node takes pods again, and the run ends with the replacement's outcome, never
// RunnerFailed. Sequential: while the single node is cordoned no other test's pod could start.
func TestNodeDrainedMidRun(t *testing.T) {
	ns := newNamespace(t, "drain", nil)
	run := sampleRun("drain", ns).Inline(sampleEvalFile(t)).Command(sampleCommand + " --delay-ms 700").MinPassRate("0.8").Obj()
	start := time.Now()
	create(t, run)
	first := waitRunnerRunning(t, ns, run.Name)
	node := first.Spec.NodeName
	// Other tests share the node: it is uncordoned whatever happens to this test.
	uncordoned := false
	uncordon := func() {
		if uncordoned {
			return
		}
		if out, err := kubectl(context.Background(), t, "uncordon", node); err != nil {
			t.Errorf("uncordoning %s: %v", node, err)
		} else {
			uncordoned = true
			t.Logf("%s", strings.TrimSpace(out))
		}
	}
	t.Cleanup(uncordon)
	selector := "batch.kubernetes.io/controller-uid=" + first.Labels["batch.kubernetes.io/controller-uid"]
	out, err := kubectl(ctxFor(t, 3*time.Minute), t, "drain", node, "--pod-selector", selector,
		"--ignore-daemonsets", "--delete-emptydir-data", "--timeout", "150s")
	if err != nil {
		t.Fatalf("draining %s: %v", node, err)
	}
	t.Logf("drained %s in %s: %s", node, time.Since(start).Round(10*time.Millisecond), strings.TrimSpace(out))
	uncordon()

	got := waitFinished(t, ns, run.Name, runTimeout)
	t.Logf("fault: node drained mid-run -> terminal %s in %s", condition(got, evalsv1alpha1.ConditionSucceeded).Reason, time.Since(start).Round(10*time.Millisecond))
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	expectDiff(t, "verdicts", sampleVerdicts, verdicts(got))
	expectAllResultsInConfigMaps(t, got, 12)
	if r := got.Status.Runner; r == nil || r.PodName == first.Name {
		t.Errorf("runner facts %+v, want the replacement pod's (not %s)", got.Status.Runner, first.Name)
	}
	if c := got.Status.Collection; c == nil || c.PodName == first.Name {
		t.Errorf("collection %+v, want the replacement pod's", got.Status.Collection)
	}
	var job batchv1.Job
	if err := k8s.Get(ctxFor(t, 30*time.Second), client.ObjectKey{Namespace: ns, Name: got.Status.JobName}, &job); err != nil {
		t.Fatalf("the run's Job %q: %v", got.Status.JobName, err)
	}
	if job.Status.Failed != 0 {
		t.Errorf("the Job counts %d failed pods: the drain spent its backoffLimit", job.Status.Failed)
	}
}

// 23. A namespace enforcing Pod Security "restricted" pinned at v1.18 (whose seccomp check reads the legacy
// annotations) and a run whose podTemplate.annotations set the runner's legacy seccomp annotation to unconfined.
// The CRD admits it (the annotation is ignored by the kubelet and forbidden only by Pod Security versions before
// v1.19), the API server validates the Job, and Pod Security rejects every pod: the run shows the rejection within
// seconds and ends PodRejected after the manager's --pod-rejected-timeout.
func TestPodSecurityRejectsPod(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "psa", map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "v1.18",
	})
	run := sampleRun("psa", ns).Inline(sampleEvalFile(t)).Obj()
	run.Spec.PodTemplate = &evalsv1alpha1.PodOverrides{Annotations: map[string]string{
		"container.seccomp.security.alpha.kubernetes.io/" + podwire.ContainerRunner: "unconfined",
	}}
	start := time.Now()
	create(t, run)
	expectPodRejected(t, ns, run.Name, "Pod Security", `violates PodSecurity "restricted:v1.18"`, start)
}

// 24. The collector is SIGKILLed exactly while it persists: kube-apiserver is stopped (SIGSTOP) once the runner
// ended, so the collector judges and then hangs in its API writes (its termination message, written before them,
// says so); it is killed then, and the API server resumed once the kubelet restarted it (or after 25 s). The
// restarted collector resumes from its notes and persists the full results: one collection for this pod, with the
// first collection's time, and the true outcome. Sequential: every other test's API calls would stall too.
func TestCollectorKilledWhilePersisting(t *testing.T) {
	apiPID := apiServerPID(t)
	ns := newNamespace(t, "persist", nil)
	run := sampleRun("persist", ns).Inline(sampleEvalFile(t)).Command(sampleCommand + " --delay-ms 300").MinPassRate("0.8").Obj()
	start := time.Now()
	create(t, run)
	pod := waitPod(t, ns, run.Name)
	waitRunnerEndedNote(t, pod)

	if err := syscall.Kill(apiPID, syscall.SIGSTOP); err != nil {
		t.Fatalf("stopping kube-apiserver (pid %d): %v", apiPID, err)
	}
	stopped := time.Now()
	resumed := false
	resume := func() {
		if resumed {
			return
		}
		if err := syscall.Kill(apiPID, syscall.SIGCONT); err != nil {
			t.Errorf("resuming kube-apiserver (pid %d): %v", apiPID, err)
			return
		}
		resumed = true
		t.Logf("fault: kube-apiserver stopped for %s", time.Since(stopped).Round(100*time.Millisecond))
	}
	// Every other test needs the API server: it is resumed whatever happens to this test.
	t.Cleanup(resume)

	// The collector's termination message, written just before its API writes, is a file of the kubelet's.
	ctx := ctxFor(t, time.Minute)
	glob := filepath.Join(kubeletRoot, "pods", string(pod.UID), "containers", podwire.ContainerCollector, "*")
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "still writing the results") {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		resume()
		t.Fatalf("the collector never started persisting (no termination message in %s): %v", glob, err)
	}
	collector, err := collectorPID(string(pod.UID))
	if err != nil {
		resume()
		t.Fatal(err)
	}
	if err := syscall.Kill(collector, syscall.SIGKILL); err != nil {
		resume()
		t.Fatalf("killing the collector (pid %d): %v", collector, err)
	}
	killed := time.Now()
	t.Logf("killed the collector (pid %d) while it persisted, %s after the API server stopped", collector, killed.Sub(stopped).Round(10*time.Millisecond))
	// The kubelet restarts the sidecar on its own; the API server stays away until then (bounded, so that the node
	// is not marked NotReady).
	restarted := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 25*time.Second-time.Since(stopped), true,
		func(context.Context) (bool, error) {
			pid, err := collectorPID(string(pod.UID))
			return err == nil && pid != collector, nil
		})
	if restarted == nil {
		t.Logf("the kubelet restarted the collector %s after the kill", time.Since(killed).Round(10*time.Millisecond))
	} else {
		t.Logf("the collector was not restarted within the outage: %v", restarted)
	}
	resume()

	got := waitFinished(t, ns, run.Name, runTimeout)
	t.Logf("fault: collector SIGKILLed while persisting -> terminal %s in %s", condition(got, evalsv1alpha1.ConditionSucceeded).Reason, time.Since(start).Round(10*time.Millisecond))
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	expectDiff(t, "verdicts", sampleVerdicts, verdicts(got))
	expectAllResultsInConfigMaps(t, got, 12)
	var noted time.Time
	if b, err := os.ReadFile(podVolumeFile(pod, podwire.PodIn("").CollectionTime())); err != nil || json.Unmarshal(b, &noted) != nil {
		t.Errorf("the collector's collection-time note: %q, %v", b, err)
	}
	c := got.Status.Collection
	if c == nil || c.PodName != pod.Name || c.CollectedAt == nil || !c.CollectedAt.Time.Equal(noted) {
		t.Errorf("collection %+v, want one collection of pod %s collected at %s (the first collection's note)", c, pod.Name, noted)
	}
	var fresh corev1.Pod
	if err := k8s.Get(ctxFor(t, 30*time.Second), client.ObjectKeyFromObject(&pod), &fresh); err == nil {
		if st := containerStatus(&fresh, podwire.ContainerCollector); st == nil || st.RestartCount < 1 {
			t.Errorf("collector restart count = %+v, want at least 1", st)
		}
	}
}
