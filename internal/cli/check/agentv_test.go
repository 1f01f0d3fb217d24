package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/test/judgeserver/replies"
)

// agentvMessages are the messages of a chat-completions request, normalized for the comparison with AgentV's
// recordings: the system message's role ("developer" from the AI SDK) is "system"; the model name and every other
// field are left out; the bundle's absolute path is "/BUNDLE".
func agentvMessages(t *testing.T, body []byte, root string) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("a request body: %v", err)
	}
	var b strings.Builder
	for _, m := range req.Messages {
		role := m.Role
		if role == "developer" {
			role = "system"
		}
		b.WriteString("<<" + role + ">>\n" + strings.ReplaceAll(m.Content, root, "/BUNDLE") + "\n")
	}
	return b.String()
}

// TestAgentVExamples drives AgentV v2.0.1's own example eval files through collector check (with the bundle
// dir and the code judges run) against a loopback endpoint that records the requests and replies as the judge
// server replied to AgentV (replies.Hashed: a function of the prompts alone), and compares
//   - each request with what AgentV sent for the same case and answer (testdata/agentv/recordings), and
//   - each evaluator's score and pass/fail with AgentV's result for it (recordings/<example>/agentv-results.jsonl),
//     listing every difference with its reason (agentvDifferences).
//
// The requests that differ by design (composite: its members' own prompts, its aggregator's prompt file) are listed
// in ARCHITECTURE.md.
func TestAgentVExamples(t *testing.T) {
	// The recordings were made with node (the composite's code_judge aggregator) and without uv (the other code
	// judges run `uv run ...`: AgentV scored their spawn failure 0, the operator calls it Error): the code judges
	// must run here as they ran there.
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("EVALRUN_REQUIRE_TEST_ASSETS") != "" {
			t.Fatalf("node is missing (make nodejs installs it): %v", err)
		}
		t.Skipf("AgentV's composite example runs its aggregator with node: %v", err)
	}
	if p, err := exec.LookPath("uv"); err == nil {
		t.Skipf("uv is on PATH (%s): AgentV's code judges would run here, and did not when AgentV was recorded", p)
	}
	root, err := filepath.Abs("testdata/agentv/features")
	if err != nil {
		t.Fatal(err)
	}
	answer, err := os.ReadFile("testdata/agentv/answer.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Two recordings of AgentV v2.0.1: with its mock target, which it shows input files with their text (an LM
	// target: the operator's spec.judging.inputFiles Embed, a v2 file's default), and with a CLI target in batch mode,
	// as every runner of the operator is, which it shows references to them (inputFiles: Reference).
	for _, target := range []struct {
		recordings string
		// judging is the judging file collector check gets ("": none).
		judging string
		// same is how many of the operator's requests AgentV also sent, per example (byte for byte, normalized).
		same map[string]int
	}{
		{"recordings", "", map[string]int{"basic": 4, "rubric": 4, "composite": 0, "weighted-evaluators": 8, "local-cli": 1, "cw-incident-triage": 8}},
		{"recordings-cli", "inputFiles: Reference\n", map[string]int{"basic": 4, "rubric": 4, "composite": 0, "weighted-evaluators": 8, "local-cli": 1, "cw-incident-triage": 8}},
	} {
		t.Run(target.recordings, func(t *testing.T) {
			agentvExamples(t, root, answer, target.recordings, target.judging, target.same)
		})
	}
}

// agentvExamples is TestAgentVExamples on one recording of AgentV: its requests in testdata/agentv/RECORDINGS, the
// operator judging with the judging file judging.
func agentvExamples(t *testing.T, root string, answer []byte, recordings, judging string, sameWant map[string]int) {
	var judgingArgs []string
	if judging != "" {
		p := filepath.Join(t.TempDir(), "judging.yaml")
		if err := os.WriteFile(p, []byte(judging), 0o600); err != nil {
			t.Fatal(err)
		}
		judgingArgs = []string{"--judging", p}
	}
	var totals parity
	for _, tc := range []struct {
		example string
		// results is how many evaluator results AgentV gave (every case, top-level evaluators).
		results int
	}{
		{"basic", 5}, {"rubric", 5}, {"composite", 4}, {"weighted-evaluators", 8}, {"local-cli", 1}, {"cw-incident-triage", 16},
	} {
		t.Run(tc.example, func(t *testing.T) {
			var mu sync.Mutex
			var got []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				got = append(got, agentvMessages(t, body, root))
				mu.Unlock()
				system, user := promptsOf(t, body)
				_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0,
					"finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": replies.Hashed(system, user, root)}}}})
			}))
			defer srv.Close()
			evalPath := filepath.Join(root, tc.example, "evals", "dataset.yaml")
			data, err := os.ReadFile(evalPath)
			if err != nil {
				t.Fatal(err)
			}
			f, err := evalfile.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			for i := range f.NumCases() {
				line, _ := json.Marshal(map[string]string{"id": f.CaseAt(i).ID, "text": string(answer)})
				out.Write(append(line, '\n'))
			}
			output := filepath.Join(t.TempDir(), "out.jsonl")
			if err := os.WriteFile(output, out.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			Main(context.Background(), append([]string{"--mode", "batch", "--eval", evalPath, "--bundle", root, "--output", output,
				"--llm-base-url", srv.URL + "/v1", "--llm-model", "oracle-model", "--llm-max-concurrent", "1",
				"--run-code-judges", "--format", "json"}, judgingArgs...), &stdout, &stderr)
			recorded, _ := filepath.Glob(filepath.Join("testdata/agentv", recordings, tc.example, "*.json"))
			want := map[string]int{}
			for _, p := range recorded {
				body, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				want[agentvMessages(t, body, "/BUNDLE")]++
			}
			same := 0
			var differ []string
			for _, g := range got {
				if want[g] > 0 {
					want[g]--
					same++
					continue
				}
				differ = append(differ, g)
			}
			sort.Strings(differ)
			t.Logf("%s: %d of %d requests as AgentV's (%d recorded); stderr: %s", tc.example, same, len(got), len(recorded), stderr.String())
			if dir := os.Getenv("AGENTV_DIFF_DIR"); dir != "" {
				for i, d := range differ {
					_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%s-got-%02d.txt", recordings, tc.example, i)), []byte(d), 0o644)
				}
				i := 0
				for w, n := range want {
					for ; n > 0; n-- {
						_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%s-want-%02d.txt", recordings, tc.example, i)), []byte(w), 0o644)
						i++
					}
				}
			}
			if same != sameWant[tc.example] {
				t.Errorf("%d requests as AgentV sent them, want %d", same, sameWant[tc.example])
			}
			p := compareWithAgentV(t, recordings, tc.example, stdout.Bytes())
			t.Logf("%s: judged %d of %d evaluator and case results, same score in %d, same pass/fail in %d",
				tc.example, p.judged, p.results, p.sameScore, p.samePass)
			if p.results != tc.results {
				t.Errorf("AgentV gave %d evaluator results, want %d", p.results, tc.results)
			}
			totals.add(p)
		})
	}
	t.Logf("all: judged %d of %d evaluator and case results, same score in %d of %d, same pass/fail in %d of %d",
		totals.judged, totals.results, totals.sameScore, totals.results, totals.samePass, totals.results)
}

// promptsOf returns the system and user prompts of a chat-completions request body.
func promptsOf(t *testing.T, body []byte) (system, user string) {
	t.Helper()
	var req struct {
		Messages []struct{ Role, Content string }
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("a request body: %v", err)
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "system", "developer":
			system += m.Content
		case "user":
			user += m.Content
		}
	}
	return system, user
}
