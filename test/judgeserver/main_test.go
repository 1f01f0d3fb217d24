package main

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/llm"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// TestJudgeServerWithTheJudges: the server's rules give the verdicts the e2e test expects when the real LLM judges
// ask it (prompts, parsing and scoring of internal/evaluate), and a wrong key is refused.
func TestJudgeServerWithTheJudges(t *testing.T) {
	srv := httptest.NewServer(handler("k3y", nil, Answer))
	defer srv.Close()
	f, err := evalfile.Parse([]byte(`evalcases:
  - id: capital
    expected_outcome: 'names "Paris"'
    input_messages: [{role: user, content: capital of France}]
    evaluators: [{name: judge, type: llm_judge}]
  - id: rubric
    input_messages: [{role: user, content: greet}]
    rubrics:
      - {id: hello, expected_outcome: 'says "hello"', required: true}
      - {id: name, expected_outcome: 'names "Ada"', required: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "rules", APIKey: "k3y", BaseBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	j := &evaluate.Judge{Threshold: verdict.DefaultThreshold, LLM: c}
	for _, tc := range []struct {
		i      int
		answer string
		want   verdict.Verdict
		score  float64
	}{
		{0, "It is Paris.", verdict.VerdictPass, 1},
		{0, "It is Lyon.", verdict.VerdictFail, 0},
		{0, "JUDGE-MALFORMED", verdict.VerdictError, 0},
		{1, "Hello, Ada!", verdict.VerdictPass, 1},
		{1, "Hello there", verdict.VerdictFail, 0.5},
		{1, "Hi Ada", verdict.VerdictFail, 0.5},
	} {
		cs := f.CaseAt(tc.i)
		res := j.JudgeCase(context.Background(), cs, &jsonlresult.Response{ID: cs.ID, Text: tc.answer}, nil)
		if res.Verdict != tc.want || res.Score != tc.score {
			t.Errorf("%s %q: verdict %s score %v (%s), want %s %v", cs.ID, tc.answer, res.Verdict, res.Score, res.Error, tc.want, tc.score)
		}
	}
	bad, _ := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "rules", APIKey: "wrong"})
	if _, err := bad.Complete(context.Background(), llm.Request{User: "x"}); err == nil {
		t.Error("a wrong key was accepted")
	}
}
