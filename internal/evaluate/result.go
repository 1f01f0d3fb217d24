// Package evaluate judges eval cases: the deterministic evaluators (tool_trajectory, field_accuracy, latency, cost,
// token_usage, composite), the code_judge contract (payload, script execution, result parsing), and per-case scores
// and verdicts, in the vocabulary of internal/verdict. A test of an AgentV 4.42 suite is judged as AgentV 4.42.4
// judges it (suite42.go and the other *42.go files: its graders, prompts, reply schemas and code-grader contract).
// llm_judge and rubric evaluators (llmjudge.go) call a model endpoint (Judge.LLM) and are reported as skipped
// without one. The package is pure Go apart from running code_judge scripts (ScriptRunner) and the model calls of LLM
// judges (internal/llm); `collector check` and the in-pod collector judge with the same code, and nothing else links
// it (the manager and the plugin read verdicts only).
package evaluate

import (
	"fmt"
	"unicode/utf8"

	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// scoreEpsilon absorbs float rounding when a score is compared with the threshold (0.7 and 0.9 average to
// 0.7999999999999999).
const scoreEpsilon = 1e-9

// bounded returns at most verdict.MaxNotes notes, each at most verdict.MaxNoteLength bytes, never nil.
func bounded(notes []string) []string {
	within := len(notes) <= verdict.MaxNotes
	for _, n := range notes {
		within = within && len(n) <= verdict.MaxNoteLength && utf8.ValidString(n)
	}
	if within {
		// Nothing to cut: the notes themselves (their capacity cut, so that appending copies).
		if notes == nil {
			return []string{}
		}
		return notes[:len(notes):len(notes)]
	}
	out := make([]string, 0, min(len(notes), verdict.MaxNotes+1))
	for i, n := range notes {
		if i == verdict.MaxNotes {
			out = append(out, fmt.Sprintf("... and %d more", len(notes)-verdict.MaxNotes))
			break
		}
		out = append(out, textbound.Head(n, verdict.MaxNoteLength))
	}
	return out
}
