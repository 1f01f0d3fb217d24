package layout

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// RunConfig is the run.json the manager writes into the pinned eval ConfigMap. `collector launch`, `collector
// collect` and `collector judge` read it; it carries everything they need from the EvalRun spec, with every
// default already resolved by the manager, so that none needs API access to read the spec.
type RunConfig struct {
	// RunName, Namespace and UID identify the EvalRun.
	RunName   string `json:"runName"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`

	// EvalFile is the path of the eval file ({EVAL_FILE}).
	EvalFile string `json:"evalFile"`
	// CaseIDs are the requested case ids, in eval-file order.
	CaseIDs []string `json:"caseIds"`

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

	// PassThreshold is the pass threshold as a decimal string ("0.8").
	PassThreshold string `json:"passThreshold"`
	// DefaultEvaluators are the spec's judging.evaluators as raw JSON objects.
	DefaultEvaluators []map[string]any `json:"defaultEvaluators,omitempty"`
	// CodeJudgeTimeoutSeconds and CodeJudgeWorkers bound code_judge scripts.
	CodeJudgeTimeoutSeconds int32 `json:"codeJudgeTimeoutSeconds"`
	CodeJudgeWorkers        int32 `json:"codeJudgeWorkers"`

	// ResultConfigMaps are the names of the pre-created, owned result ConfigMaps, in order.
	ResultConfigMaps []string `json:"resultConfigMaps"`
	// StatusBudgetBytes bounds the status results section the collector writes.
	StatusBudgetBytes int64 `json:"statusBudgetBytes"`
	// ResultsDeadlineSeconds bounds how long the collector retries API writes after the runner ends.
	ResultsDeadlineSeconds int32 `json:"resultsDeadlineSeconds"`

	// CodeJudges is true when some requested case has a code_judge: the pod then has a judge container, and the
	// collector hands it the snapshot of the runner's output.
	CodeJudges bool `json:"codeJudges,omitempty"`
	// MaxOutputBytes bounds the Batched output file and the launcher's report the collector copies.
	MaxOutputBytes int64 `json:"maxOutputBytes"`
	// RunnerDeadlineSeconds, when positive, bounds how long the collector waits for the runner container to end
	// (the runner's own timeouts plus a margin); past it, the collector copies the output as it is and reports
	// the runner as timed out. 0: the collector waits until the pod is stopped.
	RunnerDeadlineSeconds int32 `json:"runnerDeadlineSeconds,omitempty"`
	// JudgeDeadlineSeconds bounds how long the collector waits for the judge container's verdicts.
	JudgeDeadlineSeconds int32 `json:"judgeDeadlineSeconds,omitempty"`
	// CollectorStartSeconds bounds how long the launcher waits for the collector to open the runner-end FIFO
	// before it starts the runner.
	CollectorStartSeconds int32 `json:"collectorStartSeconds"`
}

// Validate checks that the manager resolved every default: the pod's containers use the configuration as it is
// and never default anything themselves, so a zero where a value is required is an error that names the fields.
func (c *RunConfig) Validate() error {
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
	need(c.PassThreshold != "", "passThreshold")
	need(c.CodeJudgeTimeoutSeconds > 0, "codeJudgeTimeoutSeconds")
	need(c.CodeJudgeWorkers > 0, "codeJudgeWorkers")
	need(c.StatusBudgetBytes > 0, "statusBudgetBytes")
	need(c.ResultsDeadlineSeconds > 0, "resultsDeadlineSeconds")
	need(c.MaxOutputBytes > 0, "maxOutputBytes")
	need(!c.CodeJudges || c.JudgeDeadlineSeconds > 0, "judgeDeadlineSeconds")
	need(c.CollectorStartSeconds > 0, "collectorStartSeconds")
	if len(missing) > 0 {
		return fmt.Errorf("the run configuration lacks %s (the manager resolves every default)", strings.Join(missing, ", "))
	}
	if c.TimeoutSeconds < 0 || c.RunnerDeadlineSeconds < 0 {
		return errors.New("the run configuration has a negative timeout")
	}
	return nil
}

// Seconds is a configuration's number of seconds as a duration.
func Seconds(n int32) time.Duration { return time.Duration(n) * time.Second }
