package grade42

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonenc"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// AgentV 4.42.4's code-grader contract (graders/code-grader.ts): the grader reads one JSON object on stdin, its
// keys snake_case at every depth (toSnakeCaseDeep): criteria, expected_output, output (or output_path, a file
// holding it, when it is over 50,000 characters as JSON), messages, input_files, input, metadata, trace,
// trace_summary, token_usage, cost_usd, duration_ms, start_time, end_time, file_changes, workspace_path and config.
// It replies {score?, assertions, details?} (score defaults to the share of passed assertions); with plain stdout
// its exit code is the verdict. A composite's code-grader aggregator reads {results: {member: EvaluationScore}}.

// largeOutputChars is AgentV's FILE_BACKED_OUTPUT_THRESHOLD: an answer whose JSON is longer than this many
// characters (UTF-16 code units) is written to a file, output_path.
const largeOutputChars = 50_000

// graderInput is one run of an AgentV 4.42 code grader (evaluate.CodeGraderInput): what it reads on stdin, built by
// the graders (which read the bundle's files), written by a CodeGrader42Runner (which writes a large answer to a
// file first), and how its reply is read.
type graderInput struct {
	// payload holds the keys in AgentV's camelCase and order; Stdin snake-cases them.
	payload orderedObject
	// large is the answer as JSON when it is too large to inline (nil: inline).
	large []byte
	// aggregator says the input is a composite's code-grader aggregator's: its payload is written as it is (it
	// reads AgentV's camelCase results) and its reply is read as runCodeAggregator reads it.
	aggregator bool
}

var _ evaluate.CodeGraderInput = (*graderInput)(nil)

// LargeOutput is the answer, as JSON, when it must be written to a file whose path Stdin is given; nil when the
// answer is in the payload.
func (in *graderInput) LargeOutput() []byte { return in.large }

// Stdin is the JSON the grader reads, indented as JSON.stringify(payload, null, 2); outputPath is the file
// holding LargeOutput ("" when there is none).
func (in *graderInput) Stdin(outputPath string) []byte {
	if in.aggregator {
		return []byte(evaluate.Stringify(in.payload))
	}
	payload := in.payload
	if outputPath != "" {
		payload = make(orderedObject, 0, len(in.payload)+1)
		for _, m := range in.payload {
			payload = append(payload, m)
			if m.key == "messages" {
				payload = append(payload, kv{"outputPath", outputPath})
			}
		}
	}
	return []byte(evaluate.Stringify(snakeDeep(payload)))
}

// Reply reads the grader's reply as AgentV 4.42 does (parseReply42): its result, or an error when the reply is one.
func (in *graderInput) Reply(stdout, stderr []byte, exitCode int) (verdict.EvaluatorResult, error) {
	reply := parseReply42(stdout, stderr, exitCode, in.aggregator)
	if reply.err != "" {
		return verdict.EvaluatorResult{}, errors.New(reply.err)
	}
	return reply.result(), nil
}

// codeGrader judges a code-grader: its recorded result (the pod's judge containers ran it), else it runs here,
// else it is skipped (collector check without --run-code-judges) or an Error (in the pod).
func (r *caseRun42) codeGrader(ev *evalfile.EvaluatorConfig) grade42 {
	raw := orderedObject{{"command", commandOf(ev.CodeJudge)}}
	if ev.CodeJudge != nil && ev.CodeJudge.Cwd != "" {
		raw = append(raw, kv{"cwd", ev.CodeJudge.Cwd})
	}
	var res verdict.EvaluatorResult
	switch rec, ok := r.recorded[ev.Key]; {
	case ok:
		res = rec
	case r.judge.CodeJudges != nil:
		in, err := r.codeGraderInput(ev)
		if err != nil {
			return errored42(err.Error())
		}
		res = evaluate.RunCodeGrader42(r.ctx, r.judge.CodeJudges, r.c, ev, in)
	default:
		g := r.missingCode("code-grader")
		g.request = raw
		return g
	}
	g := fromResult42(res, false)
	g.request = raw
	return g
}

// commandOf is a code grader's command as AgentV records it: its arguments, or the command string.
func commandOf(cfg *evalfile.CodeJudgeConfig) any {
	if cfg == nil {
		return []any{}
	}
	if cfg.Argv != nil {
		out := make([]any, len(cfg.Argv))
		for i, a := range cfg.Argv {
			out[i] = a
		}
		return out
	}
	return cfg.Script
}

// missingCode is a code grader that neither ran here nor has a recorded result.
func (r *caseRun42) missingCode(what string) grade42 {
	if r.judge.MissingCodeJudge == verdict.VerdictError {
		return errored42(fmt.Sprintf("no %s result was recorded for this test (the judge did not run or its result was lost)", what))
	}
	return skipped42(verdict.SkipNotRunHere, fmt.Sprintf("%s commands do not run here (collector check runs them with --run-code-judges)", what))
}

// fromResult42 is a code grader's result as a grade: its score, its verdict (an aggregator's own pass or fail, else
// pass at 0.8), its assertions (the passed ones, then the others) and details.
func fromResult42(res verdict.EvaluatorResult, aggregator bool) grade42 {
	switch res.Verdict {
	case verdict.VerdictError:
		return errored42(evaluate.FirstNote(res))
	case verdict.VerdictSkipped:
		return skipped42(res.SkipCause, res.Reasoning)
	}
	g := grade42{score: verdict.ClampScore(res.Score), verdict: verdictOf42(res.Score), assertions: []assertion42{}}
	if aggregator && (res.Verdict == verdict.VerdictPass || res.Verdict == verdict.VerdictFail) {
		g.verdict = strings.ToLower(string(res.Verdict))
	}
	for _, h := range res.Hits {
		g.assertions = append(g.assertions, assertion42{Text: h, Passed: true})
	}
	for _, m := range res.Misses {
		g.assertions = append(g.assertions, assertion42{Text: m, Passed: false})
	}
	if d, ok := strings.CutPrefix(res.Reasoning, detailsPrefix); ok && json.Valid([]byte(d)) {
		g.details = json.RawMessage(d)
	}
	g.aspects = max(len(g.assertions), 1)
	return g
}

// detailsPrefix starts the reasoning of a 4.42 code grader that replied details: the details as JSON follow.
const detailsPrefix = "details: "

// codeGraderInput builds a code grader's stdin.
func (r *caseRun42) codeGraderInput(ev *evalfile.EvaluatorConfig) (*graderInput, error) {
	in, err := r.promptInputs()
	if err != nil {
		return nil, err
	}
	trace := r.trace42(in)
	msgs, _ := trace.get("messages")
	resp := r.resp
	var output any = r.out.candidate
	var large []byte
	if j := jsString(r.out.candidate); jsonenc.UTF16Len(j) > largeOutputChars {
		output, large = nil, []byte(j)
	}
	var config any
	if ev.CodeJudge != nil && len(ev.CodeJudge.Config) > 0 {
		if v, err := parseOrdered(ev.CodeJudge.Config); err == nil {
			config = v
		}
	}
	payload := orderedObject{
		{"criteria", r.c.ExpectedOutcome},
		{"expectedOutput", in.expected},
		{keyOutput, output},
		{"messages", msgs},
		{"inputFiles", in.inputFiles},
		{keyInput, in.input},
		{keyMetadata, metadata42(r.c)},
		{"trace", trace},
		{"traceSummary", traceSummary42(r.out, false)},
		{keyTokenUsage, tokenUsageOf42(resp)},
		{"costUsd", floatOrNil(resp.CostUSD)},
		{keyDuration, floatOrNil(resp.DurationMs)},
		{"startTime", nil},
		{"endTime", nil},
		{"fileChanges", nil},
		{"workspacePath", nil},
		{"config", config},
	}
	return &graderInput{payload: payload, large: large}, nil
}

// metadata42 is the test's metadata as a value (nil: null).
func metadata42(c *evalfile.Case) any {
	if len(c.Metadata) == 0 {
		return nil
	}
	v, err := parseOrdered(c.Metadata)
	if err != nil {
		return nil
	}
	return v
}

func floatOrNil(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// tokenUsageOf42 is the record's token_usage as AgentV keeps it ({input, output, cached?}); nil when none.
func tokenUsageOf42(resp *jsonlresult.Response) any {
	u := resp.TokenUsage
	if u == nil {
		return nil
	}
	obj := orderedObject{{keyInput, u.Input}, {keyOutput, u.Output}}
	if u.Cached != nil {
		obj = append(obj, kv{"cached", *u.Cached})
	}
	return obj
}

// message42 is an output message as AgentV 4.42's CLI provider converts it (convertMessages): role, name, content
// (a string or a list of content blocks; none else), toolCalls, metadata.
func message42(m jsonlresult.OutputMessage) orderedObject {
	msg := orderedObject{{keyRole, m.Role}}
	if m.Name != "" {
		msg = append(msg, kv{keyName, m.Name})
	}
	if c := messageContent42(m.Content); c != nil {
		msg = append(msg, kv{keyContent, c})
	}
	if m.ToolCalls != nil {
		calls := make([]any, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			calls[i] = toolCall42(tc)
		}
		msg = append(msg, kv{"toolCalls", calls})
	}
	if len(m.Metadata) > 0 && m.Metadata[0] == '{' {
		if v, err := parseOrdered(m.Metadata); err == nil {
			msg = append(msg, kv{keyMetadata, v})
		}
	}
	return msg
}

// messageContent42 is an output message's content as AgentV keeps it: a string, a list of content blocks; nil for
// anything else.
func messageContent42(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return nil
	}
	if _, ok := contentBlocks42(raw); ok {
		if v, err := parseOrdered(raw); err == nil {
			return v
		}
	}
	return nil
}

// toolCall42 is a tool call as AgentV keeps it: tool, input, output, id, durationMs.
func toolCall42(tc jsonlresult.ToolCall) orderedObject {
	call := orderedObject{{"tool", tc.Tool}}
	for _, f := range []struct {
		key string
		raw json.RawMessage
	}{{keyInput, tc.Input}, {keyOutput, tc.Output}} {
		if len(f.raw) > 0 {
			if v, err := parseOrdered(f.raw); err == nil {
				call = append(call, kv{f.key, v})
			}
		}
	}
	if tc.ID != "" {
		call = append(call, kv{"id", tc.ID})
	}
	if tc.DurationMs != nil {
		call = append(call, kv{keyDuration, *tc.DurationMs})
	}
	return call
}

// traceSummary42 is AgentV's trace summary of the output messages (computeTraceSummary): tool calls, their count by
// tool, 0 errors, the durations by tool (when any call has one), the assistant messages as LLM calls. full gives
// the trace's key order (llmCallCount before toolDurations), else trace_summary's.
func traceSummary42(out output42, full bool) orderedObject {
	counts := orderedObject{}
	durations := orderedObject{}
	events, llmCalls := 0, 0
	for _, m := range out.messages {
		if m.Role == roleAssistant {
			llmCalls++
		}
		for _, tc := range m.ToolCalls {
			events++
			n, _ := counts.get(tc.Tool)
			f, _ := n.(float64)
			counts = counts.set(tc.Tool, f+1)
			if tc.DurationMs != nil {
				d, _ := durations.get(tc.Tool)
				list, _ := d.([]any)
				durations = durations.set(tc.Tool, append(list, *tc.DurationMs))
			}
		}
	}
	s := orderedObject{{"eventCount", float64(events)}, {"toolCalls", counts}, {"errorCount", float64(0)}}
	if full {
		s = append(s, kv{"llmCallCount", float64(llmCalls)})
		if len(durations) > 0 {
			s = append(s, kv{"toolDurations", durations})
		}
		return s
	}
	if len(durations) > 0 {
		s = append(s, kv{"toolDurations", durations})
	}
	return append(s, kv{"llmCallCount", float64(llmCalls)})
}

// trace42 is AgentV 4.42's trace of the test (buildTraceFromMessages): the summary, the messages (the input as its
// result records it, then the output messages, unless the output already holds the conversation), an event per
// message, tool call, tool result and the final response, the metrics and metadata.
func (r *caseRun42) trace42(in *inputs42) orderedObject {
	outputs := make([]any, len(r.out.messages))
	for i, m := range r.out.messages {
		outputs[i] = message42(m)
	}
	messages := in.chat
	switch {
	case len(outputs) == 0:
	case fullTranscript(r.out.messages):
		messages = outputs
	case len(in.chat) == 1 && sameMessage(in.chat[0], outputs[0]):
		messages = outputs
	default:
		messages = append(append([]any{}, in.chat...), outputs...)
	}
	var events []any
	final := -1
	for i, m := range messages {
		msg, _ := m.(orderedObject)
		id := fmt.Sprintf("message-%d", i)
		events = append(events, orderedObject{{"eventId", id}, {"ordinal", float64(len(events))}, {keyType, "message"},
			{"message", traceMessage(msg)}, {keyMetadata, orderedObject{{"message_index", float64(i)}}}})
		calls, _ := msg.get("toolCalls")
		list, _ := calls.([]any)
		for k, c := range list {
			call, _ := c.(orderedObject)
			callID := fmt.Sprintf("%s-tool-%d", id, k)
			name, _ := call.get("tool")
			tool := orderedObject{{keyName, name}}
			if v, ok := call.get("id"); ok {
				tool = append(tool, kv{"callId", v})
			}
			if v, ok := call.get(keyInput); ok {
				tool = append(tool, kv{keyInput, v})
			}
			output, hasOutput := call.get(keyOutput)
			if hasOutput {
				tool = append(tool, kv{keyOutput, output})
			}
			tool = append(tool, kv{"status", "ok"})
			ev := orderedObject{{"eventId", callID}, {"parentEventId", id}, {"ordinal", float64(len(events))}, {keyType, "tool_call"}}
			if d, ok := call.get(keyDuration); ok {
				ev = append(ev, kv{keyDuration, d})
			}
			meta := orderedObject{{"message_index", float64(i)}, {"tool_index", float64(k)}}
			events = append(events, append(ev, kv{"tool", tool}, kv{keyMetadata, meta}))
			if hasOutput {
				result := orderedObject{{keyName, name}}
				if v, ok := call.get("id"); ok {
					result = append(result, kv{"callId", v})
				}
				result = append(result, kv{keyOutput, output}, kv{"status", "ok"})
				events = append(events, orderedObject{{"eventId", callID + "-result"}, {"parentEventId", callID},
					{"ordinal", float64(len(events))}, {keyType, "tool_result"}, {"tool", result}, {keyMetadata, meta}})
			}
		}
		if role, _ := msg.get(keyRole); role == roleAssistant {
			final = i
		}
	}
	if final >= 0 {
		msg, _ := messages[final].(orderedObject)
		fm := traceMessage(msg).set(keyContent, r.out.candidate)
		events = append(events, orderedObject{{"eventId", "final-response"}, {"parentEventId", fmt.Sprintf("message-%d", final)},
			{"ordinal", float64(len(events))}, {keyType, "final_response"}, {"message", fm},
			{keyMetadata, orderedObject{{"message_index", float64(final)}}}})
	}
	if events == nil {
		events = []any{}
	}
	if messages == nil {
		messages = []any{}
	}
	trace := append(traceSummary42(r.out, true), kv{"messages", messages}, kv{"events", events})
	if u := tokenUsageOf42(r.resp); u != nil {
		trace = append(trace, kv{keyTokenUsage, u})
	}
	if r.resp.CostUSD != nil {
		trace = append(trace, kv{"costUsd", *r.resp.CostUSD})
	}
	if r.resp.DurationMs != nil {
		trace = append(trace, kv{keyDuration, *r.resp.DurationMs})
	}
	meta := orderedObject{{"provider", "cli"}, {"target", RunnerTargetName}, {"eval_case_id", r.c.ID}}
	if r.c.ConversationID != "" {
		meta = append(meta, kv{"provider_session_id", r.c.ConversationID})
	}
	return append(trace, kv{keyMetadata, meta})
}

// traceMessage is a message as a trace event holds it: role, name, content, metadata.
func traceMessage(msg orderedObject) orderedObject {
	out := orderedObject{}
	for _, k := range []string{keyRole, keyName, keyContent, keyTokenUsage, keyMetadata} {
		if v, ok := msg.get(k); ok {
			out = append(out, kv{k, v})
		}
	}
	return out
}

// fullTranscript reports whether output messages hold the whole conversation (a user or system message).
func fullTranscript(msgs []jsonlresult.OutputMessage) bool {
	for _, m := range msgs {
		if m.Role == "user" || m.Role == "system" {
			return true
		}
	}
	return false
}

// sameMessage reports whether two messages have the same role and content (as JSON).
func sameMessage(a, b any) bool {
	ma, _ := a.(orderedObject)
	mb, _ := b.(orderedObject)
	ra, _ := ma.get(keyRole)
	rb, _ := mb.get(keyRole)
	ca, _ := ma.get(keyContent)
	cb, _ := mb.get(keyContent)
	return ra == rb && jsString(ca) == jsString(cb)
}

// reply42 is what a 4.42 code grader's stdout, stderr and exit code say (code-grader.ts evaluate).
type reply42 struct {
	score      float64
	assertions []assertion42
	details    json.RawMessage
	// verdict is an aggregator's own "pass" or "fail" ("" when it gave none).
	verdict string
	// err says why the reply is an error (a non-zero exit with JSON or stderr).
	err string
}

// parseReply42 reads a code grader's reply: a non-zero exit with stdout that looks like JSON, or with stderr, is an
// error; otherwise stdout that is a JSON object is {score?, assertions?, details?, verdict?}, and any other stdout
// is the assertion of a verdict given by the exit code (0: pass, score 1).
//
// A composite's aggregator (aggregator set) is read as AgentV's runCodeAggregator reads it: any non-zero exit is an
// error, and stdout that is not a JSON object scores 0 (its score is the reply's score, else 0).
func parseReply42(stdout, stderr []byte, exitCode int, aggregator bool) reply42 {
	out := strings.TrimSpace(string(stdout))
	if exitCode != 0 && (aggregator || strings.HasPrefix(out, "{") || strings.HasPrefix(out, "[") || strings.TrimSpace(string(stderr)) != "") {
		return reply42{err: fmt.Sprintf("the code grader exited with status %d", exitCode)}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &obj); err != nil || obj == nil {
		if aggregator {
			return reply42{}
		}
		text := out
		if text == "" {
			text = fmt.Sprintf("exit %d", exitCode)
		}
		r := reply42{assertions: []assertion42{{Text: text, Passed: exitCode == 0}}}
		if exitCode == 0 {
			r.score = 1
		}
		return r
	}
	r := reply42{assertions: replyAssertions42(obj["assertions"])}
	var score float64
	switch {
	case json.Unmarshal(obj["score"], &score) == nil && len(obj["score"]) > 0 && obj["score"][0] != 'n':
		r.score = verdict.ClampScore(score)
	case len(r.assertions) > 0 && !aggregator:
		passed := 0
		for _, a := range r.assertions {
			if a.Passed {
				passed++
			}
		}
		r.score = float64(passed) / float64(len(r.assertions))
	}
	if d := bytes.TrimSpace(obj["details"]); len(d) > 0 && d[0] == '{' {
		var buf bytes.Buffer
		if json.Compact(&buf, d) == nil {
			r.details = buf.Bytes()
		}
	}
	var v string
	if json.Unmarshal(obj["verdict"], &v) == nil && (v == pass42 || v == fail42) {
		r.verdict = v
	}
	return r
}

// replyAssertions42 are the assertions of a code grader's reply: the objects with a string text, passed read as
// JavaScript's Boolean, evidence kept when it is a string.
func replyAssertions42(raw json.RawMessage) []assertion42 {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var out []assertion42
	for _, it := range items {
		var a struct {
			Text     *string         `json:"text"`
			Passed   json.RawMessage `json:"passed"`
			Evidence json.RawMessage `json:"evidence"`
		}
		if json.Unmarshal(it, &a) != nil || a.Text == nil {
			continue
		}
		as := assertion42{Text: *a.Text, Passed: truthy(a.Passed)}
		var e string
		if len(a.Evidence) > 0 && a.Evidence[0] == '"' && json.Unmarshal(a.Evidence, &e) == nil {
			as.Evidence = &e
		}
		out = append(out, as)
	}
	return out
}

// truthy is JavaScript's Boolean(value) of a JSON value.
func truthy(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	switch s {
	case "", "false", jsonNull, "0", `""`, "-0":
		return false
	}
	if strings.HasPrefix(s, "0") || strings.HasPrefix(s, "-0") {
		var f float64
		if json.Unmarshal(raw, &f) == nil && f == 0 {
			return false
		}
	}
	return true
}

// result is the reply as a result a CodeGrader42Runner returns: an error, or its score, assertions (hits, misses) and
// details (the reasoning), and an aggregator's own verdict.
func (r reply42) result() verdict.EvaluatorResult {
	if r.err != "" {
		return evaluate.JudgeFailure(r.err, "")
	}
	res := verdict.EvaluatorResult{Score: r.score}
	for _, a := range r.assertions {
		note := a.Text
		if a.Evidence != nil && *a.Evidence != "" {
			note += ": " + *a.Evidence
		}
		if a.Passed {
			res.Hits = append(res.Hits, note)
		} else {
			res.Misses = append(res.Misses, note)
		}
	}
	if len(r.details) > 0 {
		res.Reasoning = detailsPrefix + string(r.details)
	}
	switch r.verdict {
	case pass42:
		res.Verdict = verdict.VerdictPass
	case fail42:
		res.Verdict = verdict.VerdictFail
	}
	return res
}
