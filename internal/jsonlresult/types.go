// Package jsonlresult turns a batch runner's output into per-case responses: the JSONL batch contract (one record
// per case id) and the single-case contract (one JSON object or plain text per case). It is pure Go.
package jsonlresult

import "encoding/json"

// Response is one case's output as the runner reported it.
type Response struct {
	// ID is the case id of the record; in a batch record it is never empty nor only whitespace.
	ID string `json:"id"`
	// Text is the candidate answer: the record's text (non-strings JSON-encoded), else the content of the last
	// assistant output message that has content, else "".
	Text string `json:"text"`
	// Trace holds the valid trace events, in order.
	Trace []TraceEvent `json:"trace,omitempty"`
	// OutputMessages is the record's output_messages converted to camelCase, in order.
	OutputMessages []OutputMessage `json:"outputMessages,omitempty"`
	// Output is the record's output, AgentV 4.42's name of its output messages (which 4.42 reads before
	// output_messages, and which makes the answer the last assistant message's content); agentv-eval-v2 judging
	// does not read it, as AgentV v2.0.1 did not.
	Output []OutputMessage `json:"output,omitempty"`
	// TokenUsage, CostUSD and DurationMs are the optional metrics; nil when absent or invalid.
	TokenUsage *TokenUsage `json:"tokenUsage,omitempty"`
	CostUSD    *float64    `json:"costUsd,omitempty"`
	DurationMs *float64    `json:"durationMs,omitempty"`
	// MeasuredDurationMs is the wall time of the case's own invocation as the launcher measured it (PerCase runs;
	// the launcher's report, by case position), set by the collector, never read from the runner's output; nil
	// when the launcher did not measure the case (Batched). The latency evaluator prefers it to DurationMs.
	MeasuredDurationMs *int64 `json:"-"`
	// DroppedTraceEvents counts trace elements that were not valid TraceEvents.
	DroppedTraceEvents int `json:"droppedTraceEvents"`
	// Warnings are bounded notes about ignored fields (for example a negative cost_usd).
	Warnings []string `json:"warnings,omitempty"`
	// Line is the 1-based line of the record in a batch file (0 in single-case mode).
	Line int64 `json:"-"`
	// Raw is the record as the parser read it: a batch line without its line ending (bytes that are not valid
	// UTF-8 replaced by U+FFFD, as the parser reads them), or the single-case output as given. Parsing Raw again in
	// the same mode gives the same response; the collector keeps it as the case's record (internal/records). It
	// must not be modified.
	Raw []byte `json:"-"`
}

// TraceEvent is one valid trace element: an object whose type is model_step, tool_call, tool_result, message or
// error and whose timestamp is a string. Raw is the whole element as written (valid UTF-8), the other fields are
// read from it for convenience.
type TraceEvent struct {
	Type      string          `json:"-"`
	Timestamp string          `json:"-"`
	ID        string          `json:"-"`
	Name      string          `json:"-"`
	Input     json.RawMessage `json:"-"`
	Output    json.RawMessage `json:"-"`
	Raw       json.RawMessage `json:"-"`
}

// MarshalJSON writes the event exactly as the runner wrote it.
func (e TraceEvent) MarshalJSON() ([]byte, error) {
	if len(e.Raw) == 0 {
		return []byte("null"), nil
	}
	return e.Raw, nil
}

// OutputMessage is one element of output_messages, converted to camelCase.
type OutputMessage struct {
	Role      string          `json:"role"`
	Name      string          `json:"name,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	ToolCalls []ToolCall      `json:"toolCalls,omitempty"`
	Timestamp string          `json:"timestamp,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// ToolCall is one element of an output message's tool_calls.
type ToolCall struct {
	Tool      string          `json:"tool"`
	Input     json.RawMessage `json:"input,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	ID        string          `json:"id,omitempty"`
	Timestamp string          `json:"timestamp,omitempty"`
	// DurationMs is the call's duration_ms (AgentV 4.42's tool-trajectory max_duration_ms reads it); nil when
	// absent or not a non-negative number.
	DurationMs *float64 `json:"durationMs,omitempty"`
}

// TokenUsage is the record's token_usage.
type TokenUsage struct {
	Input  float64  `json:"input"`
	Output float64  `json:"output"`
	Cached *float64 `json:"cached,omitempty"`
}

// LineError is one problem with one line of a batch file.
type LineError struct {
	// Line is the 1-based physical line number.
	Line int64 `json:"line"`
	// Excerpt is at most ExcerptBytes bytes of the line, valid UTF-8, cut on a rune boundary and marked with "…"
	// when cut.
	Excerpt string `json:"excerpt"`
	// Message says what is wrong.
	Message string `json:"message"`
}
