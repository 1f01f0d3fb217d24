package outcome

import (
	"slices"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// Kubelet is what the kubelet says about how the runner container ended: the one account of the runner that its
// processes cannot forge. The zero value is "not seen" (still running, or the pod is gone without a record).
type Kubelet struct {
	// Terminated: the kubelet reported the runner container terminated; ExitCode is its exit code.
	Terminated bool
	ExitCode   int32
	// OOMKilled: the kubelet reported the runner container OOMKilled.
	OOMKilled bool
}

// Override names the kubelet fact that overrode a collection's outcome.
type Override string

// Overrides of a collection's outcome by the kubelet.
const (
	// OverrideNone: the collection's outcome stands.
	OverrideNone Override = ""
	// OverrideOOMKilled: the runner container ran out of memory.
	OverrideOOMKilled Override = "OOMKilled"
	// OverrideExitCode: the runner container exited non-zero under an outcome that was not yet a failure of the
	// runner.
	OverrideExitCode Override = "ExitCode"
	// OverrideUnknownOutcome: the collection named an outcome this manager does not know.
	OverrideUnknownOutcome Override = "UnknownOutcome"
)

// RunEnd is the run's end as the manager decides it from a collection.
type RunEnd struct {
	Succeeded bool
	// Reason is the Succeeded/Failed condition's reason.
	Reason string
	// Override says which kubelet fact (if any) replaced the collection's outcome.
	Override Override
}

// reasons maps each collection outcome to the run's reason.
var reasons = map[evalsv1alpha1.CollectionOutcome]string{
	evalsv1alpha1.OutcomeCompleted:          evalsv1alpha1.ReasonCompleted,
	evalsv1alpha1.OutcomeRunnerFailed:       evalsv1alpha1.ReasonRunnerFailed,
	evalsv1alpha1.OutcomeRunnerTimedOut:     evalsv1alpha1.ReasonRunnerTimedOut,
	evalsv1alpha1.OutcomeRunnerNotStopped:   evalsv1alpha1.ReasonRunnerNotStopped,
	evalsv1alpha1.OutcomeHealthcheckFailed:  evalsv1alpha1.ReasonHealthcheckFailed,
	evalsv1alpha1.OutcomeMissingResults:     evalsv1alpha1.ReasonMissingResults,
	evalsv1alpha1.OutcomeInvalidOutput:      evalsv1alpha1.ReasonInvalidOutput,
	evalsv1alpha1.OutcomeCollectorFailed:    evalsv1alpha1.ReasonCollectorFailed,
	evalsv1alpha1.OutcomeCostBudgetExceeded: evalsv1alpha1.ReasonCostBudgetExceeded,
}

// RunnerFailure reports an outcome that already says the runner (or the collector) failed: the launcher's account
// names such a failure more precisely than the kubelet's exit code.
func RunnerFailure(o evalsv1alpha1.CollectionOutcome) bool {
	switch o {
	case evalsv1alpha1.OutcomeRunnerTimedOut, evalsv1alpha1.OutcomeRunnerNotStopped, evalsv1alpha1.OutcomeHealthcheckFailed,
		evalsv1alpha1.OutcomeRunnerFailed, evalsv1alpha1.OutcomeCollectorFailed, evalsv1alpha1.OutcomeCostBudgetExceeded:
		return true
	}
	return false
}

// DecidedBeforeRunnerEnd reports an outcome that decides the run while the runner container still runs: the
// collector stopped waiting for a runner that outlived its own timeouts, or whose processes the launcher could
// not kill.
func DecidedBeforeRunnerEnd(o evalsv1alpha1.CollectionOutcome) bool {
	return o == evalsv1alpha1.OutcomeRunnerTimedOut || o == evalsv1alpha1.OutcomeRunnerNotStopped
}

// Run decides the run's end from a collection's outcome and the kubelet's facts. The kubelet's word comes first:
// a runner container that was OOMKilled, or exited non-zero, failed, whatever its output or the launcher's report
// claim.
func Run(o evalsv1alpha1.CollectionOutcome, k Kubelet) RunEnd {
	if k.OOMKilled {
		return RunEnd{Reason: evalsv1alpha1.ReasonRunnerOOMKilled, Override: OverrideOOMKilled}
	}
	if k.Terminated && k.ExitCode != 0 && !RunnerFailure(o) {
		return RunEnd{Reason: evalsv1alpha1.ReasonRunnerFailed, Override: OverrideExitCode}
	}
	reason, ok := reasons[o]
	if !ok {
		return RunEnd{Reason: evalsv1alpha1.ReasonCollectorFailed, Override: OverrideUnknownOutcome}
	}
	return RunEnd{Succeeded: o == evalsv1alpha1.OutcomeCompleted, Reason: reason}
}

// runFatal are the shard failures that every shard would meet alike (the pod cannot be created, scheduled,
// pulled or configured; the Job's deadline): one of them ends the whole run and stops its Job. Infrastructure
// failures and disruptions are counted per completion index: they end their shard only (the manager stops that
// index), as a runner's failure does.
var runFatal = []string{
	evalsv1alpha1.ReasonImagePullFailed,
	evalsv1alpha1.ReasonUnschedulable,
	evalsv1alpha1.ReasonPodRejected,
	evalsv1alpha1.ReasonInvalidContainerConfig,
	evalsv1alpha1.ReasonDeadlineExceeded,
}

// RunFatal reports a shard's failure reason that ends the whole run (every shard would meet it alike). Any other
// failure ends its shard only, and the others go on.
func RunFatal(reason string) bool { return slices.Contains(runFatal, reason) }

// failurePriority orders the reasons a finished sharded run can take from its failed shards: the first reason in
// this list that some shard has is the run's.
var failurePriority = []string{
	evalsv1alpha1.ReasonInfrastructureFailed,
	evalsv1alpha1.ReasonDisruptionLimitExceeded,
	evalsv1alpha1.ReasonPodRejected,
	evalsv1alpha1.ReasonImagePullFailed,
	evalsv1alpha1.ReasonUnschedulable,
	evalsv1alpha1.ReasonInvalidContainerConfig,
	evalsv1alpha1.ReasonDeadlineExceeded,
	evalsv1alpha1.ReasonStorageLimitExceeded,
	evalsv1alpha1.ReasonRunnerOOMKilled,
	evalsv1alpha1.ReasonRunnerTimedOut,
	evalsv1alpha1.ReasonRunnerNotStopped,
	evalsv1alpha1.ReasonCostBudgetExceeded,
	evalsv1alpha1.ReasonHealthcheckFailed,
	evalsv1alpha1.ReasonRunnerFailed,
	evalsv1alpha1.ReasonCollectorFailed,
	evalsv1alpha1.ReasonResultsNotReported,
	evalsv1alpha1.ReasonCancelled,
	evalsv1alpha1.ReasonInvalidOutput,
	evalsv1alpha1.ReasonMissingResults,
}

// Worse reports whether failure reason a is to name a sharded run over failure reason b: the reasons the
// infrastructure gives first, then the runner's, then its output's; a reason not listed comes last.
func Worse(a, b string) bool { return rank(a) < rank(b) }

func rank(reason string) int {
	if i := slices.Index(failurePriority, reason); i >= 0 {
		return i
	}
	return len(failurePriority)
}
