package assess

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// The runner's bytes that reach a condition (through an assessment's message, the runner's termination message)
// and the events emitted from it are escaped.
func TestConditionsAndEventsEscapeRunnerBytes(t *testing.T) {
	run := testutil.UnitRun()
	pod := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
		Name: "runner", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error" + testutil.HostileText, Message: testutil.HostileText}},
	}}}}
	runner := runnerFacts(pod)
	if runner == nil {
		t.Fatal("no runner facts")
	}
	testutil.AssertPrintable(t, "status.runner.message", runner.Message)
	a := Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonRunnerFailed, Message: "the runner failed: " + testutil.HostileText, Runner: runner}
	desired := DesiredManagerStatus(run, a, StatusFacts{}, time.Now())
	if len(desired.Conditions) == 0 {
		t.Fatal("no conditions")
	}
	for _, c := range desired.Conditions {
		if c.Type == evalsv1alpha1.ConditionSucceeded || c.Type == evalsv1alpha1.ConditionStalled {
			testutil.AssertPrintable(t, "condition "+c.Type, c.Message)
		}
	}
	events := Transitions(run, &desired)
	finished := false
	for _, e := range events {
		if e.Reason == evalsv1alpha1.ReasonRunnerFailed {
			finished = true
			testutil.AssertPrintable(t, "event "+e.Reason, e.Note)
		}
	}
	if !finished {
		t.Errorf("no RunnerFailed event among %+v", events)
	}
}
