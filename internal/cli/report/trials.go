package report

import (
	"fmt"
	"slices"
	"strings"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// A run with trials (spec.trials.count N > 1) stores a result line per (case, trial). Every report of such a run
// shows a case once, decided over its trials by the rule the manager's merge used (results.AggregateCase: the case's
// verdict and mean score), with each trial's result under it; a run of one trial keeps its line per case.

// TrialRuleOf is how run decides its cases over their trials: its status.trials (what the merge used), else its
// spec.trials (a run whose results are not merged yet); one trial when neither says more.
func TrialRuleOf(run *evalsv1alpha1.EvalRun) results.TrialRule {
	count, passRate := int32(1), ""
	switch {
	case run.Status.Trials != nil:
		count, passRate = run.Status.Trials.Count, run.Status.Trials.PassRate
	case run.Spec.Trials != nil && run.Spec.Trials.Count != nil:
		count = *run.Spec.Trials.Count
		if run.Spec.Trials.PassRate != nil {
			passRate = *run.Spec.Trials.PassRate
		}
	}
	if count <= 1 {
		return results.TrialRule{Count: 1}
	}
	rule, err := results.ParseTrialRule(min(count, results.MaxTrialRuleCount), passRate)
	if err != nil {
		// A rule the API would refuse: the count with every trial required, the API's default.
		rule, _ = results.ParseTrialRule(min(count, results.MaxTrialRuleCount), "")
	}
	return rule
}

// TrialCase is one case of a run with trials: the stored result of each of its trials and the case decided over
// them.
type TrialCase struct {
	ID string
	// Trials holds trial t's stored result at index t-1; nil for a trial with no stored result.
	Trials []*results.Line
	// Case is the case decided over its trials (verdict, mean score, counts by verdict).
	Case results.CaseTrials
}

// GroupTrials groups a run's stored lines by case under rule, the cases in the order their first line came. As in
// the merge, the first line of a trial wins and a line of a trial outside 1..N is left out.
func GroupTrials(rule results.TrialRule, lines []*results.Line) []*TrialCase {
	n := min(rule.N(), results.MaxTrialRuleCount)
	index := make(map[string]int, len(lines)/n+1)
	var out []*TrialCase
	var tallies []results.TrialTally
	for _, l := range lines {
		i, ok := index[l.ID]
		if !ok {
			i = len(out)
			index[l.ID] = i
			out = append(out, &TrialCase{ID: l.ID, Trials: make([]*results.Line, n)})
			tallies = append(tallies, results.TrialTally{})
		}
		if tallies[i].Add(rule, results.TrialRecordOf(l)) {
			out[i].Trials[l.TrialNumber()-1] = l
		}
	}
	for i, c := range out {
		c.Case = tallies[i].Result(rule)
	}
	return out
}

// Outcome is the case's outcome over its trials: Missing when every trial is, else its verdict.
func (c *TrialCase) Outcome() Outcome {
	if c.Case.AllMissing {
		return OutcomeMissing
	}
	switch v := c.Case.Verdict; v {
	case verdict.VerdictPass, verdict.VerdictFail, verdict.VerdictSkipped:
		return Outcome(v)
	}
	return OutcomeError
}

// Flaky reports whether the case's trials disagree: some passed, some did not.
func (c *TrialCase) Flaky() bool { return c.Case.Flaky() }

// Shown is the stored result of the trial that stands for the case (its first trial of the case's verdict), or
// nil when none does (an Error whose non-passing trials have no stored result).
func (c *TrialCase) Shown() *results.Line {
	if c.Case.Shown < 1 || c.Case.Shown > len(c.Trials) {
		return nil
	}
	return c.Trials[c.Case.Shown-1]
}

// TrialOutcome is what trial t (from 1) of the case was: its stored result's outcome, or Missing without one.
func (c *TrialCase) TrialOutcome(t int) Outcome {
	if l := c.Trials[t-1]; l != nil {
		return CaseOutcome(l)
	}
	return OutcomeMissing
}

// Marks are the case's trials in trial order as one character each: P (Pass), F (Fail), E (Error), M (Missing:
// no record, or no stored result), S (Skipped).
func (c *TrialCase) Marks() string {
	b := make([]byte, len(c.Trials))
	for i := range c.Trials {
		b[i] = markOf(c.TrialOutcome(i + 1))
	}
	return string(b)
}

func markOf(o Outcome) byte {
	switch o {
	case OutcomePass:
		return 'P'
	case OutcomeFail:
		return 'F'
	case OutcomeSkipped:
		return 'S'
	case OutcomeMissing:
		return 'M'
	}
	return 'E'
}

// Message is one line saying why the case did not pass: the message of the trial that stands for it, naming the
// trial ("trial 2 of 5: ..."), or how many trials have no result; "" for a passing case.
func (c *TrialCase) Message() string {
	o := c.Outcome()
	if o == OutcomePass {
		return ""
	}
	l := c.Shown()
	if l == nil {
		if o == OutcomeMissing {
			return verdict.MissingReason
		}
		return fmt.Sprintf("%d of %d trials have no stored result", c.Case.Missing, c.Case.N)
	}
	m := Message(l)
	if o == OutcomeMissing {
		return m
	}
	return fmt.Sprintf("trial %d of %d: %s", c.Case.Shown, c.Case.N, m)
}

// Score is the case's mean score over its trials and whether the case has one to show (Pass or Fail, as
// status.cases shows a score).
func (c *TrialCase) Score() (float64, bool) {
	o := c.Outcome()
	return c.Case.Score, o == OutcomePass || o == OutcomeFail
}

// TrialsText is "passed/N" ("3/5").
func (c *TrialCase) TrialsText() string { return fmt.Sprintf("%d/%d", c.Case.Passed, c.Case.N) }

// evaluatorCount is how one evaluator judged a case's trials: how many of the trials it judged (it was not
// skipped) passed.
type evaluatorCount struct {
	Name           string
	Passed, Judged int
}

// evaluatorCounts are the case's evaluators, in the order they first appear over its trials, each with its passes.
func (c *TrialCase) evaluatorCounts() []evaluatorCount {
	var out []evaluatorCount
	for _, l := range c.Trials {
		if l == nil {
			continue
		}
		for _, e := range l.Evaluators {
			i := slices.IndexFunc(out, func(x evaluatorCount) bool { return x.Name == e.Name })
			if i < 0 {
				i = len(out)
				out = append(out, evaluatorCount{Name: e.Name})
			}
			switch e.Verdict {
			case verdict.VerdictPass:
				out[i].Passed++
				out[i].Judged++
			case verdict.VerdictSkipped:
			default:
				out[i].Judged++
			}
		}
	}
	return out
}

// EvaluatorsText is the case's evaluators with their passed trials ("decision=3/5,policy=5/5").
func (c *TrialCase) EvaluatorsText() string {
	counts := c.evaluatorCounts()
	parts := make([]string, len(counts))
	for i, e := range counts {
		parts[i] = fmt.Sprintf("%s=%d/%d", e.Name, e.Passed, e.Judged)
	}
	return strings.Join(parts, ",")
}

// MatchCase reports whether the filter keeps the case: its outcome over its trials, its id, an evaluator that
// judged any of its trials, and with Flaky only a flaky case.
func (f *Filter) MatchCase(c *TrialCase) bool {
	if f.Flaky && !c.Flaky() {
		return false
	}
	if len(f.Verdicts) > 0 {
		o := c.Outcome()
		if !slices.Contains(f.Verdicts, o) && (o != OutcomeMissing || !slices.Contains(f.Verdicts, OutcomeError)) {
			return false
		}
	}
	if f.ID != nil && !f.ID.MatchString(c.ID) {
		return false
	}
	if f.Evaluator != "" && !slices.ContainsFunc(c.Trials, func(l *results.Line) bool {
		return l != nil && slices.ContainsFunc(l.Evaluators, func(e verdict.EvaluatorResult) bool {
			return e.Name == f.Evaluator || e.Type == f.Evaluator
		})
	}) {
		return false
	}
	return true
}

// SortCasesFailingFirst orders cases by their outcome over their trials, Fail, Error, Missing, Skipped, Pass,
// keeping the stored order within an outcome.
func SortCasesFailingFirst(cases []*TrialCase) {
	slices.SortStableFunc(cases, func(a, b *TrialCase) int { return rank(a.Outcome()) - rank(b.Outcome()) })
}

// TrialsLines are status.trials for people, one line each: the trials and the case rule, the pass rate of the
// cases, the mean trial pass rate and the mean score with their 95% intervals, pass@N and pass^N, and the flaky
// cases (flaky: every flaky id the caller knows, of which the first maxFlaky are named). nil without trials.
func TrialsLines(t *evalsv1alpha1.TrialsStatus, flaky []string, maxFlaky int) []string {
	if t == nil || t.Count <= 1 {
		return nil
	}
	out := []string{fmt.Sprintf("Trials: %d per case; a case passes when %s (passRate %s); %d cases",
		t.Count, ruleText(t.PassRate), t.PassRate, t.Cases)}
	if e := t.RunPassRate; e != nil {
		out = append(out, "Pass rate (cases): "+EstimateText(e)+" (Wilson)")
	}
	if e := t.MeanTrialPassRate; e != nil {
		out = append(out, "Mean trial pass rate (pass@1): "+EstimateText(e)+" (bootstrap over cases)")
	}
	if e := t.MeanScore; e != nil {
		out = append(out, "Mean score: "+EstimateText(e)+" (bootstrap over cases)")
	}
	if t.PassAtN != "" || t.PassHatN != "" {
		out = append(out, fmt.Sprintf("pass@%d: %s (some trial passed); pass^%d: %s (every trial passed)", t.Count, dash(t.PassAtN), t.Count, dash(t.PassHatN)))
	}
	line := fmt.Sprintf("Flaky cases: %d", t.FlakyCases)
	if len(flaky) == 0 {
		flaky = t.Flaky
	}
	if len(flaky) > 0 {
		named := flaky[:min(len(flaky), maxFlaky)]
		quoted := make([]string, len(named))
		for i, id := range named {
			quoted[i] = cell(id)
		}
		line += ": " + strings.Join(quoted, ", ")
		if more := int(t.FlakyCases) - len(named); more > 0 {
			line += fmt.Sprintf(" and %d more", more)
		}
	}
	return append(out, line)
}

// EstimateText is an estimate with its 95% interval: "0.6000 (95% CI 0.3127 to 0.8318)".
func EstimateText(e *evalsv1alpha1.TrialsEstimate) string {
	return fmt.Sprintf("%s (95%% CI %s to %s)", e.Value, e.Low, e.High)
}

// ruleText says when a case passes under a trials pass rate: "every trial passes" for 1, else "at least <rate>
// of its trials pass".
func ruleText(rate string) string {
	if r, ok := parseScore(rate); ok && r >= 1 {
		return "every trial passes"
	}
	return "at least " + rate + " of its trials pass"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
