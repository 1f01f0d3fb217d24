package jsonlresult

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestOutput42 reads AgentV 4.42's batch record: its output messages under output, kept apart from
// output_messages (agentv-eval-v2 judging reads only those, and the answer still comes from text or
// output_messages), and a tool call's duration_ms.
func TestOutput42(t *testing.T) {
	input := `{"id":"a","output":[{"role":"assistant","content":"from output","tool_calls":[{"tool":"Read","input":{"path":"x"},"duration_ms":45},{"tool":"Grep","duration_ms":-1},{"tool":"Bash","duration_ms":"9"}]}]}` + "\n" +
		`{"id":"b","text":"t","output":[{"role":"user","content":"q"},7,{"content":"no role"}],"output_messages":[{"role":"assistant","content":"m"}]}` + "\n" +
		`{"id":"c","output":{"role":"assistant"},"output_messages":null}` + "\n"
	var got []*Response
	res, err := ParseBatch(strings.NewReader(input), []string{"a", "b", "c"}, Options{}, func(r *Response) error {
		got = append(got, r)
		return nil
	})
	if err != nil || res.Present != 3 {
		t.Fatalf("%v, %+v", err, res)
	}
	d45 := 45.0
	want := []*Response{
		{ID: "a", Line: 1, Output: []OutputMessage{{Role: "assistant", Content: json.RawMessage(`"from output"`), ToolCalls: []ToolCall{
			{Tool: "Read", Input: json.RawMessage(`{"path":"x"}`), DurationMs: &d45}, {Tool: "Grep"}, {Tool: "Bash"}}}}},
		{ID: "b", Text: "t", Line: 2, Output: []OutputMessage{{Role: "user", Content: json.RawMessage(`"q"`)}},
			OutputMessages: []OutputMessage{{Role: "assistant", Content: json.RawMessage(`"m"`)}},
			Warnings:       []string{"output[1] is a number, not an object; skipped", "output[2] has no string role; skipped"}},
		{ID: "c", Line: 3, Warnings: []string{"output is an object, not an array; ignored"}},
	}
	if diff := cmp.Diff(want, got, ignoreRaw, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// encoding/json reads the well-formed records alike.
	wellFormed := input[:strings.Index(input, "\n")+1] +
		`{"id":"b","output":[{"role":"user","content":"q"}],"output_messages":[{"role":"assistant","content":"m"}]}` + "\n"
	got = got[:0]
	if _, err := ParseBatch(strings.NewReader(wellFormed), []string{"a", "b"}, Options{}, func(r *Response) error {
		got = append(got, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var base []*Response
	if _, err := baselineParse(strings.NewReader(wellFormed), []string{"a", "b"}, func(r *Response) error {
		base = append(base, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(base, got, ignoreRaw, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Response{}, "Warnings")); diff != "" {
		t.Errorf("ParseBatch disagrees with the baseline (-baseline +ParseBatch):\n%s", diff)
	}
}
