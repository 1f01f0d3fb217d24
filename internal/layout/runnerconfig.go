package layout

import (
	"fmt"
	"slices"
	"strings"
)

// EvalFileView values of RunConfig.EvalFileView (spec.target.evalFileView).
const (
	// EvalFileViewInputs gives the runner the runner view of its eval file (evalfile.WriteView).
	EvalFileViewInputs = "Inputs"
	// EvalFileViewFull gives the runner its whole (shard's) eval file.
	EvalFileViewFull = "Full"
)

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

	CommandTemplate           string `json:"commandTemplate"`
	Batching                  string `json:"batching"`
	Workers                   int32  `json:"workers"`
	TimeoutSeconds            int32  `json:"timeoutSeconds,omitempty"`
	KillGraceSeconds          int32  `json:"killGraceSeconds"`
	WorkingDir                string `json:"workingDir,omitempty"`
	HealthcheckTemplate       string `json:"healthcheckTemplate,omitempty"`
	HealthcheckTimeoutSeconds int32  `json:"healthcheckTimeoutSeconds,omitempty"`
	CollectorStartSeconds     int32  `json:"collectorStartSeconds"`
}

// RunnerConfig returns the runner side of a run configuration (narrowed to the pod's shard by LoadShard), whose
// eval file is evalFile.
func (c *RunConfig) RunnerConfig(evalFile string) *RunnerConfig {
	return &RunnerConfig{
		EvalFile:                  evalFile,
		CaseIDs:                   slices.Clone(c.CaseIDs),
		CommandTemplate:           c.CommandTemplate,
		Batching:                  c.Batching,
		Workers:                   c.Workers,
		TimeoutSeconds:            c.TimeoutSeconds,
		KillGraceSeconds:          c.KillGraceSeconds,
		WorkingDir:                c.WorkingDir,
		HealthcheckTemplate:       c.HealthcheckTemplate,
		HealthcheckTimeoutSeconds: c.HealthcheckTimeoutSeconds,
		CollectorStartSeconds:     c.CollectorStartSeconds,
	}
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
	need(c.CommandTemplate != "", "commandTemplate")
	need(c.Batching == "Batched" || c.Batching == "PerCase", "batching (Batched or PerCase)")
	need(c.Workers > 0, "workers")
	need(c.KillGraceSeconds > 0, "killGraceSeconds")
	need(c.HealthcheckTemplate == "" || c.HealthcheckTimeoutSeconds > 0, "healthcheckTimeoutSeconds")
	need(c.CollectorStartSeconds > 0, "collectorStartSeconds")
	if len(missing) > 0 {
		return fmt.Errorf("the runner configuration lacks %s", strings.Join(missing, ", "))
	}
	if c.TimeoutSeconds < 0 {
		return fmt.Errorf("the runner configuration has a negative timeout")
	}
	return nil
}
