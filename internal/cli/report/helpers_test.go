package report

import (
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// sampleLines are four cases, one of each outcome, plus a missing one, in run order.
func sampleLines() []*results.Line {
	dur := 1500.0
	return []*results.Line{
		{CaseResult: evaluate.CaseResult{ID: "case-001", Verdict: evaluate.VerdictPass, Score: 1, Evaluators: []evaluate.EvaluatorResult{
			{Name: "decision", Type: "field_accuracy", Verdict: evaluate.VerdictPass, Score: 1, Hits: []string{"decision"}}}},
			Answer: `{"decision":"CLEAR"}`, DurationMs: &dur},
		{CaseResult: evaluate.CaseResult{ID: "case-002", Verdict: evaluate.VerdictFail, Score: 0.25, Evaluators: []evaluate.EvaluatorResult{
			{Name: "decision", Type: "field_accuracy", Verdict: evaluate.VerdictFail, Score: 0, Misses: []string{`decision: want "REVIEW", got "CLEAR"`}},
			{Name: "policy", Type: "code_judge", Verdict: evaluate.VerdictPass, Score: 1}}},
			Answer: `{"decision":"CLEAR"}`},
		{CaseResult: evaluate.CaseResult{ID: "case-003", Verdict: evaluate.VerdictError, Error: "output is not JSON <&>"}},
		{CaseResult: evaluate.CaseResult{ID: "case-004", Verdict: evaluate.VerdictSkipped, Reason: "no evaluator applies"}},
		{CaseResult: evaluate.CaseResult{ID: "case-005", Verdict: evaluate.VerdictError, Missing: true}},
	}
}
