package assess

import (
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

// A Job whose pod the API server rejects (Pod Security, ResourceQuota, a webhook) shows why at once and fails with
// PodRejected once the timeout has passed since the first rejection.
func TestClassifyPodRejected(t *testing.T) {
	const psa = `pods "screen-x" is forbidden: violates PodSecurity "restricted:latest": seLinuxOptions`
	const quota = `pods "screen-y" is forbidden: exceeded quota: none, requested: pods=1, used: pods=0, limited: pods=0`
	opts := options.Options{PodRejectedTimeout: 2 * time.Minute}
	tests := []struct {
		name     string
		failures []PodCreateFailure
		now      time.Duration
		want     Assessment
	}{
		{
			name: "no rejection: waiting for the pod",
			now:  10 * time.Second,
			want: Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, Message: "the Job started; waiting for its pod"},
		},
		{
			name:     "rejected: pending with the API's latest message",
			failures: []PodCreateFailure{{First: t0.Add(2 * time.Second), Message: psa}, {First: t0.Add(5 * time.Second), Message: quota}},
			now:      10 * time.Second,
			want: Assessment{State: StatePending, Reason: evalsv1alpha1.ReasonPending,
				Message: "the Job cannot create its pod (retrying): " + quota, RecheckAfter: PodRejectedRecheck},
		},
		{
			name:     "rejected past the timeout: PodRejected, the Job stopped",
			failures: []PodCreateFailure{{First: t0.Add(2 * time.Second), Message: psa}},
			now:      2*time.Minute + 3*time.Second,
			want: Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonPodRejected,
				Message: "the Job could not create its pod for 2m0s: " + psa, StopJob: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := makeJob(started)
			job.Spec.Suspend = ptr.To(false)
			got := Classify(Observation{Run: testutil.UnitRun(), Job: job, Now: t0.Add(tc.now), PodCreateFailures: tc.failures}, opts)
			got.Runner = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("assessment (-want +got):\n%s", diff)
			}
		})
	}
}

// Results the collector persisted stand when the Job is gone, weighed against the kubelet's recorded exit code.
func TestRecordedPod(t *testing.T) {
	run := testutil.UnitRun()
	if recordedPod(run) != nil {
		t.Errorf("a pod from no recorded facts")
	}
	run.Status.Runner = &evalsv1alpha1.RunnerStatus{PodName: "p-1", ExitCode: ptr.To[int32](7), Reason: "Error"}
	run.Status.Collection = &evalsv1alpha1.CollectionStatus{PodName: "p-1", Outcome: "Completed", Message: "collected the results of all 2 cases"}
	a, ok := FromCollection(run.Status.Collection, recordedPod(run))
	if !ok || a.Reason != evalsv1alpha1.ReasonRunnerFailed {
		t.Errorf("collection with a recorded exit code 7: %+v, want RunnerFailed", a)
	}
	run.Status.Runner.ExitCode = ptr.To[int32](0)
	if a, _ := FromCollection(run.Status.Collection, recordedPod(run)); a.Reason != evalsv1alpha1.ReasonCompleted {
		t.Errorf("collection with a recorded exit code 0: %+v, want Completed", a)
	}
}

// An evicted (drained, preempted) pod is replaced by the Job: whatever its runner and collector did, the run
// waits for the replacement instead of concluding from the disrupted pod.
func TestClassifyDisruptedPod(t *testing.T) {
	evicted := func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget,
			Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "runner",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 143, Reason: "Error"}}})
	}
	run := testutil.UnitRun()
	run.Status.Collection = &evalsv1alpha1.CollectionStatus{PodName: "screen-abcde", Outcome: "RunnerFailed", Message: "terminated"}
	got := Classify(Observation{Run: run, Job: makeJob(started), Pods: []corev1.Pod{makePod(phase(corev1.PodRunning), evicted)}, Now: t0.Add(time.Minute)}, options.Options{})
	want := Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning,
		Message: "pod screen-abcde was disrupted (EvictionByEvictionAPI: Eviction API: evicting); the Job replaces it"}
	got.Runner = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("assessment (-want +got):\n%s", diff)
	}
}

// A runner that outlives its own timeouts (the launcher subverted or stuck): the collector stops waiting and
// records RunnerTimedOut; the run is decided and the Job, whose runner still runs, stopped.
func TestClassifyRunnerOutlivedItsTimeouts(t *testing.T) {
	run := testutil.UnitRun()
	run.Status.Collection = &evalsv1alpha1.CollectionStatus{PodName: "screen-abcde", Outcome: evalsv1alpha1.OutcomeRunnerTimedOut,
		Message: "the runner container did not end within 130s (its timeouts plus a margin)"}
	running := func(p *corev1.Pod) {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "runner",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	}
	got := Classify(Observation{Run: run, Job: makeJob(started), Pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running)}, Now: t0.Add(3 * time.Minute)}, options.Options{})
	if got.State != StateFailed || got.Reason != evalsv1alpha1.ReasonRunnerTimedOut || !got.StopJob {
		t.Errorf("assessment %+v, want RunnerTimedOut with the Job stopped", got)
	}
}

// A pod being deleted (activeDeadlineSeconds, a user) is not the outcome, even with a collection for it: the
// Job's verdict (DeadlineExceeded) or its replacement decides.
func TestClassifyPodBeingDeleted(t *testing.T) {
	run := testutil.UnitRun()
	run.Status.Collection = &evalsv1alpha1.CollectionStatus{PodName: "screen-abcde", Outcome: evalsv1alpha1.OutcomeRunnerFailed, RunnerFinished: true,
		Message: "the launcher reports that the runner was stopped because the container was asked to terminate"}
	stopped := func(p *corev1.Pod) {
		p.DeletionTimestamp = ptr.To(at(time.Minute))
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "runner",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 143, Reason: "Error"}}})
	}
	got := Classify(Observation{Run: run, Job: makeJob(started), Pods: []corev1.Pod{makePod(phase(corev1.PodRunning), stopped)}, Now: t0.Add(time.Minute)}, options.Options{})
	if got.State.Terminal() {
		t.Errorf("assessment %+v: a pod being deleted decided the run", got)
	}
	failed := makeJob(started, jobCond(batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline"))
	got = Classify(Observation{Run: run, Job: failed, Pods: []corev1.Pod{makePod(phase(corev1.PodRunning), stopped)}, Now: t0.Add(time.Minute)}, options.Options{})
	if got.Reason != evalsv1alpha1.ReasonDeadlineExceeded {
		t.Errorf("assessment %+v, want DeadlineExceeded once the Job says so", got)
	}
}
