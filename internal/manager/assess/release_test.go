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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// TestSucceededShardPodsReleased: a succeeded shard's pod from index KeptShardPods on is released only once it
// has nothing left to tell (succeeded, counted by the Job, not being deleted); a shard whose pod is gone stands on
// its collection and the Job's completed index; the first KeptShardPods shards keep their pods, so the shards
// status.shards lists keep their pod's facts.
func TestSucceededShardPodsReleased(t *testing.T) {
	const shards = KeptShardPods + 5
	shardPod := func(i int, opts ...podOpt) corev1.Pod {
		name := fmt.Sprintf("screen-%d-x", i)
		p := makePod(append([]podOpt{named(name, time.Second), phase(corev1.PodSucceeded), func(p *corev1.Pod) {
			p.UID = types.UID("uid-" + name)
			p.Annotations = map[string]string{"batch.kubernetes.io/job-completion-index": strconv.Itoa(i)}
		}, terminated("runner", 0, "Completed", "")}, opts...)...)
		return p
	}
	tracked := func(p *corev1.Pod) { p.Finalizers = []string{batchv1.JobTrackingFinalizer} }
	section := func(i int) *results.Section {
		return &results.Section{Collection: &evalsv1alpha1.CollectionStatus{PodName: fmt.Sprintf("screen-%d-x", i),
			Outcome: evalsv1alpha1.OutcomeCompleted, RunnerFinished: true}}
	}
	job := makeJob(started, func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Completions = ptr.To[int32](shards)
		// Shards 103 (running) and 104 (just succeeded) have not been counted by the Job yet.
		j.Status.CompletedIndexes = "0-102"
	})
	so := ShardObservation{Shards: shards, Cases: shards, Sections: map[int]*results.Section{}}
	var pods []corev1.Pod
	for i := range shards {
		so.Sections[i] = section(i)
		switch i {
		case 100: // released already: no pod, the Job's index and the collection stand
		case 101:
			pods = append(pods, shardPod(i, tracked)) // the cache has not seen the Job take its finalizer off yet
		case 102:
			pods = append(pods, shardPod(i, beingDeleted))
		default:
			pods = append(pods, shardPod(i))
		}
	}
	// Shard 103 is still running its collector: not decided, not released.
	pods[102] = shardPod(103, phase(corev1.PodRunning), running("collector"))
	delete(so.Sections, 103)
	v := ClassifyShards(Observation{Run: testutil.UnitRun(), Job: job, Now: t0.Add(2 * time.Minute), Pods: pods}, so, options.Options{})
	for i, a := range v.Shards {
		if done := a.State == StateSucceeded; done == (i == 103) {
			t.Errorf("shard %d: %s %s %q, want %s", i, a.State, a.Reason, a.Message, map[bool]string{true: "in progress", false: "Succeeded"}[i == 103])
		}
	}
	// Shard 104 succeeded in the manager's eyes, but the Job has not counted its index yet.
	want := []PodRelease{{Pod: "screen-101-x", UID: "uid-screen-101-x", Index: 101}}
	if diff := cmp.Diff(want, v.Assessment.ReleasePods); diff != "" {
		t.Errorf("released pods before the Job counted shard 104 (-want +got):\n%s", diff)
	}

	job.Status.CompletedIndexes = "0-102,104"
	v = ClassifyShards(Observation{Run: testutil.UnitRun(), Job: job, Now: t0.Add(2 * time.Minute), Pods: pods}, so, options.Options{})
	want = []PodRelease{{Pod: "screen-101-x", UID: "uid-screen-101-x", Index: 101}, {Pod: "screen-104-x", UID: "uid-screen-104-x", Index: 104}}
	if diff := cmp.Diff(want, v.Assessment.ReleasePods); diff != "" {
		t.Errorf("released pods (-want +got):\n%s", diff)
	}
	if v.Shards[100].State != StateSucceeded || v.Shards[100].Runner != nil {
		t.Errorf("released shard 100: %+v, want Succeeded on its collection alone", v.Shards[100])
	}
	// Every listed shard (the first MaxStatusShards, all succeeded here) still shows its pod's facts.
	listed := shardStatuses(v.Shards, so)[:evalsv1alpha1.MaxStatusShards]
	for _, st := range listed {
		if st.Index == 103 {
			continue
		}
		if st.Index >= KeptShardPods && st.State == string(StateSucceeded) {
			t.Errorf("status.shards lists succeeded shard %d, whose pod may be released", st.Index)
		}
	}

	// A succeeded shard's pod whose collection is gone is not released: it is not decided succeeded.
	delete(so.Sections, 104)
	v = ClassifyShards(Observation{Run: testutil.UnitRun(), Job: job, Now: t0.Add(2 * time.Minute), Pods: pods}, so, options.Options{})
	for _, p := range v.Assessment.ReleasePods {
		if p.Index == 104 {
			t.Errorf("released %+v: shard 104 has no recorded collection", p)
		}
	}
}

// TestReleasableShardPods: which pods of one shard are released.
func TestReleasableShardPods(t *testing.T) {
	pod := func(opts ...podOpt) corev1.Pod {
		return makePod(append([]podOpt{named("screen-150-x", time.Second), phase(corev1.PodSucceeded)}, opts...)...)
	}
	complete := makeJob(func(j *batchv1.Job) { j.Status.CompletedIndexes = "0-199" })
	for _, tc := range []struct {
		name  string
		index int
		pods  []corev1.Pod
		job   *batchv1.Job
		want  int
	}{
		{name: "counted and succeeded", index: 150, pods: []corev1.Pod{pod()}, job: complete, want: 1},
		{name: "a kept shard", index: KeptShardPods - 1, pods: []corev1.Pod{pod()}, job: complete},
		{name: "index not completed", index: 250, pods: []corev1.Pod{pod()}, job: complete},
		{name: "no Job", index: 150, pods: []corev1.Pod{pod()}},
		{name: "a failed attempt beside the success is kept", index: 150, job: complete,
			pods: []corev1.Pod{pod(), pod(named("screen-150-y", 0), phase(corev1.PodFailed))}, want: 1},
		{name: "counted, the cache still shows the tracking finalizer", index: 150, job: complete,
			pods: []corev1.Pod{pod(func(p *corev1.Pod) { p.Finalizers = []string{batchv1.JobTrackingFinalizer} })}, want: 1},
		{name: "being deleted", index: 150, job: complete, pods: []corev1.Pod{pod(beingDeleted)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReleasableShardPods(tc.index, tc.pods, tc.job); len(got) != tc.want {
				t.Errorf("released %+v, want %d", got, tc.want)
			}
		})
	}
}

// TestReleasableOfSucceededRun: once a sharded run is decided succeeded (its last shards decided on their
// collections before the Job counted them), the pods the Job counts afterwards are released, never those of the
// kept shards, and nothing of a Job that is not Indexed.
func TestReleasableOfSucceededRun(t *testing.T) {
	const shards = KeptShardPods + 3
	var pods []corev1.Pod
	for i := range shards {
		pods = append(pods, makePod(named(fmt.Sprintf("screen-%d-x", i), time.Second), phase(corev1.PodSucceeded), func(p *corev1.Pod) {
			p.Annotations = map[string]string{"batch.kubernetes.io/job-completion-index": strconv.Itoa(i)}
		}))
	}
	job := makeJob(func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Completions = ptr.To[int32](shards)
		j.Status.CompletedIndexes = fmt.Sprintf("0-%d", KeptShardPods)
	})
	names := func(rs []PodRelease) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Pod)
		}
		return out
	}
	if diff := cmp.Diff([]string{"screen-100-x"}, names(ReleasableOfSucceededRun(pods, job))); diff != "" {
		t.Errorf("released while the Job counted up to shard 100 (-want +got):\n%s", diff)
	}
	job.Status.CompletedIndexes = fmt.Sprintf("0-%d", shards-1)
	if diff := cmp.Diff([]string{"screen-100-x", "screen-101-x", "screen-102-x"}, names(ReleasableOfSucceededRun(pods, job))); diff != "" {
		t.Errorf("released once the Job counted every shard (-want +got):\n%s", diff)
	}
	job.Spec.CompletionMode = nil
	if got := ReleasableOfSucceededRun(pods, job); len(got) != 0 {
		t.Errorf("released %+v of a Job that is not Indexed", got)
	}
}

// TestReleasableOfOnePodRun: the pod of a one-pod run decided succeeded is released once the Job counted index 0;
// not before, not a failed attempt's, not one being deleted, and nothing of a Job of more than one pod (those are
// ReleasableShardPods').
func TestReleasableOfOnePodRun(t *testing.T) {
	pod := func(opts ...podOpt) corev1.Pod {
		return makePod(append([]podOpt{named("screen-0-x", time.Second), phase(corev1.PodSucceeded)}, opts...)...)
	}
	counted := makeJob(func(j *batchv1.Job) { j.Status.CompletedIndexes = "0" })
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		job  *batchv1.Job
		want []string
	}{
		{name: "counted and succeeded", pods: []corev1.Pod{pod()}, job: counted, want: []string{"screen-0-x"}},
		{name: "not counted yet", pods: []corev1.Pod{pod()}, job: makeJob()},
		{name: "no Job", pods: []corev1.Pod{pod()}},
		{name: "a failed attempt beside the success is kept", job: counted,
			pods: []corev1.Pod{pod(), pod(named("screen-0-y", 0), phase(corev1.PodFailed))}, want: []string{"screen-0-x"}},
		{name: "being deleted", job: counted, pods: []corev1.Pod{pod(beingDeleted)}},
		{name: "a Job of three pods", pods: []corev1.Pod{pod()},
			job: makeJob(func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](3); j.Status.CompletedIndexes = "0-2" })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range ReleasableOfOnePodRun(tc.pods, tc.job) {
				got = append(got, r.Pod)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("released (-want +got):\n%s", diff)
			}
		})
	}
}
