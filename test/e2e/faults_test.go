//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	evalv1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
)

// Every run ends, and ends right: faults that used to leave a run hanging or mislabelled.

// 17. A user's ConfigMap named <run>-eval (the name round one reserved) is just the eval file now; an object
// that does clash with a child's name ends that run with ChildConflict naming it, within seconds.
func TestChildNames(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "names", nil)
	createEvalConfigMap(t, ns, "mine-eval", sampleEvalFile(t))
	run := MakeEvalRun("mine", ns).FromConfigMap("mine-eval", "eval.yaml").MinPassRate("0.8").Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))

	createEvalConfigMap(t, ns, "clash-evalrun-eval", "not the pinned copy")
	clash := MakeEvalRun("clash", ns).Inline(sampleEvalFile(t)).Obj()
	start := time.Now()
	create(t, clash)
	got = waitFinished(t, ns, clash.Name, time.Minute)
	t.Logf("fault: name clash -> terminal %s in %s", condition(got, evalv1.ConditionSucceeded).Reason, time.Since(start).Round(10*time.Millisecond))
	expectCondition(t, got, evalv1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalv1.ReasonChildConflict})
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
	run := MakeEvalRun("quota", ns).Inline(sampleEvalFile(t)).Obj()
	start := time.Now()
	create(t, run)
	shown := waitRun(t, ns, run.Name, time.Minute, "the quota's message", func(r *evalv1.EvalRun) bool {
		c := succeeded(r)
		return c != nil && strings.Contains(c.Message, "exceeded quota")
	})
	t.Logf("fault: quota -> message shown in %s: %s", time.Since(start).Round(10*time.Millisecond), succeeded(shown).Message)
	got := waitFinished(t, ns, run.Name, 4*time.Minute)
	t.Logf("fault: quota -> terminal %s in %s", condition(got, evalv1.ConditionSucceeded).Reason, time.Since(start).Round(10*time.Millisecond))
	expectCondition(t, got, evalv1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalv1.ReasonPodRejected})
}

// 19. ttlSecondsAfterFinished: 0 deletes the Job as soon as it finishes: the collected outcome stands.
func TestJobDeletedAfterCollection(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "ttl", nil)
	run := MakeEvalRun("ttl", ns).Inline(sampleEvalFile(t)).MinPassRate("0.8").Obj()
	run.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)
	expectCondition(t, got, evalv1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalv1.ReasonMissingResults})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	// Once the Job is gone, later reconciles keep the outcome.
	waitRun(t, ns, run.Name, time.Minute, "its Job deleted by the TTL", func(*evalv1.EvalRun) bool { return len(runPods(t, ns, run.Name)) == 0 })
	again := waitFinished(t, ns, run.Name, time.Minute)
	expectCondition(t, again, evalv1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalv1.ReasonMissingResults})
}

// 20. The pod is evicted (Eviction API) while the runner runs: the Job replaces it without spending its
// backoffLimit, and the run ends with the replacement's outcome, never RunnerFailed.
func TestPodEvictedMidRun(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "evict", nil)
	run := MakeEvalRun("evict", ns).Inline(sampleEvalFile(t)).Command(sampleCommand + " --delay-ms 700").MinPassRate("0.8").Obj()
	start := time.Now()
	create(t, run)
	var first corev1.Pod
	waitRun(t, ns, run.Name, runTimeout, "its runner running", func(*evalv1.EvalRun) bool {
		for _, p := range runPods(t, ns, run.Name) {
			if s := containerStatus(&p, layout.ContainerRunner); s != nil && s.State.Running != nil {
				first = p
				return true
			}
		}
		return false
	})
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: first.Name, Namespace: ns}}
	if err := clientset.CoreV1().Pods(ns).EvictV1(ctxFor(t, 30*time.Second), ev); err != nil {
		t.Fatalf("evicting %s: %v", first.Name, err)
	}
	got := waitFinished(t, ns, run.Name, runTimeout)
	t.Logf("fault: pod evicted mid-run -> terminal %s in %s", condition(got, evalv1.ConditionSucceeded).Reason, time.Since(start).Round(10*time.Millisecond))
	expectCondition(t, got, evalv1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalv1.ReasonMissingResults})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	if r := got.Status.Runner; r == nil || r.PodName == first.Name {
		t.Errorf("runner facts %+v, want the replacement pod's (not %s)", got.Status.Runner, first.Name)
	}
	if c := got.Status.Collection; c == nil || c.PodName == first.Name {
		t.Errorf("collection %+v, want the replacement pod's", got.Status.Collection)
	}
}

// 21. kube-apiserver is stopped for 30 s (SIGSTOP; the local cluster's processes are ours) right when the
// collector starts collecting: its writes are retried with backoff and land once the API server is back; the run
// ends with the true outcome, never RunnerFailed. Sequential: every other test's API calls would stall too.
func TestAPIServerAwayDuringCollection(t *testing.T) {
	pidData, err := os.ReadFile("/run/evalrun-cluster/pids/kube-apiserver.pid")
	if err != nil {
		t.Skipf("no kube-apiserver pid file of the local cluster: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidData)))
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, "apiaway", nil)
	run := MakeEvalRun("apiaway", ns).Inline(sampleEvalFile(t)).Command(sampleCommand + " --delay-ms 300").MinPassRate("0.8").Obj()
	start := time.Now()
	create(t, run)
	pod := waitPod(t, ns, run.Name)
	ended := filepath.Join(kubeletRoot, "pods", string(pod.UID), "volumes", "kubernetes.io~empty-dir", layout.PodIn("").RunnerEnded())
	ctx := ctxFor(t, runTimeout)
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		_, err := os.Stat(ended)
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the collector never noted the runner's end (%s): %v", ended, err)
	}
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
	t.Logf("fault: API server away 30 s -> terminal %s in %s", condition(got, evalv1.ConditionSucceeded).Reason, time.Since(start).Round(10*time.Millisecond))
	expectCondition(t, got, evalv1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalv1.ReasonMissingResults})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	expectAllResultsInConfigMaps(t, got, 12)
}
