package assess

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// podCond adds a pod condition that last changed at since.
func podCond(t corev1.PodConditionType, s corev1.ConditionStatus, since time.Duration) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: s, LastTransitionTime: at(since)})
	}
}

// waitingFor reports the container waiting with the kubelet's reason and message.
func waitingFor(container, reason, msg string) podOpt {
	return func(p *corev1.Pod) {
		statusOf(p, corev1.ContainerStatus{Name: container, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}})
	}
}

// ended reports the container terminated at finished.
func ended(container string, code int32, reason, msg string, finished time.Duration) podOpt {
	return func(p *corev1.Pod) {
		statusOf(p, corev1.ContainerStatus{Name: container, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, Message: msg, FinishedAt: at(finished)}}})
	}
}

func beingDeleted(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(at(time.Minute)) }

// Containers that never ran through no fault of the runner (the runtime could not start or create them, the
// sandbox is missing) replace the pod, a bounded number of times, and are never reported as the runner's failure;
// a container the kubelet cannot configure (a missing Secret) ends the run with the kubelet's message. Faults the
// kubelet keeps retrying are given --container-create-timeout, and the manager looks again at that deadline.
func TestClassifyInfrastructureFailure(t *testing.T) {
	const minute = time.Minute
	const startErr = "namespace path: lstat /proc/0/ns/ipc: no such file or directory"
	const startWhat = "the runner container of pod screen-abcde could not start (StartError: " + startErr + ")"
	const createErr = `failed to reserve container name "runner_screen-abcde": name is reserved`
	const createWhat = "container runner of pod screen-abcde cannot be started (CreateContainerError: " + createErr + ")"
	const configErr = `secret "api-key" not found`
	const configWhat = "container runner of pod screen-abcde cannot be configured (CreateContainerConfigError: " + configErr + ")"
	const noSandbox = "the kubelet cannot create the sandbox of pod screen-abcde on node-1 (PodReadyToStartContainers=False)"
	const deadSandbox = "the sandbox of pod screen-abcde on node-1 went away while its containers ran (PodReadyToStartContainers=False)"
	onNode := func(p *corev1.Pod) { p.Spec.NodeName = "node-1" }
	scheduledAt := podCond(corev1.PodScheduled, corev1.ConditionTrue, 2*time.Second)
	startError := ended("runner", 128, "StartError", startErr, 10*time.Second)
	createError := waitingFor("runner", "CreateContainerError", createErr)
	sandboxGone := func(since time.Duration) podOpt {
		return podCond(corev1.PodReadyToStartContainers, corev1.ConditionFalse, since)
	}
	tests := []struct {
		name    string
		run     *evalsv1alpha1.EvalRun
		retries string
		retried string
		pod     corev1.Pod
		now     time.Duration
		want    Assessment
	}{
		// The runtime could not start the runner (runc's StartError): the kubelet does not retry, so at once.
		{name: "StartError: replace the pod", pod: makePod(phase(corev1.PodRunning), startError), now: minute,
			want: Assessment{State: StateRunning, Reason: "Running", RetryPod: "screen-abcde", Message: startWhat + "; replacing the pod (1 of 3)"}},
		{name: "StartError, being replaced: wait", pod: makePod(phase(corev1.PodRunning), startError, beingDeleted), now: minute,
			want: Assessment{State: StateRunning, Reason: "Running", Message: "pod screen-abcde is being replaced after an infrastructure failure"}},
		{name: "StartError, retries used up: InfrastructureFailed, never RunnerFailed", retries: "3",
			pod: makePod(phase(corev1.PodRunning), startError), now: minute,
			want: Assessment{State: StateFailed, Reason: "InfrastructureFailed", StopJob: true, Message: startWhat + ", after 3 replaced pods"}},
		{name: "StartError, counted already for this pod (the eviction not seen yet): evict again, count nothing", retries: "3", retried: "screen-abcde",
			pod: makePod(phase(corev1.PodRunning), startError), now: minute,
			want: Assessment{State: StateRunning, Reason: "Running", RetryPod: "screen-abcde", Message: startWhat + "; replacing the pod (3 of 3)"}},
		{name: "StartError, the last count was an earlier pod's: counted", retries: "1", retried: "screen-older",
			pod: makePod(phase(corev1.PodRunning), startError), now: minute,
			want: Assessment{State: StateRunning, Reason: "Running", RetryPod: "screen-abcde", Message: startWhat + "; replacing the pod (2 of 3)"}},
		{name: "StartError with this pod's collection: the collection decides",
			run: testutil.UnitRun(collectedFor("screen-abcde", "RunnerFailed", "the runner could not start", nil)),
			pod: makePod(phase(corev1.PodRunning), startError), now: minute,
			want: Assessment{State: StateFailed, Reason: "RunnerFailed", Message: "the runner could not start"}},

		// The kubelet keeps retrying CreateContainerError and RunContainerError for ever: a bounded wait first.
		{name: "CreateContainerError within the timeout: Pending with the kubelet's message, look again at the deadline",
			pod: makePod(onNode, scheduledAt, createError), now: minute,
			want: Assessment{State: StatePending, Reason: "Pending", Message: createWhat + "; the kubelet retries", RecheckAfter: minute + 2*time.Second}},
		{name: "CreateContainerError past the timeout: replace the pod",
			pod: makePod(onNode, scheduledAt, createError), now: 3 * minute,
			want: Assessment{State: StateRunning, Reason: "Running", RetryPod: "screen-abcde", Message: createWhat + ", for 2m0s; replacing the pod (1 of 3)"}},
		{name: "CreateContainerError of the install container, second retry", retries: "1",
			pod: makePod(scheduledAt, waitingFor("install", "CreateContainerError", "context deadline exceeded")), now: 3 * minute,
			want: Assessment{State: StateRunning, Reason: "Running", RetryPod: "screen-abcde",
				Message: "container install of pod screen-abcde cannot be started (CreateContainerError: context deadline exceeded), for 2m0s; replacing the pod (2 of 3)"}},
		{name: "RunContainerError of the collector, retries used up: InfrastructureFailed", retries: "3",
			pod: makePod(phase(corev1.PodRunning), scheduledAt, waitingFor("collector", "RunContainerError", "failed to start containerd task"), running("runner")), now: 3 * minute,
			want: Assessment{State: StateFailed, Reason: "InfrastructureFailed", StopJob: true,
				Message: "container collector of pod screen-abcde cannot be started (RunContainerError: failed to start containerd task), for 2m0s, after 3 replaced pods"}},
		{name: "the wait runs from the containers becoming not ready (the collector restarting), not from scheduling",
			pod: makePod(phase(corev1.PodRunning), scheduledAt, podCond(corev1.ContainersReady, corev1.ConditionFalse, 5*minute),
				waitingFor("collector", "RunContainerError", "failed to start containerd task"), running("runner")), now: 6 * minute,
			want: Assessment{State: StatePending, Reason: "Pending", RecheckAfter: minute,
				Message: "container collector of pod screen-abcde cannot be started (RunContainerError: failed to start containerd task); the kubelet retries"}},
		{name: "the wait for the runner runs from the init containers finishing",
			pod: makePod(scheduledAt, podCond(corev1.PodInitialized, corev1.ConditionTrue, 90*time.Second), createError), now: 3 * minute,
			want: Assessment{State: StatePending, Reason: "Pending", RecheckAfter: 30 * time.Second, Message: createWhat + "; the kubelet retries"}},

		// CreateContainerConfigError is the user's to fix (it heals once the Secret exists): a bounded wait, then
		// InvalidContainerConfig with the kubelet's message; no pod is replaced.
		{name: "CreateContainerConfigError within the timeout: Pending with the kubelet's message",
			pod: makePod(scheduledAt, waitingFor("runner", "CreateContainerConfigError", configErr)), now: minute,
			want: Assessment{State: StatePending, Reason: "Pending", Message: configWhat + "; the kubelet retries", RecheckAfter: minute + 2*time.Second}},
		{name: "CreateContainerConfigError past the timeout: InvalidContainerConfig, the Job stopped, no retry",
			pod: makePod(scheduledAt, waitingFor("runner", "CreateContainerConfigError", configErr)), now: 3 * minute,
			want: Assessment{State: StateFailed, Reason: "InvalidContainerConfig", StopJob: true, Message: configWhat + ", for 2m0s"}},

		// The sandbox: PodReadyToStartContainers=False on a scheduled pod that has not ended.
		{name: "sandbox being created, as every pod's is for a moment: starting, no fault shown",
			pod: makePod(onNode, scheduledAt, sandboxGone(3*time.Second), waitingFor("install", "PodInitializing", "")), now: 10 * time.Second,
			want: Assessment{State: StateRunning, Reason: "Running", Message: "pod screen-abcde is starting", RecheckAfter: 23 * time.Second}},
		{name: "sandbox not created within the timeout: Pending",
			pod: makePod(onNode, scheduledAt, sandboxGone(3*time.Second), waitingFor("install", "PodInitializing", "")), now: minute,
			want: Assessment{State: StatePending, Reason: "Pending", Message: noSandbox + "; the kubelet retries", RecheckAfter: minute + 3*time.Second}},
		{name: "sandbox not created past the timeout: replace the pod",
			pod: makePod(onNode, scheduledAt, sandboxGone(3*time.Second), waitingFor("install", "PodInitializing", "")), now: 3 * minute,
			want: Assessment{State: StateRunning, Reason: "Running", RetryPod: "screen-abcde", Message: noSandbox + ", for 2m0s; replacing the pod (1 of 3)"}},
		{name: "sandbox gone under running containers: replace the pod at once",
			pod: makePod(onNode, phase(corev1.PodRunning), scheduledAt, sandboxGone(minute), running("collector"), running("runner")), now: minute,
			want: Assessment{State: StateRunning, Reason: "Running", RetryPod: "screen-abcde", Message: deadSandbox + "; replacing the pod (1 of 3)"}},
		{name: "sandbox gone, the runner killed with it: the collection of the killed runner does not decide",
			run: testutil.UnitRun(collectedFor("screen-abcde", "RunnerFailed", "the runner was stopped because the container was asked to terminate", nil)),
			pod: makePod(onNode, phase(corev1.PodRunning), scheduledAt, sandboxGone(minute), running("collector"), ended("runner", 143, "Error", "", minute)), now: minute,
			want: Assessment{State: StateRunning, Reason: "Running", RetryPod: "screen-abcde", Message: deadSandbox + "; replacing the pod (1 of 3)"}},
		{name: "sandbox gone after the runner ended by itself, collected: the collection decides",
			run: testutil.UnitRun(collectedFor("screen-abcde", "Completed", "2 cases collected", nil)),
			pod: makePod(onNode, phase(corev1.PodRunning), scheduledAt, sandboxGone(2*minute), running("collector"), ended("runner", 0, "Completed", "", minute)), now: 2 * minute,
			want: Assessment{State: StateSucceeded, Reason: "Completed", Message: "2 cases collected"}},
		{name: "a pod that ended has no sandbox: not a fault",
			run: testutil.UnitRun(collectedFor("screen-abcde", "Completed", "2 cases collected", nil)),
			pod: makePod(onNode, phase(corev1.PodSucceeded), scheduledAt, sandboxGone(minute), ended("collector", 0, "Completed", "", minute), ended("runner", 0, "Completed", "", minute)), now: 2 * minute,
			want: Assessment{State: StateSucceeded, Reason: "Completed", Message: "2 cases collected"}},
		{name: "every container exited 0, the sandbox torn down before the phase and the collection arrive: not a fault",
			pod: makePod(onNode, phase(corev1.PodRunning), scheduledAt, sandboxGone(2*minute), ended("install", 0, "Completed", "", minute),
				ended("collector", 0, "Completed", "", minute), ended("runner", 0, "Completed", "", minute), ended("judge", 0, "Completed", "", minute)),
			now: 2 * minute,
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "the runner ended; waiting for the collector's results",
				RecheckAfter: 4 * time.Minute}},
		{name: "a pod being deleted has no sandbox: not a fault",
			pod: makePod(onNode, phase(corev1.PodRunning), scheduledAt, sandboxGone(minute), running("runner"), beingDeleted), now: minute,
			want: Assessment{State: StateRunning, Reason: "Running", RecheckAfter: PodRejectedRecheck, Message: "pod screen-abcde is being deleted; waiting for the Job"}},
		{name: "a pod not scheduled yet has no sandbox: not a fault",
			pod: makePod(sandboxGone(time.Second)), now: minute,
			want: Assessment{State: StateRunning, Reason: "Running", Message: "pod screen-abcde is starting"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := makeJob(started)
			if tc.retries != "" {
				job.Annotations = map[string]string{"evals.evalrun.io/infrastructure-retries-by-index": "0=" + tc.retries + ":" + tc.retried}
			}
			run := tc.run
			if run == nil {
				run = testutil.UnitRun()
			}
			got := Classify(Observation{Run: run, Job: job, Pods: []corev1.Pod{tc.pod}, Now: t0.Add(tc.now)}, options.Options{ContainerCreateTimeout: 2 * minute})
			got.Runner = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("assessment (-want +got):\n%s", diff)
			}
		})
	}
}

// The container-create timeout defaults to 2 minutes.
func TestContainerCreateTimeoutDefault(t *testing.T) {
	if got := (options.Options{}).WithDefaults().ContainerCreateTimeout; got != 2*time.Minute {
		t.Errorf("default container-create timeout %s, want 2m0s", got)
	}
}

// TestInfrastructureRetriesPerIndex: the cap counts each completion index's own replaced pods; another index's
// retries, used up or not, do not count.
func TestInfrastructureRetriesPerIndex(t *testing.T) {
	startError := func(index int) corev1.Pod {
		p := makePod(phase(corev1.PodRunning), ended("runner", 128, "StartError", "no such file", time.Minute))
		p.Annotations = map[string]string{"batch.kubernetes.io/job-completion-index": strconv.Itoa(index)}
		return p
	}
	for _, tc := range []struct {
		name    string
		byIndex string
		index   int
		want    string
		retry   bool
	}{
		{name: "index 1 used up, index 0 replaced", byIndex: "1=3:screen-old", index: 0, want: "Running", retry: true},
		{name: "index 1 used up: InfrastructureFailed", byIndex: "0=1:screen-zero,1=3:screen-old", index: 1, want: "InfrastructureFailed"},
		{name: "index 7 twice: a third replacement", byIndex: "7=2:screen-old", index: 7, want: "Running", retry: true},
		{name: "an unreadable annotation counts nothing", byIndex: "x=y,2=three:p", index: 2, want: "Running", retry: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := makeJob(started)
			job.Annotations = map[string]string{"evals.evalrun.io/infrastructure-retries-by-index": tc.byIndex}
			got := Classify(Observation{Run: testutil.UnitRun(), Job: job, Pods: []corev1.Pod{startError(tc.index)}, Now: t0.Add(2 * time.Minute)}, options.Options{})
			if got.Reason != tc.want || (got.RetryPod != "") != tc.retry || (tc.retry && got.RetryIndex != tc.index) {
				t.Errorf("got %s (retry %q, index %d): %s; want %s (retry %t, index %d)", got.Reason, got.RetryPod, got.RetryIndex, got.Message, tc.want, tc.retry, tc.index)
			}
		})
	}
}

// TestIndexRetriesRoundTrip: the per-index counts are written in index order and read back.
func TestIndexRetriesRoundTrip(t *testing.T) {
	m := map[int]IndexRetry{12: {Count: 1, Pod: "r-evalrun-12-abcde"}, 3: {Count: 3, Pod: "r-evalrun-3-fghij"}}
	s := FormatIndexRetries(m)
	if s != "3=3:r-evalrun-3-fghij,12=1:r-evalrun-12-abcde" {
		t.Errorf("FormatIndexRetries = %q", s)
	}
	if diff := cmp.Diff(m, ParseIndexRetries(s), cmp.AllowUnexported(IndexRetry{})); diff != "" {
		t.Errorf("ParseIndexRetries (-want +got):\n%s", diff)
	}
}

// TestFailedJobAfterAContainerCouldNotStart: once every other container ended, a pod with a container the runtime
// could not start fails, and with it the Job (seen on the local cluster under load: containerd could not start a
// judge container's shim). Whichever container it was, the run ends InfrastructureFailed naming it, never
// RunnerFailed, and the collection the collector recorded for the pod stays in the status.
func TestFailedJobAfterAContainerCouldNotStart(t *testing.T) {
	const shimErr = "failed to create containerd task: failed to start shim: start failed: dial unix /run/containerd/s/03ff: connect: no such file or directory: unknown"
	failedJob := makeJob(started, jobCond(batchv1.JobFailed, "FailedIndexes", "Job has failed indexes"))
	for _, tc := range []struct {
		name    string
		run     *evalsv1alpha1.EvalRun
		pod     corev1.Pod
		want    string
		message string
	}{
		{name: "the judge container, after a complete collection",
			run: testutil.UnitRun(collectedFor("screen-abcde", "Completed", "collected the results of all 1 cases", nil)),
			pod: makePod(phase(corev1.PodFailed), ended("runner", 0, "Completed", "", 20*time.Second), ended("judge", 128, "StartError", shimErr, 25*time.Second),
				ended("collector", 0, "Completed", "", 30*time.Second)),
			want: "InfrastructureFailed", message: "container judge of pod screen-abcde could not start (StartError: " + shimErr + ")"},
		{name: "the runner container, nothing collected",
			run:  testutil.UnitRun(),
			pod:  makePod(phase(corev1.PodFailed), ended("runner", 128, "StartError", shimErr, 20*time.Second)),
			want: "InfrastructureFailed", message: "container runner of pod screen-abcde could not start (StartError: " + shimErr + ")"},
		{name: "a judge container the runtime could not run (ContainerCannotRun)",
			run:  testutil.UnitRun(),
			pod:  makePod(phase(corev1.PodFailed), ended("runner", 0, "Completed", "", 20*time.Second), ended("judge-1", 128, "ContainerCannotRun", "exec: no such file", 25*time.Second)),
			want: "InfrastructureFailed", message: "container judge-1 of pod screen-abcde could not start (ContainerCannotRun: exec: no such file)"},
		{name: "the runner exited 128 by itself: its own failure",
			run:  testutil.UnitRun(),
			pod:  makePod(phase(corev1.PodFailed), ended("runner", 128, "Error", "", 20*time.Second)),
			want: "RunnerFailed", message: "the runner container exited with code 128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(Observation{Run: tc.run, Job: failedJob, Pods: []corev1.Pod{tc.pod}, Now: t0.Add(time.Minute)}, options.Options{})
			if got.State != StateFailed || got.Reason != tc.want || !strings.Contains(got.Message, tc.message) {
				t.Errorf("got %s/%s: %s\nwant Failed/%s containing %q", got.State, got.Reason, got.Message, tc.want, tc.message)
			}
		})
	}
}
