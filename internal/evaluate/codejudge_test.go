package evaluate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

const payloadDoc = `evalcases:
  - id: case-001
    expected_outcome: Returns CLEAR.
    input_messages:
      - role: system
        content: You are a batch processor.
      - role: user
        content:
          row: {name: Example A, amount: 5000}
          request: {type: screening_check}
      - role: user
        content:
          - {type: text, value: See file.}
          - {type: file, value: ./data/a.csv}
    expected_messages:
      - role: assistant
        tool_calls: [{tool: screen, input: {country: NZ}}]
      - role: assistant
        content: {decision: CLEAR, reasons: []}
    execution:
      evaluators:
        - name: decision-check
          type: code_judge
          script: ./judge.sh
          cwd: scripts
          strict: true
          fields: [decision]
`

func payloadCase(t *testing.T) *evalfile.Case {
	t.Helper()
	f, err := evalfile.Parse([]byte(payloadDoc))
	if err != nil {
		t.Fatal(err)
	}
	return f.CaseAt(0)
}

func TestCodeJudgePayloadFieldByField(t *testing.T) {
	c := payloadCase(t)
	resp := &jsonlresult.Response{
		ID:   "case-001",
		Text: `{"decision":"CLEAR"}`,
		OutputMessages: []jsonlresult.OutputMessage{
			{Role: "assistant", ToolCalls: []jsonlresult.ToolCall{
				{Tool: "screen", Input: json.RawMessage(`{"country":"NZ"}`), Output: json.RawMessage(`{"hit":false}`), ID: "t1"},
				{Tool: "lookup"}, {Tool: "screen"},
			}},
			{Role: "assistant", Name: "bot", Content: json.RawMessage(`{"decision":"CLEAR"}`), Timestamp: "2025-01-01T00:00:00Z"},
		},
		Trace: []jsonlresult.TraceEvent{
			{Type: "model_step", Raw: json.RawMessage(`{}`)}, {Type: "error", Raw: json.RawMessage(`{}`)}, {Type: "error", Raw: json.RawMessage(`{}`)},
			{Type: "tool_call", Name: "ignored-because-output-messages-have-calls", Raw: json.RawMessage(`{}`)},
		},
		TokenUsage: &jsonlresult.TokenUsage{Input: 10, Output: 5, Cached: f64(2)},
		CostUSD:    f64(0.01),
		DurationMs: f64(1234),
	}
	raw, err := CodeJudgePayload(c, c.Evaluators[0], resp)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"eval_id":          `"case-001"`,
		"question":         `"{\n  \"row\": {\n    \"name\": \"Example A\",\n    \"amount\": 5000\n  },\n  \"request\": {\n    \"type\": \"screening_check\"\n  }\n} See file."`,
		"expected_outcome": `"Returns CLEAR."`,
		"expected_messages": `[{"role":"assistant","tool_calls":[{"tool":"screen","input":{"country":"NZ"}}]},` +
			`{"role":"assistant","content":{"decision":"CLEAR","reasons":[]}}]`,
		"reference_answer": `"{\n  \"decision\": \"CLEAR\",\n  \"reasons\": []\n}"`,
		"candidate_answer": `"{\"decision\":\"CLEAR\"}"`,
		"output_messages": `[{"role":"assistant","tool_calls":[{"tool":"screen","input":{"country":"NZ"},"output":{"hit":false},"id":"t1"},{"tool":"lookup"},{"tool":"screen"}]},` +
			`{"role":"assistant","name":"bot","content":{"decision":"CLEAR"},"timestamp":"2025-01-01T00:00:00Z"}]`,
		"input_messages": `[{"role":"system","content":"You are a batch processor."},` +
			`{"role":"user","content":{"row":{"name":"Example A","amount":5000},"request":{"type":"screening_check"}}},` +
			`{"role":"user","content":[{"type":"text","value":"See file."},{"type":"file","value":"./data/a.csv"}]}]`,
		"input_files": `["./data/a.csv"]`,
		"trace_summary": `{"event_count":4,"tool_names":["lookup","screen"],"tool_calls_by_name":{"lookup":1,"screen":2},` +
			`"error_count":2,"token_usage":{"input":10,"output":5,"cached":2},"cost_usd":0.01,"duration_ms":1234}`,
		"config": `{"strict":true,"fields":["decision"]}`,
	}
	got := map[string]string{}
	for k, v := range fields {
		got[k] = string(v)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("payload fields (-want +got):\n%s", diff)
	}
	// Keys come in the documented order.
	order := []string{"eval_id", "question", "expected_outcome", "expected_messages", "reference_answer", "candidate_answer",
		"output_messages", "input_messages", "input_files", "trace_summary", "config"}
	last := -1
	for _, k := range order {
		i := strings.Index(string(raw), `"`+k+`":`)
		if i <= last {
			t.Errorf("key %s is out of order in %s", k, raw)
		}
		last = i
	}
}

func TestCodeJudgePayloadMinimal(t *testing.T) {
	f, err := evalfile.Parse([]byte("evalcases: [{id: a, input_messages: [{role: user, content: hi}], evaluators: [{name: j, type: code_judge, script: x}]}]"))
	if err != nil {
		t.Fatal(err)
	}
	c := f.CaseAt(0)
	raw, err := CodeJudgePayload(c, c.Evaluators[0], &jsonlresult.Response{ID: "a", Text: "hello <b>"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"eval_id":"a","question":"hi","expected_outcome":"","expected_messages":[],"reference_answer":"",` +
		`"candidate_answer":"hello <b>","output_messages":null,"input_messages":[{"role":"user","content":"hi"}],"input_files":[],` +
		`"trace_summary":{"event_count":0,"tool_names":[],"tool_calls_by_name":{},"error_count":0,"token_usage":null,"cost_usd":null,"duration_ms":null},` +
		`"config":null}` + "\n"
	if diff := cmp.Diff(want, string(raw)); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	if _, err := CodeJudgePayload(c, c.Evaluators[0], nil); err == nil {
		t.Errorf("CodeJudgePayload(nil response) succeeded")
	}
}

func TestParseJudgeOutput(t *testing.T) {
	tests := []struct {
		name    string
		stdout  string
		want    judgeOutput
		wantErr string
	}{
		{name: "plain", stdout: `{"score":1,"hits":["a"],"misses":[],"reasoning":"ok"}`,
			want: judgeOutput{score: 1, hits: []string{"a"}, reasoning: "ok"}},
		{name: "logs before the JSON line", stdout: "loading\n{not json}\nscore 3\n{\"score\":0.5,\"misses\":[\"m\",\"\",7]}\n",
			want: judgeOutput{score: 0.5, misses: []string{"m"}}},
		{name: "pretty-printed after logs", stdout: "log line\n{\n  \"score\": 0.25,\n  \"hits\": [\"h\"]\n}\n",
			want: judgeOutput{score: 0.25, hits: []string{"h"}}},
		{name: "last object wins", stdout: "{\"score\":0.1}\n{\"score\":0.9,\"verdict\":\"PASS\"}",
			want: judgeOutput{score: 0.9, verdict: verdict.VerdictPass}},
		{name: "out-of-range score is returned as is", stdout: `{"score":7}`, want: judgeOutput{score: 7}},
		{name: "empty", stdout: "  \n", wantErr: "the judge printed nothing on stdout"},
		{name: "not JSON", stdout: "all good\nscore: 1", wantErr: "stdout has no JSON object (last line: score: 1)"},
		{name: "no score", stdout: `{"hits":["a"]}`, wantErr: `the JSON object has no score (last line: {"hits":["a"]})`},
		{name: "string score", stdout: `{"score":"1"}`, wantErr: `the JSON object's score is not a number: "1" (last line: {"score":"1"})`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseJudgeOutput([]byte(tt.stdout))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr {
				t.Fatalf("error = %q, want %q", gotErr, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(judgeOutput{})); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// writeScript writes an executable script into dir.
func writeScript(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestScriptRunner(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The judge checks its payload with grep and answers; logs go before the JSON.
	writeScript(t, filepath.Join(dir, "scripts"), "judge.sh", `payload=$(cat)
echo "judging in $(basename "$PWD")"
echo "$payload" | grep -q '"eval_id":"case-001"' || { echo "bad payload" >&2; exit 3; }
echo "$payload" | grep -q '"config":{"strict":true,"fields":\["decision"\]}' || { echo "no config" >&2; exit 4; }
echo '{"score": 1.7, "hits": ["decision matches"], "misses": [], "reasoning": "matches"}'
`)
	writeScript(t, dir, "fail.sh", `cat >/dev/null; echo '{"score":1}'; i=0; while [ $i -lt 3000 ]; do printf 'e' >&2; i=$((i+1)); done; echo END >&2; exit 2`)
	writeScript(t, dir, "hang.sh", `cat >/dev/null; echo started; sleep 30 & sleep 30; echo never`)
	writeScript(t, dir, "prose.sh", `cat >/dev/null; echo "looks fine to me"`)
	writeScript(t, dir, "agg.sh", `cat > "$0.in"; echo '{"score":0.4,"verdict":"pass","hits":["agg"],"reasoning":"lenient"}'`)

	c := payloadCase(t)
	resp := &jsonlresult.Response{ID: "case-001", Text: `{"decision":"CLEAR"}`}
	ev := c.Evaluators[0]
	with := func(script string) *evalfile.EvaluatorConfig {
		e := *ev
		cj := *ev.CodeJudge
		cj.Script, cj.Cwd = script, ""
		e.CodeJudge = &cj
		return &e
	}
	runner := ScriptRunner{Dir: dir, Timeout: 10 * time.Second}

	t.Run("logs before JSON, cwd, payload, clamped score", func(t *testing.T) {
		got := runner.Run(context.Background(), c, ev, resp)
		want := verdict.EvaluatorResult{Score: 1, Hits: []string{"decision matches"}, Reasoning: "matches"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
	})
	t.Run("non-zero exit with stderr tail", func(t *testing.T) {
		got := runner.Run(context.Background(), c, with("./fail.sh"), resp)
		if got.Verdict != verdict.VerdictError || got.Score != 0 || len(got.Misses) != 1 {
			t.Fatalf("result = %+v, want an error with one miss", got)
		}
		miss := got.Misses[0]
		if !strings.HasPrefix(miss, "the judge exited with status 2 after ") || !strings.HasSuffix(miss, "eeeeEND") {
			t.Errorf("miss = %q", excerpt(miss, 200))
		}
		_, stderr, _ := strings.Cut(miss, "; stderr: ")
		if n := len(stderr); n != maxStderrTail {
			t.Errorf("stderr tail has %d bytes, want %d", n, maxStderrTail)
		}
	})
	t.Run("hang is killed at the timeout with its children", func(t *testing.T) {
		short := runner
		short.Timeout = 300 * time.Millisecond
		start := time.Now()
		got := short.Run(context.Background(), c, with("./hang.sh"), resp)
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Errorf("Run took %s; the process group was not killed", elapsed)
		}
		want := verdict.EvaluatorResult{Verdict: verdict.VerdictError, Misses: []string{"the judge timed out after 300ms and was killed"},
			Reasoning: "the judge timed out after 300ms and was killed"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
	})
	t.Run("prose instead of JSON", func(t *testing.T) {
		got := runner.Run(context.Background(), c, with("./prose.sh"), resp)
		why := "the judge's stdout has no result {score, hits, misses, reasoning}: stdout has no JSON object (last line: looks fine to me)"
		want := verdict.EvaluatorResult{Verdict: verdict.VerdictError, Misses: []string{why}, Reasoning: why}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
	})
	t.Run("missing cwd cannot start", func(t *testing.T) {
		e := with("./judge.sh")
		e.CodeJudge.Cwd = "nowhere"
		got := runner.Run(context.Background(), c, e, resp)
		if got.Verdict != verdict.VerdictError || !strings.HasPrefix(got.Misses[0], "the judge could not start (/bin/sh -c ./judge.sh in ") {
			t.Errorf("result = %+v", got)
		}
	})
	t.Run("aggregator reads member results and sets the verdict", func(t *testing.T) {
		f, err := evalfile.Parse([]byte(`evalcases:
  - id: a
    input_messages: [{role: user, content: q}]
    evaluators:
      - {name: combo, type: composite, evaluators: [{name: m1, type: latency, threshold: 1}], aggregator: {type: code_judge, path: ./agg.sh}}
`))
		if err != nil {
			t.Fatal(err)
		}
		members := []verdict.EvaluatorResult{
			{Name: "m1", Score: 0, Verdict: verdict.VerdictFail, Misses: []string{"slow"}, Reasoning: "took 5ms"},
			{Name: "m2", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"ok"}},
		}
		got := runner.Aggregate(context.Background(), f.CaseAt(0), f.CaseAt(0).Evaluators[0], members)
		want := verdict.EvaluatorResult{Score: 0.4, Verdict: verdict.VerdictPass, Hits: []string{"agg"}, Reasoning: "lenient"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		in, err := os.ReadFile(filepath.Join(dir, "agg.sh.in"))
		if err != nil {
			t.Fatal(err)
		}
		wantIn := `{"results":{"m1":{"score":0,"verdict":"fail","hits":[],"misses":["slow"],"reasoning":"took 5ms"},` +
			`"m2":{"score":1,"verdict":"pass","hits":["ok"],"misses":[],"reasoning":""}}}` + "\n"
		if diff := cmp.Diff(wantIn, string(in)); diff != "" {
			t.Errorf("aggregator stdin (-want +got):\n%s", diff)
		}
	})
	t.Run("judged through the Judge", func(t *testing.T) {
		j := &Judge{Threshold: 0.8, CodeJudges: runner}
		got := j.JudgeCase(context.Background(), c, resp, nil)
		if got.Verdict != verdict.VerdictPass || got.Score != 1 || got.Evaluators[0].Verdict != verdict.VerdictPass {
			t.Errorf("case = %+v", got)
		}
	})
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 5}
	for _, s := range []string{"ab", "cd", "efg", "0123456789", "x"} {
		if _, err := b.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.String(); got != "6789x" {
		t.Errorf("tail = %q, want 6789x", got)
	}
}

func FuzzParseJudgeOutput(f *testing.F) {
	f.Add([]byte(`{"score":1,"hits":["a"],"misses":[],"reasoning":"ok"}`))
	f.Add([]byte("log\n{\n \"score\": 0.5\n}\n"))
	f.Add([]byte("{\"score\":0.1}\n{\"score\":0.9,\"verdict\":\"pass\"}"))
	f.Fuzz(func(t *testing.T, stdout []byte) {
		out, err := parseJudgeOutput(stdout)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if out.verdict != "" && out.verdict != verdict.VerdictPass && out.verdict != verdict.VerdictFail {
			t.Fatalf("verdict %q", out.verdict)
		}
		for _, n := range append(out.hits, out.misses...) {
			if strings.TrimSpace(n) == "" {
				t.Fatal("blank note kept")
			}
		}
	})
}
