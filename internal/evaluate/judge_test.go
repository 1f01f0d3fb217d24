package evaluate

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// caseWith parses a one-case eval file whose case has the given expected content and evaluators (YAML flow
// or block text indented for the evaluators list).
func caseWith(t *testing.T, expected, evaluators string) *evalfile.Case {
	t.Helper()
	doc := "evalcases:\n  - id: c1\n    input_messages: [{role: user, content: question}]\n"
	if expected != "" {
		doc += "    expected_messages: [{role: assistant, content: " + expected + "}]\n"
	}
	doc += "    evaluators:\n" + evaluators
	f, err := evalfile.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, doc)
	}
	return f.CaseAt(0)
}

func calls(names ...string) []jsonlresult.OutputMessage {
	var tcs []jsonlresult.ToolCall
	for _, n := range names {
		name, input, _ := strings.Cut(n, " ")
		tc := jsonlresult.ToolCall{Tool: name}
		if input != "" {
			tc.Input = json.RawMessage(input)
		}
		tcs = append(tcs, tc)
	}
	return []jsonlresult.OutputMessage{{Role: "assistant", ToolCalls: tcs}}
}

func f64(f float64) *float64 { return &f }

var judge = &Judge{Threshold: verdict.DefaultThreshold}

func TestToolTrajectory(t *testing.T) {
	tests := []struct {
		name       string
		evaluator  string
		resp       jsonlresult.Response
		want       verdict.EvaluatorResult
		wantReason string
	}{
		{
			name:      "any_order minimums met and missed",
			evaluator: "{name: t, type: tool_trajectory, mode: any_order, minimums: {search: 2, fetch: 1, answer: 0}}",
			resp:      jsonlresult.Response{OutputMessages: calls("search", "fetch", "search")},
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictPass, Hits: []string{
				"search: called 2 times (at least 2 required)", "fetch: called 1 time (at least 1 required)",
				"answer: called 0 times (at least 0 required)"}, Misses: []string{},
				Reasoning: "3 tool calls from output_messages: search, fetch, search"},
		},
		{
			name:      "any_order below minimum",
			evaluator: "{name: t, type: tool_trajectory, mode: any_order, minimums: {search: 2, fetch: 1}}",
			resp:      jsonlresult.Response{OutputMessages: calls("search", "fetch")},
			want: verdict.EvaluatorResult{Score: 0.5, Verdict: verdict.VerdictFail, Hits: []string{"fetch: called 1 time (at least 1 required)"},
				Misses:    []string{"search: called 1 time (at least 2 required)"},
				Reasoning: "2 tool calls from output_messages: search, fetch"},
		},
		{
			name:      "any_order empty minimums",
			evaluator: "{name: t, type: tool_trajectory, mode: any_order, minimums: {}}",
			resp:      jsonlresult.Response{},
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"no minimums are set"}, Misses: []string{},
				Reasoning: "the candidate made no tool calls (none in output_messages or trace)"},
		},
		{
			name:      "in_order with extra calls between and partial args",
			evaluator: "{name: t, type: tool_trajectory, mode: in_order, expected: [{tool: a, args: {k: 1}}, {tool: b, args: any}, {tool: c}]}",
			resp:      jsonlresult.Response{OutputMessages: calls(`a {"k":1,"other":"x"}`, "x", `b {"z":2}`, "y", "c")},
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictPass, Hits: []string{
				"expected[0] a: matched call #1", "expected[1] b: matched call #3", "expected[2] c: matched call #5"}, Misses: []string{},
				Reasoning: "5 tool calls from output_messages: a, x, b, y, c"},
		},
		{
			name:      "in_order args mismatch and out of order",
			evaluator: "{name: t, type: tool_trajectory, mode: in_order, expected: [{tool: a, args: {k: 1}}, {tool: b}, {tool: c}]}",
			resp:      jsonlresult.Response{OutputMessages: calls(`a {"k":2}`, "c", "b")},
			want: verdict.EvaluatorResult{Score: 1.0 / 3, Verdict: verdict.VerdictFail, Hits: []string{"expected[1] b: matched call #3"},
				Misses: []string{
					"expected[0] a: the next call to it, #1, does not match: args.k is 2, expected 1",
					"expected[2] c: not called after call #3",
				},
				Reasoning: "3 tool calls from output_messages: a, c, b"},
		},
		{
			name:      "in_order missing args key and non-object input",
			evaluator: "{name: t, type: tool_trajectory, mode: in_order, expected: [{tool: a, args: {k: 1}}, {tool: b, args: {q: x}}]}",
			resp:      jsonlresult.Response{OutputMessages: calls(`a {"j":1}`, `b "text"`)},
			want: verdict.EvaluatorResult{Score: 0, Verdict: verdict.VerdictFail, Hits: []string{}, Misses: []string{
				"expected[0] a: the next call to it, #1, does not match: args.k is missing",
				`expected[1] b: the next call to it, #2, does not match: its input is not an object ("text")`,
			}, Reasoning: "2 tool calls from output_messages: a, b"},
		},
		{
			name:      "in_order empty expectations",
			evaluator: "{name: t, type: tool_trajectory, mode: in_order, expected: []}",
			resp:      jsonlresult.Response{OutputMessages: calls("a")},
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"no expected calls are set"}, Misses: []string{},
				Reasoning: "1 tool calls from output_messages: a"},
		},
		{
			// AgentV v2.0.1: the search for analyze runs to the end and does not go back, so report is not found.
			name:      "in_order does not go back after a missing call",
			evaluator: "{name: t, type: tool_trajectory, mode: in_order, expected: [{tool: search}, {tool: analyze}, {tool: report}]}",
			resp:      jsonlresult.Response{OutputMessages: calls("search", "report")},
			want: verdict.EvaluatorResult{Score: 1.0 / 3, Verdict: verdict.VerdictFail, Hits: []string{"expected[0] search: matched call #1"},
				Misses: []string{
					"expected[1] analyze: not called after call #1",
					"expected[2] report: not looked for: the search for expected[1] analyze ran past the last call, and in_order does not go back",
				},
				Reasoning: "2 tool calls from output_messages: search, report"},
		},
		{
			name:      "in_order missing the first call",
			evaluator: "{name: t, type: tool_trajectory, mode: in_order, expected: [{tool: plan}, {tool: search}]}",
			resp:      jsonlresult.Response{OutputMessages: calls("search")},
			want: verdict.EvaluatorResult{Score: 0, Verdict: verdict.VerdictFail, Hits: []string{}, Misses: []string{
				"expected[0] plan: not called",
				"expected[1] search: not looked for: the search for expected[0] plan ran past the last call, and in_order does not go back",
			}, Reasoning: "1 tool calls from output_messages: search"},
		},
		{
			name:      "in_order with repeated tools",
			evaluator: "{name: t, type: tool_trajectory, mode: in_order, expected: [{tool: search}, {tool: search}, {tool: report}]}",
			resp:      jsonlresult.Response{OutputMessages: calls("search", "report", "search", "report")},
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictPass, Hits: []string{
				"expected[0] search: matched call #1", "expected[1] search: matched call #3", "expected[2] report: matched call #4",
			}, Misses: []string{}, Reasoning: "4 tool calls from output_messages: search, report, search, report"},
		},
		{
			name:      "in_order with a repeat called once",
			evaluator: "{name: t, type: tool_trajectory, mode: in_order, expected: [{tool: search}, {tool: search}]}",
			resp:      jsonlresult.Response{OutputMessages: calls("search")},
			want: verdict.EvaluatorResult{Score: 0.5, Verdict: verdict.VerdictFail, Hits: []string{"expected[0] search: matched call #1"},
				Misses: []string{"expected[1] search: not called after call #1"}, Reasoning: "1 tool calls from output_messages: search"},
		},
		{
			// AgentV takes the next call to the tool; a later call with the right args does not count.
			name:      "in_order args mismatch consumes the call",
			evaluator: "{name: t, type: tool_trajectory, mode: in_order, expected: [{tool: a, args: {k: 1}}, {tool: a}]}",
			resp:      jsonlresult.Response{OutputMessages: calls(`a {"k":2}`, `a {"k":1}`)},
			want: verdict.EvaluatorResult{Score: 0.5, Verdict: verdict.VerdictFail, Hits: []string{"expected[1] a: matched call #2"},
				Misses:    []string{"expected[0] a: the next call to it, #1, does not match: args.k is 2, expected 1"},
				Reasoning: "2 tool calls from output_messages: a, a"},
		},
		{
			name:      "any_order ignores order and counts repeats",
			evaluator: "{name: t, type: tool_trajectory, mode: any_order, minimums: {search: 2, analyze: 1, report: 1}}",
			resp:      jsonlresult.Response{OutputMessages: calls("report", "search", "search")},
			want: verdict.EvaluatorResult{Score: 2.0 / 3, Verdict: verdict.VerdictFail, Hits: []string{
				"search: called 2 times (at least 2 required)", "report: called 1 time (at least 1 required)"},
				Misses:    []string{"analyze: called 0 times (at least 1 required)"},
				Reasoning: "3 tool calls from output_messages: report, search, search"},
		},
		{
			name:      "exact with two extra calls",
			evaluator: "{name: t, type: tool_trajectory, mode: exact, expected: [{tool: search}, {tool: report}]}",
			resp:      jsonlresult.Response{OutputMessages: calls("search", "report", "search", "report")},
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictFail, Hits: []string{"call #1: search", "call #2: report"},
				Misses: []string{"expected exactly 2 tool calls, got 4", "call #3: unexpected extra call to search",
					"call #4: unexpected extra call to report"},
				Reasoning: "4 tool calls from output_messages: search, report, search, report"},
		},
		{
			// An empty expected list specifies no sequence: AgentV scores it 1 whatever the calls (issue 24).
			name:      "exact with calls but none expected",
			evaluator: "{name: t, type: tool_trajectory, mode: exact, expected: []}",
			resp:      jsonlresult.Response{OutputMessages: calls("search")},
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"no tool sequence specified"}, Misses: []string{},
				Reasoning: "1 tool calls from output_messages: search"},
		},
		{
			name:      "exact match with nested args",
			evaluator: "{name: t, type: tool_trajectory, mode: exact, expected: [{tool: a, args: {q: {x: [1, 2]}}}, {tool: b}]}",
			resp:      jsonlresult.Response{OutputMessages: calls(`a {"q":{"x":[1,2]},"extra":true}`, "b")},
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"call #1: a", "call #2: b"}, Misses: []string{},
				Reasoning: "2 tool calls from output_messages: a, b"},
		},
		{
			// AgentV scores 1 (extra calls are left out); here the extra call is a missed position.
			name:      "exact with an extra call fails",
			evaluator: "{name: t, type: tool_trajectory, mode: exact, expected: [{tool: a}, {tool: b}]}",
			resp:      jsonlresult.Response{OutputMessages: calls("a", "b", "c")},
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictFail, Hits: []string{"call #1: a", "call #2: b"},
				Misses:    []string{"expected exactly 2 tool calls, got 3", "call #3: unexpected extra call to c"},
				Reasoning: "3 tool calls from output_messages: a, b, c"},
		},
		{
			// AgentV's score: positions compared over the expected list.
			name:      "exact with a missing call fails",
			evaluator: "{name: t, type: tool_trajectory, mode: exact, expected: [{tool: a}, {tool: b}]}",
			resp:      jsonlresult.Response{OutputMessages: calls("a")},
			want: verdict.EvaluatorResult{Score: 0.5, Verdict: verdict.VerdictFail, Hits: []string{"call #1: a"},
				Misses:    []string{"expected exactly 2 tool calls, got 1", "call #2: expected b, got no call"},
				Reasoning: "1 tool calls from output_messages: a"},
		},
		{
			name:      "exact wrong tool and args",
			evaluator: "{name: t, type: tool_trajectory, mode: exact, expected: [{tool: a, args: {n: 1.5}}, {tool: b}]}",
			resp:      jsonlresult.Response{OutputMessages: calls(`a {"n":1.25}`, "c")},
			want: verdict.EvaluatorResult{Score: 0, Verdict: verdict.VerdictFail, Hits: []string{},
				Misses:    []string{"call #1: a but args.n is 1.25, expected 1.5", "call #2: expected b, got c"},
				Reasoning: "2 tool calls from output_messages: a, c"},
		},
		{
			name:      "exact no calls expected, none made",
			evaluator: "{name: t, type: tool_trajectory, mode: exact, expected: []}",
			resp:      jsonlresult.Response{},
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"no tool sequence specified"}, Misses: []string{},
				Reasoning: "the candidate made no tool calls (none in output_messages or trace)"},
		},
		{
			name:      "falls back to trace tool_call events",
			evaluator: "{name: t, type: tool_trajectory, mode: in_order, expected: [{tool: a, args: {k: 1}}]}",
			resp: jsonlresult.Response{
				OutputMessages: []jsonlresult.OutputMessage{{Role: "assistant", Content: json.RawMessage(`"hi"`)}},
				Trace: []jsonlresult.TraceEvent{
					{Type: "model_step"}, {Type: "tool_call", Name: "a", Input: json.RawMessage(`{"k":1}`)}, {Type: "tool_result", Name: "a"},
				},
			},
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"expected[0] a: matched call #1"}, Misses: []string{},
				Reasoning: "1 tool calls from trace: a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := caseWith(t, "", "      - "+tt.evaluator+"\n")
			got := judge.JudgeCase(context.Background(), c, &tt.resp, nil).Evaluators[0]
			tt.want.Name, tt.want.Type, tt.want.Key, tt.want.Weight = "t", "tool_trajectory", "t", 1
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldAccuracy(t *testing.T) {
	const expected = `{decision: CLEAR, amount: 100, rate: 0.05, date: "2025-01-15", when: 03/04/2025, ` +
		`items: [{sku: A1, qty: 2}], tags: [x, y], nothing: null}`
	tests := []struct {
		name      string
		expected  string
		evaluator string
		text      string
		want      verdict.EvaluatorResult
	}{
		{
			name:      "exact fields with deep values and an index",
			evaluator: "{name: f, type: field_accuracy, fields: [{path: decision, match: exact}, {path: 'items[0].sku', match: exact}, {path: tags, match: exact}, {path: nothing, match: exact}]}",
			text:      `{"decision":"CLEAR","items":[{"sku":"A1"}],"tags":["x","y"],"nothing":null}`,
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictPass, Misses: []string{}, Hits: []string{
				`decision: matches "CLEAR"`, `items[0].sku: matches "A1"`, `tags: matches ["x","y"]`, "nothing: matches null"},
				Reasoning: "weighted_average: 4 of 4 fields matched"},
		},
		{
			name:      "weighted mismatch, type mismatch and missing required",
			evaluator: "{name: f, type: field_accuracy, fields: [{path: decision, match: exact, weight: 2}, {path: amount, match: exact}, {path: 'items[0].qty', match: exact}]}",
			text:      "```json\n{\"decision\":\"REVIEW\",\"amount\":\"100\"}\n```",
			want: verdict.EvaluatorResult{Score: 0, Verdict: verdict.VerdictFail, Hits: []string{}, Misses: []string{
				`decision: got "REVIEW", expected "CLEAR"`,
				`amount: type mismatch: got string "100", expected number 100`,
				"items[0].qty: missing (required, expected 2)"},
				Reasoning: "weighted_average: 0 of 3 fields matched"},
		},
		{
			name:      "optional missing is left out, no expected value counts as hit",
			evaluator: "{name: f, type: field_accuracy, fields: [{path: decision, match: exact, weight: 3}, {path: amount, match: exact, required: false}, {path: absent, match: exact}, {path: rate, match: exact}]}",
			text:      `Here you go: {"decision":"CLEAR","rate":0.06} thanks`,
			want: verdict.EvaluatorResult{Score: 0.8, Verdict: verdict.VerdictPass,
				Hits:      []string{`decision: matches "CLEAR"`, "amount: optional and missing, not counted", "absent: no expected value, not compared"},
				Misses:    []string{"rate: got 0.06, expected 0.05"},
				Reasoning: "weighted_average: 3 of 4 fields matched"},
		},
		{
			name:      "numeric tolerance absolute and relative, numeric strings",
			evaluator: "{name: f, type: field_accuracy, fields: [{path: amount, match: numeric_tolerance, tolerance: 1}, {path: rate, match: numeric_tolerance, tolerance: 0.1, relative: true}, {path: decision, match: numeric_tolerance}]}",
			text:      `{"amount":"101","rate":0.0556,"decision":"CLEAR"}`,
			want: verdict.EvaluatorResult{Score: 1.0 / 3, Verdict: verdict.VerdictFail,
				Hits: []string{"amount: got 101, expected 100 (absolute difference 1, tolerance 1)"},
				Misses: []string{
					"rate: got 0.0556, expected 0.05 (relative difference 0.112, tolerance 0.1)",
					`decision: the expected value "CLEAR" is not numeric`},
				Reasoning: "weighted_average: 1 of 3 fields matched"},
		},
		{
			name:      "dates in several forms",
			evaluator: "{name: f, type: field_accuracy, fields: [{path: date, match: date}, {path: when, match: date, formats: [DD/MM/YYYY]}, {path: decision, match: date}]}",
			text:      `{"date":"15-Jan-2025","when":"2025-04-03T23:30:00+05:00","decision":"2025-01-01"}`,
			want: verdict.EvaluatorResult{Score: 2.0 / 3, Verdict: verdict.VerdictFail,
				Hits:      []string{"date: date 2025-01-15 matches", "when: date 2025-04-03 matches"},
				Misses:    []string{`decision: the expected value "CLEAR" is not a date`},
				Reasoning: "weighted_average: 2 of 3 fields matched"},
		},
		{
			name:      "all_or_nothing",
			evaluator: "{name: f, type: field_accuracy, aggregation: all_or_nothing, fields: [{path: decision, match: exact}, {path: amount, match: exact}]}",
			text:      `{"decision":"CLEAR","amount":99}`,
			want: verdict.EvaluatorResult{Score: 0, Verdict: verdict.VerdictFail, Hits: []string{`decision: matches "CLEAR"`},
				Misses: []string{"amount: got 99, expected 100"}, Reasoning: "all_or_nothing: 1 of 2 fields matched"},
		},
		{
			name:      "candidate is not JSON",
			evaluator: "{name: f, type: field_accuracy, fields: [{path: decision, match: exact}]}",
			text:      "CLEAR",
			want: verdict.EvaluatorResult{Verdict: verdict.VerdictFail, Hits: []string{}, Misses: []string{"the candidate answer is not JSON: CLEAR"},
				Reasoning: "field_accuracy parses the candidate answer as JSON"},
		},
		{
			name:      "expected string content is parsed as JSON",
			expected:  `'{"decision": "CLEAR"}'`,
			evaluator: "{name: f, type: field_accuracy, fields: [{path: decision, match: exact}]}",
			text:      `{"decision":"CLEAR"}`,
			want: verdict.EvaluatorResult{Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`decision: matches "CLEAR"`}, Misses: []string{},
				Reasoning: "weighted_average: 1 of 1 fields matched"},
		},
		{
			name:      "no expected message",
			expected:  "-",
			evaluator: "{name: f, type: field_accuracy, fields: [{path: decision, match: exact}]}",
			text:      `{"decision":"CLEAR"}`,
			want: verdict.EvaluatorResult{Verdict: verdict.VerdictFail, Hits: []string{},
				Misses:    []string{"the case has no expected assistant message with content to compare against"},
				Reasoning: "field_accuracy compares with the last expected assistant message's content"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := tt.expected
			switch exp {
			case "":
				exp = expected
			case "-":
				exp = ""
			}
			c := caseWith(t, exp, "      - "+tt.evaluator+"\n")
			got := judge.JudgeCase(context.Background(), c, &jsonlresult.Response{Text: tt.text}, nil).Evaluators[0]
			tt.want.Name, tt.want.Type, tt.want.Key, tt.want.Weight = "f", "field_accuracy", "f", 1
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDate(t *testing.T) {
	tests := []struct {
		in      string
		formats []string
		want    string
	}{
		{in: "2025-01-15", want: "2025-01-15"},
		{in: "2025-01-15T10:00:00Z", want: "2025-01-15"},
		{in: "2025-01-15T23:59:00-08:00", want: "2025-01-15"},
		{in: "2025-01-15 10:00:00", want: "2025-01-15"},
		{in: "15-JAN-2025", want: "2025-01-15"},
		{in: "5 September 2025", want: "2025-09-05"},
		{in: "03/04/2025", want: "2025-03-04"},
		{in: "03/04/2025", formats: []string{"DD/MM/YYYY"}, want: "2025-04-03"},
		{in: "03-04-2025", formats: []string{"MM-DD-YYYY"}, want: "2025-03-04"},
		{in: "13/04/2025", want: "2025-04-13"},
		{in: "04/13/2025", want: "2025-04-13"},
		{in: "31/02/2025", want: ""},
		{in: "02/30/2025", formats: []string{"MM/DD/YYYY"}, want: ""},
		{in: "15-Foo-2025", want: ""},
		{in: "yesterday", want: ""},
	}
	for _, tt := range tests {
		d, ok := parseDate(tt.in, tt.formats)
		got := ""
		if ok {
			got = d.String()
		}
		if got != tt.want {
			t.Errorf("parseDate(%q, %v) = %q, want %q", tt.in, tt.formats, got, tt.want)
		}
	}
}

func TestMetricEvaluators(t *testing.T) {
	tests := []struct {
		name      string
		evaluator string
		resp      jsonlresult.Response
		want      verdict.EvaluatorResult
	}{
		{
			name: "latency within", evaluator: "{name: m, type: latency, threshold: 2000}",
			resp: jsonlresult.Response{DurationMs: f64(1500)},
			want: verdict.EvaluatorResult{Type: "latency", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"claimed duration 1500ms <= 2000ms"}, Misses: []string{},
				Reasoning: "took 1500ms by the runner's own duration_ms, a claim the launcher did not measure (threshold 2000ms)"},
		},
		{
			name: "latency over", evaluator: "{name: m, type: latency, threshold: 2000}",
			resp: jsonlresult.Response{DurationMs: f64(2000.5)},
			want: verdict.EvaluatorResult{Type: "latency", Verdict: verdict.VerdictFail, Hits: []string{}, Misses: []string{"claimed duration 2000.5ms > 2000ms"},
				Reasoning: "took 2000.5ms by the runner's own duration_ms, a claim the launcher did not measure (threshold 2000ms)"},
		},
		{
			// PerCase: the launcher's measurement decides, whatever the runner claims.
			name: "latency measured over a claim within", evaluator: "{name: m, type: latency, threshold: 2000}",
			resp: jsonlresult.Response{DurationMs: f64(1), MeasuredDurationMs: ptrInt64(2500)},
			want: verdict.EvaluatorResult{Type: "latency", Verdict: verdict.VerdictFail, Hits: []string{}, Misses: []string{"measured duration 2500ms > 2000ms"},
				Reasoning: "took 2500ms as the launcher measured the invocation (threshold 2000ms; the runner claimed 1ms)"},
		},
		{
			name: "latency measured without a claim", evaluator: "{name: m, type: latency, threshold: 2000}",
			resp: jsonlresult.Response{MeasuredDurationMs: ptrInt64(40)},
			want: verdict.EvaluatorResult{Type: "latency", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"measured duration 40ms <= 2000ms"}, Misses: []string{},
				Reasoning: "took 40ms as the launcher measured the invocation (threshold 2000ms)"},
		},
		{
			name: "latency not reported", evaluator: "{name: m, type: latency, threshold: 2000}",
			want: verdict.EvaluatorResult{Type: "latency", Verdict: verdict.VerdictFail, Hits: []string{}, Misses: []string{"the runner reported no duration_ms for this case"},
				Reasoning: "latency needs duration_ms in the runner's record (the launcher measures only PerCase invocations)"},
		},
		{
			name: "cost at budget", evaluator: "{name: m, type: cost, budget: 0.05}",
			resp: jsonlresult.Response{CostUSD: f64(0.05)},
			want: verdict.EvaluatorResult{Type: "cost", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"cost $0.0500 <= $0.0500 budget"}, Misses: []string{},
				Reasoning: "cost $0.0500 (budget $0.0500)"},
		},
		{
			name: "cost over", evaluator: "{name: m, type: cost, budget: 0.05}",
			resp: jsonlresult.Response{CostUSD: f64(0.1234)},
			want: verdict.EvaluatorResult{Type: "cost", Verdict: verdict.VerdictFail, Hits: []string{}, Misses: []string{"cost $0.1234 > $0.0500 budget"},
				Reasoning: "cost $0.1234 (budget $0.0500)"},
		},
		{
			name: "cost not reported", evaluator: "{name: m, type: cost, budget: 1}",
			want: verdict.EvaluatorResult{Type: "cost", Verdict: verdict.VerdictFail, Hits: []string{}, Misses: []string{"the runner reported no cost_usd for this case"},
				Reasoning: "cost needs cost_usd in the runner's record"},
		},
		{
			name: "token usage with cached in total", evaluator: "{name: m, type: token_usage, max_input: 100, max_output: 50, max_total: 170}",
			resp: jsonlresult.Response{TokenUsage: &jsonlresult.TokenUsage{Input: 100, Output: 40, Cached: f64(40)}},
			want: verdict.EvaluatorResult{Type: "token_usage", Verdict: verdict.VerdictFail,
				Hits:      []string{"input tokens 100 <= 100", "output tokens 40 <= 50"},
				Misses:    []string{"total tokens 180 > 170"},
				Reasoning: "tokens: input 100, output 40, cached 40, total 180"},
		},
		{
			name: "token usage camelCase limit", evaluator: "{name: m, type: token_usage, maxOutput: 50}",
			resp: jsonlresult.Response{TokenUsage: &jsonlresult.TokenUsage{Input: 1000, Output: 50}},
			want: verdict.EvaluatorResult{Type: "token_usage", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"output tokens 50 <= 50"}, Misses: []string{},
				Reasoning: "tokens: input 1000, output 50, cached 0, total 1050"},
		},
		{
			name: "token usage not reported", evaluator: "{name: m, type: token_usage, max_total: 1}",
			want: verdict.EvaluatorResult{Type: "token_usage", Verdict: verdict.VerdictFail, Hits: []string{}, Misses: []string{"the runner reported no token_usage for this case"},
				Reasoning: "token_usage needs token_usage in the runner's record"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := caseWith(t, "", "      - "+tt.evaluator+"\n")
			got := judge.JudgeCase(context.Background(), c, &tt.resp, nil).Evaluators[0]
			tt.want.Name, tt.want.Key, tt.want.Weight = "m", "m", 1
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeRunner returns canned results by evaluator key and records what it ran.
type fakeRunner struct {
	results map[string]verdict.EvaluatorResult
	ran     []string
	members map[string][]verdict.EvaluatorResult
}

func (f *fakeRunner) Run(_ context.Context, _ *evalfile.Case, ev *evalfile.EvaluatorConfig, _ *jsonlresult.Response) verdict.EvaluatorResult {
	f.ran = append(f.ran, ev.Key)
	return f.results[ev.Key]
}

func (f *fakeRunner) Aggregate(_ context.Context, _ *evalfile.Case, ev *evalfile.EvaluatorConfig, members []verdict.EvaluatorResult) verdict.EvaluatorResult {
	f.ran = append(f.ran, ev.Key+" (aggregator)")
	if f.members == nil {
		f.members = map[string][]verdict.EvaluatorResult{}
	}
	f.members[ev.Key] = members
	return f.results[ev.Key]
}

// brief is a comparable projection of a result.
type brief struct {
	Name    string
	Score   float64
	Verdict verdict.Verdict
	Hits    []string
	Misses  []string
	Reason  string
}

func briefOf(rs []verdict.EvaluatorResult) []brief {
	var out []brief
	for _, r := range rs {
		out = append(out, brief{r.Name, r.Score, r.Verdict, r.Hits, r.Misses, r.Reasoning})
	}
	return out
}

func TestJudgeCaseCombinesEvaluators(t *testing.T) {
	resp := &jsonlresult.Response{Text: `{"decision":"CLEAR"}`, DurationMs: f64(10), CostUSD: f64(5)}
	tests := []struct {
		name       string
		evaluators string
		recorded   map[string]verdict.EvaluatorResult
		judge      Judge
		want       verdict.CaseResult
	}{
		{
			name: "weighted mean, weight 0 excluded, llm_judge skipped",
			evaluators: `      - {name: fast, type: latency, threshold: 100, weight: 3}
      - {name: cheap, type: cost, budget: 1}
      - {name: ignored, type: cost, budget: 1, weight: 0}
      - {name: llm, type: llm_judge, prompt: p.md}
`,
			judge: Judge{Threshold: 0.75},
			want: verdict.CaseResult{ID: "c1", Score: 0.75, Verdict: verdict.VerdictPass, Evaluators: []verdict.EvaluatorResult{
				{Name: "fast", Score: 1, Verdict: verdict.VerdictPass}, {Name: "cheap", Verdict: verdict.VerdictFail},
				{Name: "ignored", Verdict: verdict.VerdictFail}, {Name: "llm", Verdict: verdict.VerdictSkipped},
			}},
		},
		{
			name:       "all skipped is skipped, never passed",
			evaluators: "      - {name: llm, type: llm_judge}\n      - {name: r, type: rubric, rubrics: [be nice]}\n",
			judge:      Judge{Threshold: 0.8},
			want: verdict.CaseResult{ID: "c1", Verdict: verdict.VerdictSkipped,
				Reason: "no evaluator could judge the case: llm: llm_judge needs a model endpoint: set spec.judging.llm in the EvalRun " +
					"(collector check: --llm-base-url and --llm-model) to judge it; not judged; r: rubric needs a model endpoint: " +
					"set spec.judging.llm in the EvalRun (collector check: --llm-base-url and --llm-model) to judge it; not judged",
				Evaluators: []verdict.EvaluatorResult{{Name: "llm", Verdict: verdict.VerdictSkipped}, {Name: "r", Verdict: verdict.VerdictSkipped}}},
		},
		{
			name:       "only weight 0 evaluators is skipped",
			evaluators: "      - {name: fast, type: latency, threshold: 100, weight: 0}\n",
			judge:      Judge{Threshold: 0.8},
			want: verdict.CaseResult{ID: "c1", Verdict: verdict.VerdictSkipped, Reason: "every evaluator that judged the case has weight 0",
				Evaluators: []verdict.EvaluatorResult{{Name: "fast", Score: 1, Verdict: verdict.VerdictPass}}},
		},
		{
			name:       "code_judge without runner or record is skipped by default",
			evaluators: "      - {name: j, type: code_judge, script: ./j.sh}\n      - {name: fast, type: latency, threshold: 1}\n",
			judge:      Judge{Threshold: 0.8},
			want: verdict.CaseResult{ID: "c1", Verdict: verdict.VerdictFail, Evaluators: []verdict.EvaluatorResult{
				{Name: "j", Verdict: verdict.VerdictSkipped}, {Name: "fast", Verdict: verdict.VerdictFail}}},
		},
		{
			name:       "code_judge without a record is an error in the pod",
			evaluators: "      - {name: j, type: code_judge, script: ./j.sh}\n      - {name: fast, type: latency, threshold: 100}\n",
			judge:      Judge{Threshold: 0.8, MissingCodeJudge: verdict.VerdictError},
			want: verdict.CaseResult{ID: "c1", Score: 0.5, Verdict: verdict.VerdictError,
				Error:      `evaluator "j" failed: no code_judge result was recorded for this case (the judge did not run or its result was lost)`,
				Evaluators: []verdict.EvaluatorResult{{Name: "j", Verdict: verdict.VerdictError}, {Name: "fast", Score: 1, Verdict: verdict.VerdictPass}}},
		},
		{
			name:       "recorded code_judge result gets the threshold",
			evaluators: "      - {name: j, type: code_judge, script: ./j.sh}\n",
			recorded:   map[string]verdict.EvaluatorResult{"j": {Score: 0.85, Hits: []string{"ok"}}},
			judge:      Judge{Threshold: 0.9},
			want: verdict.CaseResult{ID: "c1", Score: 0.85, Verdict: verdict.VerdictFail,
				Evaluators: []verdict.EvaluatorResult{{Name: "j", Score: 0.85, Verdict: verdict.VerdictFail}}},
		},
		{
			name: "threshold boundary absorbs rounding",
			evaluators: "      - {name: j, type: code_judge, script: ./j.sh}\n      - {name: k, type: code_judge, script: ./k.sh}\n" +
				"      - {name: l, type: code_judge, script: ./l.sh}\n",
			recorded: map[string]verdict.EvaluatorResult{"j": {Score: 0.7}, "k": {Score: 0.8}, "l": {Score: 0.9}},
			judge:    Judge{Threshold: 0.8},
			want: verdict.CaseResult{ID: "c1", Score: 0.7999999999999999, Verdict: verdict.VerdictPass, Evaluators: []verdict.EvaluatorResult{
				{Name: "j", Score: 0.7, Verdict: verdict.VerdictFail}, {Name: "k", Score: 0.8, Verdict: verdict.VerdictPass}, {Name: "l", Score: 0.9, Verdict: verdict.VerdictPass}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := caseWith(t, "", tt.evaluators)
			got := tt.judge.JudgeCase(context.Background(), c, resp, tt.recorded)
			// Compare the case fields and each evaluator's name, score and verdict.
			for i := range got.Evaluators {
				e := got.Evaluators[i]
				got.Evaluators[i] = verdict.EvaluatorResult{Name: e.Name, Score: e.Score, Verdict: e.Verdict}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("case result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComposite(t *testing.T) {
	resp := &jsonlresult.Response{Text: `{"decision":"CLEAR"}`, DurationMs: f64(10), CostUSD: f64(5)}
	tests := []struct {
		name      string
		evaluator string
		runner    *fakeRunner
		want      []brief
		wantRan   []string
		wantIn    []brief // members the aggregator saw
	}{
		{
			name: "weighted_average with weights, skipped member left out",
			evaluator: `      - name: combo
        type: composite
        evaluators:
          - {name: fast, type: latency, threshold: 100}
          - {name: cheap, type: cost, budget: 1}
          - {name: llm, type: llm_judge}
        aggregator: {type: weighted_average, weights: {fast: 3}}
`,
			want: []brief{{Name: "combo", Score: 0.75, Verdict: verdict.VerdictFail,
				Hits:   []string{"[fast] claimed duration 10ms <= 100ms"},
				Misses: []string{"[cheap] cost $5.0000 > $1.0000 budget"},
				Reason: "weighted average of 2 members"}},
		},
		{
			name: "default aggregator, errored member makes it an error",
			evaluator: `      - name: combo
        type: composite
        evaluators:
          - {name: fast, type: latency, threshold: 100}
          - {name: j, type: code_judge, script: ./j.sh}
`,
			runner: &fakeRunner{results: map[string]verdict.EvaluatorResult{"combo/j": JudgeFailure("the judge exited with status 2 after 1ms", "boom")}},
			want: []brief{{Name: "combo", Verdict: verdict.VerdictError,
				Hits:   []string{"[fast] claimed duration 10ms <= 100ms"},
				Misses: []string{"[j] the judge exited with status 2 after 1ms; stderr: boom"},
				Reason: `member "j" failed`}},
			wantRan: []string{"combo/j"},
		},
		{
			name: "code_judge aggregator sets the verdict and sees final member results",
			evaluator: `      - name: combo
        type: composite
        evaluators:
          - {name: fast, type: latency, threshold: 100}
          - {name: j, type: code_judge, script: ./j.sh}
        aggregator: {type: code_judge, path: ./agg.sh}
`,
			runner: &fakeRunner{results: map[string]verdict.EvaluatorResult{
				"combo/j": {Score: 0.5, Misses: []string{"half"}},
				"combo":   {Score: 0.5, Verdict: verdict.VerdictPass, Hits: []string{"lenient"}, Reasoning: "agg says pass"},
			}},
			want: []brief{{Name: "combo", Score: 0.5, Verdict: verdict.VerdictPass,
				Hits:   []string{"[fast] claimed duration 10ms <= 100ms", "lenient"},
				Misses: []string{"[j] half"},
				Reason: "agg says pass"}},
			wantRan: []string{"combo/j", "combo (aggregator)"},
			wantIn: []brief{
				{Name: "fast", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"claimed duration 10ms <= 100ms"}, Misses: []string{}, Reason: "took 10ms by the runner's own duration_ms, a claim the launcher did not measure (threshold 100ms)"},
				{Name: "j", Score: 0.5, Verdict: verdict.VerdictFail, Hits: []string{}, Misses: []string{"half"}},
			},
		},
		{
			name: "llm_judge aggregator is skipped",
			evaluator: `      - name: combo
        type: composite
        evaluators: [{name: fast, type: latency, threshold: 100}]
        aggregator: {type: llm_judge}
`,
			want: []brief{{Name: "combo", Verdict: verdict.VerdictSkipped,
				Hits: []string{"[fast] claimed duration 10ms <= 100ms"}, Misses: []string{},
				Reason: "the llm_judge aggregator needs a model endpoint: set spec.judging.llm in the EvalRun " +
					"(collector check: --llm-base-url and --llm-model) to judge it; not judged"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := caseWith(t, "", tt.evaluator)
			j := &Judge{Threshold: 0.8}
			if tt.runner != nil {
				j.CodeJudges = tt.runner
			}
			got := j.JudgeCase(context.Background(), c, resp, nil)
			if diff := cmp.Diff(tt.want, briefOf(got.Evaluators)); diff != "" {
				t.Errorf("composite (-want +got):\n%s", diff)
			}
			if tt.runner != nil {
				if diff := cmp.Diff(tt.wantRan, tt.runner.ran); diff != "" {
					t.Errorf("ran (-want +got):\n%s", diff)
				}
				if tt.wantIn != nil {
					if diff := cmp.Diff(tt.wantIn, briefOf(tt.runner.members["combo"])); diff != "" {
						t.Errorf("aggregator members (-want +got):\n%s", diff)
					}
				}
			}
		})
	}
}

func TestRunCodeJudgesRecordsForTheCollector(t *testing.T) {
	c := caseWith(t, "", `      - {name: top, type: code_judge, script: ./top.sh}
      - {name: fast, type: latency, threshold: 100}
      - name: combo
        type: composite
        evaluators:
          - {name: inner, type: code_judge, script: ./inner.sh}
        aggregator: {type: code_judge, script: ./agg.sh}
`)
	resp := &jsonlresult.Response{DurationMs: f64(10)}
	runner := &fakeRunner{results: map[string]verdict.EvaluatorResult{
		"top":         {Score: 1, Hits: []string{"top ok"}},
		"combo/inner": {Score: 0.2},
		"combo":       {Score: 0.9, Verdict: verdict.VerdictFail},
	}}
	j := &Judge{Threshold: 0.8, CodeJudges: runner}
	recorded := j.RunCodeJudges(context.Background(), c, resp)
	if diff := cmp.Diff(runner.results, recorded); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
	// The collector, without a runner, reaches the same judgement from the recorded results.
	inPod := j.JudgeCase(context.Background(), c, resp, nil)
	collector := (&Judge{Threshold: 0.8, MissingCodeJudge: verdict.VerdictError}).JudgeCase(context.Background(), c, resp, recorded)
	if diff := cmp.Diff(inPod, collector); diff != "" {
		t.Errorf("collector judgement differs from the in-pod one (-pod +collector):\n%s", diff)
	}
	if got := collector.Evaluators[2]; got.Verdict != verdict.VerdictFail || got.Score != 0.9 {
		t.Errorf("composite = %s %v, want fail 0.9 (the aggregator's verdict is kept)", got.Verdict, got.Score)
	}
	if got := (&Judge{}).RunCodeJudges(context.Background(), c, resp); got != nil {
		t.Errorf("RunCodeJudges without a runner = %v, want nil", got)
	}
}

func TestErrorAndMissingCases(t *testing.T) {
	c := caseWith(t, "", "      - {name: fast, type: latency, threshold: 100}\n")
	if diff := cmp.Diff(verdict.CaseResult{ID: "c1", Verdict: verdict.VerdictError, Error: "the case has no output to judge"},
		judge.JudgeCase(context.Background(), c, nil, nil)); diff != "" {
		t.Errorf("nil response (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(verdict.CaseResult{ID: "x", Verdict: verdict.VerdictError, Error: "the runner produced no record for this case", Missing: true},
		verdict.MissingCase("x")); diff != "" {
		t.Errorf("MissingCase (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(verdict.CaseResult{ID: "x", Verdict: verdict.VerdictError, Error: "runner exited 1"}, verdict.ErrorCase("x", "runner exited 1")); diff != "" {
		t.Errorf("ErrorCase (-want +got):\n%s", diff)
	}
	f, err := evalfile.Parse([]byte("evalcases: [{id: bare, input_messages: [{role: user, content: q}]}]"))
	if err != nil {
		t.Fatal(err)
	}
	got := judge.JudgeCase(context.Background(), f.CaseAt(0), &jsonlresult.Response{}, nil)
	if got.Verdict != verdict.VerdictSkipped || !strings.HasPrefix(got.Reason, "the case has no evaluators") {
		t.Errorf("case without evaluators = %+v, want skipped with a reason", got)
	}
}

func TestBoundedNotes(t *testing.T) {
	var notes []string
	for i := 0; i < 40; i++ {
		notes = append(notes, strings.Repeat("x", 3000))
	}
	got := Bounded(notes)
	if len(got) != verdict.MaxNotes+1 || got[verdict.MaxNotes] != "... and 8 more" || len(got[0]) != verdict.MaxNoteLength {
		t.Errorf("bounded: %d notes, last %q, first %d bytes", len(got), got[len(got)-1], len(got[0]))
	}
}

// textbound.Head, as notes are cut, and bounded return what their general forms (below) return, fast paths or
// not.
func TestHeadAndBoundedMatchTheGeneralForm(t *testing.T) {
	generalTruncate := func(s string, n int) string {
		s = string([]rune(s)) // each invalid byte becomes U+FFFD
		if len(s) <= n {
			return s
		}
		mark := "…"
		if n < len(mark) {
			mark = "" // no room for it
		}
		var b strings.Builder
		for _, r := range s {
			if b.Len()+utf8.RuneLen(r)+len(mark) > n {
				break
			}
			b.WriteRune(r)
		}
		return b.String() + mark
	}
	generalBounded := func(notes []string) []string {
		out := make([]string, 0, min(len(notes), verdict.MaxNotes+1))
		for i, n := range notes {
			if i == verdict.MaxNotes {
				out = append(out, fmt.Sprintf("... and %d more", len(notes)-verdict.MaxNotes))
				break
			}
			out = append(out, generalTruncate(n, verdict.MaxNoteLength))
		}
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "é", "漢", "😀", "\xff", "\xe2\x82", " ", "…"}
	random := func(maxLen int) string {
		var b strings.Builder
		for b.Len() < maxLen && rng.IntN(maxLen+1) > 0 {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for range 3000 {
		n := 1 + rng.IntN(12)
		s := random(20)
		if got, want := textbound.Head(s, n), generalTruncate(s, n); got != want {
			t.Fatalf("textbound.Head(%q, %d) = %q, want %q", s, n, got, want)
		}
		var notes []string
		for range rng.IntN(verdict.MaxNotes + 3) {
			note := random(20)
			if rng.IntN(8) == 0 { // about the length limit, in characters or in bytes
				note = strings.Repeat(pieces[rng.IntN(len(pieces))], verdict.MaxNoteLength-3+rng.IntN(6)) + random(4)
			}
			notes = append(notes, note)
		}
		if got, want := Bounded(notes), generalBounded(notes); !slices.Equal(got, want) || got == nil {
			t.Fatalf("Bounded(%q) = %q, want %q", notes, got, want)
		}
	}
}

func TestParseThreshold(t *testing.T) {
	for in, want := range map[string]float64{"": 0.8, "0": 0, "1": 1, "0.95": 0.95} {
		got, err := verdict.ParseThreshold(in)
		if err != nil || got != want {
			t.Errorf("ParseThreshold(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"1.5", "-0.1", "x"} {
		if _, err := verdict.ParseThreshold(in); err == nil {
			t.Errorf("ParseThreshold(%q) succeeded, want an error", in)
		}
	}
}

// A case with only its id and evaluators (evalfile.File.LightCase) is judged exactly as the whole case by
// evaluators that do not read it (ReadsCase false); field_accuracy and code_judge do read it.
func TestLightCaseJudgesLikeTheWholeCase(t *testing.T) {
	evaluators := map[string]string{
		"tool_trajectory": "{name: t, type: tool_trajectory, mode: any_order, minimums: {a: 1, b: 2}}",
		"in_order":        "{name: t, type: tool_trajectory, mode: in_order, expected: [{tool: a, args: {k: 1}}, {tool: b}]}",
		"exact":           "{name: t, type: tool_trajectory, mode: exact, expected: [{tool: a}]}",
		"latency":         "{name: l, type: latency, threshold: 100}",
		"cost":            "{name: c, type: cost, budget: 0.5}",
		"token_usage":     "{name: u, type: token_usage, max_total: 100}",
		"llm_judge":       "{name: j, type: llm_judge, prompt: be fair}",
		"composite":       "{name: m, type: composite, evaluators: [{name: l, type: latency, threshold: 100}, {name: c, type: cost, budget: 0.5}]}",
		"field_accuracy":  "{name: f, type: field_accuracy, fields: [{path: decision, match: exact}]}",
		"code_judge":      "{name: s, type: code_judge, script: [python3, judge.py]}",
		"code_aggregator": "{name: m, type: composite, evaluators: [{name: l, type: latency, threshold: 100}], aggregator: {type: code_judge, script: [python3, agg.py]}}",
	}
	responses := []*jsonlresult.Response{
		{Text: `{"decision":"CLEAR"}`, OutputMessages: calls(`a {"k":1}`, "b", "b"), DurationMs: f64(10), CostUSD: f64(0.1),
			TokenUsage: &jsonlresult.TokenUsage{Input: 10, Output: 10}},
		{Text: `{"decision":"BLOCK"}`, OutputMessages: calls("c"), DurationMs: f64(1000), CostUSD: f64(2)},
		{},
	}
	reads := map[string]bool{"field_accuracy": true, "code_judge": true, "code_aggregator": true, "llm_judge": true}
	for name, ev := range evaluators {
		f, err := evalfile.Parse([]byte("execution:\n  evaluators: [" + ev + "]\nevalcases:\n" +
			"  - id: c1\n    input_messages: [{role: user, content: question}]\n" +
			"    expected_messages: [{role: assistant, content: {decision: CLEAR}}]\n    expected_outcome: clear\n"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		light, ok := f.LightCase(0)
		if !ok {
			t.Fatalf("%s: no light case", name)
		}
		if got := evalfile.ReadsCase(light.Evaluators); got != reads[name] {
			t.Errorf("%s: ReadsCase = %v, want %v", name, got, reads[name])
			continue
		}
		if reads[name] {
			continue
		}
		full := f.CaseAt(0)
		for _, j := range []*Judge{judge, {Threshold: 0.3, MissingCodeJudge: verdict.VerdictError}} {
			for k, resp := range responses {
				want := j.JudgeCase(context.Background(), full, resp, nil)
				if diff := cmp.Diff(want, j.JudgeCase(context.Background(), light, resp, nil)); diff != "" {
					t.Errorf("%s, response %d: the light case is judged differently (-whole +light):\n%s", name, k, diff)
				}
			}
		}
	}
	// What ReadsCase guards against: field_accuracy judges a light case (no expected messages) otherwise.
	f, err := evalfile.Parse([]byte("execution:\n  evaluators: [" + evaluators["field_accuracy"] + "]\nevalcases:\n" +
		"  - id: c1\n    input_messages: [{role: user, content: q}]\n    expected_messages: [{role: assistant, content: {decision: CLEAR}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	light, _ := f.LightCase(0)
	if cmp.Equal(judge.JudgeCase(context.Background(), f.CaseAt(0), responses[0], nil), judge.JudgeCase(context.Background(), light, responses[0], nil)) {
		t.Error("field_accuracy judges a light case as the whole one: the test shows nothing")
	}
}

func ptrInt64(v int64) *int64 { return &v }
