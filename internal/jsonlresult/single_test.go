package jsonlresult

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseSingle(t *testing.T) {
	tests := []struct {
		name string
		data string
		want *Response
	}{
		{
			name: "seed: JSON object with text, trace attached",
			data: `{"text":"answer","trace":[{"type":"message","timestamp":"t"},{"type":"nope"}]}`,
			want: &Response{ID: "c", Text: "answer", DroppedTraceEvents: 1,
				Trace: []TraceEvent{{Type: "message", Timestamp: "t", Raw: json.RawMessage(`{"type":"message","timestamp":"t"}`)}}},
		},
		{
			name: "seed: text and output_messages",
			data: "{\n  \"text\": \"answer\",\n  \"output_messages\": [{\"role\": \"assistant\", \"tool_calls\": [{\"tool\": \"t\"}]}]\n}\n",
			want: &Response{ID: "c", Text: "answer",
				OutputMessages: []OutputMessage{{Role: "assistant", ToolCalls: []ToolCall{{Tool: "t"}}}}},
		},
		{
			name: "seed: plain text output is the answer as written",
			data: "The decision is CLEAR.\nSecond line\n",
			want: &Response{ID: "c", Text: "The decision is CLEAR.\nSecond line\n"},
		},
		{
			name: "object without text: last assistant message content",
			data: `{"output_messages":[{"role":"assistant","content":"one"},{"role":"assistant","content":{"decision":"CLEAR"}}]}`,
			want: &Response{ID: "c", Text: `{"decision":"CLEAR"}`, OutputMessages: []OutputMessage{
				{Role: "assistant", Content: json.RawMessage(`"one"`)},
				{Role: "assistant", Content: json.RawMessage(`{"decision":"CLEAR"}`)},
			}},
		},
		{
			name: "non-string text is JSON-encoded",
			data: `{"text": {"decision": "CLEAR"}}`,
			want: &Response{ID: "c", Text: `{"decision":"CLEAR"}`},
		},
		{
			name: "object with neither text nor assistant content: the whole content, other fields kept",
			data: `{"answer": "x", "cost_usd": 1.5}` + "\n",
			want: &Response{ID: "c", Text: `{"answer": "x", "cost_usd": 1.5}` + "\n", CostUSD: ptr(1.5)},
		},
		{name: "JSON array", data: `[1, 2]`, want: &Response{ID: "c", Text: `[1, 2]`}},
		{name: "JSON string", data: `"quoted"`, want: &Response{ID: "c", Text: `"quoted"`}},
		{name: "JSON number", data: "42\n", want: &Response{ID: "c", Text: "42\n"}},
		{name: "empty output", data: "", want: &Response{ID: "c", Text: ""}},
		{name: "whitespace only", data: " \n", want: &Response{ID: "c", Text: " \n"}},
		{name: "invalid JSON object", data: `{"text": "unterminated`, want: &Response{ID: "c", Text: `{"text": "unterminated`}},
		{name: "two objects", data: `{"text":"a"}{"text":"b"}`, want: &Response{ID: "c", Text: `{"text":"a"}{"text":"b"}`}},
		{name: "leading byte-order mark on plain text", data: "\xEF\xBB\xBFhello", want: &Response{ID: "c", Text: "hello"}},
		{name: "leading byte-order mark on JSON", data: "\xEF\xBB\xBF{\"text\":\"hi\"}", want: &Response{ID: "c", Text: "hi"}},
		{name: "invalid UTF-8 in plain text", data: "caf\xE9", want: &Response{ID: "c", Text: "caf\uFFFD"}},
		{name: "id in the object is not the case id", data: `{"id":"other","text":"t"}`, want: &Response{ID: "c", Text: "t"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseSingle("c", []byte(tc.data))
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Response{}, "Raw")); diff != "" {
				t.Errorf("ParseSingle mismatch (-want +got):\n%s", diff)
			}
			// The kept record is the output as given: parsed again, it gives the same response.
			if string(got.Raw) != tc.data {
				t.Errorf("Raw = %q, want the output as given %q", got.Raw, tc.data)
			}
			if diff := cmp.Diff(got, ParseSingle("c", got.Raw)); diff != "" {
				t.Errorf("ParseSingle(Raw) differs (-first +again):\n%s", diff)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("response does not marshal: %v", err)
			}
		})
	}
}

func TestParseSingleDoesNotAliasInput(t *testing.T) {
	data := []byte(`{"text":"t","output_messages":[{"role":"assistant","content":{"a":1}}]}`)
	got := ParseSingle("c", data)
	for i := range data {
		data[i] = 'x'
	}
	if diff := cmp.Diff(json.RawMessage(`{"a":1}`), got.OutputMessages[0].Content); diff != "" {
		t.Errorf("content changed with the input (-want +got):\n%s", diff)
	}
}

// TestParseLineIsParseBatch: ParseLine gives what ParseBatch gives for the same line as a whole file requesting
// the line's own id: the response (but its line number), the line error's message, or nothing for a blank line.
func TestParseLineIsParseBatch(t *testing.T) {
	tests := []struct{ name, line string }{
		{name: "record", line: `{"id":"a","text":"CLEAR","trace":[{"type":"tool_call","name":"grep"}]}`},
		{name: "byte-order mark", line: "\xEF\xBB\xBF" + `{"id":"a","text":"x"}`},
		{name: "carriage return", line: `{"id":"a","text":"x"}` + "\r"},
		{name: "structured answer", line: `{"id":"a","output_messages":[{"role":"assistant","content":{"decision":"CLEAR"}}]}`},
		{name: "another id", line: `{"id":"b","text":"x"}`},
		{name: "not JSON", line: `PASS`},
		{name: "no id", line: `{"text":"x"}`},
		{name: "too long", line: `{"id":"a","text":"` + strings.Repeat("x", 200) + `"}`},
		{name: "blank", line: " \t\r"},
		{name: "empty", line: ""},
	}
	opts := Options{MaxLineBytes: 128}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want *Response
			res, err := ParseBatch(strings.NewReader(tc.line), []string{"a", "b"}, opts, func(r *Response) error {
				want = r
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			wantMsg := ""
			if len(res.ParseErrors) > 0 {
				wantMsg = res.ParseErrors[0].Message
			}
			if want != nil {
				want.Line = 0
			}
			got, msg := ParseLine([]byte(tc.line), opts)
			if diff := cmp.Diff(want, got); diff != "" || msg != wantMsg {
				t.Errorf("ParseLine(%q) differs from ParseBatch (-batch +line):\n%s\nmessage %q, want %q", tc.line, diff, msg, wantMsg)
			}
		})
	}
}
