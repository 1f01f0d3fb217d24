package collect

import (
	"encoding/json"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stats"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// carrySelection is what a resume takes from its source's stored results (the pure part of PlanResume): the cases
// that run again, with their trials, and the results it carries.
type carrySelection struct {
	// Run are the ids of the cases that run again (in at least one trial), in file order; Keep selects their
	// indexes in the eval file.
	Run  []string
	Keep map[int]bool
	// TrialRuns are the cases of Run each trial runs (podwire.RunConfig.TrialRuns); nil when every trial runs
	// every case of Run (always with one trial).
	TrialRuns [][]podwire.CaseSpan
	// RanTrials is the number of case trials that run again.
	RanTrials int
	// Lines are the carried results (each marked carriedFrom, keeping its trial), in file order, trial by trial
	// within a case.
	Lines [][]byte
	// Ignored counts the stored results left out, as the merge leaves them out: one of a case the eval file does
	// not have, a second result of one case's trial (the first counts), or one of a trial outside 1..N.
	Ignored int
}

// resumeSelector decides a resume's carrySelection from the source's stored results, read one at a time (add).
// Its rule is this run's (its trials' count, which must be the source's, and its pass rate); with one trial it
// decides as a resume always did: Missing carries every result with a record, NotPassed every passing one.
type resumeSelector struct {
	ids   []string
	index map[string]int
	rule  results.TrialRule
	mode  evalsv1alpha1.ResumeCases
	from  string
	// held are the first stored result of each trial of each case, by the case's index.
	held [][]heldTrial
	// keepFailing says a result that did not pass may be carried (with NotPassed, only when a case can pass with
	// trials that did not); otherwise its line is not kept, as it never is carried.
	keepFailing bool
	ignored     int
}

// heldTrial is one trial's stored result: what the case's verdict reads of it, and its line as it would be carried
// (nil when it is not carried: a missing result, or one NotPassed never carries).
type heldTrial struct {
	record results.TrialRecord
	line   []byte
}

func newResumeSelector(ids []string, rule results.TrialRule, mode evalsv1alpha1.ResumeCases, from string) *resumeSelector {
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	n := rule.N()
	allowed := stats.Case{Passed: n - 1, Trials: n}.Passes(rule.PassRate)
	return &resumeSelector{ids: ids, index: index, rule: rule, mode: mode, from: from, held: make([][]heldTrial, len(ids)),
		keepFailing: mode != evalsv1alpha1.ResumeNotPassed || allowed}
}

// add takes one stored result of the source.
func (s *resumeSelector) add(l *results.Line) error {
	i, ok := s.index[l.ID]
	trial := l.TrialNumber()
	if !ok || trial < 1 || trial > s.rule.N() {
		s.ignored++
		return nil
	}
	for _, h := range s.held[i] {
		if h.record.Trial == trial {
			s.ignored++
			return nil
		}
	}
	h := heldTrial{record: results.TrialRecordOf(l)}
	if !l.Missing && (s.keepFailing || l.Verdict == verdict.VerdictPass || l.Verdict == verdict.VerdictSkipped) {
		if l.CarriedFrom == "" {
			l.CarriedFrom = s.from
		}
		line, err := json.Marshal(l)
		if err != nil {
			return err
		}
		h.line = line
	}
	s.held[i] = append(s.held[i], h)
	return nil
}

// finish decides every case: Missing runs each trial without a result; NotPassed runs every trial of a case that
// does not pass under the rule and the trials without a result of the others. Never only a case's trials that did
// not pass: picking trials by their verdicts would bias the case's pass rate upward.
func (s *resumeSelector) finish() carrySelection {
	n := s.rule.N()
	sel := carrySelection{Keep: map[int]bool{}, Ignored: s.ignored}
	var runs [][]bool // by case of Run, which trials (from 0) it runs
	partial := false
	for i, id := range s.ids {
		held := s.held[i]
		carry := held
		if s.mode == evalsv1alpha1.ResumeNotPassed {
			records := make([]results.TrialRecord, len(held))
			for k, h := range held {
				records[k] = h.record
			}
			if results.AggregateCase(s.rule, records).Verdict != verdict.VerdictPass {
				carry = nil
			}
		}
		trials := make([]bool, n)
		for t := range trials {
			trials[t] = true
		}
		carried := make([][]byte, n)
		for _, h := range carry {
			if h.line != nil {
				carried[h.record.Trial-1], trials[h.record.Trial-1] = h.line, false
			}
		}
		ran := 0
		for t := range n {
			if carried[t] != nil {
				sel.Lines = append(sel.Lines, carried[t])
			}
			if trials[t] {
				ran++
			}
		}
		if ran == 0 {
			continue
		}
		sel.Run, sel.Keep[i], sel.RanTrials = append(sel.Run, id), true, sel.RanTrials+ran
		runs = append(runs, trials)
		partial = partial || ran < n
	}
	if partial {
		sel.TrialRuns = make([][]podwire.CaseSpan, n)
		for t := range n {
			sel.TrialRuns[t] = podwire.SpansOf(len(runs), func(k int) bool { return runs[k][t] })
		}
	}
	return sel
}
