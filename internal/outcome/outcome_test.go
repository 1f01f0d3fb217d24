package outcome

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

func TestCollection(t *testing.T) {
	ended := func(l Launcher, o Output) CollectionFacts {
		return CollectionFacts{End: EndEnded, Launcher: l, Output: o}
	}
	ran := Launcher{RunnerReported: true}
	tests := []struct {
		name  string
		facts CollectionFacts
		want  Decision
	}{
		{"every result", ended(ran, Output{}), Decision{evalsv1alpha1.OutcomeCompleted, CauseCompleted}},
		{"no report expected, every result", ended(Launcher{}, Output{}), Decision{evalsv1alpha1.OutcomeCompleted, CauseCompleted}},
		{"the runner outlived its timeouts", CollectionFacts{End: EndDeadline}, Decision{evalsv1alpha1.OutcomeRunnerTimedOut, CauseRunnerDeadline}},
		{"processes that survive SIGKILL, runner not ended", CollectionFacts{End: EndNotStopped}, Decision{evalsv1alpha1.OutcomeRunnerNotStopped, CauseNotStopped}},
		{"the pod stopped first", CollectionFacts{End: EndPodStopped}, Decision{evalsv1alpha1.OutcomeRunnerFailed, CauseRunnerNotEnded}},
		{"the end could not be watched", CollectionFacts{End: EndWatchFailed}, Decision{evalsv1alpha1.OutcomeRunnerFailed, CauseRunnerNotEnded}},
		{"an unknown end is not an end", CollectionFacts{End: "Ended "}, Decision{evalsv1alpha1.OutcomeRunnerFailed, CauseRunnerNotEnded}},
		{"the wait's end outranks a clean output", CollectionFacts{End: EndDeadline, Launcher: ran}, Decision{evalsv1alpha1.OutcomeRunnerTimedOut, CauseRunnerDeadline}},
		// A missing report is a failure even when the output is perfect: a runner that suppresses the launcher's
		// report gains nothing.
		{"report missing, output complete", ended(Launcher{Missing: true}, Output{}), Decision{evalsv1alpha1.OutcomeRunnerFailed, CauseReportMissing}},
		{"report missing outranks invalid output", ended(Launcher{Missing: true}, Output{ParseErrors: 3}), Decision{evalsv1alpha1.OutcomeRunnerFailed, CauseReportMissing}},
		{"survivors after the runner ended", ended(Launcher{RunnerReported: true, Survivors: 2}, Output{}), Decision{evalsv1alpha1.OutcomeRunnerNotStopped, CauseNotStopped}},
		{"survivors outrank a timeout", ended(Launcher{RunnerReported: true, TimedOut: true, Survivors: 1}, Output{}), Decision{evalsv1alpha1.OutcomeRunnerNotStopped, CauseNotStopped}},
		{"could not start", ended(Launcher{StartFailed: true}, Output{}), Decision{evalsv1alpha1.OutcomeRunnerFailed, CauseStartFailed}},
		{"healthcheck failed", ended(Launcher{HealthcheckFailed: true}, Output{NoOutput: true}), Decision{evalsv1alpha1.OutcomeHealthcheckFailed, CauseHealthcheckFailed}},
		{"cost budget: the invocations the launcher stopped are its doing", ended(Launcher{RunnerReported: true, CostBudgetExceeded: true, Failed: true, TimedOut: true}, Output{ParseErrors: 1, Missing: 3}),
			Decision{evalsv1alpha1.OutcomeCostBudgetExceeded, CauseCostBudget}},
		{"survivors outrank the cost budget", ended(Launcher{RunnerReported: true, CostBudgetExceeded: true, Survivors: 1}, Output{}), Decision{evalsv1alpha1.OutcomeRunnerNotStopped, CauseNotStopped}},
		{"timed out outranks failed", ended(Launcher{RunnerReported: true, TimedOut: true, Failed: true}, Output{}), Decision{evalsv1alpha1.OutcomeRunnerTimedOut, CauseRunnerTimedOut}},
		{"failed with a complete output", ended(Launcher{RunnerReported: true, Failed: true}, Output{}), Decision{evalsv1alpha1.OutcomeRunnerFailed, CauseRunnerFailed}},
		{"a failure without the runner's account is the output's to say", ended(Launcher{Failed: true}, Output{Missing: 1}), Decision{evalsv1alpha1.OutcomeMissingResults, CauseMissingResults}},
		{"invalid lines outrank missing ids", ended(ran, Output{ParseErrors: 1, Missing: 4}), Decision{evalsv1alpha1.OutcomeInvalidOutput, CauseInvalidOutput}},
		{"no output file", ended(ran, Output{NoOutput: true, Missing: 2}), Decision{evalsv1alpha1.OutcomeMissingResults, CauseNoOutput}},
		{"missing ids", ended(ran, Output{Missing: 1}), Decision{evalsv1alpha1.OutcomeMissingResults, CauseMissingResults}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Collection(tt.facts)); diff != "" {
				t.Errorf("Collection(%+v) (-want +got):\n%s", tt.facts, diff)
			}
		})
	}
}

func TestRun(t *testing.T) {
	exited := func(code int32) Kubelet { return Kubelet{Terminated: true, ExitCode: code} }
	tests := []struct {
		name    string
		outcome evalsv1alpha1.CollectionOutcome
		kubelet Kubelet
		want    RunEnd
	}{
		{"completed, exit 0", evalsv1alpha1.OutcomeCompleted, exited(0), RunEnd{Succeeded: true, Reason: evalsv1alpha1.ReasonCompleted}},
		{"completed, runner still running", evalsv1alpha1.OutcomeCompleted, Kubelet{}, RunEnd{Succeeded: true, Reason: evalsv1alpha1.ReasonCompleted}},
		{"completed, exit 7: the kubelet's word", evalsv1alpha1.OutcomeCompleted, exited(7), RunEnd{Reason: evalsv1alpha1.ReasonRunnerFailed, Override: OverrideExitCode}},
		{"missing results, exit 1", evalsv1alpha1.OutcomeMissingResults, exited(1), RunEnd{Reason: evalsv1alpha1.ReasonRunnerFailed, Override: OverrideExitCode}},
		{"invalid output, exit 2", evalsv1alpha1.OutcomeInvalidOutput, exited(2), RunEnd{Reason: evalsv1alpha1.ReasonRunnerFailed, Override: OverrideExitCode}},
		{"timed out, exit 137: the launcher's account stands", evalsv1alpha1.OutcomeRunnerTimedOut, exited(137), RunEnd{Reason: evalsv1alpha1.ReasonRunnerTimedOut}},
		{"not stopped, exit 1", evalsv1alpha1.OutcomeRunnerNotStopped, exited(1), RunEnd{Reason: evalsv1alpha1.ReasonRunnerNotStopped}},
		{"healthcheck failed, exit 1", evalsv1alpha1.OutcomeHealthcheckFailed, exited(1), RunEnd{Reason: evalsv1alpha1.ReasonHealthcheckFailed}},
		{"cost budget, exit 121: the launcher's account stands", evalsv1alpha1.OutcomeCostBudgetExceeded, exited(121), RunEnd{Reason: evalsv1alpha1.ReasonCostBudgetExceeded}},
		{"runner failed, exit 3", evalsv1alpha1.OutcomeRunnerFailed, exited(3), RunEnd{Reason: evalsv1alpha1.ReasonRunnerFailed}},
		{"collector failed, exit 0", evalsv1alpha1.OutcomeCollectorFailed, exited(0), RunEnd{Reason: evalsv1alpha1.ReasonCollectorFailed}},
		{"missing results, exit 0", evalsv1alpha1.OutcomeMissingResults, exited(0), RunEnd{Reason: evalsv1alpha1.ReasonMissingResults}},
		{"invalid output, exit 0", evalsv1alpha1.OutcomeInvalidOutput, exited(0), RunEnd{Reason: evalsv1alpha1.ReasonInvalidOutput}},
		{"OOMKilled outranks a completed collection", evalsv1alpha1.OutcomeCompleted, Kubelet{Terminated: true, ExitCode: 137, OOMKilled: true},
			RunEnd{Reason: evalsv1alpha1.ReasonRunnerOOMKilled, Override: OverrideOOMKilled}},
		{"OOMKilled outranks a timeout", evalsv1alpha1.OutcomeRunnerTimedOut, Kubelet{Terminated: true, OOMKilled: true},
			RunEnd{Reason: evalsv1alpha1.ReasonRunnerOOMKilled, Override: OverrideOOMKilled}},
		{"an unknown outcome never succeeds", "Completed!", exited(0), RunEnd{Reason: evalsv1alpha1.ReasonCollectorFailed, Override: OverrideUnknownOutcome}},
		{"an empty outcome never succeeds", "", Kubelet{}, RunEnd{Reason: evalsv1alpha1.ReasonCollectorFailed, Override: OverrideUnknownOutcome}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Run(tt.outcome, tt.kubelet)); diff != "" {
				t.Errorf("Run(%q, %+v) (-want +got):\n%s", tt.outcome, tt.kubelet, diff)
			}
		})
	}
}

// TestEveryOutcomeHasAReason: an outcome added to the API without a reason here would end every run that has it
// as CollectorFailed.
func TestEveryOutcomeHasAReason(t *testing.T) {
	for _, o := range []evalsv1alpha1.CollectionOutcome{
		evalsv1alpha1.OutcomeCompleted, evalsv1alpha1.OutcomeRunnerFailed, evalsv1alpha1.OutcomeRunnerTimedOut,
		evalsv1alpha1.OutcomeHealthcheckFailed, evalsv1alpha1.OutcomeMissingResults, evalsv1alpha1.OutcomeInvalidOutput,
		evalsv1alpha1.OutcomeCollectorFailed, evalsv1alpha1.OutcomeRunnerNotStopped, evalsv1alpha1.OutcomeCostBudgetExceeded,
	} {
		if got := Run(o, Kubelet{}); got.Override != OverrideNone || got.Reason != string(o) {
			t.Errorf("Run(%q) = %+v, want the reason of the same name", o, got)
		}
	}
}

func TestShardRanking(t *testing.T) {
	if !Worse(evalsv1alpha1.ReasonInfrastructureFailed, evalsv1alpha1.ReasonRunnerFailed) {
		t.Error("an infrastructure failure must name a sharded run over a runner failure")
	}
	if !Worse(evalsv1alpha1.ReasonRunnerOOMKilled, evalsv1alpha1.ReasonMissingResults) {
		t.Error("an OOM kill must name a sharded run over missing results")
	}
	if Worse("SomethingNew", evalsv1alpha1.ReasonMissingResults) || !Worse(evalsv1alpha1.ReasonMissingResults, "SomethingNew") {
		t.Error("an unlisted reason must come last")
	}
	if Worse(evalsv1alpha1.ReasonRunnerFailed, evalsv1alpha1.ReasonRunnerFailed) {
		t.Error("Worse must be strict")
	}
	for _, r := range runFatal {
		if !RunFatal(r) {
			t.Errorf("RunFatal(%q) = false", r)
		}
	}
	if RunFatal(evalsv1alpha1.ReasonRunnerFailed) || RunFatal(evalsv1alpha1.ReasonMissingResults) {
		t.Error("a runner's own failure must end its shard only")
	}
}
