package assess

import (
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// A run whose Job is gone is decided from its status alone: the collection stands only against the kubelet's
// exit code of the runner recorded in status.runner, and never succeeds without it.
func TestClassifyWithoutJob(t *testing.T) {
	runner := func(code *int32) func(*evalsv1alpha1.EvalRun) {
		return func(r *evalsv1alpha1.EvalRun) {
			r.Status.JobName = "screen-evalrun"
			r.Status.Runner = &evalsv1alpha1.RunnerStatus{PodName: "screen-abcde", ExitCode: code}
		}
	}
	tests := []struct {
		name       string
		run        *evalsv1alpha1.EvalRun
		wantReason string
		wantMsg    string
	}{
		{"completed with the kubelet's exit code 0", testutil.UnitRun(collected("Completed", "all 2"), runner(ptr.To[int32](0))),
			evalsv1alpha1.ReasonCompleted, "all 2"},
		{"completed, the kubelet's exit code 7", testutil.UnitRun(collected("Completed", "all 2"), runner(ptr.To[int32](7))),
			evalsv1alpha1.ReasonRunnerFailed, "exited with code 7"},
		{"completed, no exit code recorded (the Job went first)", testutil.UnitRun(collected("Completed", "all 2"), runner(nil)),
			evalsv1alpha1.ReasonCancelled, "before the kubelet reported how the runner container ended"},
		{"completed, no runner facts at all", testutil.UnitRun(collected("Completed", "all 2"), func(r *evalsv1alpha1.EvalRun) { r.Status.JobName = "screen-evalrun" }),
			evalsv1alpha1.ReasonCancelled, "without the runner's exit code the run cannot count as completed"},
		{"a failure stands without an exit code", testutil.UnitRun(collected("RunnerTimedOut", "timed out"), runner(nil)),
			evalsv1alpha1.ReasonRunnerTimedOut, "timed out"},
		{"no collection", testutil.UnitRun(runner(nil)), evalsv1alpha1.ReasonCancelled, "deleted before the run finished"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := ClassifyWithoutJob(tc.run)
			if a.Reason != tc.wantReason || !strings.Contains(a.Message, tc.wantMsg) {
				t.Errorf("assessment %s %q, want %s containing %q", a.Reason, a.Message, tc.wantReason, tc.wantMsg)
			}
			if (a.Reason == evalsv1alpha1.ReasonCompleted) != (a.State == StateSucceeded) {
				t.Errorf("state %s for reason %s", a.State, a.Reason)
			}
		})
	}
}

// Processes of the runner survived SIGKILL: the collector decides RunnerNotStopped while the runner container
// still runs; the run fails and its Job is stopped.
func TestClassifyRunnerNotStopped(t *testing.T) {
	run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
		r.Status.Collection = &evalsv1alpha1.CollectionStatus{PodName: "screen-abcde", Outcome: evalsv1alpha1.OutcomeRunnerNotStopped,
			Message:  "the launcher reports 1 process of the runner that survived SIGKILL",
			Launcher: &evalsv1alpha1.LauncherReport{Survivors: ptr.To[int32](1), Leftovers: 1, Delivery: ptr.To(evalsv1alpha1.LauncherReportDelivered)}}
	})
	pod := makePod(phase(corev1.PodRunning), running("runner"))
	got := Classify(Observation{Run: run, Job: makeJob(started), Pods: []corev1.Pod{pod}, Now: t0.Add(time.Minute)}, options.Options{})
	if got.State != StateFailed || got.Reason != evalsv1alpha1.ReasonRunnerNotStopped || !got.StopJob {
		t.Errorf("assessment %+v, want RunnerNotStopped with the Job stopped", got)
	}
	// Once the container ended (even with code 0), the outcome stands.
	run.Status.Collection.RunnerFinished = true
	done := makePod(phase(corev1.PodRunning), terminated("runner", 0, "Completed", ""))
	got = Classify(Observation{Run: run, Job: makeJob(started), Pods: []corev1.Pod{done}, Now: t0.Add(time.Minute)}, options.Options{})
	if got.Reason != evalsv1alpha1.ReasonRunnerNotStopped {
		t.Errorf("reason %s, want RunnerNotStopped", got.Reason)
	}
}

// A report that did not arrive: the collector's RunnerFailed stands even when the kubelet says exit code 0.
func TestClassifyMissingLauncherReport(t *testing.T) {
	run := testutil.UnitRun(collectedFor("screen-abcde", "RunnerFailed", "the launcher's report did not arrive", &evalsv1alpha1.LauncherReport{Delivery: ptr.To(evalsv1alpha1.LauncherReportMissing)}))
	pod := makePod(phase(corev1.PodRunning), terminated("runner", 0, "Completed", ""))
	got := Classify(Observation{Run: run, Job: makeJob(started), Pods: []corev1.Pod{pod}, Now: t0.Add(time.Minute)}, options.Options{})
	if got.State != StateFailed || got.Reason != evalsv1alpha1.ReasonRunnerFailed || !strings.Contains(got.Message, "did not arrive") {
		t.Errorf("assessment %+v, want RunnerFailed for the missing report", got)
	}
}

// A shard of a run whose Job is gone succeeds only if it was recorded as succeeded (decided with the kubelet's
// facts) before.
func TestShardsWithoutJobNeedTheRunnerExit(t *testing.T) {
	section := func() *results.Section {
		return &results.Section{Collection: &evalsv1alpha1.CollectionStatus{PodName: "p", Outcome: evalsv1alpha1.OutcomeCompleted, RunnerFinished: true}}
	}
	so := ShardObservation{Shards: 2, Cases: 2, Sections: map[int]*results.Section{0: section(), 1: section()}}
	recorded := []evalsv1alpha1.ShardStatus{{Index: 0, State: string(StateSucceeded)}, {Index: 1, State: string(StateCollecting)}}
	v := ShardsWithoutJob(so, "screen-evalrun", recorded)
	if v.Shards[0].State != StateSucceeded {
		t.Errorf("shard 0: %+v, want it to stand (recorded as succeeded)", v.Shards[0])
	}
	if v.Shards[1].Reason != evalsv1alpha1.ReasonCancelled {
		t.Errorf("shard 1: %+v, want Cancelled (no kubelet exit code was seen)", v.Shards[1])
	}
	if v.Assessment.State != StateFailed {
		t.Errorf("run: %+v, want failed", v.Assessment)
	}
}
