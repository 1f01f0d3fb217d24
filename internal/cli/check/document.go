package check

import (
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// Document is what `collector check --format json` prints: the outcome of checking one runner output against the
// requested case ids.
type Document struct {
	// OK is true when every requested case has a result and the output has no line errors.
	OK bool `json:"ok"`
	// Error is a one-line summary of what failed; empty when OK.
	Error string `json:"error,omitempty"`
	// Mode is "batch" or "single".
	Mode string `json:"mode"`
	// Cases are the requested cases, in requested order.
	Cases []Case `json:"cases"`
	// MissingIDs are requested ids without a valid record (bounded; Summary.Missing counts all).
	MissingIDs []string `json:"missingIds"`
	// UnexpectedIDs are ids of valid records nobody requested (bounded; Summary.Unexpected counts all).
	UnexpectedIDs []string `json:"unexpectedIds"`
	// ParseErrors are the line errors of a batch output (bounded; Summary.ParseErrors counts all).
	ParseErrors []jsonlresult.LineError `json:"parseErrors"`
	// Summary holds the counts.
	Summary Summary `json:"summary"`
}

// SummaryDocument is what `--format summary` prints: only the verdict and the counts, for very large outputs.
type SummaryDocument struct {
	OK      bool    `json:"ok"`
	Summary Summary `json:"summary"`
}

// Summary counts the outcome of a check.
type Summary struct {
	Requested   int `json:"requested"`
	Present     int `json:"present"`
	Missing     int `json:"missing"`
	ParseErrors int `json:"parseErrors"`
	Unexpected  int `json:"unexpected"`
	// Summary is the run summary of the judged cases (total, passed, failed, errored, skipped, judged, score
	// statistics, histogram), with --eval only. Its keys are inlined.
	*verdict.Summary
}

// CaseStatus says whether a requested case has a result.
type CaseStatus string

// Case statuses.
const (
	// StatusOK: the output has a valid result for the case.
	StatusOK CaseStatus = "ok"
	// StatusMissing: the output has no valid result for the case.
	StatusMissing CaseStatus = "missing"
)

// Case is one requested case and the runner's response to it.
type Case struct {
	ID     string     `json:"id"`
	Status CaseStatus `json:"status"`
	// Line is the line of the case's record in a batch output (absent in single mode and for missing cases).
	Line int64 `json:"line,omitempty"`
	// Text is the candidate answer.
	Text string `json:"text"`
	// Trace holds the kept trace events, in order.
	Trace []jsonlresult.TraceEvent `json:"trace"`
	// OutputMessages are the converted output messages, in order.
	OutputMessages []jsonlresult.OutputMessage `json:"outputMessages"`
	TokenUsage     *jsonlresult.TokenUsage     `json:"tokenUsage,omitempty"`
	CostUSD        *float64                    `json:"costUsd,omitempty"`
	DurationMs     *float64                    `json:"durationMs,omitempty"`
	// DroppedTraceEvents counts trace elements that were not valid trace events.
	DroppedTraceEvents int `json:"droppedTraceEvents"`
	// Warnings are notes about ignored fields of the record.
	Warnings []string `json:"warnings,omitempty"`
	// Score, Verdict and Evaluators are the case's judgement, with --eval only; VerdictReason says why a case
	// is error or skipped.
	Score         *float64                  `json:"score,omitempty"`
	Verdict       verdict.Verdict           `json:"verdict,omitempty"`
	VerdictReason string                    `json:"verdictReason,omitempty"`
	Evaluators    []verdict.EvaluatorResult `json:"evaluators,omitempty"`
}

// newCase builds the case for a requested id from its response (nil when the output has none).
func newCase(id string, resp *jsonlresult.Response) Case {
	c := Case{
		ID:             id,
		Status:         StatusMissing,
		Trace:          []jsonlresult.TraceEvent{},
		OutputMessages: []jsonlresult.OutputMessage{},
	}
	if resp == nil {
		return c
	}
	c.Status = StatusOK
	c.Line = resp.Line
	c.Text = resp.Text
	if resp.Trace != nil {
		c.Trace = resp.Trace
	}
	if resp.OutputMessages != nil {
		c.OutputMessages = resp.OutputMessages
	}
	c.TokenUsage = resp.TokenUsage
	c.CostUSD = resp.CostUSD
	c.DurationMs = resp.DurationMs
	c.DroppedTraceEvents = resp.DroppedTraceEvents
	c.Warnings = resp.Warnings
	return c
}
