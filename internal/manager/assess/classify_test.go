package assess

import (
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }

type jobOpt func(*batchv1.Job)

func makeJob(opts ...jobOpt) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "screen", Namespace: "team-a", CreationTimestamp: at(0)},
		Spec: batchv1.JobSpec{Suspend: ptr.To(false), ActiveDeadlineSeconds: ptr.To[int64](600)}}
	for _, o := range opts {
		o(j)
	}
	return j
}

func started(j *batchv1.Job) { j.Status.StartTime = ptr.To(at(time.Second)) }

func suspended(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }

func jobCond(t batchv1.JobConditionType, reason, msg string) jobOpt {
	return func(j *batchv1.Job) {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg})
	}
}

type podOpt func(*corev1.Pod)

func makePod(opts ...podOpt) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "screen-abcde", CreationTimestamp: at(time.Second)},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func scheduled(s corev1.ConditionStatus, reason string, since time.Duration) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: s, Reason: reason, Message: "0/1 nodes are available", LastTransitionTime: at(since)})
	}
}

// statusOf adds s where the kubelet reports the container: install among the init containers, the runner, the
// collector and the judges among the regular ones.
func statusOf(p *corev1.Pod, s corev1.ContainerStatus) {
	if s.Name == "install" {
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, s)
		return
	}
	p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, s)
}

func waiting(container, reason string) podOpt {
	return func(p *corev1.Pod) {
		statusOf(p, corev1.ContainerStatus{Name: container, Image: "img:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "pull failed"}}})
	}
}

func running(container string) podOpt {
	return func(p *corev1.Pod) {
		statusOf(p, corev1.ContainerStatus{Name: container, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(time.Second)}}})
	}
}

// crashLooping reports the container crashed (exit code 2) and the kubelet is about to restart it.
func crashLooping(container string) podOpt {
	return func(p *corev1.Pod) {
		statusOf(p, corev1.ContainerStatus{Name: container, RestartCount: 1,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error", Message: "panic: boom", FinishedAt: at(time.Minute)}}})
	}
}

// terminated reports the container ended a minute after t0.
func terminated(container string, code int32, reason, msg string) podOpt {
	return func(p *corev1.Pod) {
		statusOf(p, corev1.ContainerStatus{Name: container, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, Message: msg, FinishedAt: at(time.Minute)}}})
	}
}

func named(name string, created time.Duration) podOpt {
	return func(p *corev1.Pod) { p.Name, p.CreationTimestamp = name, at(created) }
}

// collected records the collector's collection for pod screen-abcde. The launcher's report in it claims the
// runner failed with code 1: it comes from the runner's reach, so it must never show up in status.runner.
func collected(outcome, msg string) func(*evalsv1alpha1.EvalRun) {
	return collectedFor("screen-abcde", outcome, msg, &evalsv1alpha1.LauncherReport{ExitCode: ptr.To[int32](1), StderrTail: "Traceback\n  boom"})
}

func collectedFor(podName, outcome, msg string, launcher *evalsv1alpha1.LauncherReport) func(*evalsv1alpha1.EvalRun) {
	return func(r *evalsv1alpha1.EvalRun) {
		r.Status.Collection = &evalsv1alpha1.CollectionStatus{Outcome: evalsv1alpha1.CollectionOutcome(outcome), Message: msg, RunnerFinished: true, Launcher: launcher, PodName: podName}
	}
}

func backoff(n int32) func(*evalsv1alpha1.EvalRun) {
	return func(r *evalsv1alpha1.EvalRun) { r.Spec.BackoffLimit = ptr.To(n) }
}

func TestClassify(t *testing.T) {
	const minute = time.Minute
	const oomMsg = "the runner container ran out of memory (OOMKilled); raise target.resources.limits.memory"
	// runnerSaid is status.runner as the kubelet reported it for pod screen-abcde.
	runnerSaid := func(code int32, reason, msg string) *evalsv1alpha1.RunnerStatus {
		return &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To(code), Reason: reason, Message: msg}
	}
	podOnly := &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde"}
	// liar is a launcher report claiming a clean run: it comes from inside the runner container.
	liar := &evalsv1alpha1.LauncherReport{ExitCode: ptr.To[int32](0), Invocations: 2, StderrTail: "all 2 cases passed"}
	cases := []struct {
		name string
		run  *evalsv1alpha1.EvalRun
		job  *batchv1.Job
		pods []corev1.Pod
		now  time.Duration
		want Assessment
	}{
		{
			name: "created, not started",
			run:  testutil.UnitRun(), job: makeJob(),
			want: Assessment{State: StatePending, Reason: "Pending", Message: "waiting for the Job to start"},
		},
		{
			name: "suspended by spec",
			run:  testutil.UnitRun(), job: makeJob(suspended),
			want: Assessment{State: StateQueued, Reason: "Queued", Message: "the Job is suspended by spec.suspend"},
		},
		{
			name: "waiting for kueue",
			run:  testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.QueueName = "q" }), job: makeJob(suspended),
			want: Assessment{State: StateQueued, Reason: "Queued", Message: "waiting for Kueue to admit the Job in queue q"},
		},
		{
			name: "started, pod not seen yet",
			run:  testutil.UnitRun(), job: makeJob(started),
			want: Assessment{State: StateRunning, Reason: "Running", Message: "the Job started; waiting for its pod"},
		},
		{
			name: "pod running",
			run:  testutil.UnitRun(), job: makeJob(started), pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), running("runner"))},
			want: Assessment{State: StateRunning, Reason: "Running", Message: "pod screen-abcde is running", Runner: podOnly},
		},
		{
			name: "unschedulable within the timeout",
			run:  testutil.UnitRun(), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(scheduled(corev1.ConditionFalse, "Unschedulable", time.Minute))},
			want: Assessment{State: StatePending, Reason: "Pending", Message: "pod screen-abcde is unschedulable: 0/1 nodes are available",
				RecheckAfter: 4 * minute, Runner: podOnly},
		},
		{
			name: "unschedulable past the timeout",
			run:  testutil.UnitRun(), job: makeJob(started), now: 6 * minute,
			pods: []corev1.Pod{makePod(scheduled(corev1.ConditionFalse, "Unschedulable", time.Minute))},
			want: Assessment{State: StateFailed, Reason: "Unschedulable", StopJob: true,
				Message: "pod screen-abcde stayed unschedulable for 5m0s: 0/1 nodes are available", Runner: podOnly},
		},
		{
			name: "runner image pull back-off within the timeout",
			run:  testutil.UnitRun(), job: makeJob(started), now: minute,
			pods: []corev1.Pod{makePod(scheduled(corev1.ConditionTrue, "", 2*time.Second), waiting("runner", "ImagePullBackOff"))},
			want: Assessment{State: StatePending, Reason: "Pending", Message: "container runner is waiting: ImagePullBackOff: pull failed",
				RecheckAfter: minute + 2*time.Second, Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", Reason: "ImagePullBackOff", Message: "pull failed"}},
		},
		{
			name: "runner image pull failing past the timeout",
			run:  testutil.UnitRun(), job: makeJob(started), now: 3 * minute,
			pods: []corev1.Pod{makePod(scheduled(corev1.ConditionTrue, "", 2*time.Second), waiting("runner", "ErrImagePull"))},
			want: Assessment{State: StateFailed, Reason: "ImagePullFailed", StopJob: true,
				Message: "container runner could not start within 2m0s: ErrImagePull: pull failed",
				Runner:  &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", Reason: "ErrImagePull", Message: "pull failed"}},
		},
		{
			name: "judge image pull failing past the timeout",
			run:  testutil.UnitRun(), job: makeJob(started), now: 3 * minute,
			pods: []corev1.Pod{makePod(scheduled(corev1.ConditionTrue, "", 2*time.Second), running("collector"), running("runner"), waiting("judge", "ErrImagePull"))},
			want: Assessment{State: StateFailed, Reason: "ImagePullFailed", StopJob: true,
				Message: "container judge could not start within 2m0s: ErrImagePull: pull failed", Runner: podOnly},
		},
		{
			name: "collector image name invalid fails at once",
			run:  testutil.UnitRun(), job: makeJob(started), now: time.Second,
			pods: []corev1.Pod{makePod(waiting("collector", "InvalidImageName"))},
			want: Assessment{State: StateFailed, Reason: "ImagePullFailed", StopJob: true,
				Message: "container collector cannot pull image img:1: InvalidImageName: pull failed", Runner: podOnly},
		},
		{
			name: "runner cannot be configured past the timeout: InvalidContainerConfig, never RunnerFailed",
			run:  testutil.UnitRun(), job: makeJob(started), now: 3 * minute,
			pods: []corev1.Pod{makePod(waiting("runner", "CreateContainerConfigError"))},
			want: Assessment{State: StateFailed, Reason: "InvalidContainerConfig", StopJob: true,
				Message: "container runner of pod screen-abcde cannot be configured (CreateContainerConfigError: pull failed), for 2m0s",
				Runner:  &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", Reason: "CreateContainerConfigError", Message: "pull failed"}},
		},
		{
			name: "runner ended, results pending",
			run:  testutil.UnitRun(), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "the runner ended; waiting for the collector's results",
				RecheckAfter: 4 * minute, Runner: runnerSaid(0, "Completed", "")},
		},
		{
			name: "runner ended, no results past the results deadline",
			run:  testutil.UnitRun(), job: makeJob(started), now: 7 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateFailed, Reason: "ResultsNotReported", StopJob: true,
				Message: "the runner ended but no results arrived within the results deadline of 5m0s", Runner: runnerSaid(0, "Completed", "")},
		},

		// Early conclusion: the runner container ended (kubelet) and this pod's collection is recorded; the Job is
		// still active.
		{
			name: "early: runner exited 0 with this pod's results: Succeeded while the Job is still active",
			run:  testutil.UnitRun(collected("Completed", "2 cases collected")), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateSucceeded, Reason: "Completed", Message: "2 cases collected", Runner: runnerSaid(0, "Completed", "")},
		},
		{
			name: "early: runner exited 0, retries allowed: nothing to retry, concluded",
			run:  testutil.UnitRun(collected("Completed", ""), backoff(2)), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateSucceeded, Reason: "Completed", Message: "every result was collected", Runner: runnerSaid(0, "Completed", "")},
		},
		{
			name: "early: runner exited 3 with retries left: wait for the Job to retry or fail",
			run:  testutil.UnitRun(collected("Completed", "2 cases collected"), backoff(2)), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 3, "Error", ""))},
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "results are recorded; waiting for the Job to retry or fail",
				Runner: runnerSaid(3, "Error", "")},
		},
		{
			name: "early: a failure outcome reported with the runner at exit 0 stands, and stops the Job",
			run:  testutil.UnitRun(collected("MissingResults", "1 of 2 ids missing: case-002")), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateFailed, Reason: "MissingResults", Message: "1 of 2 ids missing: case-002",
				Runner: runnerSaid(0, "Completed", "")},
		},
		{
			name: "not early: this pod's collection while the kubelet still runs the runner",
			run:  testutil.UnitRun(collected("Completed", "2 cases collected")), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), running("runner"))},
			want: Assessment{State: StateRunning, Reason: "Running", Message: "pod screen-abcde is running", Runner: podOnly},
		},

		// A hostile runner: its output, its launcher report and its termination message are its own; the exit
		// code and OOM kill the kubelet reports are not.
		{
			name: "hostile: collection Completed but the kubelet says the runner exited 7: RunnerFailed, concluded early",
			run:  testutil.UnitRun(collectedFor("screen-abcde", "Completed", "2 cases collected", liar)), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 7, "Error", ""))},
			want: Assessment{State: StateFailed, Reason: "RunnerFailed",
				Message: "the runner container exited with code 7 (kubelet); collected: 2 cases collected", Runner: runnerSaid(7, "Error", "")},
		},
		{
			name: "hostile: collection Completed, Job failed, the kubelet says the runner exited 7: RunnerFailed",
			run:  testutil.UnitRun(collectedFor("screen-abcde", "Completed", "2 cases collected", liar)),
			job:  makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")),
			pods: []corev1.Pod{makePod(phase(corev1.PodFailed), terminated("collector", 0, "Completed", ""), terminated("runner", 7, "Error", ""))},
			want: Assessment{State: StateFailed, Reason: "RunnerFailed",
				Message: "the runner container exited with code 7 (kubelet); collected: 2 cases collected", Runner: runnerSaid(7, "Error", "")},
		},
		{
			name: "hostile: a launcher report and termination message claiming success cannot hide the kubelet's exit code",
			run:  testutil.UnitRun(collectedFor("screen-abcde", "InvalidOutput", "line 2: not JSON", liar)), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 1, "Error", "all 2 cases passed\n"))},
			want: Assessment{State: StateFailed, Reason: "RunnerFailed",
				Message: "the runner container exited with code 1 (kubelet): all 2 cases passed; collected: line 2: not JSON",
				Runner:  runnerSaid(1, "Error", "all 2 cases passed")},
		},
		{
			name: "hostile: missing results and a non-zero exit: RunnerFailed, not MissingResults",
			run:  testutil.UnitRun(collected("MissingResults", "1 of 2 ids missing: case-002")), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 2, "Error", ""))},
			want: Assessment{State: StateFailed, Reason: "RunnerFailed",
				Message: "the runner container exited with code 2 (kubelet); collected: 1 of 2 ids missing: case-002", Runner: runnerSaid(2, "Error", "")},
		},
		{
			name: "hostile: the launcher's exit code never reaches status.runner",
			run: testutil.UnitRun(collectedFor("screen-abcde", "RunnerFailed", "the runner exited with code 2",
				&evalsv1alpha1.LauncherReport{ExitCode: ptr.To[int32](2), Signal: "SIGSEGV", StderrTail: "Traceback\n  boom"})),
			job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateFailed, Reason: "RunnerFailed",
				Message: "the runner exited with code 2; stderr: Traceback boom", Runner: runnerSaid(0, "Completed", "")},
		},
		{
			name: "hostile: the runner's termination message mimics the collector's: ignored",
			run:  testutil.UnitRun(), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"),
				terminated("runner", 0, "Completed", `{"outcome":"Completed","message":"all good","total":2}`))},
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "the runner ended; waiting for the collector's results", RecheckAfter: 4 * minute,
				Runner: runnerSaid(0, "Completed", `{"outcome":"Completed","message":"all good","total":2}`)},
		},
		{
			name: "launcher-reported timeout stands over the kubelet's exit code",
			run:  testutil.UnitRun(collected("RunnerTimedOut", "case-002 ran past 30s")), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 124, "Error", ""))},
			want: Assessment{State: StateFailed, Reason: "RunnerTimedOut", Message: "case-002 ran past 30s", Runner: runnerSaid(124, "Error", "")},
		},
		{
			name: "launcher-reported healthcheck failure stands over the kubelet's exit code",
			run:  testutil.UnitRun(collected("HealthcheckFailed", "healthcheck exited 3: no model")), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 3, "Error", ""))},
			want: Assessment{State: StateFailed, Reason: "HealthcheckFailed", Message: "healthcheck exited 3: no model", Runner: runnerSaid(3, "Error", "")},
		},
		{
			name: "hostile: OOM-killed with a Completed collection: RunnerOOMKilled, concluded early",
			run:  testutil.UnitRun(collected("Completed", "2 cases collected")), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 137, "OOMKilled", ""))},
			want: Assessment{State: StateFailed, Reason: "RunnerOOMKilled", Message: oomMsg, Runner: runnerSaid(137, "OOMKilled", "")},
		},
		{
			name: "OOM-killed wins over a launcher-reported timeout",
			run:  testutil.UnitRun(collected("RunnerTimedOut", "case-002 ran past 30s")),
			job:  makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodFailed), terminated("collector", 0, "Completed", ""), terminated("runner", 137, "OOMKilled", ""))},
			want: Assessment{State: StateFailed, Reason: "RunnerOOMKilled", Message: oomMsg, Runner: runnerSaid(137, "OOMKilled", "")},
		},

		// A collection counts only for the pod it names.
		{
			name: "an older pod's collection is ignored for the newest pod (Job active)",
			run:  testutil.UnitRun(collectedFor("screen-old", "Completed", "2 cases collected", nil), backoff(1)), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{
				makePod(named("screen-old", time.Second), phase(corev1.PodFailed), terminated("collector", 0, "Completed", ""), terminated("runner", 3, "Error", "")),
				makePod(named("screen-new", 30*time.Second), phase(corev1.PodRunning), running("collector"), terminated("runner", 0, "Completed", "")),
			},
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "the runner ended; waiting for the collector's results", RecheckAfter: 4 * minute,
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-new", ExitCode: ptr.To[int32](0), Reason: "Completed"}},
		},
		{
			name: "an older pod's collection is ignored for the newest pod (Job complete)",
			run:  testutil.UnitRun(collectedFor("screen-old", "Completed", "2 cases collected", nil), backoff(1)),
			job:  makeJob(started, jobCond(batchv1.JobComplete, "", "")), now: 2 * minute,
			pods: []corev1.Pod{
				makePod(named("screen-new", 30*time.Second), phase(corev1.PodSucceeded), terminated("runner", 0, "Completed", "")),
				makePod(named("screen-old", time.Second), phase(corev1.PodFailed), terminated("collector", 0, "Completed", ""), terminated("runner", 3, "Error", "")),
			},
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "the Job completed; waiting for the collector's results", RecheckAfter: 4 * minute,
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-new", ExitCode: ptr.To[int32](0), Reason: "Completed"}},
		},
		{
			name: "an older pod's failure does not fail the newest pod",
			run:  testutil.UnitRun(collectedFor("screen-old", "RunnerFailed", "the runner exited with code 3", nil), backoff(1)), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{
				makePod(named("screen-old", time.Second), phase(corev1.PodFailed), terminated("collector", 0, "Completed", ""), terminated("runner", 3, "Error", "")),
				makePod(named("screen-new", 30*time.Second), phase(corev1.PodRunning), running("collector"), running("runner")),
			},
			want: Assessment{State: StateRunning, Reason: "Running", Message: "pod screen-new is running", Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-new"}},
		},

		// The collector ended and the pod finished without a collection.
		{
			name: "collector failed while the pod runs: the kubelet restarts it (restartPolicy OnFailure), no verdict yet",
			run:  testutil.UnitRun(), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), terminated("collector", 1, "Error", "panic: nil map\n"), running("runner"))},
			want: Assessment{State: StateRunning, Reason: "Running", Message: "pod screen-abcde is running", Runner: podOnly},
		},
		{
			name: "Job failed, collector terminated without a collection: CollectorFailed",
			run:  testutil.UnitRun(), job: makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodFailed), terminated("collector", 1, "Error", "panic: nil map\n"), running("runner"))},
			want: Assessment{State: StateFailed, Reason: "CollectorFailed",
				Message: "the collector exited with code 1: panic: nil map", Runner: podOnly},
		},
		{
			name: "collector terminated, its only collection names an older pod: CollectorFailed",
			run:  testutil.UnitRun(collectedFor("screen-old", "Completed", "2 cases collected", nil), backoff(1)), job: makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")), now: 2 * minute,
			pods: []corev1.Pod{
				makePod(named("screen-old", time.Second), phase(corev1.PodFailed), terminated("collector", 0, "Completed", ""), terminated("runner", 3, "Error", "")),
				makePod(named("screen-new", 30*time.Second), phase(corev1.PodSucceeded), terminated("collector", 137, "OOMKilled", "out of memory"), terminated("runner", 0, "Completed", "")),
			},
			want: Assessment{State: StateFailed, Reason: "CollectorFailed",
				Message: "the collector exited with code 137: out of memory",
				Runner:  &evalsv1alpha1.RunnerStatus{PodName: "screen-new", ExitCode: ptr.To[int32](0), Reason: "Completed"}},
		},
		{
			name: "collector terminated with its termination message: the run ends from it",
			run:  testutil.UnitRun(), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodSucceeded), terminated("runner", 0, "Completed", ""),
				terminated("collector", 1, "Error", `{"outcome":"MissingResults","message":"1 of 2 ids missing: case-002","total":2}`))},
			want: Assessment{State: StateFailed, Reason: "MissingResults",
				Message: "from the collector's termination message (its status write did not land): 1 of 2 ids missing: case-002",
				Runner:  runnerSaid(0, "Completed", "")},
		},

		{
			name: "collector crash-looping after the runner ended: the kubelet restarts it, wait within the deadline",
			run:  testutil.UnitRun(), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), crashLooping("collector"), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "the runner ended; waiting for the collector's results", RecheckAfter: 4 * minute,
				Runner: runnerSaid(0, "Completed", "")},
		},
		{
			name: "collector crash-looping past the results deadline: ResultsNotReported",
			run:  testutil.UnitRun(), job: makeJob(started), now: 7 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), crashLooping("collector"), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateFailed, Reason: "ResultsNotReported", StopJob: true,
				Message: "the runner ended but no results arrived within the results deadline of 5m0s", Runner: runnerSaid(0, "Completed", "")},
		},
		{
			name: "the Job's collection deadline replaces the results deadline",
			run:  testutil.UnitRun(), now: 7 * minute,
			job: makeJob(started, func(j *batchv1.Job) {
				j.Annotations = map[string]string{"evals.evalrun.io/collection-deadline-seconds": "450"}
			}),
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 0, "Completed", ""), running("judge"))},
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "the runner ended; waiting for the collector's results", RecheckAfter: 90 * time.Second, // ended at 1m, 450s deadline
				Runner: runnerSaid(0, "Completed", "")},
		},
		{
			name: "a hostile or broken collection deadline annotation falls back to the results deadline",
			run:  testutil.UnitRun(), now: 2 * minute,
			job: makeJob(started, func(j *batchv1.Job) {
				j.Annotations = map[string]string{"evals.evalrun.io/collection-deadline-seconds": "-5"}
			}),
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("collector"), terminated("runner", 0, "Completed", ""), running("judge"))},
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "the runner ended; waiting for the collector's results", RecheckAfter: 4 * minute,
				Runner: runnerSaid(0, "Completed", "")},
		},

		// The Job finished.
		{
			name: "complete with every result",
			run:  testutil.UnitRun(collected("Completed", "13 cases collected")), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodSucceeded), terminated("collector", 0, "Completed", ""), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateSucceeded, Reason: "Completed", Message: "13 cases collected", Runner: runnerSaid(0, "Completed", "")},
		},
		{
			name: "complete, pods gone, runner failed: the collection stands, with the stderr excerpt",
			run:  testutil.UnitRun(collected("RunnerFailed", "the runner exited with code 1")), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")),
			want: Assessment{State: StateFailed, Reason: "RunnerFailed", Message: "the runner exited with code 1; stderr: Traceback boom"},
		},
		{
			name: "complete, each collector outcome maps to its reason",
			run:  testutil.UnitRun(collected("MissingResults", "1 of 13 ids missing: case-013")), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")),
			want: Assessment{State: StateFailed, Reason: "MissingResults", Message: "1 of 13 ids missing: case-013"},
		},
		{
			name: "complete, runner OOM-killed inside the container",
			run:  testutil.UnitRun(collected("RunnerFailed", "killed by SIGKILL")), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodSucceeded), terminated("runner", 0, "OOMKilled", ""))},
			want: Assessment{State: StateFailed, Reason: "RunnerOOMKilled", Message: oomMsg, Runner: runnerSaid(0, "OOMKilled", "")},
		},
		{
			name: "complete, unknown outcome",
			run:  testutil.UnitRun(collected("Exploded", "?")), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")),
			want: Assessment{State: StateFailed, Reason: "CollectorFailed", Message: `the collector reported an unknown outcome "Exploded": ?`},
		},
		{
			name: "complete, status write lost: termination message",
			run:  testutil.UnitRun(), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodSucceeded), terminated("runner", 0, "Completed", ""),
				terminated("collector", 0, "Completed", `{"outcome":"InvalidOutput","message":"line 3: not JSON","total":13}`))},
			want: Assessment{State: StateFailed, Reason: "InvalidOutput",
				Message: "from the collector's termination message (its status write did not land): line 3: not JSON",
				Runner:  runnerSaid(0, "Completed", "")},
		},
		{
			name: "complete, nothing reported yet",
			run:  testutil.UnitRun(), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodSucceeded), terminated("runner", 0, "Completed", ""),
				terminated("collector", 0, "Completed", "not json"))},
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "the Job completed; waiting for the collector's results", RecheckAfter: 4 * minute,
				Runner: runnerSaid(0, "Completed", "")},
		},
		{
			name: "complete, nothing reported within the results deadline",
			run:  testutil.UnitRun(), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")), now: 6*minute + time.Second,
			pods: []corev1.Pod{makePod(phase(corev1.PodSucceeded), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateFailed, Reason: "ResultsNotReported", Message: "the runner ended but no results arrived within the results deadline of 5m0s",
				Runner: runnerSaid(0, "Completed", "")},
		},
		{
			name: "failed: deadline exceeded",
			run:  testutil.UnitRun(collected("RunnerFailed", "partial"), func(r *evalsv1alpha1.EvalRun) { r.Spec.ActiveDeadlineSeconds = ptr.To[int64](600) }),
			job:  makeJob(started, jobCond(batchv1.JobFailed, "DeadlineExceeded", "Job was active longer than specified deadline")),
			want: Assessment{State: StateFailed, Reason: "DeadlineExceeded", Message: "the Job ran longer than spec.activeDeadlineSeconds (600)"},
		},
		{
			name: "failed: the manager's default deadline exceeded (no timeouts in the spec)",
			run:  testutil.UnitRun(), job: makeJob(started, jobCond(batchv1.JobFailed, "DeadlineExceeded", "Job was active longer than specified deadline")),
			want: Assessment{State: StateFailed, Reason: "DeadlineExceeded",
				Message: "the Job ran longer than the manager's default deadline (--default-active-deadline-seconds=600; set spec.activeDeadlineSeconds to change it)"},
		},
		{
			name: "failed: runner container OOM-killed",
			run:  testutil.UnitRun(), job: makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodFailed), terminated("runner", 137, "OOMKilled", ""))},
			want: Assessment{State: StateFailed, Reason: "RunnerOOMKilled", Message: oomMsg, Runner: runnerSaid(137, "OOMKilled", "")},
		},
		{
			name: "failed: healthcheck reported by the collector",
			run:  testutil.UnitRun(collected("HealthcheckFailed", "healthcheck exited 2: no model")), job: makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "")),
			want: Assessment{State: StateFailed, Reason: "HealthcheckFailed", Message: "healthcheck exited 2: no model"},
		},
		{
			name: "failed: launcher infrastructure failure",
			run:  testutil.UnitRun(), job: makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodFailed), terminated("runner", 70, "Error", "no /bin/sh in the image\n"))},
			want: Assessment{State: StateFailed, Reason: "RunnerFailed", Message: "the runner container exited with code 70 (the launcher failed): no /bin/sh in the image",
				Runner: runnerSaid(70, "Error", "no /bin/sh in the image")},
		},
		{
			name: "failed: collector crashed",
			run:  testutil.UnitRun(), job: makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodFailed), terminated("collector", 2, "Error", "panic"))},
			want: Assessment{State: StateFailed, Reason: "CollectorFailed", Message: "the collector exited with code 2: panic", Runner: podOnly},
		},
		{
			name: "failed: nothing else known",
			run:  testutil.UnitRun(), job: makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")),
			want: Assessment{State: StateFailed, Reason: "RunnerFailed", Message: "the Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit"},
		},
		{
			name: "newest pod wins",
			run:  testutil.UnitRun(), job: makeJob(started),
			pods: []corev1.Pod{
				makePod(phase(corev1.PodRunning), named("screen-new", time.Hour)),
				makePod(phase(corev1.PodFailed), terminated("runner", 137, "OOMKilled", "")),
			},
			want: Assessment{State: StateRunning, Reason: "Running", Message: "pod screen-new is running", Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-new"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(Observation{Run: tc.run, Job: tc.job, Pods: tc.pods, Now: t0.Add(tc.now)}, options.Options{})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Classify mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// withImageID sets the kubelet's imageID on the pod's status of container.
func withImageID(container, imageID string) podOpt {
	return func(p *corev1.Pod) {
		for _, list := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
			for i := range list {
				if list[i].Name == container {
					list[i].ImageID = imageID
				}
			}
		}
	}
}

// TestRunnerImageID checks that status.runner.imageID is the runner container's imageID as the kubelet reported
// it (never another container's), kept when the pod is gone, and that each shard reports its own pod's.
func TestRunnerImageID(t *testing.T) {
	const digest = "registry.example/evals/runner@sha256:4f0c0b4c0e4f3bd4b8f7bb4c35a1d0f9a3d6a2d55e7c1d1e0f4d1b8e5a5e2c11"
	const other = "registry.example/evals/runner@sha256:0000000000000000000000000000000000000000000000000000000000000001"
	cases := []struct {
		name string
		pod  *corev1.Pod
		want *evalsv1alpha1.RunnerStatus
	}{
		{name: "no pod", want: nil},
		{name: "runner not started: no imageID", pod: ptr.To(makePod(waiting("runner", "ContainerCreating"))),
			want: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", Reason: "ContainerCreating", Message: "pull failed"}},
		{name: "running runner", pod: ptr.To(makePod(phase(corev1.PodRunning), running("runner"), withImageID("runner", digest))),
			want: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ImageID: ptr.To(digest)}},
		{name: "terminated runner, the judge's image is not the runner's",
			pod: ptr.To(makePod(terminated("runner", 0, "Completed", ""), withImageID("runner", digest),
				terminated("judge", 0, "Completed", ""), withImageID("judge", other))),
			want: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](0), Reason: "Completed", ImageID: ptr.To(digest)}},
		{name: "an imageID over the bound is left out, never cut",
			pod:  ptr.To(makePod(running("runner"), withImageID("runner", "registry.example/"+strings.Repeat("a", 600)+"@sha256:00"))),
			want: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, runnerFacts(tc.pod)); diff != "" {
				t.Errorf("runnerFacts (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("kept from status.runner once the pod is gone", func(t *testing.T) {
		run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
			r.Status.Runner = &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](0), Reason: "Completed", ImageID: ptr.To(digest)}
		})
		if diff := cmp.Diff(run.Status.Runner, runnerFacts(recordedPod(run))); diff != "" {
			t.Errorf("runnerFacts(recordedPod) (-want +got):\n%s", diff)
		}
	})

	t.Run("through Classify", func(t *testing.T) {
		pod := makePod(phase(corev1.PodRunning), running("runner"), withImageID("runner", digest))
		got := Classify(Observation{Run: testutil.UnitRun(), Job: makeJob(started), Pods: []corev1.Pod{pod}, Now: t0}, options.Options{})
		if got.Runner == nil || ptr.Deref(got.Runner.ImageID, "") != digest {
			t.Errorf("Classify runner = %+v, want imageID %s", got.Runner, digest)
		}
	})

	t.Run("each shard reports its own pod's", func(t *testing.T) {
		shards := []Assessment{
			{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-0-a", ImageID: ptr.To(digest)}},
			{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-1-b", ImageID: ptr.To(other)}},
			{State: StatePending, Reason: evalsv1alpha1.ReasonPending},
		}
		got := shardStatuses(shards, ShardObservation{Shards: 3, Cases: 6})
		var ids []string
		for _, s := range got {
			ids = append(ids, s.PodName+"="+ptr.Deref(s.ImageID, ""))
		}
		if diff := cmp.Diff([]string{"screen-0-a=" + digest, "screen-1-b=" + other, "="}, ids); diff != "" {
			t.Errorf("shard imageIDs (-want +got):\n%s", diff)
		}
	})
}
