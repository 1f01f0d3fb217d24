package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

func TestWriteTable(t *testing.T) {
	lines := sampleLines()
	SortFailingFirst(lines)
	var b bytes.Buffer
	if err := WriteTable(&b, lines); err != nil {
		t.Fatal(err)
	}
	want := `ID         VERDICT   SCORE    EVALUATORS                  MESSAGE
case-002   Fail      0.2500   decision=Fail,policy=Pass   decision: decision: want "REVIEW", got "CLEAR"
case-003   Error     -        -                           output is not JSON <&>
case-005   Missing   -        -                           the runner produced no record for this case
case-004   Skipped   -        -                           no evaluator applies
case-001   Pass      1.0000   decision=Pass               -
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestWriteTableCutsLongMessages(t *testing.T) {
	l := sampleLines()[2]
	l.Error = strings.Repeat("x", 300) + "\nsecond line"
	var b bytes.Buffer
	if err := WriteTable(&b, []*results.Line{l}); err != nil {
		t.Fatal(err)
	}
	row := strings.Split(b.String(), "\n")[1]
	if !strings.HasSuffix(row, strings.Repeat("x", maxMessage-len("…"))+"…") {
		t.Errorf("row %q does not end with the cut message", row)
	}
}

func TestWriteJSONLRoundTrips(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSONL(&b, sampleLines()); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(rows) != len(sampleLines()) {
		t.Fatalf("%d lines, want %d", len(rows), len(sampleLines()))
	}
	for i, row := range rows {
		var got results.Line
		if err := json.Unmarshal([]byte(row), &got); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if diff := cmp.Diff(sampleLines()[i], &got); diff != "" {
			t.Errorf("line %d (-want +got):\n%s", i+1, diff)
		}
	}
}

// The plugin's results table shows a runner's terminal escapes, forged line breaks and bidi overrides escaped:
// in the message (an evaluator quoting the answer, the case's error) and in the evaluators column.
func TestWriteTableEscapesRunnerBytes(t *testing.T) {
	const hostile = "\x1b[2J\x1b[32mPASS\r\u202eSSAP\u202c\u009b"
	l := sampleLines()[1]
	l.Evaluators[0].Misses = []string{"decision: want REVIEW, got " + hostile}
	l.Evaluators[1].Name = "policy" + hostile
	var b bytes.Buffer
	if err := WriteTable(&b, []*results.Line{l}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\r\u202e\u202c\u009b") {
		t.Errorf("table carries raw control characters:\n%q", b.String())
	}
	if n := strings.Count(b.String(), `\x1b[2J\x1b[32mPASS`); n != 2 {
		t.Errorf("the runner's bytes show escaped %d times, want 2 (message, evaluators):\n%s", n, b.String())
	}
}
