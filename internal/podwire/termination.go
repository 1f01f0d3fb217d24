package podwire

// MaxTerminationMessageBytes bounds the collector's termination message (the kubelet keeps at most 4096 bytes).
const MaxTerminationMessageBytes = 4000

// TerminationMessage is the collector's compact summary, written to its termination log: the manager's fallback
// when the collector's API writes never landed.
type TerminationMessage struct {
	Outcome        string `json:"outcome"`
	Message        string `json:"message,omitempty"`
	RunnerFinished bool   `json:"runnerFinished"`
	Persisted      bool   `json:"persisted"`
	PersistError   string `json:"persistError,omitempty"`
	Total          int32  `json:"total"`
	Passed         int32  `json:"passed"`
	Failed         int32  `json:"failed"`
	Errored        int32  `json:"errored"`
	Skipped        int32  `json:"skipped"`
	Missing        int32  `json:"missing"`
	BudgetUnjudged int32  `json:"budgetUnjudged,omitempty"`
	ParseErrors    int32  `json:"parseErrors"`
	Unexpected     int32  `json:"unexpected"`
	OutputSHA256   string `json:"outputSHA256,omitempty"`
}
