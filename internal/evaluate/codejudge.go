package evaluate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// codeJudgePayload is the object a code_judge script reads on stdin. Keys are snake_case, in this order.
type codeJudgePayload struct {
	EvalID           string                 `json:"eval_id"`
	Question         string                 `json:"question"`
	ExpectedOutcome  string                 `json:"expected_outcome"`
	ExpectedMessages []json.RawMessage      `json:"expected_messages"`
	ReferenceAnswer  string                 `json:"reference_answer"`
	CandidateAnswer  string                 `json:"candidate_answer"`
	OutputMessages   []payloadOutputMessage `json:"output_messages"`
	InputMessages    []json.RawMessage      `json:"input_messages"`
	InputFiles       []string               `json:"input_files"`
	TraceSummary     traceSummary           `json:"trace_summary"`
	Config           json.RawMessage        `json:"config"`
}

// payloadOutputMessage is an output message in the runner's own snake_case shape.
type payloadOutputMessage struct {
	Role      string            `json:"role"`
	Name      string            `json:"name,omitempty"`
	Content   json.RawMessage   `json:"content,omitempty"`
	ToolCalls []payloadToolCall `json:"tool_calls,omitempty"`
	Timestamp string            `json:"timestamp,omitempty"`
	Metadata  json.RawMessage   `json:"metadata,omitempty"`
}

type payloadToolCall struct {
	Tool      string          `json:"tool"`
	Input     json.RawMessage `json:"input,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	ID        string          `json:"id,omitempty"`
	Timestamp string          `json:"timestamp,omitempty"`
}

// traceSummary summarises the candidate's trace for judges.
type traceSummary struct {
	// EventCount is the number of trace events, or the number of output_messages tool calls when there is no
	// trace.
	EventCount int `json:"event_count"`
	// ToolNames are the distinct tool names called, sorted.
	ToolNames []string `json:"tool_names"`
	// ToolCallsByName counts calls per tool.
	ToolCallsByName map[string]int `json:"tool_calls_by_name"`
	// ErrorCount is the number of error events in the trace.
	ErrorCount int                `json:"error_count"`
	TokenUsage *payloadTokenUsage `json:"token_usage"`
	CostUSD    *float64           `json:"cost_usd"`
	DurationMs *float64           `json:"duration_ms"`
}

type payloadTokenUsage struct {
	Input  float64  `json:"input"`
	Output float64  `json:"output"`
	Cached *float64 `json:"cached,omitempty"`
}

// CodeJudgePayload builds the JSON object a code_judge script reads on stdin for case c, evaluator ev and the
// case's response: eval_id, question, expected_outcome, expected_messages, reference_answer, candidate_answer,
// output_messages (with tool_calls), input_messages, input_files, trace_summary {event_count, tool_names,
// tool_calls_by_name, error_count, token_usage, cost_usd, duration_ms} and config (the evaluator's extra keys, or
// null). Messages from the eval file are passed exactly as written.
func CodeJudgePayload(c *evalfile.Case, ev *evalfile.EvaluatorConfig, resp *jsonlresult.Response) ([]byte, error) {
	if resp == nil {
		return nil, fmt.Errorf("case %q has no response to judge", c.ID)
	}
	p := codeJudgePayload{
		EvalID:           c.ID,
		Question:         c.Question(),
		ExpectedOutcome:  c.ExpectedOutcome,
		ExpectedMessages: rawMessages(c.ExpectedMessages),
		ReferenceAnswer:  c.ReferenceAnswer(),
		CandidateAnswer:  resp.Text,
		OutputMessages:   outputMessages(resp.OutputMessages),
		InputMessages:    rawMessages(c.InputMessages),
		InputFiles:       c.InputFiles(),
		TraceSummary:     summarizeTrace(resp),
	}
	if p.InputFiles == nil {
		p.InputFiles = []string{}
	}
	if ev != nil && ev.CodeJudge != nil && len(ev.CodeJudge.Config) > 0 {
		p.Config = ev.CodeJudge.Config
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("encoding the code_judge payload of case %q: %w", c.ID, err)
	}
	return buf.Bytes(), nil
}

func rawMessages(ms []evalfile.Message) []json.RawMessage {
	out := make([]json.RawMessage, len(ms))
	for i, m := range ms {
		out[i] = m.Raw
	}
	return out
}

func outputMessages(ms []jsonlresult.OutputMessage) []payloadOutputMessage {
	if ms == nil {
		return nil
	}
	out := make([]payloadOutputMessage, len(ms))
	for i, m := range ms {
		pm := payloadOutputMessage{Role: m.Role, Name: m.Name, Content: m.Content, Timestamp: m.Timestamp, Metadata: m.Metadata}
		for _, tc := range m.ToolCalls {
			pm.ToolCalls = append(pm.ToolCalls, payloadToolCall{Tool: tc.Tool, Input: tc.Input, Output: tc.Output, ID: tc.ID, Timestamp: tc.Timestamp})
		}
		out[i] = pm
	}
	return out
}

func summarizeTrace(resp *jsonlresult.Response) traceSummary {
	calls, _ := candidateToolCalls(resp)
	s := traceSummary{ToolNames: []string{}, ToolCallsByName: map[string]int{}, CostUSD: resp.CostUSD, DurationMs: resp.DurationMs}
	for _, c := range calls {
		if s.ToolCallsByName[c.name] == 0 {
			s.ToolNames = append(s.ToolNames, c.name)
		}
		s.ToolCallsByName[c.name]++
	}
	sort.Strings(s.ToolNames)
	s.EventCount = len(calls)
	if len(resp.Trace) > 0 {
		s.EventCount = len(resp.Trace)
	}
	for _, e := range resp.Trace {
		if e.Type == "error" {
			s.ErrorCount++
		}
	}
	if u := resp.TokenUsage; u != nil {
		s.TokenUsage = &payloadTokenUsage{Input: u.Input, Output: u.Output, Cached: u.Cached}
	}
	return s
}

// agentvVerdict is a verdict as code_judge scripts read and write it (AgentV's lower-case spelling: "pass",
// "fail", "error", "skipped"); everywhere else, status and result files included, verdicts are spelled as the
// API's enum ("Pass").
func agentvVerdict(v verdict.Verdict) string { return strings.ToLower(string(v)) }

// AggregatorPayload builds the JSON object a composite's code_judge aggregator reads on stdin:
// {"results": {member: {score, verdict, hits, misses, reasoning}}}, members in order.
func AggregatorPayload(members []verdict.EvaluatorResult) ([]byte, error) {
	type memberResult struct {
		Score     float64  `json:"score"`
		Verdict   string   `json:"verdict"`
		Hits      []string `json:"hits"`
		Misses    []string `json:"misses"`
		Reasoning string   `json:"reasoning"`
	}
	var buf bytes.Buffer
	buf.WriteString(`{"results":{`)
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		name, err := json.Marshal(m.Name)
		if err != nil {
			return nil, err
		}
		body, err := json.Marshal(memberResult{Score: m.Score, Verdict: agentvVerdict(m.Verdict), Hits: nonNil(m.Hits),
			Misses: nonNil(m.Misses), Reasoning: m.Reasoning})
		if err != nil {
			return nil, err
		}
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(body)
	}
	buf.WriteString("}}\n")
	return buf.Bytes(), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// judgeOutput is what a judge script printed.
type judgeOutput struct {
	score     float64
	hits      []string
	misses    []string
	reasoning string
	verdict   verdict.Verdict
}

// parseJudgeOutput finds the judge's result in its stdout: the whole output, else the last line, else the last
// multi-line object that starts at the beginning of a line, that is a JSON object with a numeric score. Anything
// printed before it (logs) is ignored. It returns why nothing was found otherwise.
func parseJudgeOutput(stdout []byte) (judgeOutput, error) {
	text := bytes.TrimSpace(stdout)
	if len(text) == 0 {
		return judgeOutput{}, fmt.Errorf("the judge printed nothing on stdout")
	}
	var lastErr error
	try := func(b []byte) (judgeOutput, bool) {
		out, err := decodeJudgeObject(b)
		if err != nil {
			if lastErr == nil {
				lastErr = err
			}
			return judgeOutput{}, false
		}
		return out, true
	}
	if out, ok := try(text); ok {
		return out, nil
	}
	lines := bytes.Split(text, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		line := bytes.TrimSpace(lines[i])
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		if out, ok := try(line); ok {
			return out, nil
		}
		// A pretty-printed object from this line to the end of the output.
		if out, ok := try(bytes.Join(lines[i:], []byte("\n"))); ok {
			return out, nil
		}
	}
	last := lines[len(lines)-1]
	if lastErr == nil || !bytes.Contains(text, []byte("{")) {
		lastErr = fmt.Errorf("stdout has no JSON object")
	}
	return judgeOutput{}, fmt.Errorf("%v (last line: %s)", lastErr, excerpt(string(bytes.TrimSpace(last)), 200))
}

// decodeJudgeObject decodes one JSON object with a numeric score.
func decodeJudgeObject(b []byte) (judgeOutput, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return judgeOutput{}, fmt.Errorf("stdout has no JSON object")
	}
	if dec.More() {
		return judgeOutput{}, fmt.Errorf("stdout has text after the JSON object")
	}
	var out judgeOutput
	scoreRaw, ok := raw["score"]
	if !ok {
		return judgeOutput{}, fmt.Errorf("the JSON object has no score")
	}
	if err := json.Unmarshal(scoreRaw, &out.score); err != nil {
		return judgeOutput{}, fmt.Errorf("the JSON object's score is not a number: %s", excerpt(string(scoreRaw), 40))
	}
	out.hits = stringList(raw["hits"])
	out.misses = stringList(raw["misses"])
	if r, ok := raw["reasoning"]; ok {
		var s string
		if json.Unmarshal(r, &s) == nil {
			out.reasoning = s
		}
	}
	if v, ok := raw["verdict"]; ok {
		var s string
		if json.Unmarshal(v, &s) == nil {
			switch strings.ToLower(s) {
			case agentvVerdict(verdict.VerdictPass):
				out.verdict = verdict.VerdictPass
			case agentvVerdict(verdict.VerdictFail):
				out.verdict = verdict.VerdictFail
			}
		}
	}
	return out, nil
}

// stringList reads a list of non-empty strings, ignoring other elements.
func stringList(raw json.RawMessage) []string {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var out []string
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil && strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}
