package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJudge(t *testing.T) {
	expected := func(d string) string {
		return `"expected_messages": [{"role": "assistant", "content": {"decision": "` + d + `"}}]`
	}
	tests := []struct {
		name  string
		stdin string
		want  result
	}{
		{
			name:  "match with reasons",
			stdin: `{"candidate_answer": "{\"decision\":\"REVIEW\",\"reasons\":[\"pep\"]}", ` + expected("REVIEW") + `}`,
			want: result{Score: 1, Hits: []string{"decision matches: REVIEW", "1 reasons consistent with REVIEW"}, Misses: []string{},
				Reasoning: "Decision and reasons match the expectation."},
		},
		{
			name:  "mismatch",
			stdin: `{"candidate_answer": "{\"decision\":\"CLEAR\",\"reasons\":[]}", ` + expected("REVIEW") + `}`,
			want: result{Score: 0.5, Hits: []string{"0 reasons consistent with CLEAR"},
				Misses: []string{"decision mismatch: expected=REVIEW actual=CLEAR"}, Reasoning: "The screening output does not match the expectation."},
		},
		{
			name:  "review without reasons",
			stdin: `{"candidate_answer": "{\"decision\":\"REVIEW\"}", ` + expected("REVIEW") + `}`,
			want: result{Score: 0.5, Hits: []string{"decision matches: REVIEW"}, Misses: []string{"REVIEW without reasons"},
				Reasoning: "The screening output does not match the expectation."},
		},
		{
			name:  "reasons not required",
			stdin: `{"candidate_answer": "{\"decision\":\"REVIEW\"}", "config": {"require_reasons": false}, ` + expected("REVIEW") + `}`,
			want: result{Score: 1, Hits: []string{"decision matches: REVIEW"}, Misses: []string{},
				Reasoning: "Decision and reasons match the expectation."},
		},
		{
			name:  "not json answer",
			stdin: `{"candidate_answer": "CLEAR", ` + expected("CLEAR") + `}`,
			want:  result{Hits: []string{}, Misses: []string{"candidate answer is not JSON with a decision"}, Reasoning: "The runner's answer could not be read."},
		},
		{
			name:  "no expectation",
			stdin: `{"candidate_answer": "{\"decision\":\"CLEAR\"}"}`,
			want: result{Hits: []string{}, Misses: []string{"no expected decision in expected_messages"},
				Reasoning: "Cannot judge: the case has no expected decision."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(strings.NewReader(tt.stdin), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d, stderr %s", code, stderr.String())
			}
			var got result
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("stdout is not JSON: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("judge mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJudgeBadStdin(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(strings.NewReader("not json"), &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "not the code_judge JSON") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
