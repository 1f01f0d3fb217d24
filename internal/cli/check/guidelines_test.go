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
	"strings"
	"sync"
	"testing"
)

// TestCheckFindsAgentVConfigUpToTheRepository: without --bundle, collector check reads AgentV's config
// (.agentv/config.yaml) in the eval file's parent directories up to its repository root, as AgentV v2.0.1 does, so
// that a v2 file's guideline input files are set aside as in the run; outside a repository only the eval file's
// own directory is searched.
func TestCheckFindsAgentVConfigUpToTheRepository(t *testing.T) {
	var mu sync.Mutex
	var prompts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, user := promptsOf(t, body)
		mu.Lock()
		prompts = append(prompts, user)
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": `{"score": 1, "hits": [], "misses": [], "reasoning": "ok"}`}}}})
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name string
		git  bool
		// want is the guideline file as the question shows it: set aside (nothing), or embedded.
		want string
	}{
		{"in a repository", true, ""},
		{"outside one", false, "<file path=\"style.instructions.md\">\nBe terse.\n</file>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := t.TempDir()
			files := map[string]string{
				".agentv/config.yaml":               "$schema: agentv-config-v2\nguideline_patterns: ['**/*.instructions.md']\n",
				"suites/math/style.instructions.md": "Be terse.\n",
				"suites/math/eval.yaml": "evalcases:\n  - id: a\n    expected_outcome: adds\n    input_messages:\n" +
					"      - role: user\n        content: [{type: file, value: style.instructions.md}, {type: text, value: 'what is 1+1'}]\n" +
					"    evaluators: [{name: j, type: llm_judge}]\n",
				"out.jsonl": `{"id": "a", "text": "2"}` + "\n",
			}
			if tc.git {
				files[".git/HEAD"] = "ref: refs/heads/main\n"
			}
			for p, c := range files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(repo, p), []byte(c), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			prompts = nil
			mu.Unlock()
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), []string{"--mode", "batch", "--eval", filepath.Join(repo, "suites/math/eval.yaml"),
				"--output", filepath.Join(repo, "out.jsonl"), "--llm-base-url", srv.URL + "/v1", "--llm-model", "m"}, &stdout, &stderr)
			if code != ExitOK {
				t.Fatalf("exit %d: %s %s", code, stdout.String(), stderr.String())
			}
			if len(prompts) != 1 || !strings.Contains(prompts[0], tc.want) || (tc.want == "") == strings.Contains(prompts[0], "Be terse.") {
				t.Errorf("the judge's prompt does not show the guideline file as %q:\n%s", tc.want, strings.Join(prompts, "\n---\n"))
			}
		})
	}
}
