// Package report renders a run's stored per-case results for people and CI systems: the filtered case table
// (failing first), JSON/YAML/JSONL, JUnit XML and a baseline comparison. `kubectl evalrun` reads the results
// (internal/stored) and writes them through it. Pure: it takes result lines, wherever they were stored.
package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// Filter selects result lines. The zero Filter selects every line.
type Filter struct {
	// Verdicts, when set, are the verdicts kept.
	Verdicts []evaluate.Verdict
	// Evaluator, when set, keeps the cases judged by an evaluator of that name or type.
	Evaluator string
	// ID, when set, keeps the cases whose id it matches.
	ID *regexp.Regexp
}

// ParseVerdicts reads a comma-separated verdict list, case-insensitively ("fail,error").
func ParseVerdicts(s string) ([]evaluate.Verdict, error) {
	if s == "" {
		return nil, nil
	}
	var out []evaluate.Verdict
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		found := false
		for _, v := range []evaluate.Verdict{evaluate.VerdictPass, evaluate.VerdictFail, evaluate.VerdictError, evaluate.VerdictSkipped} {
			if strings.EqualFold(f, string(v)) {
				out, found = append(out, v), true
			}
		}
		if !found {
			return nil, fmt.Errorf("verdict %q is not one of Pass, Fail, Error, Skipped", f)
		}
	}
	return out, nil
}

// Match reports whether the filter keeps l.
func (f *Filter) Match(l *results.Line) bool {
	if len(f.Verdicts) > 0 && !slices.Contains(f.Verdicts, Verdict(l)) {
		return false
	}
	if f.ID != nil && !f.ID.MatchString(l.ID) {
		return false
	}
	if f.Evaluator != "" && !slices.ContainsFunc(l.Evaluators, func(e evaluate.EvaluatorResult) bool {
		return e.Name == f.Evaluator || e.Type == f.Evaluator
	}) {
		return false
	}
	return true
}

// Verdict is the line's verdict as the API spells it: Error for a missing record or an unset verdict.
func Verdict(l *results.Line) evaluate.Verdict {
	switch {
	case l.Missing:
		return evaluate.VerdictError
	case l.Verdict == evaluate.VerdictPass, l.Verdict == evaluate.VerdictFail, l.Verdict == evaluate.VerdictSkipped:
		return l.Verdict
	}
	return evaluate.VerdictError
}

// rank orders verdicts failing first: Fail, Error, Skipped, Pass.
func rank(v evaluate.Verdict) int {
	switch v {
	case evaluate.VerdictFail:
		return 0
	case evaluate.VerdictError:
		return 1
	case evaluate.VerdictSkipped:
		return 2
	}
	return 3
}

// SortFailingFirst orders lines Fail, Error, Skipped, Pass, keeping the stored order within a verdict.
func SortFailingFirst(lines []*results.Line) {
	slices.SortStableFunc(lines, func(a, b *results.Line) int { return rank(Verdict(a)) - rank(Verdict(b)) })
}

// Message is one line saying why a case did not pass: its error, or what its non-passing evaluators reported
// ("name: misses; ..."); for a passing case, empty.
func Message(l *results.Line) string {
	switch Verdict(l) {
	case evaluate.VerdictPass:
		return ""
	case evaluate.VerdictSkipped:
		if l.Reason != "" {
			return l.Reason
		}
	case evaluate.VerdictError:
		if l.Error != "" {
			return l.Error
		}
		if l.Missing {
			return "no record for this case in the runner's output"
		}
	}
	var parts []string
	for _, e := range l.Evaluators {
		if e.Verdict == evaluate.VerdictPass {
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
