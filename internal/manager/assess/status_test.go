package assess

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/statusapply"
)

func cond(t string, s metav1.ConditionStatus, reason, msg string, since time.Duration) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: 1, LastTransitionTime: at(since)}
}

func TestDesiredManagerStatus(t *testing.T) {
	facts := StatusFacts{JobName: "screen", StartTime: ptr.To(at(time.Second)), EvalFileSHA256: "abc", EvalConfigMapName: "screen-evalrun-eval"}
	running := Assessment{State: StateRunning, Reason: "Running", Message: "pod p is running"}
	cases := []struct {
		name  string
		run   *evalsv1alpha1.EvalRun
		a     Assessment
		facts StatusFacts
		now   time.Duration
		want  evalsv1alpha1.EvalRunStatus
	}{
		{
			name: "first write while running",
			run:  testutil.UnitRun(), a: running, facts: facts, now: time.Minute,
			want: evalsv1alpha1.EvalRunStatus{
				ObservedGeneration: 1, JobName: "screen", StartTime: ptr.To(at(time.Second)), EvalFileSHA256: "abc", EvalConfigMapName: "screen-evalrun-eval",
				Conditions: []metav1.Condition{
					cond("Reconciling", metav1.ConditionTrue, "Running", "pod p is running", time.Minute),
					cond("Stalled", metav1.ConditionFalse, "Running", "pod p is running", time.Minute),
					cond("Succeeded", metav1.ConditionUnknown, "Running", "pod p is running", time.Minute),
					cond("Queued", metav1.ConditionFalse, "Running", "pod p is running", time.Minute),
				},
			},
		},
		{
			name: "queued to running keeps unchanged statuses' transition times",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Status.Conditions = []metav1.Condition{
					cond("Reconciling", metav1.ConditionTrue, "Queued", "q", 0),
					cond("Stalled", metav1.ConditionFalse, "Queued", "q", 0),
					cond("Succeeded", metav1.ConditionUnknown, "Queued", "q", 0),
					cond("Queued", metav1.ConditionTrue, "Queued", "q", 0),
					cond("ResultsTruncated", metav1.ConditionFalse, "AllResultsInStatus", "", 0),
				}
			}),
			a: running, facts: facts, now: time.Hour,
			want: evalsv1alpha1.EvalRunStatus{
				ObservedGeneration: 1, JobName: "screen", StartTime: ptr.To(at(time.Second)), EvalFileSHA256: "abc", EvalConfigMapName: "screen-evalrun-eval",
				Conditions: []metav1.Condition{
					cond("Reconciling", metav1.ConditionTrue, "Running", "pod p is running", 0),
					cond("Stalled", metav1.ConditionFalse, "Running", "pod p is running", 0),
					cond("Succeeded", metav1.ConditionUnknown, "Running", "pod p is running", 0),
					cond("Queued", metav1.ConditionFalse, "Running", "pod p is running", time.Hour),
				},
			},
		},
		{
			name: "succeeded: Passed from the summary, completion time from the Job",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Status.Summary = &evalsv1alpha1.RunSummary{Total: 2, Passed: 2, MeanScore: "1.0000"}
			}),
			a:     Assessment{State: StateSucceeded, Reason: "Completed", Message: "done", Runner: &evalsv1alpha1.RunnerStatus{PodName: "p"}},
			facts: StatusFacts{JobName: "screen", CompletionTime: ptr.To(at(time.Minute))}, now: 2 * time.Minute,
			want: evalsv1alpha1.EvalRunStatus{
				ObservedGeneration: 1, JobName: "screen", CompletionTime: ptr.To(at(time.Minute)), Runner: &evalsv1alpha1.RunnerStatus{PodName: "p"},
				Conditions: []metav1.Condition{
					cond("Reconciling", metav1.ConditionFalse, "Completed", "done", 2*time.Minute),
					cond("Stalled", metav1.ConditionFalse, "Completed", "done", 2*time.Minute),
					cond("Succeeded", metav1.ConditionTrue, "Completed", "done", 2*time.Minute),
					cond("Queued", metav1.ConditionFalse, "Completed", "done", 2*time.Minute),
					cond("Passed", metav1.ConditionTrue, "PolicyMet", "2 of 2 cases passed (pass rate 1.0000, required 1)", 2*time.Minute),
				},
			},
		},
		{
			name: "failed without results: Stalled, Passed NoResults, completion time now",
			run:  testutil.UnitRun(),
			a:    Assessment{State: StateFailed, Reason: "InvalidEvalFile", Message: "invalid eval file: 1 problem: x"},
			now:  3 * time.Second,
			want: evalsv1alpha1.EvalRunStatus{
				ObservedGeneration: 1, CompletionTime: ptr.To(at(3 * time.Second)),
				Conditions: []metav1.Condition{
					cond("Reconciling", metav1.ConditionFalse, "InvalidEvalFile", "invalid eval file: 1 problem: x", 3*time.Second),
					cond("Stalled", metav1.ConditionTrue, "InvalidEvalFile", "invalid eval file: 1 problem: x", 3*time.Second),
					cond("Succeeded", metav1.ConditionFalse, "InvalidEvalFile", "invalid eval file: 1 problem: x", 3*time.Second),
					cond("Queued", metav1.ConditionFalse, "InvalidEvalFile", "invalid eval file: 1 problem: x", 3*time.Second),
					cond("Passed", metav1.ConditionFalse, "NoResults", "no judged results were recorded", 3*time.Second),
				},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := DesiredManagerStatus(tc.run, tc.a, tc.facts, t0.Add(tc.now))
			// Every status records the attempt it describes: here a new run's first.
			tc.want.Attempt = &evalsv1alpha1.Attempt{Number: 1, Trigger: evalsv1alpha1.AttemptCreated,
				SpecSHA256: SpecSHA256(&tc.run.Spec), Generation: tc.run.Generation}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DesiredManagerStatus mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusChangedIsFalseOnceWritten(t *testing.T) {
	run := testutil.UnitRun()
	a := Assessment{State: StatePending, Reason: "Pending", Message: "waiting"}
	desired := DesiredManagerStatus(run, a, StatusFacts{JobName: "screen"}, t0)
	if !StatusChanged(run, &desired) {
		t.Fatal("StatusChanged = false for an empty status")
	}
	run.Status.ObservedGeneration, run.Status.Conditions, run.Status.JobName = desired.ObservedGeneration, desired.Conditions, desired.JobName
	run.Status.Attempt = desired.Attempt
	// The collector's fields do not count.
	run.Status.Summary = &evalsv1alpha1.RunSummary{Total: 1}
	run.Status.Conditions = append(run.Status.Conditions, cond("ResultsTruncated", metav1.ConditionFalse, "AllResultsInStatus", "", 0))
	again := DesiredManagerStatus(run, a, StatusFacts{JobName: "screen"}, t0.Add(time.Hour))
	if StatusChanged(run, &again) {
		t.Errorf("StatusChanged = true for an unchanged assessment: %s", cmp.Diff(statusapply.Manager(&run.Status), statusapply.Manager(&again)))
	}
}

func TestTerminalAssessment(t *testing.T) {
	run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
		r.Status.Conditions = []metav1.Condition{cond("Succeeded", metav1.ConditionFalse, "RunnerFailed", "exit 1", 0)}
		r.Status.Runner = &evalsv1alpha1.RunnerStatus{ExitCode: ptr.To[int32](1)}
	})
	got, ok := TerminalAssessment(run)
	want := Assessment{State: StateFailed, Reason: "RunnerFailed", Message: "exit 1", Runner: &evalsv1alpha1.RunnerStatus{ExitCode: ptr.To[int32](1)}}
	if diff := cmp.Diff(want, got); !ok || diff != "" {
		t.Errorf("TerminalAssessment = %v (-want +got):\n%s", ok, diff)
	}
	if _, ok := TerminalAssessment(testutil.UnitRun()); ok {
		t.Error("TerminalAssessment of a new run reported terminal")
	}
}

func TestPassedCondition(t *testing.T) {
	cases := []struct {
		name    string
		policy  *evalsv1alpha1.SuccessPolicy
		summary *evalsv1alpha1.RunSummary
		status  metav1.ConditionStatus
		reason  string
		message string
	}{
		{name: "no summary", status: metav1.ConditionFalse, reason: "NoResults", message: "no judged results were recorded"},
		{name: "default policy, one failure", summary: &evalsv1alpha1.RunSummary{Total: 13, Passed: 12},
			status: metav1.ConditionFalse, reason: "PolicyNotMet", message: "12 of 13 cases passed (pass rate 0.9231, required 1)"},
		{name: "rate met exactly", policy: &evalsv1alpha1.SuccessPolicy{MinPassRate: "0.75"}, summary: &evalsv1alpha1.RunSummary{Total: 4, Passed: 3},
			status: metav1.ConditionTrue, reason: "PolicyMet", message: "3 of 4 cases passed (pass rate 0.7500, required 0.75)"},
		{name: "mean score too low", policy: &evalsv1alpha1.SuccessPolicy{MinPassRate: "0.5", MinMeanScore: "0.9"},
			summary: &evalsv1alpha1.RunSummary{Total: 4, Passed: 3, MeanScore: "0.8500"},
			status:  metav1.ConditionFalse, reason: "PolicyNotMet", message: "3 of 4 cases passed (pass rate 0.7500, required 0.5); mean score 0.8500, required 0.9"},
		{name: "mean score missing", policy: &evalsv1alpha1.SuccessPolicy{MinMeanScore: "0.1"}, summary: &evalsv1alpha1.RunSummary{Total: 1, Passed: 1},
			status: metav1.ConditionFalse, reason: "PolicyNotMet", message: "1 of 1 cases passed (pass rate 1.0000, required 1); mean score none, required 0.1"},
		// Cases the LLM judging budget left unjudged are Errors: never passed. A policy they could have decided is not
		// met: 8 of 10 passed and 2 unjudged against minPassRate 0.9 (they might have passed)...
		{name: "budget left cases unjudged: rate", policy: &evalsv1alpha1.SuccessPolicy{MinPassRate: "0.9"},
			summary: &evalsv1alpha1.RunSummary{Total: 10, Passed: 8, Errored: 2, BudgetUnjudged: ptr.To[int32](2), MeanScore: "1.0000"},
			status:  metav1.ConditionFalse, reason: "PolicyNotMet",
			message: "8 of 10 cases passed (pass rate 0.8000, required 0.9); 2 cases were left unjudged by the LLM judging budget (spec.judging.llm) and count as not passed"},
		// ... and a mean bar they could have pulled under is not met either (0.95 over 8 judged, 0.76 with the 2 at 0)...
		{name: "budget left cases unjudged: mean", policy: &evalsv1alpha1.SuccessPolicy{MinPassRate: "0.5", MinMeanScore: "0.9"},
			summary: &evalsv1alpha1.RunSummary{Total: 10, Passed: 8, Errored: 2, BudgetUnjudged: ptr.To[int32](2), MeanScore: "0.9500"},
			status:  metav1.ConditionFalse, reason: "PolicyNotMet",
			message: "8 of 10 cases passed (pass rate 0.8000, required 0.5); mean score 0.9500 (0.7600 with the cases the budget left unjudged scored 0), required 0.9; " +
				"2 cases were left unjudged by the LLM judging budget (spec.judging.llm) and count as not passed"},
		// ... while a policy they could not have changed stays met, and says they were left unjudged.
		{name: "budget left cases unjudged: not decisive", policy: &evalsv1alpha1.SuccessPolicy{MinPassRate: "0.5", MinMeanScore: "0.5"},
			summary: &evalsv1alpha1.RunSummary{Total: 10, Passed: 8, Errored: 2, BudgetUnjudged: ptr.To[int32](2), MeanScore: "0.9500"},
			status:  metav1.ConditionTrue, reason: "PolicyMet",
			message: "8 of 10 cases passed (pass rate 0.8000, required 0.5); mean score 0.9500 (0.7600 with the cases the budget left unjudged scored 0), required 0.5; " +
				"2 cases were left unjudged by the LLM judging budget (spec.judging.llm) and count as not passed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.SuccessPolicy, r.Status.Summary = tc.policy, tc.summary })
			want := metav1.Condition{Type: "Passed", Status: tc.status, Reason: tc.reason, Message: tc.message}
			if diff := cmp.Diff(want, PassedCondition(run, nil)); diff != "" {
				t.Errorf("PassedCondition mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusApplyHoldsOnlyManagerFields(t *testing.T) {
	run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Status.Summary = &evalsv1alpha1.RunSummary{Total: 3} })
	// The collector's summary and condition in the status are left out of the manager's apply.
	s := evalsv1alpha1.EvalRunStatus{ObservedGeneration: 1, JobName: "screen", Runner: &evalsv1alpha1.RunnerStatus{ExitCode: ptr.To[int32](0)},
		Conditions: []metav1.Condition{cond("Succeeded", metav1.ConditionUnknown, "Pending", "", 0),
			cond("ResultsTruncated", metav1.ConditionFalse, "AllResultsInStatus", "", 0)},
		Summary: run.Status.Summary}
	ac := statusapply.EvalRun(run.Namespace, run.Name, "", statusapply.Manager(&s))
	raw, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "evals.evalrun.io/v1alpha1",
		"kind":       "EvalRun",
		"metadata":   map[string]any{"name": "screen", "namespace": "team-a"},
		"status": map[string]any{
			"observedGeneration": float64(1),
			"jobName":            "screen",
			"runner":             map[string]any{"exitCode": float64(0)},
			"conditions": []any{map[string]any{
				"type": "Succeeded", "status": "Unknown", "reason": "Pending", "message": "",
				"observedGeneration": float64(1), "lastTransitionTime": "2026-01-02T03:04:05Z",
			}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status apply configuration mismatch (-want +got):\n%s", diff)
	}
}

func TestTransitions(t *testing.T) {
	running := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
		r.Status.Conditions = []metav1.Condition{cond("Succeeded", metav1.ConditionUnknown, "Running", "r", 0)}
	})
	cases := []struct {
		name string
		run  *evalsv1alpha1.EvalRun
		a    Assessment
		want []Event
	}{
		{name: "first status", run: testutil.UnitRun(), a: Assessment{State: StatePending, Reason: "Pending", Message: "w"},
			want: []Event{{Type: "Normal", Reason: "Pending", Action: "Progress", Note: "w"}}},
		{name: "no change", run: running, a: Assessment{State: StateRunning, Reason: "Running", Message: "r2"}},
		{name: "failure", run: running, a: Assessment{State: StateFailed, Reason: "RunnerFailed", Message: "exit 1"},
			want: []Event{
				{Type: "Warning", Reason: "RunnerFailed", Action: "Finish", Note: "exit 1"},
				{Type: "Warning", Reason: "NoResults", Action: "Judge", Note: "no judged results were recorded"},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			desired := DesiredManagerStatus(tc.run, tc.a, StatusFacts{}, t0)
			got := Transitions(tc.run, &desired)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Transitions mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTransitionsEvalFileViewFull: the status that first records evalFileView Full brings one Warning event;
// Inputs none, and a run already recorded as Full no second one.
func TestTransitionsEvalFileViewFull(t *testing.T) {
	count := func(run *evalsv1alpha1.EvalRun, desired *evalsv1alpha1.EvalRunStatus) int {
		n := 0
		for _, e := range Transitions(run, desired) {
			if e.Reason == eventEvalFileViewFull {
				if e.Type != "Warning" {
					t.Errorf("event %+v, want a Warning", e)
				}
				n++
			}
		}
		return n
	}
	run := testutil.UnitRun()
	if n := count(run, &evalsv1alpha1.EvalRunStatus{EvalFileView: ptr.To(evalsv1alpha1.EvalFileViewInputs)}); n != 0 {
		t.Errorf("Inputs: %d events, want none", n)
	}
	if n := count(run, &evalsv1alpha1.EvalRunStatus{EvalFileView: ptr.To(evalsv1alpha1.EvalFileViewFull)}); n != 1 {
		t.Errorf("Full, first recorded: %d events, want 1", n)
	}
	run.Status.EvalFileView = ptr.To(evalsv1alpha1.EvalFileViewFull)
	if n := count(run, &evalsv1alpha1.EvalRunStatus{EvalFileView: ptr.To(evalsv1alpha1.EvalFileViewFull)}); n != 0 {
		t.Errorf("Full, already recorded: %d events, want none", n)
	}
}

// TestJudgeImageStatus: status.judgeImage is run.json's image and source (nil without code judges), with the judge
// container's imageID as the kubelet reported it; a later status without a report keeps the recorded imageID.
func TestJudgeImageStatus(t *testing.T) {
	const judgeID = "localhost/evalrun/judge@sha256:1111"
	now := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		judging *evalsv1alpha1.Judging
		codes   int
		want    *evalsv1alpha1.JudgeImageStatus
	}{
		{name: "no code judges: none"},
		{name: "judging.image unset: the manager's judge image, source Default", codes: 1,
			want: &evalsv1alpha1.JudgeImageStatus{Image: "registry.example/judge:v2", Source: evalsv1alpha1.JudgeImageSourceDefault, ImageID: ptr.To(judgeID)}},
		{name: "judging.image another image: source Spec", codes: 1, judging: &evalsv1alpha1.Judging{Image: "registry.example/mine:v1"},
			want: &evalsv1alpha1.JudgeImageStatus{Image: "registry.example/mine:v1", Source: evalsv1alpha1.JudgeImageSourceSpec, ImageID: ptr.To(judgeID)}},
		{name: "judging.image the runner's image: source Target", codes: 1,
			judging: &evalsv1alpha1.Judging{Image: "localhost/evalrun/screening-runner:dev"},
			want: &evalsv1alpha1.JudgeImageStatus{Image: "localhost/evalrun/screening-runner:dev", Source: evalsv1alpha1.JudgeImageSourceTarget,
				ImageID: ptr.To(judgeID)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.Judging = tc.judging })
			cfg := children.BuildRunConfig(run, []string{"case-001"}, nil, children.JudgeLoad{CodeJudgeCases: tc.codes}, options.Options{JudgeImage: "registry.example/judge:v2"})
			pod := makePod(phase(corev1.PodRunning), running("runner"), withImageID("runner", "localhost/evalrun/screening-runner@sha256:2222"),
				running("judge"), withImageID("judge", judgeID))
			a := Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, JudgeImageID: judgeImageID(&pod)}
			got := DesiredManagerStatus(run, a, StatusFacts{JudgeImage: JudgeImageFacts(run, cfg)}, now)
			if diff := cmp.Diff(tc.want, got.JudgeImage); diff != "" {
				t.Fatalf("status.judgeImage (-want +got):\n%s", diff)
			}
			// The pod is gone (a finished run): the recorded imageID stays.
			run.Status = got
			again := DesiredManagerStatus(run, Assessment{State: StateSucceeded, Reason: evalsv1alpha1.ReasonCompleted},
				StatusFactsFrom(run), now)
			if diff := cmp.Diff(tc.want, again.JudgeImage); diff != "" {
				t.Errorf("status.judgeImage after the pod (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTransitionsJudgeImageIsTarget: the status that first records judge image source Target (judging.image set to
// the runner's image) brings one Warning event; Default and Spec none, and a run already recorded no second one.
func TestTransitionsJudgeImageIsTarget(t *testing.T) {
	count := func(run *evalsv1alpha1.EvalRun, source evalsv1alpha1.JudgeImageSource) int {
		n := 0
		desired := &evalsv1alpha1.EvalRunStatus{JudgeImage: &evalsv1alpha1.JudgeImageStatus{Image: "runner:v1", Source: source}}
		for _, e := range Transitions(run, desired) {
			if e.Reason == eventJudgeImageIsTarget {
				if e.Type != corev1.EventTypeWarning || !strings.Contains(e.Note, "runner:v1") {
					t.Errorf("event %+v, want a Warning naming the image", e)
				}
				n++
			}
		}
		return n
	}
	run := testutil.UnitRun()
	for _, s := range []evalsv1alpha1.JudgeImageSource{evalsv1alpha1.JudgeImageSourceDefault, evalsv1alpha1.JudgeImageSourceSpec} {
		if n := count(run, s); n != 0 {
			t.Errorf("%s: %d events, want none", s, n)
		}
	}
	if n := count(run, evalsv1alpha1.JudgeImageSourceTarget); n != 1 {
		t.Errorf("Target, first recorded: %d events, want 1", n)
	}
	run.Status.JudgeImage = &evalsv1alpha1.JudgeImageStatus{Image: "runner:v1", Source: evalsv1alpha1.JudgeImageSourceTarget}
	if n := count(run, evalsv1alpha1.JudgeImageSourceTarget); n != 0 {
		t.Errorf("Target, already recorded: %d events, want none", n)
	}
}

// TestProgressStatusWait: a run's progress is written at once the first time and once an interval has
// passed since the last write; sooner, it waits for the rest of the interval.
func TestProgressStatusWait(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	cases := []struct {
		name string
		last time.Time
		want time.Duration
	}{
		{name: "never written", want: 0},
		{name: "written just now", last: now, want: 5 * time.Second},
		{name: "written 2s ago", last: now.Add(-2 * time.Second), want: 3 * time.Second},
		{name: "written an interval ago", last: now.Add(-5 * time.Second), want: 0},
		{name: "written long ago", last: now.Add(-time.Hour), want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ProgressStatusWait(tc.last, now, 5*time.Second); got != tc.want {
				t.Errorf("ProgressStatusWait = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestProgressOnly: from a run whose status holds the manager's last write (pod p is starting), a change of the
// progress within the same state may wait; a change of state, the end, the runner's exit code or a recorded fact
// of the run may not.
func TestProgressOnly(t *testing.T) {
	facts := StatusFacts{JobName: "screen", Queue: &evalsv1alpha1.QueueStatus{Name: "q", Position: ptr.To[int32](3)}}
	starting := Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, Message: "pod p is starting",
		Runner: &evalsv1alpha1.RunnerStatus{PodName: "p", Reason: "PodInitializing"}}
	written := func() *evalsv1alpha1.EvalRun {
		run := testutil.UnitRun()
		run.Status = DesiredManagerStatus(run, starting, facts, t0)
		return run
	}
	withRunner := func(r evalsv1alpha1.RunnerStatus) Assessment {
		a := starting
		a.Runner = &r
		return a
	}
	cases := []struct {
		name  string
		a     Assessment
		facts StatusFacts
		want  bool
	}{
		{name: "unchanged", a: starting, facts: facts, want: true},
		{name: "the message only", a: Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, Message: "pod p is running",
			Runner: starting.Runner}, facts: facts, want: true},
		{name: "the runner's image and reason", a: withRunner(evalsv1alpha1.RunnerStatus{PodName: "p", ImageID: ptr.To("sha256:1")}), facts: facts, want: true},
		{name: "the queue position", a: starting, facts: StatusFacts{JobName: "screen", Queue: &evalsv1alpha1.QueueStatus{Name: "q", Position: ptr.To[int32](1)}},
			want: true},
		{name: "the runner's exit code", a: withRunner(evalsv1alpha1.RunnerStatus{PodName: "p", ExitCode: ptr.To[int32](0)}), facts: facts},
		{name: "another reason", a: Assessment{State: StateCollecting, Reason: evalsv1alpha1.ReasonCollecting, Message: "pod p is starting",
			Runner: starting.Runner}, facts: facts},
		{name: "the end", a: Assessment{State: StateSucceeded, Reason: evalsv1alpha1.ReasonCompleted, Message: "done", Runner: starting.Runner},
			facts: facts},
		{name: "a fact of the run", a: starting, facts: StatusFacts{JobName: "other", Queue: facts.Queue}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := written()
			desired := DesiredManagerStatus(run, tc.a, tc.facts, t0.Add(time.Second))
			if got := ProgressOnly(run, &desired); got != tc.want {
				t.Errorf("ProgressOnly = %v, want %v", got, tc.want)
			}
		})
	}
}
