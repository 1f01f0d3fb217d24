package check

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evalconvert"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/v2files"
)

// constantReply is a judge reply that both formats' LLM judges read alike, whatever they asked: a checklist prompt
// gets every rubric it lists satisfied; any other a score of 0.7 in both freeform schemas (v2's hits and misses,
// 4.42's assertions). What the converted suite is judged to then differs from the v2 file's only where the
// conversion changed the graders' weights, members, aggregators or rubrics.
func constantReply(system, user string) string {
	if strings.Contains(system, `"checks"`) {
		var checks []map[string]any
		for _, m := range regexp.MustCompile(`(?m)^- \[([^\]]+)\]`).FindAllStringSubmatch(user, -1) {
			checks = append(checks, map[string]any{"id": m[1], "satisfied": true, "reasoning": "listed"})
		}
		b, _ := json.Marshal(map[string]any{"checks": checks, "overall_reasoning": "all satisfied"})
		return string(b)
	}
	return `{"score": 0.7, "hits": ["h"], "misses": ["m"], "reasoning": "r", ` +
		`"assertions": [{"text": "checked", "passed": true}], "details": {}}`
}

// TestConvertedSuitesJudgeAlike converts every v2 file of the repository (evalconvert.V2Files) and judges the
// converted suite and the v2 file through collector check, in a copy of the file's bundle, on the same answers
// (AgentV's recorded answer for its examples; for the others each case's expected answer, and every other case
// the wrong one) with replies that do not depend on how the judges ask (constantReply): every case's verdict and
// score, and every evaluator's (composite members included), must be equal. Code judges are not run (their
// stdin differs by format: the converter says so), and are Skipped alike. An errored case's score and the implicit
// judge's name (llm_judge, llm-grader) are each format's own.
func TestConvertedSuitesJudgeAlike(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		system, user := promptsOf(t, body)
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0,
			"finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": constantReply(system, user)}}}})
	}))
	defer srv.Close()
	recorded, err := os.ReadFile("testdata/agentv/answer.txt")
	if err != nil {
		t.Fatal(err)
	}
	files := v2files.All(t)
	cases, evaluators := 0, 0
	for _, vf := range files {
		t.Run(vf.Name, func(t *testing.T) {
			res, err := evalconvert.Convert(vf.Data, evalconvert.Options{Bundle: vf.Bundle})
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			evalFile := vf.Bundle.EvalFile
			if vf.Bundle.Root != "" {
				if err := os.CopyFS(root, os.DirFS(vf.Bundle.Root)); err != nil {
					t.Fatal(err)
				}
			} else {
				evalFile = "eval.yaml"
			}
			v2Path := filepath.Join(root, filepath.FromSlash(evalFile))
			suitePath := strings.TrimSuffix(v2Path, filepath.Ext(v2Path)) + ".converted.eval.yaml"
			if err := os.WriteFile(v2Path, vf.Data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(suitePath, res.Suite, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := evalfile.Parse(vf.Data)
			if err != nil {
				t.Fatal(err)
			}
			output := filepath.Join(t.TempDir(), "out.jsonl")
			if err := os.WriteFile(output, answers(t, f, vf.Bundle.Root != "" && strings.HasPrefix(vf.Name, "agentv/"), recorded), 0o600); err != nil {
				t.Fatal(err)
			}
			judge := func(path string) []convertedCase {
				var stdout, stderr bytes.Buffer
				code := Main(context.Background(), []string{"--mode", "batch", "--eval", path, "--bundle", root,
					"--output", output, "--llm-base-url", srv.URL + "/v1", "--llm-model", "m", "--format", "json"}, &stdout, &stderr)
				if code == ExitUsage {
					t.Fatalf("collector check %s: exit %d: %s", path, code, stderr.String())
				}
				var doc struct{ Cases []convertedCase }
				if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
					t.Fatalf("%v: %s", err, stdout.String())
				}
				for i := range doc.Cases {
					c := &doc.Cases[i]
					if c.Verdict == "Error" {
						// An errored case's score is not a judgement (each format says 0, or what the rest made).
						c.Score = nil
					}
					for j := range c.Evaluators {
						if e := &c.Evaluators[j]; e.Name == "llm_judge" && path == v2Path {
							// The implicit judge of a case without evaluators, named as each format names it.
							e.Name, e.Key = "llm-grader", "llm-grader"
						}
					}
				}
				return doc.Cases
			}
			v2, suite := judge(v2Path), judge(suitePath)
			if diff := cmp.Diff(v2, suite); diff != "" {
				t.Errorf("judged differently (-v2 +converted):\n%s", diff)
			}
			cases += len(v2)
			for _, c := range v2 {
				evaluators += countEvaluators(c.Evaluators)
			}
		})
	}
	t.Logf("%d v2 files: %d cases and %d evaluator results judged alike in both formats", len(files), cases, evaluators)
}

// convertedCase is what the parity compares of a judged case.
type convertedCase struct {
	ID         string
	Verdict    string
	Score      *float64
	Evaluators []convertedEvaluator
}

type convertedEvaluator struct {
	Name, Key, Verdict, SkipCause string
	Score                         float64
	Members                       []convertedEvaluator
}

func countEvaluators(list []convertedEvaluator) int {
	n := len(list)
	for _, e := range list {
		n += countEvaluators(e.Members)
	}
	return n
}

// answers are the runner's records for f's cases: recorded (AgentV's examples' answer) for every case, or each
// case's expected answer (its last expected message's content, its expected tool calls as output messages), and
// the recorded answer for every other case, so that both formats' graders pass some and fail some.
func answers(t *testing.T, f *evalfile.File, useRecorded bool, recorded []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for i := range f.NumCases() {
		c := f.CaseAt(i)
		rec := map[string]any{"id": c.ID, "text": string(recorded), "duration_ms": 1500, "cost_usd": 0.02,
			"token_usage": map[string]any{"input": 300, "output": 150}}
		if !useRecorded && i%2 == 0 {
			var calls []map[string]any
			for _, m := range c.ExpectedMessages {
				switch m.Content.Kind {
				case evalfile.ContentText:
					rec["text"] = m.Content.Text
				case evalfile.ContentObject:
					rec["text"] = string(m.Content.Raw)
				}
				for _, tc := range m.ToolCalls {
					call := map[string]any{"tool": tc.Tool}
					if tc.Input != nil {
						call["input"] = tc.Input
					}
					calls = append(calls, call)
				}
			}
			if len(calls) > 0 {
				rec["output_messages"] = []any{map[string]any{"role": "assistant", "tool_calls": calls},
					map[string]any{"role": "assistant", "content": rec["text"]}}
			}
		}
		line, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(line, '\n'))
	}
	return out.Bytes()
}
