package podwire

import (
	"fmt"
	"slices"
	"strings"
)

// Launch is what the launcher needs to run the runner, shared by run.json (RunConfig) and the runner's launch.json
// (RunnerConfig), both of which keep its fields at their top level.
type Launch struct {
	// CommandTemplate, Batching ("Batched" or "PerCase") and Workers describe the runner invocation.
	CommandTemplate string `json:"commandTemplate"`
	Batching        string `json:"batching"`
	Workers         int32  `json:"workers"`
	// TimeoutSeconds bounds each invocation; 0 means none.
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
	// KillGraceSeconds is the time between SIGTERM and SIGKILL of a timed-out process group.
	KillGraceSeconds int32 `json:"killGraceSeconds"`
	// WorkingDir is the runner's working directory ("" keeps the image's).
	WorkingDir string `json:"workingDir,omitempty"`
	// HealthcheckTemplate, when set, runs before the runner, bounded by HealthcheckTimeoutSeconds.
	HealthcheckTemplate       string `json:"healthcheckTemplate,omitempty"`
	HealthcheckTimeoutSeconds int32  `json:"healthcheckTimeoutSeconds,omitempty"`
	// CollectorStartSeconds bounds how long the launcher waits for the collector to open the runner-end FIFO
	// before it starts the runner.
	CollectorStartSeconds int32 `json:"collectorStartSeconds"`
	// MaxCostNanoUSD, when set, is the pod's cost budget in nanodollars (spec.target.maxCostUSD, or a sharded
	// run's share of it): the launcher stops the runner once the cost_usd its records reported passes it.
	MaxCostNanoUSD *int64 `json:"maxCostNanoUSD,omitempty"`
}

// check reports, through need, every value the launcher needs that is not set.
func (l *Launch) check(need func(ok bool, field string)) {
	need(l.CommandTemplate != "", "commandTemplate")
	need(l.Batching == "Batched" || l.Batching == "PerCase", "batching (Batched or PerCase)")
	need(l.Workers > 0, "workers")
	need(l.KillGraceSeconds > 0, "killGraceSeconds")
	need(l.HealthcheckTemplate == "" || l.HealthcheckTimeoutSeconds > 0, "healthcheckTimeoutSeconds")
	need(l.CollectorStartSeconds > 0, "collectorStartSeconds")
}

// RunnerConfig is the runner side's run configuration: what the launcher needs to run the runner, and nothing of
// the judging side (no evaluators, pass threshold, model endpoint, result objects or bucket). install writes it
// next to the runner's eval file, in the view volume the runner mounts read-only; the runner never mounts run.json.
// Its fields are RunConfig's of the same names, narrowed to the pod's shard.
type RunnerConfig struct {
	// EvalFile is the runner's eval file ({EVAL_FILE}): the runner view, or the whole (shard's) file with
	// evalFileView Full.
	EvalFile string `json:"evalFile"`
	// CaseIDs are the pod's case ids, in eval-file order.
	CaseIDs []string `json:"caseIds"`
	// Trial is the pod's trial in a run with trials (from 1, RunConfig.Trial), omitted in a run of one trial:
	// {ATTEMPT} and $ATTEMPT (Attempt).
	Trial int32 `json:"trial,omitempty"`
	// NothingToRun says the pod has no case to run (a trial of a resumed run whose every case of the shard has its
	// result carried, RunConfig.NothingToRun): the launcher starts no runner and EvalFile is not written.
	NothingToRun bool `json:"nothingToRun,omitempty"`
	Launch
}

// Attempt is the runner's {ATTEMPT}: its pod's trial, 1 in a run of one trial.
func (c *RunnerConfig) Attempt() int { return max(int(c.Trial), 1) }

// RunnerConfig returns the runner side of a run configuration (narrowed to the pod's shard and trial by
// LoadShard), whose eval file is evalFile.
func (c *RunConfig) RunnerConfig(evalFile string) *RunnerConfig {
	rc := &RunnerConfig{EvalFile: evalFile, CaseIDs: slices.Clone(c.CaseIDs), NothingToRun: c.NothingToRun, Launch: c.Launch}
	if c.Trials > 1 {
		rc.Trial = c.Trial
	}
	return rc
}

// Validate checks that every value the launcher needs is set (RunConfig.Validate's rules for them).
func (c *RunnerConfig) Validate() error {
	var missing []string
	need := func(ok bool, field string) {
		if !ok {
			missing = append(missing, field)
		}
	}
	need(c.EvalFile != "", "evalFile")
	need(c.Trial >= 0 && c.Trial <= MaxTrials, "trial (at most 100)")
	c.check(need)
	if len(missing) > 0 {
		return fmt.Errorf("the runner configuration lacks %s", strings.Join(missing, ", "))
	}
	if c.TimeoutSeconds < 0 {
		return fmt.Errorf("the runner configuration has a negative timeout")
	}
	if c.MaxCostNanoUSD != nil && *c.MaxCostNanoUSD < 0 {
		return fmt.Errorf("the runner configuration has a negative cost budget")
	}
	return nil
}
