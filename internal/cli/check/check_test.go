package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func fixture(name string) string { return filepath.Join("testdata", name) }

// runMain runs the command as the collector binary does and returns its exit code and output.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// jsonValue decodes a JSON document into generic values so that documents compare by content.
func jsonValue(t *testing.T, doc string) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, doc)
	}
	if dec.More() {
		t.Fatalf("more than one JSON document:\n%s", doc)
	}
	return v
}

// TestMainJSON is the end-to-end test of `collector check`: the real command on fixture files, asserting the whole
// JSON document it prints.
func TestMainJSON(t *testing.T) {
	missingCase := func(id string) string {
		return `{"id":"` + id + `","status":"missing","text":"","trace":[],"outputMessages":[],"droppedTraceEvents":0}`
	}
	// With --eval every case is judged: the screening cases have only a code_judge, which does not run without
	// --run-code-judges, so they are skipped; missing cases are errors.
	const notRun = "code_judge scripts do not run here (collector check runs them with --run-code-judges)"
	const skipped = `"score":0,"verdict":"Skipped","verdictReason":"no evaluator could judge the case: decision-check: ` + notRun + `",
		"evaluators":[{"name":"decision-check","type":"code_judge","key":"decision-check","score":0,"verdict":"Skipped",
		 "hits":[],"misses":[],"reasoning":"` + notRun + `","weight":1,"skipCause":"NotRunHere"}]`
	missingJudged := func(id string) string {
		return `{"id":"` + id + `","status":"missing","text":"","trace":[],"outputMessages":[],"droppedTraceEvents":0,
			"score":0,"verdict":"Error","verdictReason":"the runner produced no record for this case"}`
	}
	judgedSummary := func(total, errored, skipped int) string {
		return fmt.Sprintf(`"total":%d,"passed":0,"failed":0,"errored":%d,"skipped":%d,"judged":0,`+
			`"meanScore":0,"medianScore":0,"minScore":0,"maxScore":0,"histogram":[0,0,0,0,0]`, total, errored, skipped)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantDoc  string
	}{
		{
			name:     "batch output that passes, ids from the eval file",
			args:     []string{"--mode", "batch", "--eval", fixture("screening.yaml"), "--output", fixture("batch-ok.jsonl")},
			wantCode: ExitOK,
			wantDoc: `{"ok":true,"mode":"batch","cases":[
				{"id":"case-001","status":"ok","line":1,"text":"{\"decision\":\"CLEAR\"}",
				 "trace":[{"type":"tool_call","timestamp":"2026-01-01T00:00:00Z","name":"lookup","input":{"row":"case-001"}}],
				 "outputMessages":[],"tokenUsage":{"input":120,"output":8},"costUsd":0.0004,"durationMs":310,"droppedTraceEvents":1,` + skipped + `},
				{"id":"case-002","status":"ok","line":2,"text":"{\"decision\":\"REVIEW\"}","trace":[],
				 "outputMessages":[
					{"role":"assistant","toolCalls":[{"tool":"lookup","input":{"row":"case-002"},"output":{"hits":1},"id":"call-1"}]},
					{"role":"assistant","content":{"decision":"REVIEW"}}],
				 "droppedTraceEvents":0,` + skipped + `},
				{"id":"case-003","status":"ok","line":3,"text":"{\"decision\":\"BLOCK\"}","trace":[],"outputMessages":[],"droppedTraceEvents":0,` + skipped + `}],
			 "missingIds":[],"unexpectedIds":[],"parseErrors":[],
			 "summary":{"requested":3,"present":3,"missing":0,"parseErrors":0,"unexpected":0,` + judgedSummary(3, 0, 3) + `}}`,
		},
		{
			name:     "batch output with a BOM, CRLF, a bad line, a duplicate, a stray id and a non-object line",
			args:     []string{"--mode", "batch", "--eval", fixture("screening.yaml"), "--output", fixture("batch-bad.jsonl"), "--format", "json"},
			wantCode: ExitFailed,
			wantDoc: `{"ok":false,
			 "error":"batch output failed: 2 requested ids are missing (case-002, case-003); 3 line errors (line 3: invalid JSON: unexpected end of input at column 25; line 4: duplicate id \"case-001\" (first seen on line 1); line 6: not a JSON object: the line is an array)",
			 "mode":"batch","cases":[
				{"id":"case-001","status":"ok","line":1,"text":"CLEAR","trace":[],"outputMessages":[],"droppedTraceEvents":0,` + skipped + `},
				` + missingJudged("case-002") + `,` + missingJudged("case-003") + `],
			 "missingIds":["case-002","case-003"],"unexpectedIds":["stray"],
			 "parseErrors":[
				{"line":3,"excerpt":"{\"id\":\"case-002\",\"text\":","message":"invalid JSON: unexpected end of input at column 25"},
				{"line":4,"excerpt":"{\"id\":\"case-001\",\"text\":\"again\"}","message":"duplicate id \"case-001\" (first seen on line 1)"},
				{"line":6,"excerpt":"[1,2]","message":"not a JSON object: the line is an array"}],
			 "summary":{"requested":3,"present":1,"missing":2,"parseErrors":3,"unexpected":1,` + judgedSummary(3, 2, 1) + `}}`,
		},
		{
			name:     "ids from a file, in file order, others unexpected",
			args:     []string{"--mode", "batch", "--ids-file", fixture("ids.txt"), "--output", fixture("batch-ok.jsonl"), "--format", "json"},
			wantCode: ExitOK,
			wantDoc: `{"ok":true,"mode":"batch","cases":[
				{"id":"case-001","status":"ok","line":1,"text":"{\"decision\":\"CLEAR\"}",
				 "trace":[{"type":"tool_call","timestamp":"2026-01-01T00:00:00Z","name":"lookup","input":{"row":"case-001"}}],
				 "outputMessages":[],"tokenUsage":{"input":120,"output":8},"costUsd":0.0004,"durationMs":310,"droppedTraceEvents":1},
				{"id":"case-003","status":"ok","line":3,"text":"{\"decision\":\"BLOCK\"}","trace":[],"outputMessages":[],"droppedTraceEvents":0}],
			 "missingIds":[],"unexpectedIds":["case-002"],"parseErrors":[],
			 "summary":{"requested":2,"present":2,"missing":0,"parseErrors":0,"unexpected":1}}`,
		},
		{
			name:     "ids on the command line, in the order given",
			args:     []string{"--mode=batch", "--ids", "case-003, nope ,case-001", "--output", fixture("batch-ok.jsonl")},
			wantCode: ExitFailed,
			wantDoc: `{"ok":false,"error":"batch output failed: 1 requested id is missing (nope)","mode":"batch","cases":[
				{"id":"case-003","status":"ok","line":3,"text":"{\"decision\":\"BLOCK\"}","trace":[],"outputMessages":[],"droppedTraceEvents":0},
				` + missingCase("nope") + `,
				{"id":"case-001","status":"ok","line":1,"text":"{\"decision\":\"CLEAR\"}",
				 "trace":[{"type":"tool_call","timestamp":"2026-01-01T00:00:00Z","name":"lookup","input":{"row":"case-001"}}],
				 "outputMessages":[],"tokenUsage":{"input":120,"output":8},"costUsd":0.0004,"durationMs":310,"droppedTraceEvents":1}],
			 "missingIds":["nope"],"unexpectedIds":["case-002"],"parseErrors":[],
			 "summary":{"requested":3,"present":2,"missing":1,"parseErrors":0,"unexpected":1}}`,
		},
		{
			name:     "batch: the runner wrote no output file",
			args:     []string{"--mode", "batch", "--ids", "a,b", "--output", fixture("absent.jsonl")},
			wantCode: ExitFailed,
			wantDoc: `{"ok":false,"error":"the runner wrote no output file: testdata/absent.jsonl does not exist","mode":"batch",
			 "cases":[` + missingCase("a") + `,` + missingCase("b") + `],
			 "missingIds":["a","b"],"unexpectedIds":[],"parseErrors":[],
			 "summary":{"requested":2,"present":0,"missing":2,"parseErrors":0,"unexpected":0}}`,
		},
		{
			name:     "single: JSON object with text and output messages",
			args:     []string{"--mode", "single", "--ids", "case-001", "--output", fixture("single-json.out")},
			wantCode: ExitOK,
			wantDoc: `{"ok":true,"mode":"single","cases":[{"id":"case-001","status":"ok","text":"CLEAR","trace":[],
				"outputMessages":[{"role":"assistant","content":"CLEAR"}],"droppedTraceEvents":0}],
			 "missingIds":[],"unexpectedIds":[],"parseErrors":[],
			 "summary":{"requested":1,"present":1,"missing":0,"parseErrors":0,"unexpected":0}}`,
		},
		{
			name:     "single: plain text is the answer as written",
			args:     []string{"--mode", "single", "--ids", "case-001", "--output", fixture("single-plain.out")},
			wantCode: ExitOK,
			wantDoc: `{"ok":true,"mode":"single","cases":[{"id":"case-001","status":"ok","text":"Decision: CLEAR\n","trace":[],
				"outputMessages":[],"droppedTraceEvents":0}],
			 "missingIds":[],"unexpectedIds":[],"parseErrors":[],
			 "summary":{"requested":1,"present":1,"missing":0,"parseErrors":0,"unexpected":0}}`,
		},
		{
			name:     "single: the runner wrote no output file",
			args:     []string{"--mode", "single", "--ids", "case-009", "--output", fixture("case-009.out")},
			wantCode: ExitFailed,
			wantDoc: `{"ok":false,"error":"case \"case-009\": the runner wrote no output file: testdata/case-009.out does not exist",
			 "mode":"single","cases":[` + missingCase("case-009") + `],
			 "missingIds":["case-009"],"unexpectedIds":[],"parseErrors":[],
			 "summary":{"requested":1,"present":0,"missing":1,"parseErrors":0,"unexpected":0}}`,
		},
		{
			name:     "summary format prints only the verdict and the counts",
			args:     []string{"--mode", "batch", "--eval", fixture("screening.yaml"), "--output", fixture("batch-bad.jsonl"), "--format", "summary"},
			wantCode: ExitFailed,
			wantDoc:  `{"ok":false,"summary":{"requested":3,"present":1,"missing":2,"parseErrors":3,"unexpected":1,` + judgedSummary(3, 2, 1) + `}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			if diff := cmp.Diff(jsonValue(t, tc.wantDoc), jsonValue(t, stdout)); diff != "" {
				t.Errorf("document mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMainTable(t *testing.T) {
	code, stdout, _ := runMain(t, "--mode", "batch", "--eval", fixture("screening.yaml"), "--output", fixture("batch-bad.jsonl"),
		"--format", "table")
	want := `ID        STATUS   VERDICT  SCORE  LINE  TRACE  MESSAGES  TEXT
case-001  ok       Skipped  -      1     0      0         CLEAR
case-002  missing  Error    -      -     0      0         
case-003  missing  Error    -      -     0      0         

Line errors (3):
  line 3: invalid JSON: unexpected end of input at column 25
    {"id":"case-002","text":
  line 4: duplicate id "case-001" (first seen on line 1)
    {"id":"case-001","text":"again"}
  line 6: not a JSON object: the line is an array
    [1,2]

Missing ids (2):
  case-002
  case-003

Unexpected ids (ignored) (1):
  stray

requested 3, present 1, missing 2, unexpected 1, line errors 3
judged: passed 0, failed 0, errored 2, skipped 1
FAILED: batch output failed: 2 requested ids are missing (case-002, case-003); 3 line errors (line 3: invalid JSON: unexpected end of input at column 25; line 4: duplicate id "case-001" (first seen on line 1); line 6: not a JSON object: the line is an array)
`
	if code != ExitFailed {
		t.Errorf("exit code = %d, want %d", code, ExitFailed)
	}
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("table mismatch (-want +got):\n%s", diff)
	}
}

func TestMainUsageAndIOErrors(t *testing.T) {
	dir := t.TempDir()
	dupIDs := filepath.Join(dir, "dup.txt")
	badEval := filepath.Join(dir, "bad.yaml")
	for path, content := range map[string]string{dupIDs: "a\nb\na\n", badEval: "evalcases: [\n"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := fixture("batch-ok.jsonl")
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{name: "no mode", args: []string{"--ids", "a", "--output", out}, wantStderr: "--mode is required"},
		{name: "bad mode", args: []string{"--mode", "multi", "--ids", "a", "--output", out}, wantStderr: `--mode must be batch or single, got "multi"`},
		{name: "no id source", args: []string{"--mode", "batch", "--output", out}, wantStderr: "give exactly one of --eval, --ids and --ids-file"},
		{name: "two id sources", args: []string{"--mode", "batch", "--ids", "a", "--ids-file", dupIDs, "--output", out},
			wantStderr: "give exactly one of --eval, --ids and --ids-file"},
		{name: "no output", args: []string{"--mode", "batch", "--ids", "a"}, wantStderr: "--output is required"},
		{name: "bad format", args: []string{"--mode", "batch", "--ids", "a", "--output", out, "--format", "xml"},
			wantStderr: `--format must be json, table or summary, got "xml"`},
		{name: "unknown flag", args: []string{"--mode", "batch", "--ids", "a", "--output", out, "--judge"},
			wantStderr: "flag provided but not defined: -judge"},
		{name: "stray argument", args: []string{"--mode", "batch", "--ids", "a", "--output", out, "extra"},
			wantStderr: `unexpected argument "extra"`},
		{name: "empty ids", args: []string{"--mode", "batch", "--ids", " , ", "--output", out}, wantStderr: "no case ids to check"},
		{name: "duplicate ids", args: []string{"--mode", "batch", "--ids-file", dupIDs, "--output", out},
			wantStderr: `case id "a" is given more than once`},
		{name: "single mode with two ids", args: []string{"--mode", "single", "--ids", "a,b", "--output", out},
			wantStderr: "single mode checks exactly one case id, got 2"},
		{name: "single mode with a three-case eval file", args: []string{"--mode", "single", "--eval", fixture("screening.yaml"), "--output", out},
			wantStderr: "single mode checks exactly one case id, got 3"},
		{name: "missing ids file", args: []string{"--mode", "batch", "--ids-file", filepath.Join(dir, "absent.txt"), "--output", out},
			wantStderr: "reading the ids file"},
		{name: "missing eval file", args: []string{"--mode", "batch", "--eval", filepath.Join(dir, "absent.yaml"), "--output", out},
			wantStderr: "reading the eval file"},
		{name: "invalid eval file", args: []string{"--mode", "batch", "--eval", badEval, "--output", out},
			wantStderr: "eval file " + badEval},
		{name: "output is a directory", args: []string{"--mode", "batch", "--ids", "a", "--output", dir},
			wantStderr: "is a directory"},
		{name: "single output is a directory", args: []string{"--mode", "single", "--ids", "a", "--output", dir},
			wantStderr: "is a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, tc.args...)
			if code != ExitUsage {
				t.Errorf("exit code = %d, want %d", code, ExitUsage)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tc.wantStderr)
			}
		})
	}
}

func TestMainHelp(t *testing.T) {
	code, _, stderr := runMain(t, "-h")
	if code != ExitOK || !strings.Contains(stderr, "usage: collector check --mode batch|single") {
		t.Errorf("-h: exit code %d, stderr %q", code, stderr)
	}
}

func TestMainInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := Main(ctx, []string{"--mode", "batch", "--ids", "a", "--output", fixture("batch-ok.jsonl")}, &out, &errOut)
	if code != ExitUsage || !strings.Contains(errOut.String(), "context canceled") {
		t.Errorf("interrupted check: exit code %d, stderr %q", code, errOut.String())
	}
}
