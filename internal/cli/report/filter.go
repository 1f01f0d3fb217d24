// Package report renders a run's stored per-case results for people and CI systems: the filtered case table
// (failing first), JSON/YAML/JSONL, JUnit XML, a baseline comparison and the self-contained HTML report (WriteHTML:
// one page with its script and style inline, the run's EvalRun and EvalSchedule objects and result lines in).
// `kubectl evalrun` reads the results (internal/stored) and writes them through it. Pure: it takes result lines,
// wherever they were stored.
package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// Outcome is what every report calls a case: the API's verdict (Pass, Fail, Error, Skipped), or Missing for a
// requested case the runner produced no valid record for. Missing is the API's word (status.missingIds,
// summary.missing, the MISSING printer column) and its category is Error's: the API counts missing cases in
// summary.errored, the stored result of one has verdict Error and missing: true, and the JUnit report makes it an
// <error> of type Missing.
type Outcome string

// Outcomes, failing first.
const (
	OutcomeFail    = Outcome(verdict.VerdictFail)
	OutcomeError   = Outcome(verdict.VerdictError)
	OutcomeMissing = Outcome("Missing")
	OutcomeSkipped = Outcome(verdict.VerdictSkipped)
	OutcomePass    = Outcome(verdict.VerdictPass)
)

// outcomes are the outcomes in the order ParseVerdicts names them: the API's enum, then Missing.
var outcomes = []Outcome{OutcomePass, OutcomeFail, OutcomeError, OutcomeSkipped, OutcomeMissing}

// Filter selects result lines. The zero Filter selects every line.
type Filter struct {
	// Verdicts, when set, are the outcomes kept. Error keeps missing cases too (as summary.errored counts them);
	// Missing keeps only them.
	Verdicts []Outcome
	// Evaluator, when set, keeps the cases judged by an evaluator of that name or type.
	Evaluator string
	// ID, when set, keeps the cases whose id it matches.
	ID *regexp.Regexp
	// Flaky keeps only flaky cases: some of their trials passed and some did not (a case of one trial never is).
	Flaky bool
}

// ParseVerdicts reads a comma-separated outcome list, case-insensitively ("fail,error,missing").
func ParseVerdicts(s string) ([]Outcome, error) {
	if s == "" {
		return nil, nil
	}
	var out []Outcome
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		i := slices.IndexFunc(outcomes, func(o Outcome) bool { return strings.EqualFold(f, string(o)) })
		if i < 0 {
			return nil, fmt.Errorf("verdict %q is not one of Pass, Fail, Error, Skipped, Missing", f)
		}
		out = append(out, outcomes[i])
	}
	return out, nil
}

// Match reports whether the filter keeps l.
func (f *Filter) Match(l *results.Line) bool {
	if f.Flaky {
		return false
	}
	if len(f.Verdicts) > 0 {
		o := CaseOutcome(l)
		if !slices.Contains(f.Verdicts, o) && (o != OutcomeMissing || !slices.Contains(f.Verdicts, OutcomeError)) {
			return false
		}
	}
	if f.ID != nil && !f.ID.MatchString(l.ID) {
		return false
	}
	if f.Evaluator != "" && !slices.ContainsFunc(l.Evaluators, func(e verdict.EvaluatorResult) bool {
		return e.Name == f.Evaluator || e.Type == f.Evaluator
	}) {
		return false
	}
	return true
}

// CaseOutcome is the line's outcome: Missing for a missing record, its verdict, or Error for an unset verdict.
func CaseOutcome(l *results.Line) Outcome {
	switch {
	case l.Missing:
		return OutcomeMissing
	case l.Verdict == verdict.VerdictPass, l.Verdict == verdict.VerdictFail, l.Verdict == verdict.VerdictSkipped:
		return Outcome(l.Verdict)
	}
	return OutcomeError
}

// rank orders outcomes failing first: Fail, Error, Missing, Skipped, Pass.
func rank(o Outcome) int {
	switch o {
	case OutcomeFail:
		return 0
	case OutcomeError:
		return 1
	case OutcomeMissing:
		return 2
	case OutcomeSkipped:
		return 3
	}
	return 4
}

// SortFailingFirst orders lines Fail, Error, Missing, Skipped, Pass, keeping the stored order within an outcome.
func SortFailingFirst(lines []*results.Line) {
	slices.SortStableFunc(lines, func(a, b *results.Line) int { return rank(CaseOutcome(a)) - rank(CaseOutcome(b)) })
}

// Message is one line saying why a case did not pass: its error, or what its non-passing evaluators reported
// ("name: misses; ..."); for a passing case, empty.
func Message(l *results.Line) string {
	switch CaseOutcome(l) {
	case OutcomePass:
		return ""
	case OutcomeSkipped:
		if l.Reason != "" {
			return l.Reason
		}
	case OutcomeError:
		if l.Error != "" {
			return l.Error
		}
	case OutcomeMissing:
		if l.Error != "" {
			return l.Error
		}
		return verdict.MissingReason
	}
	var parts []string
	for _, e := range l.Evaluators {
		if e.Verdict == verdict.VerdictPass {
			continue
		}
		text := e.Reasoning
		if len(e.Misses) > 0 {
			text = strings.Join(e.Misses, "; ")
		}
		if text == "" {
			text = string(e.Verdict)
		}
		parts = append(parts, e.Name+": "+text)
	}
	return strings.Join(parts, " | ")
}
