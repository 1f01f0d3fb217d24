package controller

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// hostile is text a runner controls (an answer, an id, a stderr line, a termination message): a terminal escape
// that clears the screen and prints a green PASS, a forged line break and bidi overrides.
const hostile = "\x1b[2J\x1b[32mPASS\r\nSucceeded \u202eSSAP\u202c \u2066x\u2069 \u009b31m"

// assertPrintable fails when s carries a raw control character or bidi override, or lacks the escaped ESC.
func assertPrintable(t *testing.T, what, s string) {
	t.Helper()
	if strings.ContainsAny(s, "\x1b\r\n\u202e\u202c\u2066\u2069\u009b") {
		t.Errorf("%s carries raw control characters: %q", what, s)
	}
	if !strings.Contains(s, `\x1b[2J\x1b[32mPASS`) || !strings.Contains(s, `\u202eSSAP`) {
		t.Errorf("%s does not show the runner's bytes escaped: %q", what, s)
	}
}

// The runner's bytes that reach a condition (through an assessment's message, the runner's termination message)
// and the events emitted from it are escaped.
func TestConditionsAndEventsEscapeRunnerBytes(t *testing.T) {
	run := testRun()
	pod := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
		Name: "runner", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error" + hostile, Message: hostile}},
	}}}}
	runner := runnerFacts(pod)
	if runner == nil {
		t.Fatal("no runner facts")
	}
	assertPrintable(t, "status.runner.message", runner.Message)
	a := Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonRunnerFailed, Message: "the runner failed: " + hostile, Runner: runner}
	desired := DesiredManagerStatus(run, a, Facts{}, time.Now())
	if len(desired.Conditions) == 0 {
		t.Fatal("no conditions")
	}
	for _, c := range desired.Conditions {
		if c.Type == evalsv1alpha1.ConditionSucceeded || c.Type == evalsv1alpha1.ConditionStalled {
			assertPrintable(t, "condition "+c.Type, c.Message)
		}
	}
	events := Transitions(run, &desired)
	finished := false
	for _, e := range events {
		if e.Reason == evalsv1alpha1.ReasonRunnerFailed {
			finished = true
			assertPrintable(t, "event "+e.Reason, e.Note)
		}
	}
	if !finished {
		t.Errorf("no RunnerFailed event among %+v", events)
	}
}
