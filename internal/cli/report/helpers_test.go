package report

import (
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// sampleLines are four cases, one of each outcome, plus a missing one, in run order.
func sampleLines() []*results.Line {
	dur := 1500.0
	return []*results.Line{
		{CaseResult: verdict.CaseResult{ID: "case-001", Verdict: verdict.VerdictPass, Score: 1, Evaluators: []verdict.EvaluatorResult{
			{Name: "decision", Type: "field_accuracy", Verdict: verdict.VerdictPass, Score: 1, Hits: []string{"decision"}}}},
			Answer: `{"decision":"CLEAR"}`, DurationMs: &dur},
		{CaseResult: verdict.CaseResult{ID: "case-002", Verdict: verdict.VerdictFail, Score: 0.25, Evaluators: []verdict.EvaluatorResult{
			{Name: "decision", Type: "field_accuracy", Verdict: verdict.VerdictFail, Score: 0, Misses: []string{`decision: want "REVIEW", got "CLEAR"`}},
			{Name: "policy", Type: "code_judge", Verdict: verdict.VerdictPass, Score: 1}}},
			Answer: `{"decision":"CLEAR"}`},
		{CaseResult: verdict.CaseResult{ID: "case-003", Verdict: verdict.VerdictError, Error: "output is not JSON <&>"}},
		{CaseResult: verdict.CaseResult{ID: "case-004", Verdict: verdict.VerdictSkipped, Reason: "no evaluator applies"}},
		{CaseResult: verdict.CaseResult{ID: "case-005", Verdict: verdict.VerdictError, Missing: true}},
	}
}
