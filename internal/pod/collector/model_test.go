package collector

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

const modelKey = "sk-collector-test-key-3c1d"

// TestGatherWithLLMJudges: with run.json's llm, the cases without evaluators are judged by llm_judge through the
// endpoint with the mounted key, the run's model usage is in the summary, and the key is nowhere in what is
// persisted.
func TestGatherWithLLMJudges(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+modelKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		out, _ := json.Marshal(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"content": `{"score": 0.9, "hits": ["ok"]}`}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
		})
		_, _ = w.Write(out)
	}))
	defer srv.Close()
	f := newFixture(t)
	keyFile := filepath.Join(t.TempDir(), "api-key")
	if err := os.WriteFile(keyFile, []byte(modelKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.Config.LLM = &podwire.LLM{BaseURL: srv.URL + "/v1", Model: "m", APIKeyFile: keyFile, APIKeySecret: "judge-key/token",
		TimeoutSeconds: 5, MaxConcurrentRequests: 2}
	f.Config.LLMJudgeDeadlineSeconds = 60
	f.recordJudge(t, "alpha", "judge", verdict.EvaluatorResult{Name: "judge", Type: "code_judge", Score: 1})
	f.write(t, f.Pod.Output().BatchOutput(), `{"id":"alpha","text":"A"}`+"\n"+`{"id":"beta","text":"B"}`+"\n"+
		`{"id":"gamma","text":"C"}`+"\n"+`{"id":"delta","text":"D"}`+"\n")
	f.finishedRunner(t, 0)
	g := f.gather(t, true)
	want := map[string]evalsv1alpha1.Verdict{"alpha": evalsv1alpha1.VerdictPass, "beta": evalsv1alpha1.VerdictPass,
		"gamma": evalsv1alpha1.VerdictPass, "delta": evalsv1alpha1.VerdictPass}
	if diff := cmp.Diff(want, caseVerdicts(g.Output.Section.Cases)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	u := g.Summary.JudgeUsage
	if u == nil || u.Calls != 3 || u.TotalTokens != 180 || u.PromptTokens != 150 || u.CompletionTokens != 30 {
		t.Errorf("summary judgeUsage = %+v, want 3 calls and 180 tokens", u)
	}
	if calls.Load() != 3 {
		t.Errorf("%d requests, want 3", calls.Load())
	}
	for _, line := range decodeAll(t, g) {
		if strings.Contains(line, "\"beta\"") && !strings.Contains(line, `"modelUsage":{"calls":1,"promptTokens":50`) {
			t.Errorf("beta's result line has no model usage: %s", line)
		}
	}
	assertNoSecret(t, g, modelKey)
}

func TestGatherWithAnUnreadableKey(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a request was sent without the key")
	}))
	defer srv.Close()
	f := newFixture(t)
	f.Config.LLM = &podwire.LLM{BaseURL: srv.URL, Model: "m", APIKeyFile: filepath.Join(t.TempDir(), "absent"),
		APIKeySecret: "judge-key/token", TimeoutSeconds: 5, MaxConcurrentRequests: 2}
	f.Config.LLMJudgeDeadlineSeconds = 60
	f.write(t, f.Pod.Output().BatchOutput(), `{"id":"beta","text":"B"}`+"\n")
	g := f.gather(t, true)
	for _, c := range g.Output.Section.Cases {
		if c.ID == "beta" && (c.Verdict != evalsv1alpha1.VerdictError || !strings.Contains(c.Error, "the API key (Secret key judge-key/token) cannot be read")) {
			t.Errorf("beta = %+v, want an Error naming the Secret key", c)
		}
	}
}
