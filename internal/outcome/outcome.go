// Package outcome is the one decision from typed facts about a run's pod to its end: Collection decides a
// collection's outcome from the collector's facts (how its wait for the runner ended, the launcher's report, the
// output); Run turns a recorded outcome (status.collection, or the collector's termination message when its
// status write never landed) and the kubelet's facts about the runner container into the run's reason; a sharded
// run adds its shards up with Worse and RunFatal. Every input is a typed fact: nothing here reads or matches
// message text, and the words for people are the callers'. It imports only the API and is pure.
package outcome

import (
	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// End is how the collector's wait for the runner ended.
type End string

// Ends of the collector's wait for the runner.
const (
	// EndEnded: every process of the runner container is gone (the runner-end FIFO's end-of-file).
	EndEnded End = "Ended"
	// EndDeadline: the runner container outlived runnerDeadlineSeconds (its timeouts plus a margin).
	EndDeadline End = "DeadlinePassed"
	// EndNotStopped: the launcher reported processes of the runner that survived SIGKILL for its kill grace.
	EndNotStopped End = "NotStopped"
	// EndPodStopped: the collector was asked to stop before the runner ended.
	EndPodStopped End = "PodStopped"
	// EndWatchFailed: the runner-end FIFO could not be watched.
	EndWatchFailed End = "WatchFailed"
)

// Launcher are the facts of the launcher's report (the runner container's init, which writes it last, after every
// runner process is gone). The zero value is "no report, none expected".
type Launcher struct {
	// Missing: the runner ended and no usable report arrived, so how it ended is unaccounted for.
	Missing bool
	// StartFailed: the runner (or its healthcheck) could not be started.
	StartFailed bool
	// HealthcheckFailed: the healthcheck failed before any case ran.
	HealthcheckFailed bool
	// RunnerReported: the report names the runner's process (Batch) or the first failing invocation (PerCase);
	// TimedOut and Failed speak of it.
	RunnerReported bool
	// TimedOut: the runner, or one of its invocations, ran past its timeout and was killed.
	TimedOut bool
	// Failed: the runner, or one of its invocations, did not exit 0.
	Failed bool
	// Survivors counts processes of the runner that survived SIGKILL for the launcher's kill grace.
	Survivors int
	// CostBudgetExceeded: the launcher stopped the runner because the cost its records reported passed the
	// pod's cost budget (spec.target.maxCostUSD).
	CostBudgetExceeded bool
}

// Output are the facts of the runner's output as the pipeline parsed it.
type Output struct {
	// ParseErrors counts invalid lines and unreadable outputs.
	ParseErrors int
	// NoOutput: the runner left no output file.
	NoOutput bool
	// Missing counts requested cases with no record.
	Missing int
}

// CollectionFacts are what the collector knows when it decides.
type CollectionFacts struct {
	End      End
	Launcher Launcher
	Output   Output
}

// Cause names the fact that decided a collection, so that the caller can say it to people.
type Cause string

// Causes of a collection's outcome, in the order Collection weighs them.
const (
	CauseRunnerDeadline    Cause = "RunnerDeadline"
	CauseNotStopped        Cause = "NotStopped"
	CauseRunnerNotEnded    Cause = "RunnerNotEnded"
	CauseReportMissing     Cause = "ReportMissing"
	CauseStartFailed       Cause = "StartFailed"
	CauseHealthcheckFailed Cause = "HealthcheckFailed"
	CauseCostBudget        Cause = "CostBudget"
	CauseRunnerTimedOut    Cause = "RunnerTimedOut"
	CauseRunnerFailed      Cause = "RunnerFailed"
	CauseInvalidOutput     Cause = "InvalidOutput"
	CauseNoOutput          Cause = "NoOutput"
	CauseMissingResults    Cause = "MissingResults"
	CauseCompleted         Cause = "Completed"
)

// Decision is a collection's outcome and the fact that decided it.
type Decision struct {
	Outcome evalsv1alpha1.CollectionOutcome
	Cause   Cause
}

// Collection decides a collection's outcome. How the runner ended comes first (a wait that did not see its end,
// then the launcher's report), then the output; the launcher's report can only make an outcome worse: it names a
// timeout, a failed healthcheck or failed invocations, never a success the output does not show.
func Collection(f CollectionFacts) Decision {
	l := f.Launcher
	switch {
	case f.End == EndDeadline:
		return Decision{evalsv1alpha1.OutcomeRunnerTimedOut, CauseRunnerDeadline}
	case f.End == EndNotStopped:
		return Decision{evalsv1alpha1.OutcomeRunnerNotStopped, CauseNotStopped}
	case f.End != EndEnded:
		return Decision{evalsv1alpha1.OutcomeRunnerFailed, CauseRunnerNotEnded}
	case l.Missing:
		return Decision{evalsv1alpha1.OutcomeRunnerFailed, CauseReportMissing}
	case l.Survivors > 0:
		return Decision{evalsv1alpha1.OutcomeRunnerNotStopped, CauseNotStopped}
	case l.StartFailed:
		return Decision{evalsv1alpha1.OutcomeRunnerFailed, CauseStartFailed}
	case l.HealthcheckFailed:
		return Decision{evalsv1alpha1.OutcomeHealthcheckFailed, CauseHealthcheckFailed}
	case l.CostBudgetExceeded:
		// The launcher stopped the runner: the timeouts or failures of invocations it stopped are its doing.
		return Decision{evalsv1alpha1.OutcomeCostBudgetExceeded, CauseCostBudget}
	case l.RunnerReported && l.TimedOut:
		return Decision{evalsv1alpha1.OutcomeRunnerTimedOut, CauseRunnerTimedOut}
	case l.RunnerReported && l.Failed:
		return Decision{evalsv1alpha1.OutcomeRunnerFailed, CauseRunnerFailed}
	case f.Output.ParseErrors > 0:
		return Decision{evalsv1alpha1.OutcomeInvalidOutput, CauseInvalidOutput}
	case f.Output.NoOutput:
		return Decision{evalsv1alpha1.OutcomeMissingResults, CauseNoOutput}
	case f.Output.Missing > 0:
		return Decision{evalsv1alpha1.OutcomeMissingResults, CauseMissingResults}
	}
	return Decision{evalsv1alpha1.OutcomeCompleted, CauseCompleted}
}
