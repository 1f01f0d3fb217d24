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

// trialLine is one stored trial result of a case (trial 1 stored without its number, as the collector writes it).
func trialLine(id string, trial int, v verdict.Verdict, score float64, answer string) *results.Line {
	l := &results.Line{CaseResult: verdict.CaseResult{ID: id, Verdict: v, Score: score}, Answer: answer}
	if trial > 1 {
		l.Trial = trial
	}
	switch v {
	case verdict.VerdictPass:
		l.Evaluators = []verdict.EvaluatorResult{{Name: "decision", Type: "field_accuracy", Verdict: verdict.VerdictPass, Score: 1, Hits: []string{"decision"}}}
	case verdict.VerdictFail:
		l.Evaluators = []verdict.EvaluatorResult{{Name: "decision", Type: "field_accuracy", Verdict: verdict.VerdictFail, Misses: []string{"decision: want REVIEW"}}}
	case verdict.VerdictError:
		l.Error = "answer is not JSON"
	case verdict.VerdictSkipped:
		l.Reason = "no evaluator applies"
	}
	return l
}

// trialRunLines are the stored results of a run of three trials per case, stored trial by trial (trial-major, as
// a sharded run's pods store them): case-a passes every trial; case-b passes two of three (flaky, a Fail under
// "every trial"); case-c errs twice and its third trial stored nothing; case-d has no record in any trial;
// case-e passes twice and was skipped once (the skipped trial is left out of its trials); case-f fails every trial.
func trialRunLines() []*results.Line {
	const (
		p = verdict.VerdictPass
		f = verdict.VerdictFail
		e = verdict.VerdictError
		s = verdict.VerdictSkipped
	)
	missing := func(id string, trial int) *results.Line {
		l := &results.Line{CaseResult: verdict.MissingCase(id)}
		if trial > 1 {
			l.Trial = trial
		}
		return l
	}
	return []*results.Line{
		trialLine("case-a", 1, p, 1, `{"decision":"CLEAR"}`), trialLine("case-b", 1, p, 1, "b1"), trialLine("case-c", 1, e, 0, "c1"),
		missing("case-d", 1), trialLine("case-e", 1, p, 1, "e1"), trialLine("case-f", 1, f, 0.25, "f1"),

		trialLine("case-a", 2, p, 1, "a2"), trialLine("case-b", 2, f, 0.5, "b2"), trialLine("case-c", 2, e, 0, "c2"),
		missing("case-d", 2), trialLine("case-e", 2, s, 0, "e2"), trialLine("case-f", 2, f, 0.25, "f2"),

		trialLine("case-a", 3, p, 1, "a3"), trialLine("case-b", 3, p, 1, "b3"),
		missing("case-d", 3), trialLine("case-e", 3, p, 1, "e3"), trialLine("case-f", 3, f, 0.5, "f3"),
		// A second result of a trial is ignored (the first wins), and so is one of a trial beyond N.
		trialLine("case-a", 3, f, 0, "duplicate"), trialLine("case-a", 4, f, 0, "beyond N"),
	}
}

// trialRule is the rule of trialRunLines' run: three trials, every one must pass.
var trialRule = results.TrialRule{Count: 3, PassRate: 1, PassRateText: "1"}
