package evalfile

import (
	"fmt"
	"strings"
)

// FileTrials are an eval file's own trials: every case answered Count times, each answer (a trial) judged alone,
// and a case passing when its share of passed trials reaches PassRate. They are what AgentV 4.42's suite-level
// execution.trials maps onto (docs/design/trials.md): the EvalRun's spec.trials, when set, wins over them.
type FileTrials struct {
	// Count is the number of trials of every case, 2 to MaxTrials (a file of one trial has no FileTrials).
	Count int
	// PassRate is the least share of its trials a case must pass, spelled as spec.trials.passRate is (a decimal in
	// (0, 1] with at most 6 decimals). AgentV's pass_at_k, the only strategy the operator reads, is
	// PassAtKRate(Count).
	PassRate string
	// Line is the line of the count they were read from (execution.trials.count), for messages about it; 0 when
	// they were not read from a file's text (TrialsPassAtK).
	Line int
}

// MaxTrials bounds FileTrials.Count: spec.trials.count's maximum (the API's MaxTrials; a test in the manager holds
// them equal), so that a file's trials never ask for more than a spec could.
const MaxTrials = 100

// TrialsPassAtK returns the trials of AgentV's pass_at_k strategy over count trials (a case passes when any trial
// passes), nil for count 1 or less: one trial is no trials.
func TrialsPassAtK(count int) *FileTrials {
	if count <= 1 {
		return nil
	}
	return &FileTrials{Count: count, PassRate: PassAtKRate(count)}
}

// PassAtKRate is the pass rate that passes a case of n trials when any of them passes: 1/n, spelled as
// spec.trials.passRate is (at most 6 decimals, trailing zeros dropped) and rounded down, never up. A rate r with
// 0 < r ≤ 1/n asks for exactly one passed trial of n, and of any fewer judged trials (the verdict rule rounds
// r·trials up to whole trials: stats.Case.Passes), where 1/n rounded up (0.333334 for 3) would ask for two of 3.
// It is meant for n up to MaxTrials (1/n rounds down to 0 from n above 10⁶).
func PassAtKRate(n int) string {
	if n <= 1 {
		return "1"
	}
	return strings.TrimRight(fmt.Sprintf("0.%06d", 1_000_000/n), "0")
}
