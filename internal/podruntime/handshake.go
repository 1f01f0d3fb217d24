package podruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
)

// pollInterval is how often the judge and the collector look for each other's marker files.
const pollInterval = 100 * time.Millisecond

// LauncherReport is launcher.json, written by the launcher into the runner's output directory after the runner
// ended: how the runner invocations ended, as the launcher saw them. It lives in the runner's reach, so the
// collector reads it as hostile data and lets it only make the outcome worse (a timeout, a failed healthcheck, a
// failed invocation); how the container ended comes from the kubelet.
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
	// Leftovers counts the processes the runner left behind that the launcher killed at the end.
	Leftovers int `json:"leftovers,omitempty"`
}

// MaxRecordedCaseFailures bounds LauncherReport.Cases.
const MaxRecordedCaseFailures = 200

// CaseOutcome is one PerCase invocation that did not succeed.
type CaseOutcome struct {
	ID string `json:"id"`
	Outcome
}

// JudgeLine is one line of judges.jsonl: the result of one code_judge evaluator (or code_judge aggregator) for one
// case, as the judge container recorded it.
type JudgeLine struct {
	// CaseID is the judged case.
	CaseID string `json:"caseId"`
	// Key locates the evaluator in the case (evalfile.EvaluatorConfig.Key).
	Key string `json:"key"`
	// Result is the evaluator's result.
	Result evaluate.EvaluatorResult `json:"result"`
}

// SnapshotMarker is the content of the snapshot's ready file, written by the collector.
type SnapshotMarker struct {
	// Final is true when the runner container had ended before the snapshot was taken; the judge runs code
	// judges only on a final snapshot.
	Final bool `json:"final"`
	// Reason says why the snapshot is not final.
	Reason string `json:"reason,omitempty"`
}

// JudgesMarker is the content of the judge's done file.
type JudgesMarker struct {
	// Error says why code judges could not run, if they could not.
	Error string `json:"error,omitempty"`
}

// writeJSONAtomic encodes v and writes it to path atomically, creating the directory.
func writeJSONAtomic(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	return writeBytesAtomic(path, append(data, '\n'))
}

// readJSON decodes path into v. A missing file returns an error satisfying errors.Is(err, os.ErrNotExist). Only
// for files of the trusted side: the runner's files are read through the safefile package.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// waitForFile polls for path until it exists, ctx ends or timeout passes (0: no timeout). It returns nil once the
// file exists.
func waitForFile(ctx context.Context, path string, timeout time.Duration) error {
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("stat %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("%s did not appear within %s", filepath.Base(path), timeout)
		case <-tick.C:
		}
	}
}

func pathDir(p string) string { return filepath.Dir(p) }
