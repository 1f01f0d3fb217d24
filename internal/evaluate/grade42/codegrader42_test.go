package grade42

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

func TestParseReply42(t *testing.T) {
	type want struct {
		Score      float64
		Assertions []assertion42
		Details    string
		Verdict    string
		Err        string
	}
	for _, tc := range []struct {
		name, stdout, stderr string
		code                 int
		aggregator           bool
		want                 want
	}{
		{"score, assertions, details", `{"score": 0.7, "assertions": [{"text": "a", "passed": true, "evidence": "e"}, {"text": "b", "passed": 0}, {"passed": true}], "details": {"tp": 3}}`, "", 0, false,
			want{Score: 0.7, Assertions: []assertion42{{Text: "a", Passed: true, Evidence: ptr("e")}, {Text: "b"}}, Details: `{"tp":3}`}},
		{"without a score: the share of passed assertions", `{"assertions": [{"text": "a", "passed": true}, {"text": "b", "passed": false}]}`, "", 0, false,
			want{Score: 0.5, Assertions: []assertion42{{Text: "a", Passed: true}, {Text: "b"}}}},
		{"a score clamped", `{"score": 7}`, "", 0, false, want{Score: 1}},
		{"plain stdout, exit 0: pass", "all good\n", "", 0, false,
			want{Score: 1, Assertions: []assertion42{{Text: "all good", Passed: true}}}},
		{"no stdout, exit 0", "", "", 0, false, want{Score: 1, Assertions: []assertion42{{Text: "exit 0", Passed: true}}}},
		{"plain stdout, exit 1: fail", "missing keyword", "", 1, false,
			want{Assertions: []assertion42{{Text: "missing keyword"}}}},
		{"a JSON scalar is plain text", "0.9", "", 0, false, want{Score: 1, Assertions: []assertion42{{Text: "0.9", Passed: true}}}},
		{"text after the object is plain text", `{"score": 0}}`, "", 0, false,
			want{Score: 1, Assertions: []assertion42{{Text: `{"score": 0}}`, Passed: true}}}},
		{"exit 1 with stderr: an error", "x", "Traceback", 1, false, want{Err: "the code grader exited with status 1"}},
		{"exit 2 with JSON: an error", `{"score": 1}`, "", 2, false, want{Err: "the code grader exited with status 2"}},
		{"an aggregator's verdict", `{"score": 0.2, "verdict": "pass"}`, "", 0, true, want{Score: 0.2, Verdict: "pass"}},
		{"an aggregator without JSON scores 0", "ok", "", 0, true, want{}},
		{"an aggregator's non-zero exit is an error", "ok", "", 3, true, want{Err: "the code grader exited with status 3"}},
		{"an aggregator's score is not the assertions' share", `{"assertions": [{"text": "a", "passed": true}]}`, "", 0, true,
			want{Assertions: []assertion42{{Text: "a", Passed: true}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := parseReply42([]byte(tc.stdout), []byte(tc.stderr), tc.code, tc.aggregator)
			got := want{Score: r.score, Assertions: r.assertions, Details: string(r.details), Verdict: r.verdict, Err: r.err}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCodeGrader42(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "evals"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "evals", "notes.md"), []byte("note\r\ntext"), 0o644); err != nil {
		t.Fatal(err)
	}
	// stdin.sh keeps its stdin and replies with the length of output (or of the file output_path names).
	writeScript(t, filepath.Join(dir, "evals"), "stdin.sh", `cat > "$OUT_DIR/stdin.json"
p=$(sed -n 's/^  "output_path": "\(.*\)",$/\1/p' "$OUT_DIR/stdin.json")
if [ -n "$p" ]; then cp "$p" "$OUT_DIR/output.json"; fi
echo '{"score": 0.25, "assertions": [{"text": "read", "passed": true}], "details": {"b": 1, "a": 2}}'
`)
	writeScript(t, filepath.Join(dir, "evals"), "exit.sh", "cat >/dev/null; echo 'keyword missing'; exit 1\n")
	writeScript(t, filepath.Join(dir, "evals"), "crash.sh", "cat >/dev/null; echo boom >&2; exit 1\n")
	out := t.TempDir()
	t.Setenv("OUT_DIR", out)
	doc := `tests:
  - id: t
    criteria: Greets.
    input:
      - role: user
        content:
          - {type: text, value: Hello}
          - {type: file, value: notes.md}
    expected_output: {greeting: Hi, camelKey: 1}
    metadata: {teamName: a}
    assertions:
      - {name: stdin, type: code-grader, command: [./stdin.sh], fieldList: [x]}
      - {name: exit, type: code-grader, command: ./exit.sh}
      - {name: crash, type: code-grader, command: ./crash.sh}
`
	f := suite42(t, doc)
	c := f.CaseAt(0)
	j := &evaluate.Judge{Threshold: verdict.DefaultThreshold, Grader42: Graders{}, Bundle: bundle.Dir{Root: dir, EvalFile: "evals/suite.yaml"},
		CodeJudges: evaluate.ScriptRunner{Dir: filepath.Join(dir, "evals")}}
	resp := &jsonlresult.Response{ID: "t", Text: "Hi there", DurationMs: ptr(12.5)}
	res := j.JudgeCase(context.Background(), c, resp, nil)
	want := judged42{Verdict: verdict.VerdictError, Error: `grader "crash" could not judge the test: the code grader exited with status 1 after `,
		Graders: []grader42View{
			{Name: "stdin", Type: "code-grader", Score: 0.25, Verdict: verdict.VerdictFail, Hits: []string{"read"}},
			{Name: "exit", Type: "code-grader", Verdict: verdict.VerdictFail, Misses: []string{"keyword missing"}},
			{Name: "crash", Type: "code-grader", Verdict: verdict.VerdictError},
		}}
	got := view42(res)
	got.Error = got.Error[:strings.Index(got.Error, " after ")+len(" after ")]
	got.Graders[2].Misses = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if res.Evaluators[0].Reasoning != `details: {"b":1,"a":2}` {
		t.Errorf("details: %q", res.Evaluators[0].Reasoning)
	}
	var stdin map[string]any
	data, err := os.ReadFile(filepath.Join(out, "stdin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &stdin); err != nil {
		t.Fatalf("stdin %s: %v", data, err)
	}
	notes := filepath.Join(dir, "evals", "notes.md")
	wantStdin := map[string]any{
		"criteria":        "Greets.",
		"expected_output": []any{map[string]any{"role": "assistant", "content": map[string]any{"greeting": "Hi", "camel_key": 1.0}}},
		"output":          "Hi there",
		"messages": []any{
			map[string]any{"role": "user", "content": "Hello\n\n<file: path=\"" + notes + "\">"},
			map[string]any{"role": "assistant", "content": "Hi there"},
		},
		"input_files": []any{notes},
		"input": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "value": "Hello"},
			map[string]any{"type": "file", "value": "notes.md", "path": "notes.md", "text": "note\ntext", "resolved_path": notes},
		}}},
		"metadata":      map[string]any{"team_name": "a"},
		"trace_summary": map[string]any{"event_count": 0.0, "tool_calls": map[string]any{}, "error_count": 0.0, "llm_call_count": 1.0},
		"token_usage":   nil, "cost_usd": nil, "duration_ms": 12.5, "start_time": nil, "end_time": nil, "file_changes": nil,
		"workspace_path": nil, "config": map[string]any{"field_list": []any{"x"}},
	}
	trace, _ := stdin["trace"].(map[string]any)
	delete(stdin, "trace")
	if diff := cmp.Diff(wantStdin, stdin); diff != "" {
		t.Errorf("stdin (-want +got):\n%s", diff)
	}
	if trace["duration_ms"] != 12.5 || len(trace["events"].([]any)) != 3 {
		t.Errorf("trace %v", trace)
	}

	t.Run("a large answer is a file, output_path", func(t *testing.T) {
		big := strings.Repeat("é", largeOutputChars)
		j.CodeJudges = evaluate.ScriptRunner{Dir: filepath.Join(dir, "evals"), TempDir: t.TempDir()}
		res := j.JudgeCase(context.Background(), c, &jsonlresult.Response{ID: "t", Text: big}, nil)
		if res.Evaluators[0].Score != 0.25 {
			t.Fatalf("%+v", res.Evaluators[0])
		}
		data, err := os.ReadFile(filepath.Join(out, "stdin.json"))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		_ = json.Unmarshal(data, &got)
		if got["output"] != nil || got["output_path"] == nil {
			t.Errorf("output %v, output_path %v", got["output"] != nil, got["output_path"])
		}
		written, err := os.ReadFile(filepath.Join(out, "output.json"))
		if err != nil || string(written) != `"`+big+`"` {
			t.Errorf("the output file: %v", err)
		}
		if _, err := os.Stat(got["output_path"].(string)); !os.IsNotExist(err) {
			t.Errorf("the output file is left behind: %v", err)
		}
	})
}

// writeScript writes an executable script into dir.
func writeScript(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}
