package controller

import (
	"testing"
	"time"

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

func waiting(container, reason string) podOpt {
	return func(p *corev1.Pod) {
		s := corev1.ContainerStatus{Name: container, Image: "img:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "pull failed"}}}
		if container == "runner" {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, s)
		} else {
			p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, s)
		}
	}
}

// terminated reports the container ended a minute after t0.
func terminated(container string, code int32, reason, msg string) podOpt {
	return func(p *corev1.Pod) {
		s := corev1.ContainerStatus{Name: container, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, Message: msg, FinishedAt: at(time.Minute)}}}
		if container == "runner" {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, s)
		} else {
			p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, s)
		}
	}
}

func collected(outcome, msg string) func(*evalsv1alpha1.EvalRun) {
	return func(r *evalsv1alpha1.EvalRun) {
		r.Status.Collection = &evalsv1alpha1.CollectionStatus{Outcome: outcome, Message: msg, RunnerFinished: true, RunnerExitCode: ptr.To[int32](1),
			StderrTail: "Traceback\n  boom", PodName: "screen-abcde"}
	}
}

func TestClassify(t *testing.T) {
	const minute = time.Minute
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
			run:  testRun(), job: makeJob(),
			want: Assessment{State: StatePending, Reason: "Pending", Message: "waiting for the Job to start"},
		},
		{
			name: "suspended by spec",
			run:  testRun(), job: makeJob(suspended),
			want: Assessment{State: StateQueued, Reason: "Queued", Message: "the Job is suspended by spec.suspend"},
		},
		{
			name: "waiting for kueue",
			run:  testRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.QueueName = "q" }), job: makeJob(suspended),
			want: Assessment{State: StateQueued, Reason: "Queued", Message: "waiting for Kueue to admit the Job in queue q"},
		},
		{
			name: "started, pod not seen yet",
			run:  testRun(), job: makeJob(started),
			want: Assessment{State: StateRunning, Reason: "Running", Message: "the Job started; waiting for its pod"},
		},
		{
			name: "pod running",
			run:  testRun(), job: makeJob(started), pods: []corev1.Pod{makePod(phase(corev1.PodRunning))},
			want: Assessment{State: StateRunning, Reason: "Running", Message: "pod screen-abcde is running", Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde"}},
		},
		{
			name: "unschedulable within the timeout",
			run:  testRun(), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(scheduled(corev1.ConditionFalse, "Unschedulable", time.Minute))},
			want: Assessment{State: StatePending, Reason: "Pending", Message: "pod screen-abcde is unschedulable: 0/1 nodes are available",
				RecheckAfter: 4 * minute, Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde"}},
		},
		{
			name: "unschedulable past the timeout",
			run:  testRun(), job: makeJob(started), now: 6 * minute,
			pods: []corev1.Pod{makePod(scheduled(corev1.ConditionFalse, "Unschedulable", time.Minute))},
			want: Assessment{State: StateFailed, Reason: "Unschedulable", StopJob: true,
				Message: "pod screen-abcde stayed unschedulable for 5m0s: 0/1 nodes are available", Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde"}},
		},
		{
			name: "runner image pull back-off within the timeout",
			run:  testRun(), job: makeJob(started), now: minute,
			pods: []corev1.Pod{makePod(scheduled(corev1.ConditionTrue, "", 2*time.Second), waiting("runner", "ImagePullBackOff"))},
			want: Assessment{State: StatePending, Reason: "Pending", Message: "container runner is waiting: ImagePullBackOff: pull failed",
				RecheckAfter: minute + 2*time.Second, Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", Reason: "ImagePullBackOff", Message: "pull failed"}},
		},
		{
			name: "runner image pull failing past the timeout",
			run:  testRun(), job: makeJob(started), now: 3 * minute,
			pods: []corev1.Pod{makePod(scheduled(corev1.ConditionTrue, "", 2*time.Second), waiting("runner", "ErrImagePull"))},
			want: Assessment{State: StateFailed, Reason: "ImagePullFailed", StopJob: true,
				Message: "container runner could not start within 2m0s: ErrImagePull: pull failed",
				Runner:  &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", Reason: "ErrImagePull", Message: "pull failed"}},
		},
		{
			name: "collector image name invalid fails at once",
			run:  testRun(), job: makeJob(started), now: time.Second,
			pods: []corev1.Pod{makePod(waiting("collector", "InvalidImageName"))},
			want: Assessment{State: StateFailed, Reason: "ImagePullFailed", StopJob: true,
				Message: "container collector cannot pull image img:1: InvalidImageName: pull failed", Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde"}},
		},
		{
			name: "runner cannot be created past the timeout",
			run:  testRun(), job: makeJob(started), now: 3 * minute,
			pods: []corev1.Pod{makePod(waiting("runner", "CreateContainerConfigError"))},
			want: Assessment{State: StateFailed, Reason: "RunnerFailed", StopJob: true,
				Message: "container runner could not start within 2m0s: CreateContainerConfigError: pull failed",
				Runner:  &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", Reason: "CreateContainerConfigError", Message: "pull failed"}},
		},
		{
			name: "runner ended, results pending",
			run:  testRun(), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "the runner ended; waiting for the collector's results",
				RecheckAfter: 4 * minute, Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](0), Reason: "Completed"}},
		},
		{
			name: "runner ended, results recorded, pod finishing",
			run:  testRun(collected("Completed", "")), job: makeJob(started), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "results are recorded; waiting for the pod to finish",
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](1), Reason: "Completed", Message: "Traceback\n  boom"}},
		},
		{
			name: "runner ended, no results past the results deadline",
			run:  testRun(), job: makeJob(started), now: 7 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateFailed, Reason: "ResultsNotReported", StopJob: true,
				Message: "the runner ended but no results arrived within the results deadline of 5m0s",
				Runner:  &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](0), Reason: "Completed"}},
		},
		{
			name: "complete with every result",
			run:  testRun(collected("Completed", "13 cases collected")), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodSucceeded), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateSucceeded, Reason: "Completed", Message: "13 cases collected",
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](1), Reason: "Completed", Message: "Traceback\n  boom"}},
		},
		{
			name: "complete, runner failed: stderr excerpt",
			run:  testRun(collected("RunnerFailed", "the runner exited with code 1")), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")),
			want: Assessment{State: StateFailed, Reason: "RunnerFailed", Message: "the runner exited with code 1; stderr: Traceback boom",
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](1), Message: "Traceback\n  boom"}},
		},
		{
			name: "complete, each collector outcome maps to its reason",
			run:  testRun(collected("MissingResults", "1 of 13 ids missing: case-013")), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")),
			want: Assessment{State: StateFailed, Reason: "MissingResults", Message: "1 of 13 ids missing: case-013",
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](1), Message: "Traceback\n  boom"}},
		},
		{
			name: "complete, runner OOM-killed inside the container",
			run:  testRun(collected("RunnerFailed", "killed by SIGKILL")), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodSucceeded), terminated("runner", 0, "OOMKilled", ""))},
			want: Assessment{State: StateFailed, Reason: "RunnerOOMKilled", Message: "the runner container ran out of memory (OOMKilled); raise target.resources.limits.memory",
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](1), Reason: "OOMKilled", Message: "Traceback\n  boom"}},
		},
		{
			name: "complete, unknown outcome",
			run:  testRun(collected("Exploded", "?")), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")),
			want: Assessment{State: StateFailed, Reason: "CollectorFailed", Message: `the collector reported an unknown outcome "Exploded": ?`,
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](1), Message: "Traceback\n  boom"}},
		},
		{
			name: "complete, status write lost: termination message",
			run:  testRun(), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodSucceeded), terminated("runner", 0, "Completed", ""),
				terminated("collector", 0, "Completed", `{"outcome":"InvalidOutput","message":"line 3: not JSON","total":13}`))},
			want: Assessment{State: StateFailed, Reason: "InvalidOutput",
				Message: "from the collector's termination message (its status write did not land): line 3: not JSON",
				Runner:  &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](0), Reason: "Completed"}},
		},
		{
			name: "complete, nothing reported yet",
			run:  testRun(), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")), now: 2 * minute,
			pods: []corev1.Pod{makePod(phase(corev1.PodSucceeded), terminated("runner", 0, "Completed", ""),
				terminated("collector", 0, "Completed", "not json"))},
			want: Assessment{State: StateCollecting, Reason: "Collecting", Message: "the Job completed; waiting for the collector's results", RecheckAfter: 4 * minute,
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](0), Reason: "Completed"}},
		},
		{
			name: "complete, nothing reported within the results deadline",
			run:  testRun(), job: makeJob(started, jobCond(batchv1.JobComplete, "", "")), now: 6*minute + time.Second,
			pods: []corev1.Pod{makePod(phase(corev1.PodSucceeded), terminated("runner", 0, "Completed", ""))},
			want: Assessment{State: StateFailed, Reason: "ResultsNotReported", Message: "the runner ended but no results arrived within the results deadline of 5m0s",
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](0), Reason: "Completed"}},
		},
		{
			name: "failed: deadline exceeded",
			run:  testRun(collected("RunnerFailed", "partial")), job: makeJob(started, jobCond(batchv1.JobFailed, "DeadlineExceeded", "Job was active longer than specified deadline")),
			want: Assessment{State: StateFailed, Reason: "DeadlineExceeded", Message: "the Job ran longer than activeDeadlineSeconds (600)",
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](1), Message: "Traceback\n  boom"}},
		},
		{
			name: "failed: runner container OOM-killed",
			run:  testRun(), job: makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodFailed), terminated("runner", 137, "OOMKilled", ""))},
			want: Assessment{State: StateFailed, Reason: "RunnerOOMKilled", Message: "the runner container ran out of memory (OOMKilled); raise target.resources.limits.memory",
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](137), Reason: "OOMKilled"}},
		},
		{
			name: "failed: healthcheck reported by the collector",
			run:  testRun(collected("HealthcheckFailed", "healthcheck exited 2: no model")), job: makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "")),
			want: Assessment{State: StateFailed, Reason: "HealthcheckFailed", Message: "healthcheck exited 2: no model",
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](1), Message: "Traceback\n  boom"}},
		},
		{
			name: "failed: launcher infrastructure failure",
			run:  testRun(), job: makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodFailed), terminated("runner", 70, "Error", "no /bin/sh in the image\n"))},
			want: Assessment{State: StateFailed, Reason: "RunnerFailed", Message: "the runner container exited with code 70 (the launcher failed): no /bin/sh in the image",
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](70), Reason: "Error", Message: "no /bin/sh in the image\n"}},
		},
		{
			name: "failed: collector crashed",
			run:  testRun(), job: makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "")),
			pods: []corev1.Pod{makePod(phase(corev1.PodFailed), terminated("collector", 2, "Error", "panic"))},
			want: Assessment{State: StateFailed, Reason: "CollectorFailed", Message: "the collector exited with code 2: panic", Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde"}},
		},
		{
			name: "failed: nothing else known",
			run:  testRun(), job: makeJob(started, jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")),
			want: Assessment{State: StateFailed, Reason: "RunnerFailed", Message: "the Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit"},
		},
		{
			name: "newest pod wins",
			run:  testRun(), job: makeJob(started),
			pods: []corev1.Pod{
				makePod(phase(corev1.PodRunning), func(p *corev1.Pod) { p.Name, p.CreationTimestamp = "screen-new", at(time.Hour) }),
				makePod(phase(corev1.PodFailed), terminated("runner", 137, "OOMKilled", "")),
			},
			want: Assessment{State: StateRunning, Reason: "Running", Message: "pod screen-new is running", Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-new"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(Observation{Run: tc.run, Job: tc.job, Pods: tc.pods, Now: t0.Add(tc.now)}, Options{})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Classify mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTruncateAndTail(t *testing.T) {
	cases := []struct {
		name, in string
		n        int
		head     string
		tail     string
	}{
		{name: "fits", in: "abc", n: 3, head: "abc", tail: "abc"},
		{name: "ascii", in: "abcdefgh", n: 6, head: "abc…", tail: "…fgh"},
		{name: "multibyte boundary", in: "ééééé", n: 7, head: "éé…", tail: "…éé"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := truncate(tc.in, tc.n); got != tc.head {
				t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.head)
			}
			if got := lastRunes(tc.in, tc.n); got != tc.tail {
				t.Errorf("lastRunes(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.tail)
			}
		})
	}
}
