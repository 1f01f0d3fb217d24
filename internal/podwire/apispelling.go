package podwire

// The API's words the pod's wire contract carries, spelled here so that the package (and the launcher, which is
// built on it) links no API machinery; TestSpelledAsTheAPI keeps each equal to the API's.
const (
	// EvalFileViewInputs and EvalFileViewFull are spec.target.evalFileView's values (RunConfig.EvalFileView).
	EvalFileViewInputs = "Inputs"
	EvalFileViewFull   = "Full"
	// BatchingPerCase is spec.target.batching's PerCase (RunnerConfig.Batching).
	BatchingPerCase = "PerCase"
	// AnswerDelimitersNonce is spec.judging.llm.answerDelimiters' Nonce.
	AnswerDelimitersNonce = "Nonce"
	// MaxTrials is spec.trials.count's maximum (RunConfig.Trials).
	MaxTrials = 100
)

// ResumeRecord is what a resumed run took from the earlier run, as run.json records it: the API's ResumeStatus
// (status.resume), field for field and in the same JSON (TestResumeRecordIsTheAPIsResumeStatus).
type ResumeRecord struct {
	// From is the earlier run's name, FromUID its uid when this run started.
	From    string `json:"from"`
	FromUID string `json:"fromUID"`
	// Cases is the resume mode that chose the cases run again.
	Cases string `json:"cases,omitempty"`
	// Ran is the number of cases this run ran, Carried the number of results carried from the earlier run, and
	// RanTrials, in a run with trials, the number of case trials it ran.
	Ran       int32 `json:"ran"`
	Carried   int32 `json:"carried"`
	RanTrials int32 `json:"ranTrials,omitempty"`
}
