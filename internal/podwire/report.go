package podwire

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// LauncherReport is the launcher's report: how the runner invocations ended, as the launcher saw them. The
// launcher writes it as the frame that ends the runner-end FIFO's stream (EncodeFrame), after every
// other process of the runner container is gone, so no runner process can suppress, replace or follow it; the
// collector still decodes it as hostile data (runner processes may write into the FIFO before) and lets it only
// make the outcome worse (a timeout, a failed healthcheck, a failed invocation, processes that survived). A
// report that does not arrive is itself a failure; how the container ended comes from the kubelet.
type LauncherReport struct {
	// Batching is Batched or PerCase.
	Batching string `json:"batching"`
	// Error says why launch could not run the runner at all (bad template, unreadable eval file); the runner
	// never started.
	Error string `json:"error,omitempty"`
	// Healthcheck is the healthcheck's outcome, when one is configured.
	Healthcheck *Outcome `json:"healthcheck,omitempty"`
	// HealthcheckFailed is true when the healthcheck failed and the runner never started.
	HealthcheckFailed bool `json:"healthcheckFailed,omitempty"`
	// Runner is the Batched invocation, or in PerCase mode the first failed invocation (else the last one).
	Runner *Outcome `json:"runner,omitempty"`
	// Cases are the PerCase invocations that did not succeed, in case order, bounded by MaxRecordedCaseFailures.
	Cases []CaseOutcome `json:"cases,omitempty"`
	// FailedCases counts PerCase invocations that did not succeed (all of them, recorded or not).
	FailedCases int `json:"failedCases,omitempty"`
	// Invocations counts the runner invocations that were started.
	Invocations int `json:"invocations"`
	// DurationMs is the wall time of all runner invocations.
	DurationMs int64 `json:"durationMs"`
	// CaseDurations, in PerCase mode, is every case's invocation wall time as the launcher measured it, by case
	// position in the requested order (RunConfig.CaseIDs, else the eval file's): EncodeCaseDurations. The latency
	// evaluator judges these, not the runner's duration_ms claims. Empty in Batched mode, and when the encoding
	// would pass MaxCaseDurationsBytes (latency then judges the claims, and says so).
	CaseDurations string `json:"caseDurations,omitempty"`
	// Leftovers counts the processes the runner left behind that the launcher killed at the end.
	Leftovers int `json:"leftovers,omitempty"`
	// Survivors counts the processes still alive after the launcher's kill grace (SIGKILL does not reach a
	// process in uninterruptible sleep until it wakes): the runner did not end, and the launcher holds the
	// runner-end FIFO until they are gone.
	Survivors int `json:"survivors,omitempty"`
	// ExitCode is the launcher's own exit code, which the kubelet reports as the runner container's.
	ExitCode int `json:"exitCode"`
	// CostBudget is set when the launcher stopped the runner because the cost its records reported passed the
	// pod's cost budget (RunnerConfig.MaxCostNanoUSD).
	CostBudget *CostBudgetStop `json:"costBudget,omitempty"`
}

// CostBudgetStop is what the launcher had read when it stopped the runner for its cost budget.
type CostBudgetStop struct {
	// CostNanoUSD is the cost the records had reported, each case counted once at the most it reported.
	CostNanoUSD int64 `json:"costNanoUSD"`
	// MaxCostNanoUSD is the budget it passed.
	MaxCostNanoUSD int64 `json:"maxCostNanoUSD"`
	// Cases is how many cases had reported a cost.
	Cases int `json:"cases"`
}

// MaxRecordedCaseFailures bounds LauncherReport.Cases.
const MaxRecordedCaseFailures = 200

// CaseOutcome is one PerCase invocation that did not succeed.
type CaseOutcome struct {
	ID string `json:"id"`
	Outcome
}

// SnapshotMarker is the content of the snapshot's ready file, written by the collector.
type SnapshotMarker struct {
	// Final is true when the runner container had ended before the snapshot was taken; the judge runs code
	// judges only on a final snapshot.
	Final bool `json:"final"`
	// Reason says why the snapshot is not final.
	Reason string `json:"reason,omitempty"`
}

// Outcome is what happened to one invocation.
type Outcome struct {
	// ExitCode is set when the command exited on its own.
	ExitCode *int32 `json:"exitCode,omitempty"`
	// Signal names the signal that ended the command (SIGKILL, ...) when it did not exit on its own.
	Signal string `json:"signal,omitempty"`
	// TimedOut is true when the timeout passed and the process group was killed.
	TimedOut bool `json:"timedOut,omitempty"`
	// Terminated is true when launch itself was asked to stop and forwarded the signal.
	Terminated bool `json:"terminated,omitempty"`
	// StartError says why the command could not start (for example, no shell in the image).
	StartError string `json:"startError,omitempty"`
	// DurationMs is the wall time of the invocation.
	DurationMs int64 `json:"durationMs"`
	// StdoutTail and StderrTail are the last TailBytes of each stream (valid UTF-8).
	StdoutTail string `json:"stdoutTail,omitempty"`
	StderrTail string `json:"stderrTail,omitempty"`
}

// Succeeded reports whether the command started, exited 0 and did not time out.
func (o Outcome) Succeeded() bool {
	return o.StartError == "" && !o.TimedOut && !o.Terminated && o.ExitCode != nil && *o.ExitCode == 0
}

// Describe says in one line how the command ended.
func (o Outcome) Describe() string {
	switch {
	case o.StartError != "":
		return o.StartError
	case o.TimedOut:
		return fmt.Sprintf("timed out after %s and was killed", time.Duration(o.DurationMs)*time.Millisecond)
	case o.Terminated:
		return "was stopped because the container was asked to terminate"
	case o.Signal != "":
		return "was killed by " + o.Signal
	case o.ExitCode != nil:
		return fmt.Sprintf("exited with code %d", *o.ExitCode)
	}
	return "ended in an unknown way"
}

// MaxCaseDurationsBytes bounds LauncherReport.CaseDurations: 100,000 cases of up to 35 minutes each (3-byte
// varints) take 400 KB; the frame's payload (MaxFramePayload, 4 MiB) keeps room for the tails.
const MaxCaseDurationsBytes = 2 << 20

// maxCaseDurationMs bounds a measured duration (about 35 years): larger values are clamped.
const maxCaseDurationMs = 1 << 40

// EncodeCaseDurations encodes durations by case position (milliseconds; negative: the case was not invoked) as
// LauncherReport.CaseDurations: one unsigned varint per position, 0 for not invoked, else the milliseconds plus 1,
// in unpadded standard base64. It returns "" when the encoding would pass MaxCaseDurationsBytes.
func EncodeCaseDurations(ms []int64) string {
	raw := make([]byte, 0, 3*len(ms))
	for _, d := range ms {
		var v uint64
		if d >= 0 {
			v = uint64(min(d, maxCaseDurationMs)) + 1
		}
		raw = binary.AppendUvarint(raw, v)
	}
	if base64.RawStdEncoding.EncodedLen(len(raw)) > MaxCaseDurationsBytes {
		return ""
	}
	return base64.RawStdEncoding.EncodeToString(raw)
}

// DecodeCaseDurations decodes LauncherReport.CaseDurations for n cases: each case's milliseconds, -1 for a case
// not invoked (or not covered: an encoding of fewer positions). The report is decoded as hostile data: an
// encoding longer than MaxCaseDurationsBytes, of more than n positions, with a value past the bound or that is
// not base64 of varints is an error, and no duration is then trusted.
func DecodeCaseDurations(s string, n int) ([]int64, error) {
	if len(s) > MaxCaseDurationsBytes {
		return nil, fmt.Errorf("the case durations take %d bytes, more than %d", len(s), MaxCaseDurationsBytes)
	}
	raw, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("the case durations are not base64: %w", err)
	}
	out := make([]int64, n)
	i := 0
	for len(raw) > 0 {
		v, k := binary.Uvarint(raw)
		switch {
		case k <= 0:
			return nil, errors.New("the case durations hold a value that is not a varint")
		case i == n:
			return nil, fmt.Errorf("the case durations hold more than the %d requested cases", n)
		case v > maxCaseDurationMs+1:
			return nil, fmt.Errorf("case %d's duration %d ms is past the bound", i, v-1)
		}
		out[i] = int64(v) - 1
		raw = raw[k:]
		i++
	}
	for ; i < n; i++ {
		out[i] = -1
	}
	return out, nil
}
