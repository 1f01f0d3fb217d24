package assess

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

func TestInIndexSet(t *testing.T) {
	for _, tt := range []struct {
		set   string
		in    []int
		notIn []int
	}{
		{"", nil, []int{0, 1}},
		{"0", []int{0}, []int{1}},
		{"1,3-5,7", []int{1, 3, 4, 5, 7}, []int{0, 2, 6, 8}},
		{"0-999", []int{0, 500, 999}, []int{1000}},
		{"x,2", []int{2}, []int{0}},
	} {
		for _, i := range tt.in {
			if !InIndexSet(tt.set, i) {
				t.Errorf("InIndexSet(%q, %d) = false", tt.set, i)
			}
		}
		for _, i := range tt.notIn {
			if InIndexSet(tt.set, i) {
				t.Errorf("InIndexSet(%q, %d) = true", tt.set, i)
			}
		}
	}
}

// TestShardOfMatchesShardRange checks ShardOf against podwire.ShardRange for every case of many splits.
func TestShardOfMatchesShardRange(t *testing.T) {
	for n := 1; n <= 60; n++ {
		for shards := 1; shards <= n; shards++ {
			for k := range shards {
				lo, hi := podwire.ShardRange(n, shards, k)
				for i := lo; i < hi; i++ {
					if got := ShardOf(i, n, shards); got != k {
						t.Fatalf("ShardOf(%d, %d, %d) = %d, want %d", i, n, shards, got, k)
					}
				}
			}
		}
	}
}

func TestJobForShard(t *testing.T) {
	indexed := func(mutate func(*batchv1.JobStatus)) *batchv1.Job {
		j := &batchv1.Job{Spec: batchv1.JobSpec{CompletionMode: ptr.To(batchv1.IndexedCompletion)}}
		mutate(&j.Status)
		return j
	}
	cond := func(typ batchv1.JobConditionType, reason string) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue, Reason: reason}
	}
	running := indexed(func(s *batchv1.JobStatus) { s.CompletedIndexes, s.FailedIndexes = "0,2", ptr.To("1") })
	deadline := indexed(func(s *batchv1.JobStatus) {
		s.CompletedIndexes = "0"
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded)}
	})
	view := func(j *batchv1.Job, i int) []string {
		var out []string
		for _, c := range jobForShard(j, i, fmt.Sprintf("shard %d", i)).Status.Conditions {
			out = append(out, string(c.Type)+"/"+c.Reason)
		}
		return out
	}
	expect := func(what string, want, got []string) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	expect("completed index", []string{"Complete/"}, view(running, 0))
	expect("failed index", []string{"Failed/FailedIndexes"}, view(running, 1))
	expect("index still running", nil, view(running, 3))
	// The Job's deadline ends the shards that had not ended; a completed one keeps its completion.
	expect("deadline, completed index", []string{"Complete/"}, view(deadline, 0))
	expect("deadline, running index", []string{"Failed/DeadlineExceeded"}, view(deadline, 1))
	// A Job that is not Indexed (one shard) is its own view.
	plain := &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{cond(batchv1.JobComplete, "")}}}
	if jobForShard(plain, 0, "shard 0") != plain {
		t.Error("a one-pod Job's view is not the Job itself")
	}
}

func TestCombineShards(t *testing.T) {
	ok := Assessment{State: StateSucceeded, Reason: evalsv1alpha1.ReasonCompleted, Message: "every result was collected"}
	failed := func(reason, msg string) Assessment {
		return Assessment{State: StateFailed, Reason: reason, Message: msg}
	}
	running := Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, Message: "pod p is running", RecheckAfter: time.Minute}
	stopP1 := PodStop{Pod: "p-1", Index: 1, Reason: evalsv1alpha1.ReasonRunnerTimedOut, Message: "t"}
	pending := Assessment{State: StatePending, Reason: evalsv1alpha1.ReasonPending, Message: "pod q is pending", RecheckAfter: 10 * time.Second}
	for _, tt := range []struct {
		name   string
		shards []Assessment
		want   Assessment
	}{
		{"one shard is the shard", []Assessment{ok}, ok},
		{"all completed", []Assessment{ok, ok, ok}, Assessment{State: StateSucceeded, Reason: evalsv1alpha1.ReasonCompleted, Message: "all 3 shards completed"}},
		{"in progress shows the most advanced shard and the soonest recheck",
			[]Assessment{ok, pending, running, failed(evalsv1alpha1.ReasonRunnerFailed, "x")},
			Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, RecheckAfter: 10 * time.Second,
				Message: "2 of 4 shards finished (1 failed); shard 2: pod p is running"}},
		{"the most fundamental failure names the run",
			[]Assessment{failed(evalsv1alpha1.ReasonMissingResults, "m"), ok, failed(evalsv1alpha1.ReasonRunnerOOMKilled, "oom"), failed(evalsv1alpha1.ReasonInvalidOutput, "i")},
			Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonRunnerOOMKilled, Message: "3 of 4 shards failed; shard 2: oom"}},
		{"a failure every shard meets alike ends the run at once",
			[]Assessment{running, {State: StateFailed, Reason: evalsv1alpha1.ReasonImagePullFailed, Message: "no image", StopJob: true}},
			Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonImagePullFailed, Message: "shard 1: no image", StopJob: true}},
		{"a shard decided while its pod runs stops that pod only",
			[]Assessment{running, {State: StateFailed, Reason: evalsv1alpha1.ReasonRunnerTimedOut, Message: "t", StopJob: true,
				Runner: &evalsv1alpha1.RunnerStatus{PodName: "p-1"}, StopPods: []PodStop{stopP1}}},
			Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, RecheckAfter: time.Minute, StopPods: []PodStop{stopP1},
				Message: "1 of 2 shards finished (1 failed); shard 0: pod p is running"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, combineShards(tt.shards, ShardObservation{Shards: len(tt.shards)})); diff != "" {
				t.Errorf("combineShards (-want +got):\n%s", diff)
			}
		})
	}
}

func TestShardStatusesAreBoundedFailedFirst(t *testing.T) {
	shards := make([]Assessment, 150)
	for i := range shards {
		shards[i] = Assessment{State: StateSucceeded, Reason: evalsv1alpha1.ReasonCompleted}
	}
	shards[120] = Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonRunnerFailed}
	shards[7] = Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning}
	all := shardStatuses(shards, ShardObservation{Shards: 150, Cases: 300})
	sharding, listed := ShardingStatus(all)
	if len(listed) != evalsv1alpha1.MaxStatusShards || sharding.OmittedShards != 50 || sharding.Succeeded != 148 || sharding.Failed != 1 {
		t.Fatalf("listed %d, sharding %+v", len(listed), sharding)
	}
	if listed[0].Index != 120 || listed[1].Index != 7 || listed[2].Index != 0 || listed[0].Cases != 2 {
		t.Errorf("order: %d %d %d (cases %d), want the failed shard, the running one, then shard 0", listed[0].Index, listed[1].Index, listed[2].Index, listed[0].Cases)
	}
}

// TestShardsWithTrials: in a run of 2 shards × 3 trials, completion index i is trial i/2+1 of shard i%2: each pod's
// status entry names its shard (index) and trial, counts its shard's cases, and is listed failed first; the run's
// sharding counts 2 shards and the pods' states; messages name shards and trials; a recorded entry is matched by
// shard and trial.
func TestShardsWithTrials(t *testing.T) {
	so := ShardObservation{Shards: 6, Trials: 3, Cases: 5}
	ok := Assessment{State: StateSucceeded, Reason: evalsv1alpha1.ReasonCompleted, Message: "done"}
	shards := []Assessment{ok, {State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, Message: "pod p is running"}, ok,
		{State: StateFailed, Reason: evalsv1alpha1.ReasonRunnerFailed, Message: "exit 1"}, ok, ok}
	type entry struct{ Index, Trial, Cases int32 }
	var got []entry
	all := shardStatuses(shards, so)
	for _, st := range all {
		got = append(got, entry{st.Index, ptr.Deref(st.Trial, 0), st.Cases})
	}
	want := []entry{{1, 2, 3}, {1, 1, 3}, {0, 1, 2}, {0, 2, 2}, {0, 3, 2}, {1, 3, 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status.shards (-want +got):\n%s", diff)
	}
	sharding, _ := ShardingStatus(all)
	if diff := cmp.Diff(&evalsv1alpha1.ShardingStatus{Shards: 2, Split: SplitContiguous, Succeeded: 4, Failed: 1}, sharding); diff != "" {
		t.Errorf("status.sharding (-want +got):\n%s", diff)
	}
	if a := combineShards(shards, so); a.Message != "5 of 6 shard trials finished (1 failed); shard 1 trial 1: pod p is running" {
		t.Errorf("message %q", a.Message)
	}
	shards[1] = ok
	if a := combineShards(shards, so); a.Message != "1 of 6 shard trials failed; shard 1 trial 2: exit 1" || a.State != StateFailed {
		t.Errorf("%s: %q", a.State, a.Message)
	}
	recorded := []evalsv1alpha1.ShardStatus{{Index: 1, Trial: ptr.To[int32](3), State: string(StateSucceeded)},
		{Index: 1, Trial: ptr.To[int32](1), State: string(StateFailed), Reason: evalsv1alpha1.ReasonDisruptionLimitExceeded, Message: "gone"}}
	if !recordedSucceeded(so, recorded, 5) || recordedSucceeded(so, recorded, 3) || recordedSucceeded(so, recorded, 1) {
		t.Error("recorded entries are not matched by shard and trial")
	}
	if a, stopped := stoppedShard(so, 1, nil, "", recorded); !stopped || a.Message != "gone" {
		t.Errorf("index 1 (shard 1 trial 1), recorded failed by the manager: %+v %v", a, stopped)
	}
	if _, stopped := stoppedShard(so, 3, nil, "", recorded); stopped {
		t.Error("index 3 (shard 1 trial 2) took shard 1 trial 1's recorded failure")
	}
	if a, _ := stoppedShard(so, 4, nil, evalsv1alpha1.ReasonRunnerTimedOut, nil); a.Message != "the manager stopped shard 0 trial 3 (RunnerTimedOut)" {
		t.Errorf("stop message %q", a.Message)
	}
}
