// Package verdict is the one vocabulary of judging that every side shares: a verdict and why a case was skipped,
// an evaluator's and a case's result, a run's summary, the model usage of LLM judges, and how scores and
// thresholds are written. It is a leaf: the judging engine (internal/evaluate), the results and their stores, the
// comparison, the report, the judge plan, the launcher and the manager all speak it, and linking it links no
// judging, no LLM client and not even the API types (it spells the API's words itself; TestSpelledAsTheAPI). (pure)
package verdict

import (
	"fmt"
	"strconv"

	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// Verdict is the judgement of one evaluator or one case, spelled as the API's enum (results' known converts it
// where the status holds one), so that the status, the result files and `collector check` spell verdicts the same
// way ("Pass", "Fail", "Error", "Skipped"). Only code_judge scripts see
// AgentV's lower-case spelling (the judging engine's agentvVerdict).
type Verdict string

// Verdicts.
const (
	// VerdictPass: the score reached the threshold.
	VerdictPass Verdict = "Pass"
	// VerdictFail: the score stayed below the threshold.
	VerdictFail Verdict = "Fail"
	// VerdictError: no usable output (missing id, runner error) or a judge crash.
	VerdictError Verdict = "Error"
	// VerdictSkipped: nothing could judge it (for example llm_judge without a model endpoint).
	VerdictSkipped Verdict = "Skipped"
)

// SkipCause says why an evaluator, or a case, was Skipped. Every place that skips names its cause, so that a skip
// that only says "not judged here" (no model, code judges not run by `collector check`) is told apart from one
// the run's own limits made (SkipBudgetSpent), which never leaves a case Pass (see evaluate.Judge).
type SkipCause string

// Skip causes.
const (
	// SkipNoModel: an LLM judge (llm_judge, rubric, llm_judge aggregator) without a model endpoint.
	SkipNoModel SkipCause = "NoModel"
	// SkipNotRunHere: a code_judge (or code_judge aggregator) in `collector check` without --run-code-judges.
	SkipNotRunHere SkipCause = "NotRunHere"
	// SkipZeroWeight: every evaluator (or member) that judged has weight 0.
	SkipZeroWeight SkipCause = "ZeroWeight"
	// SkipBudgetSpent: the LLM judging budget (spec.judging.llm.maxRequests, maxTokens) was spent before the
	// evaluator asked the model. A case with such an evaluator, anywhere among its members, is an Error: it was
	// not judged, and a runner that spends the budget must not be judged by its cheap evaluators alone.
	SkipBudgetSpent SkipCause = "BudgetSpent"
	// SkipUnreadableReply: an AgentV 4.42 LLM grader whose replies stayed invalid after its retries and one repair
	// request; AgentV skips it, and the operator makes its case an Error (it was not judged, and an answer that
	// makes the judge reply nonsense must not leave the other graders to judge it alone).
	SkipUnreadableReply SkipCause = "UnreadableReply"
)

// DefaultThreshold is the pass threshold when the EvalRun sets none: the API's DefaultPassThreshold.
var DefaultThreshold = mustParseFloat(DefaultPassThreshold)

// DefaultPassThreshold is the API's DefaultPassThreshold, spelled here so that this package links no API machinery
// (the launcher links it); TestSpelledAsTheAPI keeps the two equal.
const DefaultPassThreshold = "0.8"

func mustParseFloat(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return f
}

// Bounds on what one evaluator result carries, so that a chatty judge cannot blow up results.
const (
	// MaxNotes bounds hits and misses (each); a final note says how many were left out.
	MaxNotes = 32
	// MaxNoteLength bounds each hit and miss, in bytes (a failed judge's miss quotes up to 2,000 bytes of its
	// stderr).
	MaxNoteLength = 2400
	// MaxReasoningLength bounds reasoning, in bytes.
	MaxReasoningLength = 2000
)

// EvaluatorResult is one evaluator's judgement of one case.
type EvaluatorResult struct {
	// Name and Type are the evaluator's; Key locates it in the case (see evalfile.EvaluatorConfig.Key).
	Name string `json:"name"`
	Type string `json:"type"`
	Key  string `json:"key,omitempty"`
	// Score is in [0, 1].
	Score float64 `json:"score"`
	// Verdict is empty only in results a CodeJudgeRunner returns before the Judge applies the threshold.
	Verdict Verdict `json:"verdict"`
	// Hits and Misses say what matched and what did not (bounded by MaxNotes and MaxNoteLength).
	Hits   []string `json:"hits"`
	Misses []string `json:"misses"`
	// Reasoning explains the score, or why the evaluator was skipped or failed.
	Reasoning string `json:"reasoning,omitempty"`
	// Weight is the evaluator's weight in the case score (0 excludes it).
	Weight float64 `json:"weight"`
	// Members are a composite's member results.
	Members []EvaluatorResult `json:"members,omitempty"`
	// Usage is the model usage of an LLM judge (its calls, tokens and latency); nil when it called no model.
	Usage *Usage `json:"modelUsage,omitempty"`
	// SkipCause says why the evaluator was Skipped (empty for every other verdict).
	SkipCause SkipCause `json:"skipCause,omitempty"`
}

// CaseResult is the judgement of one case.
type CaseResult struct {
	ID string `json:"id"`
	// Score is the weighted mean of the evaluators that judged the case (0 when none did).
	Score   float64 `json:"score"`
	Verdict Verdict `json:"verdict"`
	// Evaluators are the evaluator results in the case's evaluator order.
	Evaluators []EvaluatorResult `json:"evaluators,omitempty"`
	// Error says why the verdict is error.
	Error string `json:"error,omitempty"`
	// Reason says why the verdict is skipped.
	Reason string `json:"reason,omitempty"`
	// Missing is true when the runner produced no record for the case.
	Missing bool `json:"missing,omitempty"`
	// ModelUsage adds up the model usage of the case's LLM judges; nil when none called a model.
	ModelUsage *Usage `json:"modelUsage,omitempty"`
	// BudgetUnjudged is true when an evaluator of the case (or a member of one) was Skipped because the LLM
	// judging budget was spent (SkipBudgetSpent): the case is then an Error, and the summary counts it.
	BudgetUnjudged bool `json:"budgetUnjudged,omitempty"`
}

// FormatScore formats a score as the status does: a decimal with 4 digits.
func FormatScore(score float64) string { return strconv.FormatFloat(score, 'f', 4, 64) }

// ParseThreshold reads a pass threshold written as a decimal in [0, 1]; "" is DefaultThreshold.
func ParseThreshold(s string) (float64, error) {
	if s == "" {
		return DefaultThreshold, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1 {
		return 0, fmt.Errorf("pass threshold %q is not a decimal in [0, 1]", s)
	}
	return f, nil
}

// ErrorCase is the result of a case that has no usable output (for example a runner error), with the reason.
func ErrorCase(id, reason string) CaseResult {
	return CaseResult{ID: id, Verdict: VerdictError, Error: textbound.Head(reason, MaxReasoningLength)}
}

// MissingReason is the error of a missing case (MissingCase), and what every report says about one.
const MissingReason = "the runner produced no record for this case"

// MissingCase is the result of a requested case with no valid record in the runner's output. It counts as
// errored and missing in the summary.
func MissingCase(id string) CaseResult {
	r := ErrorCase(id, MissingReason)
	r.Missing = true
	return r
}

// ClampScore bounds a score to [0, 1] (NaN is 0): every score a result carries has been through it.
func ClampScore(f float64) float64 {
	switch {
	case f != f: // NaN
		return 0
	case f < 0:
		return 0
	case f > 1:
		return 1
	}
	return f
}
