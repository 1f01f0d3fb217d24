// Package judges holds the screening sample's code_judge scripts, which the judge image runs from the sample's eval
// bundle; its test runs them with the machine's python3 as the judge container does.
package judges

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// result is the code_judge output.
type result struct {
	Score     float64  `json:"score"`
	Hits      []string `json:"hits"`
	Misses    []string `json:"misses"`
	Reasoning string   `json:"reasoning"`
}

// decisionCheck runs decision-check.py with stdin and returns its exit code, stdout and stderr.
func decisionCheck(t *testing.T, stdin string) (int, string, string) {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on this machine (the judge image has one)")
	}
	cmd := exec.Command(python, "decision-check.py")
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

func TestDecisionCheck(t *testing.T) {
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
			name:  "clear with reasons",
			stdin: `{"candidate_answer": "{\"decision\":\"CLEAR\",\"reasons\":[\"a\",\"b\"]}", ` + expected("CLEAR") + `}`,
			want: result{Score: 0.5, Hits: []string{"decision matches: CLEAR"}, Misses: []string{"CLEAR with 2 reasons"},
				Reasoning: "The screening output does not match the expectation."},
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
			name:  "the last expected message with a decision counts",
			stdin: `{"candidate_answer": "{\"decision\":\"CLEAR\"}", "expected_messages": [{"role": "assistant", "content": {"decision": "REVIEW"}}, {"role": "assistant", "content": "text"}, {"role": "assistant", "content": {"decision": "CLEAR"}}]}`,
			want: result{Score: 1, Hits: []string{"decision matches: CLEAR", "0 reasons consistent with CLEAR"}, Misses: []string{},
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
			code, stdout, stderr := decisionCheck(t, tt.stdin)
			if code != 0 {
				t.Fatalf("exit %d, stderr %s", code, stderr)
			}
			var got result
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("stdout %q is not JSON: %v", stdout, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("judge mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecisionCheckBadStdin(t *testing.T) {
	for _, stdin := range []string{"not json", "[1, 2]"} {
		if code, _, stderr := decisionCheck(t, stdin); code != 1 || !strings.Contains(stderr, "not the code_judge JSON") {
			t.Errorf("stdin %q: exit %d, stderr %q", stdin, code, stderr)
		}
	}
}
