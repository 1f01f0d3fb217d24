package assess

import (
	"fmt"
	"strconv"
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

// kubeletEvicted is a pod as the kubelet's eviction manager leaves it after a local-storage eviction (v1.37:
// phase Failed, reason Evicted, the message, no DisruptionTarget condition); its containers were killed.
func kubeletEvicted(msg string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", msg
	}
}

// disruptedBy marks the pod DisruptionTarget as the API server, a controller or the kubelet does.
func disruptedBy(reason string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget,
			Status: corev1.ConditionTrue, Reason: reason, Message: "taken away"})
	}
}

// ignoredFailures sets the Job controller's count of the index's earlier ignored (disrupted) pods.
func ignoredFailures(n int) podOpt {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(n)
	}
}

func TestStorageEviction(t *testing.T) {
	cases := []struct {
		name string
		pod  corev1.Pod
		want *StorageEviction
	}{
		{name: "emptyDir over its sizeLimit",
			pod:  makePod(kubeletEvicted(`Usage of EmptyDir volume "out" exceeds the limit "32Mi". `)),
			want: &StorageEviction{Limit: StorageLimitEmptyDir, Name: "out", Quantity: "32Mi", Pod: "screen-abcde"}},
		{name: "container over its ephemeral-storage limit",
			pod:  makePod(kubeletEvicted(`Container runner exceeded its local ephemeral storage limit "1Gi". `)),
			want: &StorageEviction{Limit: StorageLimitContainer, Name: "runner", Quantity: "1Gi", Pod: "screen-abcde"}},
		{name: "pod over the sum of its containers' limits",
			pod:  makePod(kubeletEvicted(`Pod ephemeral local storage usage exceeds the total limit of containers 1280Mi. `)),
			want: &StorageEviction{Limit: StorageLimitPod, Quantity: "1280Mi", Pod: "screen-abcde"}},
		{name: "node pressure is a disruption, not the pod's limit",
			pod: makePod(kubeletEvicted(`The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 10Mi. `),
				disruptedBy(corev1.PodReasonTerminationByKubelet))},
		{name: "a runner cannot claim it: the message must be the kubelet's, on an evicted pod",
			pod: makePod(phase(corev1.PodFailed), func(p *corev1.Pod) { p.Status.Message = `Usage of EmptyDir volume "out" exceeds the limit "32Mi". ` })},
		{name: "running pod", pod: makePod(phase(corev1.PodRunning))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := storageEviction(&tc.pod)
			if (tc.want != nil) != ok {
				t.Fatalf("storageEviction = %+v, %v; want %+v", got, ok, tc.want)
			}
			if tc.want != nil {
				if diff := cmp.Diff(*tc.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestClassifyEndsEveryRun: a runner that fills its output volume ends the run with StorageLimitExceeded, however
// the Job reacts (failed at once with backoffLimit 0, or a replacement started with a backoff limit, which is
// stopped); disruptions replace the pod at most MaxDisruptionRetries times, then the run ends and the Job is
// stopped.
func TestClassifyEndsEveryRun(t *testing.T) {
	outFull := `Usage of EmptyDir volume "out" exceeds the limit "32Mi". `
	outMsg := "the kubelet evicted pod screen-abcde: the runner's output volume \"out\" grew past its sizeLimit 32Mi; raise target.resources.limits.ephemeral-storage, which sizes it"
	capMsg := func(n int, pod string) string {
		return fmt.Sprintf("pods were taken away %d times (evicted, drained, preempted, lost with their node, or replaced after an infrastructure failure; the last: %s), more than the 3 replacements allowed", n, pod)
	}
	killed := terminated("runner", 137, "Error", "")
	cases := []struct {
		name string
		run  *evalsv1alpha1.EvalRun
		job  *batchv1.Job
		pods []corev1.Pod
		want Assessment
	}{
		{
			name: "out over its sizeLimit, the Job failed (backoffLimit 0): StorageLimitExceeded, not RunnerFailed",
			run:  testutil.UnitRun(), job: makeJob(started, jobCond(batchv1.JobFailed, "FailedIndexes", "Job has failed indexes")),
			pods: []corev1.Pod{makePod(kubeletEvicted(outFull), killed)},
			want: Assessment{State: StateFailed, Reason: "StorageLimitExceeded", Message: outMsg,
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](137), Reason: "Error"}},
		},
		{
			name: "out over its sizeLimit before the Job noticed: decided, the Job left to fail by itself",
			run:  testutil.UnitRun(), job: makeJob(started),
			pods: []corev1.Pod{makePod(kubeletEvicted(outFull), killed)},
			want: Assessment{State: StateFailed, Reason: "StorageLimitExceeded", Message: outMsg,
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: ptr.To[int32](137), Reason: "Error"}},
		},
		{
			name: "with a backoff limit the Job started a replacement: still decided by the evicted pod, the Job stopped",
			run:  testutil.UnitRun(backoff(2)), job: makeJob(started),
			pods: []corev1.Pod{makePod(kubeletEvicted(outFull), killed), makePod(named("screen-new", time.Minute), phase(corev1.PodRunning), running("runner"))},
			want: Assessment{State: StateFailed, Reason: "StorageLimitExceeded", Message: outMsg, StopJob: true,
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-new"}},
		},
		{
			name: "third disruption: replaced",
			run:  testutil.UnitRun(), job: makeJob(started),
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), ignoredFailures(2), disruptedBy("EvictionByEvictionAPI"))},
			want: Assessment{State: StateRunning, Reason: "Running", Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde"},
				Message: "pod screen-abcde was disrupted (EvictionByEvictionAPI: taken away); the Job replaces it"},
		},
		{
			name: "fourth disruption: DisruptionLimitExceeded, the Job stopped",
			run:  testutil.UnitRun(), job: makeJob(started),
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), running("runner"), ignoredFailures(3), disruptedBy(corev1.PodReasonTerminationByKubelet))},
			want: Assessment{State: StateFailed, Reason: "DisruptionLimitExceeded", Message: capMsg(4, "screen-abcde"), StopJob: true,
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde"}},
		},
		{
			name: "the fourth disrupted pod is gone: its replacement carries the count",
			run:  testutil.UnitRun(), job: makeJob(started),
			pods: []corev1.Pod{makePod(named("screen-new", time.Minute), ignoredFailures(4))},
			want: Assessment{State: StateFailed, Reason: "DisruptionLimitExceeded", Message: capMsg(4, "screen-new"), StopJob: true,
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-new"}},
		},
		{
			name: "a count the runner cannot reach: a non-number is no disruption",
			run:  testutil.UnitRun(), job: makeJob(started),
			pods: []corev1.Pod{makePod(phase(corev1.PodRunning), func(p *corev1.Pod) {
				p.Annotations = map[string]string{batchv1.JobIndexIgnoredFailureCountAnnotation: "many"}
			})},
			want: Assessment{State: StateRunning, Reason: "Running", Message: "pod screen-abcde is running", Runner: &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(Observation{Run: tc.run, Job: tc.job, Pods: tc.pods, Now: t0.Add(time.Hour)}, options.Options{})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Classify mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestShardsEndOnTheirOwn: a shard whose runner filled its output fails alone (the others go on); so does a shard
// disrupted past the cap, or whose pods never ran: its pods are stopped (the Job fails its index), never the Job.
func TestShardsEndOnTheirOwn(t *testing.T) {
	shardPod := func(i int, opts ...podOpt) corev1.Pod {
		p := makePod(append([]podOpt{named(fmt.Sprintf("screen-%d-x", i), time.Second), func(p *corev1.Pod) {
			p.Annotations = map[string]string{"batch.kubernetes.io/job-completion-index": strconv.Itoa(i)}
		}}, opts...)...)
		return p
	}
	job := makeJob(started, func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Completions = ptr.To[int32](2)
	})
	run := testutil.UnitRun()
	storage := ClassifyShards(Observation{Run: run, Job: job, Now: t0.Add(time.Hour), Pods: []corev1.Pod{
		shardPod(0, kubeletEvicted(`Usage of EmptyDir volume "out" exceeds the limit "32Mi". `), terminated("runner", 137, "Error", "")),
		shardPod(1, phase(corev1.PodRunning), running("runner")),
	}}, ShardObservation{Shards: 2, Cases: 4}, options.Options{})
	if a := storage.Shards[0]; a.Reason != evalsv1alpha1.ReasonStorageLimitExceeded {
		t.Errorf("shard 0: %s %s, want StorageLimitExceeded", a.Reason, a.Message)
	}
	if a := storage.Assessment; a.State != StateRunning || a.StopJob {
		t.Errorf("run: %+v, want Running (shard 1 goes on) with its Job", a)
	}

	infraJob := job.DeepCopy()
	infraJob.Annotations = map[string]string{"evals.evalrun.io/infrastructure-retries-by-index": "1=3:screen-1-old"}
	for _, tc := range []struct {
		name   string
		job    *batchv1.Job
		shard1 corev1.Pod
		reason string
	}{
		{name: "disrupted a fourth time", job: job, shard1: shardPod(1, ignoredFailures(4)), reason: evalsv1alpha1.ReasonDisruptionLimitExceeded},
		{name: "never ran after 3 replacements", job: infraJob,
			shard1: shardPod(1, phase(corev1.PodRunning), ended("runner", 128, "StartError", "no such file", time.Minute)),
			reason: evalsv1alpha1.ReasonInfrastructureFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := ClassifyShards(Observation{Run: run, Job: tc.job, Now: t0.Add(time.Hour), Pods: []corev1.Pod{
				shardPod(0, phase(corev1.PodRunning), running("runner")), tc.shard1,
			}}, ShardObservation{Shards: 2, Cases: 4}, options.Options{})
			if a := v.Shards[1]; a.State != StateFailed || a.Reason != tc.reason {
				t.Errorf("shard 1: %s %s %s, want Failed %s", a.State, a.Reason, a.Message, tc.reason)
			}
			a := v.Assessment
			if a.State != StateRunning || a.StopJob {
				t.Errorf("run: %+v, want Running (shard 0 goes on) with its Job", a)
			}
			if len(a.StopPods) != 1 || a.StopPods[0].Pod != "screen-1-x" || a.StopPods[0].Index != 1 || a.StopPods[0].Reason != tc.reason {
				t.Errorf("stop pods %+v, want shard 1's pod with %s", a.StopPods, tc.reason)
			}
		})
	}
}

// TestStoppedShardStaysFailed: a shard the manager stopped keeps its reason while its pod carries the stop
// condition (and is not stopped twice once it is being deleted), once only the Job's record of it is left, and,
// without the Job, as status.shards recorded it; the other shard's outcome is its own.
func TestStoppedShardStaysFailed(t *testing.T) {
	shardPod := func(i int, opts ...podOpt) corev1.Pod {
		return makePod(append([]podOpt{named(fmt.Sprintf("screen-%d-x", i), time.Second), func(p *corev1.Pod) {
			p.Annotations = map[string]string{"batch.kubernetes.io/job-completion-index": strconv.Itoa(i)}
		}}, opts...)...)
	}
	stopCond := func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "evals.evalrun.io/ShardStopped",
			Status: corev1.ConditionTrue, Reason: evalsv1alpha1.ReasonInfrastructureFailed, Message: "never ran"})
	}
	job := makeJob(started, func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Completions = ptr.To[int32](2)
	})
	recorded := func(r *evalsv1alpha1.EvalRun) {
		r.Status.Shards = []evalsv1alpha1.ShardStatus{{Index: 1, State: string(StateFailed), Reason: evalsv1alpha1.ReasonInfrastructureFailed,
			Message: "recorded: never ran"}}
	}
	failedIndex := job.DeepCopy()
	failedIndex.Annotations = map[string]string{"evals.evalrun.io/stopped-shards": "1=InfrastructureFailed"}
	failedIndex.Status.FailedIndexes = ptr.To("1")
	for _, tc := range []struct {
		name    string
		job     *batchv1.Job
		run     *evalsv1alpha1.EvalRun
		pods    []corev1.Pod
		message string
		stops   int
	}{
		{name: "the pod carries the condition", job: job, run: testutil.UnitRun(),
			pods: []corev1.Pod{shardPod(1, phase(corev1.PodRunning), running("runner"), stopCond)}, message: "never ran", stops: 1},
		{name: "the pod is being deleted", job: job, run: testutil.UnitRun(),
			pods: []corev1.Pod{shardPod(1, phase(corev1.PodRunning), running("runner"), stopCond, beingDeleted)}, message: "never ran"},
		{name: "the pod is gone, the index failed, status recorded it", job: failedIndex, run: testutil.UnitRun(recorded), message: "recorded: never ran"},
		{name: "the pod is gone, the index failed, unrecorded", job: failedIndex, run: testutil.UnitRun(),
			message: "the manager stopped shard 1 (InfrastructureFailed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := append([]corev1.Pod{shardPod(0, phase(corev1.PodRunning), running("runner"))}, tc.pods...)
			v := ClassifyShards(Observation{Run: tc.run, Job: tc.job, Now: t0.Add(time.Hour), Pods: pods},
				ShardObservation{Shards: 2, Cases: 4}, options.Options{})
			a := v.Shards[1]
			if a.State != StateFailed || a.Reason != evalsv1alpha1.ReasonInfrastructureFailed || a.Message != tc.message || len(a.StopPods) != tc.stops {
				t.Errorf("shard 1: %s %s %q (stops %+v), want Failed InfrastructureFailed %q with %d stops", a.State, a.Reason, a.Message, a.StopPods, tc.message, tc.stops)
			}
			if s := v.Shards[0]; s.State != StateRunning {
				t.Errorf("shard 0: %s %s, want Running", s.State, s.Reason)
			}
		})
	}
	gone := ShardsWithoutJob(ShardObservation{Shards: 2, Cases: 4}, "screen-evalrun", testutil.UnitRun(recorded).Status.Shards)
	if a := gone.Shards[1]; a.Reason != evalsv1alpha1.ReasonInfrastructureFailed || a.Message != "recorded: never ran" {
		t.Errorf("without the Job, shard 1: %s %q, want the recorded InfrastructureFailed", a.Reason, a.Message)
	}
	if a := gone.Shards[0]; a.Reason != evalsv1alpha1.ReasonCancelled {
		t.Errorf("without the Job, shard 0: %s, want Cancelled", a.Reason)
	}
}

// TestStoppedShardsRoundTrip: the stopped shards are written in index order and read back.
func TestStoppedShardsRoundTrip(t *testing.T) {
	m := map[int]string{10: evalsv1alpha1.ReasonDisruptionLimitExceeded, 2: evalsv1alpha1.ReasonInfrastructureFailed}
	s := FormatStoppedShards(m)
	if s != "2=InfrastructureFailed,10=DisruptionLimitExceeded" {
		t.Errorf("FormatStoppedShards = %q", s)
	}
	if diff := cmp.Diff(m, ParseStoppedShards(s+",bad,=x")); diff != "" {
		t.Errorf("ParseStoppedShards (-want +got):\n%s", diff)
	}
}
