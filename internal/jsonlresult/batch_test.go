package jsonlresult

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// parseSettings are the chunkings and worker counts every table case runs with: they must not change the result.
var parseSettings = []Options{
	{},
	{Workers: 1},
	{Workers: 2, chunkBytes: 7},
	{Workers: 3, chunkBytes: 64},
}

type batchRun struct {
	Responses []*Response
	Result    *BatchResult
}

func runBatch(t *testing.T, input string, requested []string, opts Options) batchRun {
	t.Helper()
	var got batchRun
	res, err := ParseBatch(strings.NewReader(input), requested, opts, func(r *Response) error {
		got.Responses = append(got.Responses, r)
		return nil
	})
	if err != nil {
		t.Fatalf("ParseBatch: %v", err)
	}
	got.Result = res
	return got
}

// ignoreSHA leaves the digest to its own test.
var ignoreSHA = cmpopts.IgnoreFields(BatchResult{}, "OutputSHA256")

// ignoreRaw leaves the record's bytes out of a comparison of responses; checkRaw checks them.
var ignoreRaw = cmpopts.IgnoreFields(Response{}, "Raw")

// checkRaw checks that a batch response's Raw, parsed again as a one-line batch, gives the same response: the
// collector keeps Raw as the case's record and reads it with this parser when it judges it again.
func checkRaw(t *testing.T, r *Response) {
	t.Helper()
	if len(r.Raw) == 0 || bytes.ContainsRune(r.Raw, '\n') || bytes.HasSuffix(r.Raw, []byte("\r")) {
		t.Errorf("response %q: Raw %q is not one line without its ending", r.ID, r.Raw)
		return
	}
	var again []*Response
	if _, err := ParseBatch(bytes.NewReader(r.Raw), []string{r.ID}, Options{}, func(a *Response) error {
		again = append(again, a)
		return nil
	}); err != nil || len(again) != 1 {
		t.Errorf("response %q: Raw does not parse again to one response (%v, %d)", r.ID, err, len(again))
		return
	}
	want := *r
	want.Line = 1
	if diff := cmp.Diff(&want, again[0]); diff != "" {
		t.Errorf("response %q: Raw parses again to another response (-first +again):\n%s", r.ID, diff)
	}
}

func TestParseBatch(t *testing.T) {
	traceOK := `{"type":"tool_call","timestamp":"2026-01-01T00:00:00Z","id":"c1","name":"search","input":{"q":"x"}}`
	tests := []struct {
		name      string
		input     string
		requested []string
		opts      Options
		want      batchRun
	}{
		{
			name:      "seed: successful JSONL batch output mapping",
			input:     `{"id":"case-001","text":"{\"decision\": \"CLEAR\"}"}` + "\n" + `{"id":"case-002","text":"{\"decision\": \"REVIEW\"}"}` + "\n",
			requested: []string{"case-001", "case-002"},
			want: batchRun{
				Responses: []*Response{
					{ID: "case-001", Text: `{"decision": "CLEAR"}`, Line: 1},
					{ID: "case-002", Text: `{"decision": "REVIEW"}`, Line: 2},
				},
				Result: &BatchResult{Requested: 2, Present: 2},
			},
		},
		{
			name:      "requested ids given twice count once",
			input:     `{"id":"b","text":"B"}` + "\n" + `{"id":"a","text":"A"}` + "\n" + `{"id":"d","text":"D"}` + "\n",
			requested: []string{"a", "b", "a", "c", "b", "c"},
			want: batchRun{
				Responses: []*Response{{ID: "b", Text: "B", Line: 1}, {ID: "a", Text: "A", Line: 2}},
				Result: &BatchResult{Requested: 3, Present: 2, MissingIDs: []string{"c"}, MissingCount: 1,
					UnexpectedIDs: []string{"d"}, UnexpectedCount: 1},
			},
		},
		{
			name:      "seed: missing eval case result",
			input:     `{"id":"b","text":"B"}` + "\n",
			requested: []string{"a", "b", "c"},
			want: batchRun{
				Responses: []*Response{{ID: "b", Text: "B", Line: 1}},
				Result:    &BatchResult{Requested: 3, Present: 1, MissingIDs: []string{"a", "c"}, MissingCount: 2},
			},
		},
		{
			name:      "seed: invalid JSONL line",
			input:     `{"id":"a","text":"A"}` + "\n" + `{"id":"b","text":}` + "\n" + `{"id":"c","text":"C"}` + "\n",
			requested: []string{"a", "b", "c"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "A", Line: 1}, {ID: "c", Text: "C", Line: 3}},
				Result: &BatchResult{Requested: 3, Present: 2, MissingIDs: []string{"b"}, MissingCount: 1,
					ParseErrors: []LineError{{Line: 2, Excerpt: `{"id":"b","text":}`,
						Message: `invalid JSON: unexpected character '}' at column 18`}},
					ParseErrorCount: 1},
			},
		},
		{
			name: "seed: ignore invalid trace events",
			input: `{"id":"a","text":"A","trace":[` + traceOK + `,{"type":"unknown","timestamp":"t"},{"type":"message"},` +
				`{"type":"error","timestamp":5},"str",7,null,[],{"type":"message","timestamp":"t2"}]}`,
			requested: []string{"a"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "A", Line: 1, DroppedTraceEvents: 7, Trace: []TraceEvent{
					{Type: "tool_call", Timestamp: "2026-01-01T00:00:00Z", ID: "c1", Name: "search",
						Input: json.RawMessage(`{"q":"x"}`), Raw: json.RawMessage(traceOK)},
					{Type: "message", Timestamp: "t2", Raw: json.RawMessage(`{"type":"message","timestamp":"t2"}`)},
				}}},
				Result: &BatchResult{Requested: 1, Present: 1},
			},
		},
		{
			name: "seed: output_messages with tool calls, converted and in order",
			input: `{"id":"a","text":"A","output_messages":[{"role":"assistant","name":"agent","tool_calls":[` +
				`{"tool":"t1","input":{"a":1},"output":{"b":2},"id":"1","timestamp":"ts1"},{"tool":"t2","input":[1, 2]},` +
				`{"input":{}},{"tool":3}]},{"role":"tool","content":"ok","metadata":{"m":true},"timestamp":"ts2"},` +
				`{"content":"no role"},{"role":7},"not a message"]}`,
			requested: []string{"a"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "A", Line: 1, OutputMessages: []OutputMessage{
					{Role: "assistant", Name: "agent", ToolCalls: []ToolCall{
						{Tool: "t1", Input: json.RawMessage(`{"a":1}`), Output: json.RawMessage(`{"b":2}`), ID: "1", Timestamp: "ts1"},
						{Tool: "t2", Input: json.RawMessage(`[1, 2]`)},
					}},
					{Role: "tool", Content: json.RawMessage(`"ok"`), Metadata: json.RawMessage(`{"m":true}`), Timestamp: "ts2"},
				}, Warnings: []string{
					"output_messages[0].tool_calls[2] has no string tool; skipped",
					"output_messages[0].tool_calls[3] has no string tool; skipped",
					"output_messages[2] has no string role; skipped",
					"output_messages[3] has no string role; skipped",
					"output_messages[4] is a string, not an object; skipped",
				}}},
				Result: &BatchResult{Requested: 1, Present: 1},
			},
		},
		{
			name: "seed: both trace and output_messages are kept",
			input: `{"id":"a","text":"A","trace":[` + traceOK + `],"output_messages":[{"role":"assistant","content":"x"}]}` +
				"\n",
			requested: []string{"a"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "A", Line: 1,
					Trace: []TraceEvent{{Type: "tool_call", Timestamp: "2026-01-01T00:00:00Z", ID: "c1", Name: "search",
						Input: json.RawMessage(`{"q":"x"}`), Raw: json.RawMessage(traceOK)}},
					OutputMessages: []OutputMessage{{Role: "assistant", Content: json.RawMessage(`"x"`)}}}},
				Result: &BatchResult{Requested: 1, Present: 1},
			},
		},
		{
			name:      "byte-order mark at the start is ignored, elsewhere it is not whitespace",
			input:     "\xEF\xBB\xBF" + `{"id":"a","text":"A"}` + "\n\xEF\xBB\xBF" + `{"id":"b","text":"B"}` + "\n",
			requested: []string{"a", "b"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "A", Line: 1}},
				Result: &BatchResult{Requested: 2, Present: 1, MissingIDs: []string{"b"}, MissingCount: 1,
					ParseErrors: []LineError{{Line: 2, Excerpt: "\uFEFF" + `{"id":"b","text":"B"}`,
						Message: "invalid JSON: unexpected character U+00EF at column 1"}},
					ParseErrorCount: 1},
			},
		},
		{
			name:      "CRLF line endings, blank and whitespace-only lines count as lines",
			input:     "\r\n" + `{"id":"a","text":"A"}` + "\r\n \t \r\n\n" + `{"id":"b","text":"B\r"}` + "\r\n\r\n",
			requested: []string{"a", "b"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "A", Line: 2}, {ID: "b", Text: "B\r", Line: 5}},
				Result:    &BatchResult{Requested: 2, Present: 2},
			},
		},
		{
			name:      "no trailing newline",
			input:     `{"id":"a","text":"A"}` + "\n" + `{"id":"b","text":"B"}`,
			requested: []string{"a", "b"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "A", Line: 1}, {ID: "b", Text: "B", Line: 2}},
				Result:    &BatchResult{Requested: 2, Present: 2},
			},
		},
		{
			name:      "empty file: every id is missing",
			input:     "",
			requested: []string{"a", "b"},
			want: batchRun{
				Result: &BatchResult{Requested: 2, MissingIDs: []string{"a", "b"}, MissingCount: 2},
			},
		},
		{
			name: "duplicate id: the first record wins, the later line is an error naming the first",
			input: `{"id":"a","text":"first"}` + "\n" + `{"id":"b","text":"B"}` + "\n" + `{"id":"a","text":"second"}` + "\n" +
				`{"id":"x","text":"X1"}` + "\n" + `{"id":"x","text":"X2"}` + "\n",
			requested: []string{"a", "b"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "first", Line: 1}, {ID: "b", Text: "B", Line: 2}},
				Result: &BatchResult{Requested: 2, Present: 2, UnexpectedIDs: []string{"x"}, UnexpectedCount: 1,
					ParseErrors: []LineError{
						{Line: 3, Excerpt: `{"id":"a","text":"second"}`, Message: `duplicate id "a" (first seen on line 1)`},
						{Line: 5, Excerpt: `{"id":"x","text":"X2"}`, Message: `duplicate id "x" (first seen on line 4)`},
					},
					ParseErrorCount: 2},
			},
		},
		{
			name:      "unexpected ids are listed in file order and ignored",
			input:     `{"id":"z","text":"Z"}` + "\n" + `{"id":"a","text":"A"}` + "\n" + `{"id":"y","text":"Y"}` + "\n",
			requested: []string{"a"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "A", Line: 2}},
				Result:    &BatchResult{Requested: 1, Present: 1, UnexpectedIDs: []string{"z", "y"}, UnexpectedCount: 2},
			},
		},
		{
			name: "non-string text is JSON-encoded, nested JSON in a string is kept as written, null text is absent",
			input: `{"id":"obj","text":{"decision": "CLEAR", "n": [1, 2.50]}}` + "\n" + `{"id":"num","text":42}` + "\n" +
				`{"id":"bool","text":false}` + "\n" + `{"id":"arr","text":[ "a" , {"b":null} ]}` + "\n" +
				`{"id":"nested","text":"{\"a\": {\"b\": [1]}}"}` + "\n" +
				`{"id":"null","text":null,"output_messages":[{"role":"assistant","content":"from messages"}]}` + "\n",
			requested: []string{"obj", "num", "bool", "arr", "nested", "null"},
			want: batchRun{
				Responses: []*Response{
					{ID: "obj", Text: `{"decision":"CLEAR","n":[1,2.50]}`, Line: 1},
					{ID: "num", Text: "42", Line: 2},
					{ID: "bool", Text: "false", Line: 3},
					{ID: "arr", Text: `["a",{"b":null}]`, Line: 4},
					{ID: "nested", Text: `{"a": {"b": [1]}}`, Line: 5},
					{ID: "null", Text: "from messages", Line: 6,
						OutputMessages: []OutputMessage{{Role: "assistant", Content: json.RawMessage(`"from messages"`)}}},
				},
				Result: &BatchResult{Requested: 6, Present: 6},
			},
		},
		{
			name: "without text the answer is the last assistant message with content",
			input: `{"id":"str","output_messages":[{"role":"assistant","content":"first"},{"role":"assistant","content":"last"},` +
				`{"role":"assistant","content":""},{"role":"assistant"},{"role":"user","content":"not me"}]}` + "\n" +
				`{"id":"obj","output_messages":[{"role":"assistant","content":{"decision":"CLEAR"}}]}` + "\n" +
				`{"id":"none","output_messages":[{"role":"user","content":"q"}]}` + "\n" +
				`{"id":"escaped","output_messages":[{"role":"assistant","content":"line\nbreak \u00e9"}]}` + "\n",
			requested: []string{"str", "obj", "none", "escaped"},
			want: batchRun{
				Responses: []*Response{
					{ID: "str", Text: "last", Line: 1, OutputMessages: []OutputMessage{
						{Role: "assistant", Content: json.RawMessage(`"first"`)},
						{Role: "assistant", Content: json.RawMessage(`"last"`)},
						{Role: "assistant", Content: json.RawMessage(`""`)},
						{Role: "assistant"},
						{Role: "user", Content: json.RawMessage(`"not me"`)},
					}},
					{ID: "obj", Text: `{"decision":"CLEAR"}`, Line: 2, OutputMessages: []OutputMessage{
						{Role: "assistant", Content: json.RawMessage(`{"decision":"CLEAR"}`)}}},
					{ID: "none", Text: "", Line: 3, OutputMessages: []OutputMessage{
						{Role: "user", Content: json.RawMessage(`"q"`)}}},
					{ID: "escaped", Text: "line\nbreak é", Line: 4, OutputMessages: []OutputMessage{
						{Role: "assistant", Content: json.RawMessage(`"line\nbreak \u00e9"`)}}},
				},
				Result: &BatchResult{Requested: 4, Present: 4},
			},
		},
		{
			name:  "lines that are valid JSON but not objects",
			input: "[1,2]\n\"a string\"\n3.5\nnull\ntrue\n",
			want: batchRun{Result: &BatchResult{ParseErrorCount: 5, ParseErrors: []LineError{
				{Line: 1, Excerpt: "[1,2]", Message: "not a JSON object: the line is an array"},
				{Line: 2, Excerpt: `"a string"`, Message: "not a JSON object: the line is a string"},
				{Line: 3, Excerpt: "3.5", Message: "not a JSON object: the line is a number"},
				{Line: 4, Excerpt: "null", Message: "not a JSON object: the line is null"},
				{Line: 5, Excerpt: "true", Message: "not a JSON object: the line is a boolean"},
			}}},
		},
		{
			name:      "id missing, empty or not a string",
			input:     `{"text":"A"}` + "\n" + `{"id":"","text":"A"}` + "\n" + `{"id":7}` + "\n" + `{"id":null}` + "\n" + `{"id":["a"]}` + "\n",
			requested: []string{"a"},
			want: batchRun{Result: &BatchResult{Requested: 1, MissingIDs: []string{"a"}, MissingCount: 1, ParseErrorCount: 5,
				ParseErrors: []LineError{
					{Line: 1, Excerpt: `{"text":"A"}`, Message: `missing required string field: id`},
					{Line: 2, Excerpt: `{"id":"","text":"A"}`, Message: `missing required string field: id`},
					{Line: 3, Excerpt: `{"id":7}`, Message: `"id" must be a string, got a number`},
					{Line: 4, Excerpt: `{"id":null}`, Message: `"id" must be a string, got null`},
					{Line: 5, Excerpt: `{"id":["a"]}`, Message: `"id" must be a string, got an array`},
				}}},
		},
		{
			name: "id of only whitespace is a missing id, not an unexpected one",
			input: `{"id":"   ","text":"A"}` + "\n" + `{"id":"\t\r\n ","text":"A"}` + "\n" + `{"id":"\u00a0\u3000"}` + "\n" +
				"{\"id\":\"\u2003\"}\n" + `{"id":"a","text":"A"}` + "\n",
			requested: []string{"a"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "A", Line: 5}},
				Result: &BatchResult{Requested: 1, Present: 1, ParseErrorCount: 4, ParseErrors: []LineError{
					{Line: 1, Excerpt: `{"id":"   ","text":"A"}`, Message: `missing required string field: id`},
					{Line: 2, Excerpt: `{"id":"\t\r\n ","text":"A"}`, Message: `missing required string field: id`},
					{Line: 3, Excerpt: `{"id":"\u00a0\u3000"}`, Message: `missing required string field: id`},
					{Line: 4, Excerpt: "{\"id\":\"\u2003\"}", Message: `missing required string field: id`},
				}},
			},
		},
		{
			name:      "id with whitespace around it is kept as written",
			input:     `{"id":" a ","text":"A"}` + "\n" + `{"id":"a\t"}` + "\n",
			requested: []string{"a"},
			want: batchRun{Result: &BatchResult{Requested: 1, MissingIDs: []string{"a"}, MissingCount: 1,
				UnexpectedIDs: []string{" a ", "a\t"}, UnexpectedCount: 2}},
		},
		{
			name: "invalid JSON is reported with the column of the problem",
			input: `{"id":"a"} x` + "\n" + `{"id":"a"` + "\n" + `{"id":"a\q"}` + "\n" + "{\"id\":\"a\tb\"}" + "\n" +
				`{"id":"a",}` + "\n" + `{"id":01}` + "\n" + `{'id':'a'}` + "\n" + `{"id":"a" "text":"b"}` + "\n" +
				`{"id":"\u12"}` + "\n" + `{"id":tru}` + "\n" + `{"id":-}` + "\n" + `{"id":1.}` + "\n" + `{"id":1e}` + "\n",
			want: batchRun{Result: &BatchResult{ParseErrorCount: 13, ParseErrors: []LineError{
				{Line: 1, Excerpt: `{"id":"a"} x`, Message: "invalid JSON: unexpected content after the object at column 12"},
				{Line: 2, Excerpt: `{"id":"a"`, Message: "invalid JSON: unexpected end of input at column 10"},
				{Line: 3, Excerpt: `{"id":"a\q"}`, Message: "invalid JSON: invalid escape in string at column 10"},
				{Line: 4, Excerpt: "{\"id\":\"a\tb\"}", Message: "invalid JSON: control character U+0009 in string at column 9"},
				{Line: 5, Excerpt: `{"id":"a",}`, Message: "invalid JSON: expected a string object key at column 11"},
				{Line: 6, Excerpt: `{"id":01}`, Message: "invalid JSON: expected ',' or '}' after an object member at column 8"},
				{Line: 7, Excerpt: `{'id':'a'}`, Message: "invalid JSON: expected a string object key at column 2"},
				{Line: 8, Excerpt: `{"id":"a" "text":"b"}`, Message: "invalid JSON: expected ',' or '}' after an object member at column 11"},
				{Line: 9, Excerpt: `{"id":"\u12"}`, Message: `invalid JSON: invalid \u escape in string at column 12`},
				{Line: 10, Excerpt: `{"id":tru}`, Message: "invalid JSON: unexpected character '}' at column 10"},
				{Line: 11, Excerpt: `{"id":-}`, Message: "invalid JSON: invalid number at column 8"},
				{Line: 12, Excerpt: `{"id":1.}`, Message: "invalid JSON: invalid number: expected a digit after the decimal point at column 9"},
				{Line: 13, Excerpt: `{"id":1e}`, Message: "invalid JSON: invalid number: expected a digit in the exponent at column 9"},
			}}},
		},
		{
			name:  "nesting deeper than encoding/json allows is a line error, not a crash",
			input: `{"id":"a","x":` + strings.Repeat("[", maxNestingDepth+5) + "\n",
			want: batchRun{Result: &BatchResult{ParseErrorCount: 1, ParseErrors: []LineError{{Line: 1,
				Excerpt: textbound.Head(`{"id":"a","x":`+strings.Repeat("[", 200), ExcerptBytes),
				Message: "invalid JSON: nesting deeper than 10000 levels at column 10014"}}}},
		},
		{
			name: "a line over the limit is a line error and parsing goes on",
			input: `{"id":"a","text":"A"}` + "\n" + `{"id":"b","text":"` + strings.Repeat("x", 110) + `"}` + "\n" +
				`{"id":"c","text":"C"}` + "\n" + strings.Repeat("y", 300),
			requested: []string{"a", "b", "c"},
			opts:      Options{MaxLineBytes: 64},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "A", Line: 1}, {ID: "c", Text: "C", Line: 3}},
				Result: &BatchResult{Requested: 3, Present: 2, MissingIDs: []string{"b"}, MissingCount: 1, ParseErrorCount: 2,
					ParseErrors: []LineError{
						{Line: 2, Excerpt: `{"id":"b","text":"` + strings.Repeat("x", 99) + "…",
							Message: "line is 130 bytes long, over the limit of 64 bytes"},
						{Line: 4, Excerpt: strings.Repeat("y", 117) + "…", Message: "line is 300 bytes long, over the limit of 64 bytes"},
					}},
			},
		},
		{
			name:  "an over-long first line is excerpted without its byte-order mark",
			input: "\xEF\xBB\xBF" + strings.Repeat("z", 200) + "\n",
			opts:  Options{MaxLineBytes: 64},
			want: batchRun{Result: &BatchResult{ParseErrorCount: 1, ParseErrors: []LineError{
				{Line: 1, Excerpt: strings.Repeat("z", 117) + "…", Message: "line is 203 bytes long, over the limit of 64 bytes"},
			}}},
		},
		{
			name: "invalid UTF-8 inside a record keeps the record, with U+FFFD in its place",
			input: "{\"id\":\"a\",\"text\":\"caf\xE9 \xF0\x9F\",\"output_messages\":[{\"role\":\"assistant\"," +
				"\"content\":{\"k\":\"\xFF\"}}]}\n",
			requested: []string{"a"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "caf\uFFFD \uFFFD\uFFFD", Line: 1, OutputMessages: []OutputMessage{
					{Role: "assistant", Content: json.RawMessage("{\"k\":\"\uFFFD\"}")}}}},
				Result: &BatchResult{Requested: 1, Present: 1},
			},
		},
		{
			name: "escapes in keys and values, surrogate pairs and unpaired surrogates",
			input: `{"\u0069d":"\u0061","text":"\ud83d\ude00 \ud800 \u00e9\/\"\\\b\f\n\r\t",` +
				`"trace":[{"type":"model\u005fstep","timestamp":"t"}]}` + "\n",
			requested: []string{"a"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "😀 \uFFFD é/\"\\\b\f\n\r\t", Line: 1, Trace: []TraceEvent{
					{Type: "model_step", Timestamp: "t", Raw: json.RawMessage(`{"type":"model\u005fstep","timestamp":"t"}`)}}}},
				Result: &BatchResult{Requested: 1, Present: 1},
			},
		},
		{
			name:      "duplicate members of a record: the last one wins",
			input:     `{"id":"x","text":"old","id":"a","trace":[{"type":"error","timestamp":"t"}],"trace":"ignored","text":"new"}` + "\n",
			requested: []string{"a"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "new", Line: 1, Warnings: []string{"trace is a string, not an array; ignored"}}},
				Result:    &BatchResult{Requested: 1, Present: 1},
			},
		},
		{
			name: "non-array trace and output_messages are ignored with a warning; unknown fields are ignored",
			input: `{"id":"a","text":"A","trace":{"type":"message"},"output_messages":"x","extra":{"deep":[1,{"x":null}]},` +
				`"output_messages_v2":[1]}` + "\n",
			requested: []string{"a"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "A", Line: 1, Warnings: []string{
					"trace is an object, not an array; ignored",
					"output_messages is a string, not an array; ignored",
				}}},
				Result: &BatchResult{Requested: 1, Present: 1},
			},
		},
		{
			name: "metrics: kept when non-negative numbers, else ignored with a warning",
			input: `{"id":"good","text":"","token_usage":{"input":10,"output":2.5,"cached":0},"cost_usd":0.01,"duration_ms":1200}` + "\n" +
				`{"id":"bad","text":"","token_usage":{"input":-1,"output":2},"cost_usd":"0.01","duration_ms":-5}` + "\n" +
				`{"id":"partial","text":"","token_usage":{"input":1},"cost_usd":1e999}` + "\n" +
				`{"id":"nulls","text":"","token_usage":null,"cost_usd":null,"duration_ms":null}` + "\n",
			requested: []string{"good", "bad", "partial", "nulls"},
			want: batchRun{
				Responses: []*Response{
					{ID: "good", Line: 1, TokenUsage: &TokenUsage{Input: 10, Output: 2.5, Cached: ptr(0.0)}, CostUSD: ptr(0.01), DurationMs: ptr(1200.0)},
					{ID: "bad", Line: 2, Warnings: []string{
						"token_usage needs non-negative numbers input and output (and cached when given); ignored",
						"cost_usd is not a non-negative number; ignored",
						"duration_ms is not a non-negative number; ignored",
					}},
					{ID: "partial", Line: 3, Warnings: []string{
						"token_usage needs non-negative numbers input and output (and cached when given); ignored",
						"cost_usd is not a non-negative number; ignored",
					}},
					{ID: "nulls", Line: 4},
				},
				Result: &BatchResult{Requested: 4, Present: 4},
			},
		},
		{
			name:      "requested ids given twice count once",
			input:     `{"id":"a","text":"A"}` + "\n",
			requested: []string{"a", "b", "a", "b"},
			want: batchRun{
				Responses: []*Response{{ID: "a", Text: "A", Line: 1}},
				Result:    &BatchResult{Requested: 2, Present: 1, MissingIDs: []string{"b"}, MissingCount: 1},
			},
		},
		{
			name:      "lists are bounded, counts are not",
			input:     "x\ny\n" + `{"id":"u1"}` + "\n" + `{"id":"u2"}` + "\nz\n" + `{"id":"u3"}` + "\n",
			requested: []string{"m1", "m2", "m3"},
			opts:      Options{MaxParseErrors: 2, MaxListedIDs: 2},
			want: batchRun{Result: &BatchResult{Requested: 3,
				MissingIDs: []string{"m1", "m2"}, MissingCount: 3,
				UnexpectedIDs: []string{"u1", "u2"}, UnexpectedCount: 3,
				ParseErrors: []LineError{
					{Line: 1, Excerpt: "x", Message: "invalid JSON: unexpected character 'x' at column 1"},
					{Line: 2, Excerpt: "y", Message: "invalid JSON: unexpected character 'y' at column 1"},
				},
				ParseErrorCount: 3}},
		},
	}
	for _, tc := range tests {
		for _, settings := range parseSettings {
			opts := settings
			opts.MaxLineBytes, opts.MaxParseErrors, opts.MaxListedIDs = tc.opts.MaxLineBytes, tc.opts.MaxParseErrors, tc.opts.MaxListedIDs
			t.Run(fmt.Sprintf("%s/workers=%d,chunk=%d", tc.name, opts.Workers, opts.chunkBytes), func(t *testing.T) {
				got := runBatch(t, tc.input, tc.requested, opts)
				if diff := cmp.Diff(tc.want, got, ignoreSHA, ignoreRaw, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("ParseBatch mismatch (-want +got):\n%s", diff)
				}
				for _, r := range got.Responses {
					checkRaw(t, r)
					if _, err := json.Marshal(r); err != nil {
						t.Errorf("response %q does not marshal: %v", r.ID, err)
					}
				}
			})
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestParseBatchDigest(t *testing.T) {
	input := "\xEF\xBB\xBF" + `{"id":"a","text":"A"}` + "\r\n\nnot json\n"
	got := runBatch(t, input, []string{"a"}, Options{chunkBytes: 5})
	sum := sha256.Sum256([]byte(input))
	if diff := cmp.Diff(hex.EncodeToString(sum[:]), got.Result.OutputSHA256); diff != "" {
		t.Errorf("OutputSHA256 mismatch (-want +got):\n%s", diff)
	}
}

func TestBatchResultErr(t *testing.T) {
	tests := []struct {
		name string
		res  BatchResult
		want string
	}{
		{name: "ok", res: BatchResult{Requested: 2, Present: 2, UnexpectedIDs: []string{"x"}, UnexpectedCount: 1}},
		{
			name: "one missing id",
			res:  BatchResult{MissingIDs: []string{"a"}, MissingCount: 1},
			want: "batch output failed: 1 requested id is missing (a)",
		},
		{
			name: "missing ids beyond the list and line errors",
			res: BatchResult{
				MissingIDs: []string{"a", "b"}, MissingCount: 5,
				ParseErrors:     []LineError{{Line: 3, Message: "invalid JSON: x"}, {Line: 9, Message: `missing required string field: id`}},
				ParseErrorCount: 2,
			},
			want: `batch output failed: 5 requested ids are missing (a, b and 3 more); 2 line errors (line 3: invalid JSON: x; line 9: missing required string field: id)`,
		},
		{
			name: "only line errors, more than the summary names",
			res: BatchResult{ParseErrorCount: 12, ParseErrors: func() []LineError {
				l := make([]LineError, 0, 12)
				for i := range 12 {
					l = append(l, LineError{Line: int64(i + 1), Message: "m"})
				}
				return l
			}()},
			want: "batch output failed: 12 line errors (line 1: m; line 2: m; line 3: m; line 4: m; line 5: m; line 6: m; line 7: m; " +
				"line 8: m; line 9: m; line 10: m; and 2 more)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.res.Err()
			got := ""
			if err != nil {
				got = err.Error()
				var be *BatchError
				if !errors.As(err, &be) {
					t.Errorf("Err() = %T, want *BatchError", err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Err() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseBatchCallbackError(t *testing.T) {
	input := strings.Repeat(`{"id":"a","text":"A"}`+"\n", 1) + strings.Repeat(`{"id":"u","text":"U"}`+"\n", 5000) + `{"id":"b"}` + "\n"
	stop := errors.New("stop here")
	var seen []string
	res, err := ParseBatch(strings.NewReader(input), []string{"a", "b"}, Options{chunkBytes: 64}, func(r *Response) error {
		seen = append(seen, r.ID)
		return stop
	})
	if !errors.Is(err, stop) || res != nil {
		t.Fatalf("ParseBatch = %v, %v; want nil and the callback's error", res, err)
	}
	if diff := cmp.Diff([]string{"a"}, seen); diff != "" {
		t.Errorf("callback calls mismatch (-want +got):\n%s", diff)
	}
}

func TestParseBatchReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"id":"a"}`+"\n"), iotest.ErrReader(errors.New("disk on fire")))
	res, err := ParseBatch(r, []string{"a"}, Options{}, func(*Response) error { return nil })
	if err == nil || res != nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("ParseBatch = %v, %v; want nil and the read error", res, err)
	}
}

func TestParseBatchFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"a","text":"A"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	res, err := ParseBatchFile(path, []string{"a"}, Options{}, func(r *Response) error {
		got = append(got, r.Text)
		return nil
	})
	if err != nil || res.Err() != nil {
		t.Fatalf("ParseBatchFile = %v, %v", res.Err(), err)
	}
	if diff := cmp.Diff([]string{"A"}, got); diff != "" {
		t.Errorf("texts mismatch (-want +got):\n%s", diff)
	}

	_, err = ParseBatchFile(filepath.Join(dir, "absent.jsonl"), []string{"a"}, Options{}, func(*Response) error { return nil })
	if !errors.Is(err, ErrNoOutputFile) {
		t.Errorf("ParseBatchFile on a missing file = %v, want ErrNoOutputFile", err)
	}
	if _, err = ParseBatchFile(dir, []string{"a"}, Options{}, func(*Response) error { return nil }); err == nil || errors.Is(err, ErrNoOutputFile) {
		t.Errorf("ParseBatchFile on a directory = %v, want a read error", err)
	}
}

// TestParseBatchAgreesWithBaseline checks that the benchmark compares like with like: on the reference workload
// the straightforward baseline and ParseBatch give the same responses.
func TestParseBatchAgreesWithBaseline(t *testing.T) {
	var sb strings.Builder
	ids := writeWorkload(&sb, 300)
	collect := func(parse func(fn func(*Response) error) (*BatchResult, error)) batchRun {
		var got batchRun
		res, err := parse(func(r *Response) error {
			got.Responses = append(got.Responses, r)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got.Result = res
		return got
	}
	fast := collect(func(fn func(*Response) error) (*BatchResult, error) {
		return ParseBatch(strings.NewReader(sb.String()), ids, Options{chunkBytes: 4096}, fn)
	})
	base := collect(func(fn func(*Response) error) (*BatchResult, error) {
		return baselineParse(strings.NewReader(sb.String()), ids, fn)
	})
	if len(fast.Responses) != len(ids) {
		t.Fatalf("got %d responses, want %d", len(fast.Responses), len(ids))
	}
	if diff := cmp.Diff(base, fast, ignoreRaw, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("ParseBatch disagrees with the baseline (-baseline +ParseBatch):\n%s", diff)
	}
}
