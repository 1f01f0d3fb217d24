package podwire

import "github.com/evalrun-operator/evalrun-operator/internal/verdict"

// JudgeLine is one line of judges.jsonl: the result of one code_judge evaluator (or code_judge aggregator) for one
// case, as the judge container recorded it.
type JudgeLine struct {
	// CaseID is the judged case.
	CaseID string `json:"caseId"`
	// Key locates the evaluator in the case (evalfile.EvaluatorConfig.Key).
	Key string `json:"key"`
	// Result is the evaluator's result.
	Result verdict.EvaluatorResult `json:"result"`
}

// JudgeFrame is one message of a judge runner to the collector, an authenticated frame of its judge-end FIFO
// (JudgeEndWriter): one case's code_judge results, or the end of judging.
type JudgeFrame struct {
	// CaseID names the judged case (a case frame).
	CaseID string `json:"caseId,omitempty"`
	// Results are the case's code_judge results, one per evaluator key.
	Results []JudgeLine `json:"results,omitempty"`
	// Leftovers counts the processes the case's scripts left running after they returned; each was killed and
	// reaped before anything else ran (and the result of the script that left it says so).
	Leftovers int `json:"leftovers,omitempty"`
	// End marks the judge runner's last frame.
	End *JudgeEnd `json:"end,omitempty"`
}

// JudgeEnd is the end of a judge runner's report.
type JudgeEnd struct {
	// Judged counts the cases reported.
	Judged int `json:"judged"`
	// Survivors counts the processes of the judge container that were still alive after the last kill (a
	// process in uninterruptible sleep): the verdicts reported before were sent while none was.
	Survivors int `json:"survivors,omitempty"`
	// Error says why code judges could not run (or stopped), if they could not.
	Error string `json:"error,omitempty"`
	// LandlockABI is the Landlock ABI the scripts were confined with (internal/confine): 0 when the kernel has
	// none and the scripts ran unconfined (file, network and signal reach of the judge container's uid).
	LandlockABI int `json:"landlockABI"`
}
