package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// createJobPod creates a pod named name the way the Job controller would from the Job's template (then changed by
// mutate), and marks the Job started.
func createJobPod(t *testing.T, job *batchv1.Job, name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	labels := map[string]string{"batch.kubernetes.io/job-name": job.Name, "batch.kubernetes.io/controller-uid": string(job.UID)}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: job.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	for _, m := range mutate {
		m(pod)
	}
	if err := k8s.Create(context.Background(), pod); err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) {
		if s.StartTime == nil {
			s.StartTime = ptr.To(metav1.Now())
		}
		s.Active = 1
	})
	return pod
}

// Kubelet facts of pods whose containers never ran, as the kubelet writes them.
func condition(t corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: s, LastTransitionTime: metav1.Now()}
}

func containerWaiting(name, reason, msg string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: "img:dev", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
}

func containerRunning(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: "img:dev", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}
}

var (
	runnerStartError = func(s *corev1.PodStatus) {
		s.Phase = corev1.PodRunning
		s.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionTrue)}
		s.InitContainerStatuses = []corev1.ContainerStatus{containerRunning(podwire.ContainerCollector)}
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: podwire.ContainerRunner, Image: "runner:dev", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 128, Reason: "StartError", Message: "namespace path: lstat /proc/0/ns/ipc: no such file or directory",
				FinishedAt: metav1.Now()}}}}
	}
	runnerCreateContainerError = func(s *corev1.PodStatus) {
		s.Phase = corev1.PodPending
		s.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionTrue), condition(corev1.PodReadyToStartContainers, corev1.ConditionTrue)}
		s.InitContainerStatuses = []corev1.ContainerStatus{containerRunning(podwire.ContainerCollector)}
		s.ContainerStatuses = []corev1.ContainerStatus{containerWaiting(podwire.ContainerRunner, "CreateContainerError",
			`failed to reserve container name "runner_x": name is reserved`)}
	}
	collectorRunContainerError = func(s *corev1.PodStatus) {
		s.Phase = corev1.PodPending
		s.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionTrue), condition(corev1.PodReadyToStartContainers, corev1.ConditionTrue)}
		s.InitContainerStatuses = []corev1.ContainerStatus{containerWaiting(podwire.ContainerCollector, "RunContainerError", "failed to start containerd task")}
	}
	sandboxNeverCreated = func(s *corev1.PodStatus) {
		s.Phase = corev1.PodPending
		s.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionTrue), condition(corev1.PodReadyToStartContainers, corev1.ConditionFalse)}
		s.InitContainerStatuses = []corev1.ContainerStatus{containerWaiting(podwire.ContainerInstall, "PodInitializing", "")}
	}
	sandboxDied = func(s *corev1.PodStatus) {
		s.Phase = corev1.PodRunning
		s.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionTrue), condition(corev1.PodReadyToStartContainers, corev1.ConditionFalse)}
		s.InitContainerStatuses = []corev1.ContainerStatus{containerRunning(podwire.ContainerCollector)}
		s.ContainerStatuses = []corev1.ContainerStatus{containerRunning(podwire.ContainerRunner)}
	}
)

// retriesOf returns the Job's infrastructure-retries annotation ("" when absent), or "gone".
func retriesOf(t *testing.T, job *batchv1.Job) string {
	t.Helper()
	cur := &batchv1.Job{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), cur); err != nil {
		if apierrors.IsNotFound(err) {
			return "gone"
		}
		t.Fatalf("reading Job %s: %v", job.Name, err)
	}
	if !cur.DeletionTimestamp.IsZero() {
		return "gone"
	}
	return cur.Annotations[podwire.AnnotationInfrastructureRetries]
}

// waitPodGone waits until the pod no longer exists (an eviction of an unscheduled pod deletes it at once).
func waitPodGone(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	eventually(t, "pod "+pod.Name+" is evicted", func() error {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("the pod is still there (err %v)", err)
	})
}

// advanceClock moves the manager's clock past the container-create timeout for the rest of the test.
func advanceClock(t *testing.T, d time.Duration) {
	clk.advance(d)
	t.Cleanup(func() { clk.advance(-d) })
}

// TestInfrastructureFailuresReplaceThePod drives each way a pod's containers never run through no fault of the
// runner: the pod is evicted (so the Job replaces it without spending its backoffLimit) and counted on the Job,
// three times, then the run fails with InfrastructureFailed and its Job is stopped; never RunnerFailed. Faults the
// kubelet keeps retrying show the kubelet's reason in Pending until the container-create timeout.
func TestInfrastructureFailuresReplaceThePod(t *testing.T) {
	requireEnv(t)
	cases := []struct {
		name  string
		fault func(*corev1.PodStatus)
		// waits: the kubelet retries, so the manager waits for the container-create timeout first; shown says
		// what the Pending message names meanwhile.
		waits bool
		shown string
		// grace: the fault is shown only once this has passed (a sandbox being made, as every pod's is at first).
		grace time.Duration
	}{
		{name: "runner StartError", fault: runnerStartError},
		{name: "runner CreateContainerError", fault: runnerCreateContainerError, waits: true, shown: "CreateContainerError: failed to reserve container name"},
		{name: "collector RunContainerError", fault: collectorRunContainerError, waits: true, shown: "container collector of pod"},
		{name: "sandbox never created", fault: sandboxNeverCreated, waits: true, shown: "cannot create the sandbox", grace: assess.SandboxStartGrace},
		{name: "sandbox died under the running runner", fault: sandboxDied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			run := createRun(t, testutil.MakeEvalRun("infra", ns))
			job := waitJob(t, run)
			waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
			for attempt := 1; attempt <= assess.MaxInfrastructureRetries+1; attempt++ {
				pod := createJobPod(t, job, fmt.Sprintf("%s-try%d", job.Name, attempt))
				updatePodStatus(t, pod, tc.fault)
				if tc.waits && attempt == 1 {
					if tc.grace > 0 {
						// Within the grace the pod is starting, as any pod whose sandbox is being made.
						waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonRunning)
						advanceClock(t, tc.grace+time.Second)
						poke(t, run)
					}
					got := waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
					eventually(t, "the kubelet's reason is shown while it retries", func() error {
						got = getRun(t, run)
						if c := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionReconciling); c == nil || !strings.Contains(c.Message, tc.shown) {
							return fmt.Errorf("Reconciling is %+v, want a message naming %q", c, tc.shown)
						}
						return nil
					})
					if r := retriesOf(t, job); r != "" {
						t.Fatalf("a pod was replaced before the container-create timeout: retries %q", r)
					}
					// The manager looks again at the deadline by itself; move its clock there and wake it.
					advanceClock(t, 3*time.Minute)
					poke(t, run)
				}
				if attempt <= assess.MaxInfrastructureRetries {
					waitPodGone(t, pod)
					eventually(t, "the retry is counted on the Job", func() error {
						if r := retriesOf(t, job); r != fmt.Sprint(attempt) {
							return fmt.Errorf("retries %q, want %d", r, attempt)
						}
						return nil
					})
					if c := meta.FindStatusCondition(getRun(t, run).Status.Conditions, evalsv1alpha1.ConditionSucceeded); c == nil || c.Status != metav1.ConditionUnknown {
						t.Fatalf("attempt %d: Succeeded is %+v, want Unknown while retrying", attempt, c)
					}
					continue
				}
				got := waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonInfrastructureFailed)
				c := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionSucceeded)
				if !strings.Contains(c.Message, pod.Name) || !strings.Contains(c.Message, "after 3 replaced pods") {
					t.Errorf("InfrastructureFailed message %q, want the pod's name and the retries", c.Message)
				}
				eventually(t, "the failed run's Job is deleted", func() error {
					if r := retriesOf(t, job); r != "gone" {
						return fmt.Errorf("the Job is still there (retries %q)", r)
					}
					return nil
				})
			}
		})
	}
}

// TestSandboxDiedThenTheReplacementDecides: a pod whose sandbox died is replaced, and the replacement's outcome
// is the run's.
func TestSandboxDiedThenTheReplacementDecides(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("sandbox", ns))
	job := waitJob(t, run)
	run = waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
	dead := createJobPod(t, job, job.Name+"-dead1")
	updatePodStatus(t, dead, sandboxDied)
	waitPodGone(t, dead)

	pod := createJobPod(t, job, job.Name+"-x7k2p") // the pod collectorApply records
	updatePodStatus(t, pod, func(s *corev1.PodStatus) { s.Phase = corev1.PodRunning })
	waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonRunning)
	collectorApply(t, k8s, run, evalsv1alpha1.OutcomeCompleted, &evalsv1alpha1.RunSummary{Total: 2, Passed: 2, MeanScore: "1.0000"})
	updatePodStatus(t, pod, runnerTerminated(0, "Completed", time.Now()))
	waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if r := retriesOf(t, job); r != "1" {
		t.Errorf("infrastructure retries %q, want 1", r)
	}
}

// TestMissingSecretEndsWithInvalidContainerConfig: a runner whose env names a Secret that does not exist waits
// (the user may still create it), then the run fails with InvalidContainerConfig and the kubelet's message; the
// pod is not replaced, and the run is never RunnerFailed.
func TestMissingSecretEndsWithInvalidContainerConfig(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("secret", ns))
	job := waitJob(t, run)
	waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
	pod := createJobPod(t, job, job.Name+"-x7k2p")
	const kubelet = `secret "api-key" not found`
	updatePodStatus(t, pod, func(s *corev1.PodStatus) {
		s.Phase = corev1.PodPending
		s.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionTrue), condition(corev1.PodReadyToStartContainers, corev1.ConditionTrue)}
		s.InitContainerStatuses = []corev1.ContainerStatus{containerRunning(podwire.ContainerCollector)}
		s.ContainerStatuses = []corev1.ContainerStatus{containerWaiting(podwire.ContainerRunner, "CreateContainerConfigError", kubelet)}
	})
	eventually(t, "Pending names the missing Secret", func() error {
		c := meta.FindStatusCondition(getRun(t, run).Status.Conditions, evalsv1alpha1.ConditionSucceeded)
		if c == nil || c.Reason != evalsv1alpha1.ReasonPending || !strings.Contains(c.Message, kubelet) {
			return fmt.Errorf("Succeeded is %+v", c)
		}
		return nil
	})
	advanceClock(t, 3*time.Minute)
	poke(t, run)
	got := waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonInvalidContainerConfig)
	if c := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionSucceeded); !strings.Contains(c.Message, kubelet) {
		t.Errorf("InvalidContainerConfig message %q, want the kubelet's %q", c.Message, kubelet)
	}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), &corev1.Pod{}); err != nil {
		t.Errorf("the pod was not to be evicted: %v", err)
	}
	eventually(t, "the failed run's Job is deleted", func() error {
		if r := retriesOf(t, job); r != "gone" {
			return fmt.Errorf("the Job is still there (retries %q)", r)
		}
		return nil
	})
}

// TestShardInfrastructureFailureEndsItsShardOnly: in a run of 2 shards, shard 1's pods never run. Its retries are
// counted per index (shard 0's are its own) and, after 3 replacements, the manager stops shard 1 alone: the pod
// gets the stop condition and is evicted, the Job (whose pod failure policy then fails index 1) is kept and
// records the stopped shard, and shard 0 goes on. The run ends once shard 0 completed, failed with
// InfrastructureFailed, the reason of its one failed shard.
func TestShardInfrastructureFailureEndsItsShardOnly(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("infra-shards", ns).Inline(testutil.DecisionEval(4)).Shards(2, 2))
	job := waitJob(t, run)
	if rules := job.Spec.PodFailurePolicy.Rules; len(rules) == 0 || rules[0].Action != batchv1.PodFailurePolicyActionFailIndex ||
		len(rules[0].OnPodConditions) != 1 || string(rules[0].OnPodConditions[0].Type) != podwire.PodConditionShardStopped {
		t.Fatalf("the Job's first pod failure policy rule is not FailIndex on %s: %+v", podwire.PodConditionShardStopped, rules)
	}
	shard0 := startShardPod(t, job, 0)
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.StartTime = ptr.To(metav1.Now()); s.Active = 2 })

	byIndex := func() string {
		cur := &batchv1.Job{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), cur); err != nil {
			t.Fatal(err)
		}
		return cur.Annotations[podwire.AnnotationInfrastructureRetriesByIndex] + " " + cur.Annotations[podwire.AnnotationStoppedShards]
	}
	var last *corev1.Pod
	for attempt := 1; attempt <= assess.MaxInfrastructureRetries+1; attempt++ {
		pod := createJobPod(t, job, fmt.Sprintf("%s-1-try%d", job.Name, attempt), func(p *corev1.Pod) {
			p.Annotations = map[string]string{podwire.AnnotationJobCompletionIndex: "1"}
			if attempt > assess.MaxInfrastructureRetries {
				// Scheduled: its eviction leaves it terminating (no kubelet here ends it), so its condition is seen.
				p.Spec.NodeName = "node-1"
			}
		})
		updatePodStatus(t, pod, runnerStartError)
		last = pod
		if attempt <= assess.MaxInfrastructureRetries {
			waitPodGone(t, pod)
		}
		want := fmt.Sprintf("1=%d:%s ", attempt, pod.Name)
		if attempt > assess.MaxInfrastructureRetries {
			want = fmt.Sprintf("1=%d:%s-1-try%d 1=%s", assess.MaxInfrastructureRetries, job.Name, assess.MaxInfrastructureRetries,
				evalsv1alpha1.ReasonInfrastructureFailed)
		}
		eventually(t, fmt.Sprintf("attempt %d is counted for index 1", attempt), func() error {
			if got := byIndex(); got != want {
				return fmt.Errorf("retries and stopped shards %q, want %q", got, want)
			}
			return nil
		})
	}
	eventually(t, "the last pod of shard 1 is marked stopped and evicted", func() error {
		cur := &corev1.Pod{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(last), cur); err != nil {
			return err
		}
		var stop *corev1.PodCondition
		for i := range cur.Status.Conditions {
			if string(cur.Status.Conditions[i].Type) == podwire.PodConditionShardStopped {
				stop = &cur.Status.Conditions[i]
			}
		}
		if stop == nil || stop.Status != corev1.ConditionTrue || stop.Reason != evalsv1alpha1.ReasonInfrastructureFailed ||
			!strings.Contains(stop.Message, "after 3 replaced pods") || cur.DeletionTimestamp.IsZero() {
			return fmt.Errorf("stop condition %+v, deletion %v", stop, cur.DeletionTimestamp)
		}
		return nil
	})
	if n := writes.in(ns)["patch Pod/status"]; n != 1 {
		t.Errorf("%d stop conditions set on pods, want 1 (the last pod of shard 1)", n)
	}
	eventually(t, "shard 1 is failed while shard 0 goes on", func() error {
		got := getRun(t, run)
		if c := runCondition(got, evalsv1alpha1.ConditionSucceeded); c == nil || c.Status != metav1.ConditionUnknown {
			return fmt.Errorf("succeeded %+v, want Unknown", c)
		}
		if s := got.Status.Sharding; s == nil || s.Failed != 1 {
			return fmt.Errorf("sharding %+v", got.Status.Sharding)
		}
		return nil
	})
	if r := retriesOf(t, job); r == "gone" {
		t.Fatal("the Job of the run was stopped for one shard's infrastructure failure")
	}

	// The Job controller fails index 1 (the pod failure policy) and shard 0 completes.
	collectShard(t, run, 0, shard0.Name, testutil.DecisionLine(0, "CLEAR")+testutil.DecisionLine(1, "CLEAR"))
	updatePodStatus(t, shard0, runnerTerminated(0, "Completed", time.Now()))
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.CompletedIndexes, s.FailedIndexes, s.Active = "0", ptr.To("1"), 0 })
	got := waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonInfrastructureFailed)
	if c := runCondition(got, evalsv1alpha1.ConditionSucceeded); !strings.HasPrefix(c.Message, "1 of 2 shards failed; shard 1: ") ||
		!strings.Contains(c.Message, "after 3 replaced pods") {
		t.Errorf("Succeeded message %q, want shard 1's infrastructure failure", c.Message)
	}
	if sum := got.Status.Summary; sum == nil || sum.Passed != 2 || sum.Missing != 2 {
		t.Errorf("merged summary %+v, want shard 0's 2 passed and shard 1's 2 missing", got.Status.Summary)
	}
}
