package results

import (
	"fmt"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/stats"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// trialsSeed seeds the bootstrap intervals of status.trials: fixed, so the same stored results merge into the same
// status on every reconcile.
const trialsSeed uint64 = 0x545249414c53 // "TRIALS"

// trialMerge is a Merger's state in a run with trials: one TrialTally per case (a few dozen bytes, whatever the
// size of its results), the sum of every trial's judge usage, and which cases the status shows already.
type trialMerge struct {
	rule    TrialRule
	tallies []TrialTally
	shown   []bool
	judges  verdict.Usage
	// unrecorded says why trial (from 1) of the case at index has no stored result ("" for the generic reason).
	unrecorded func(index, trial int) string
}

// WithTrials makes m merge a run whose cases have rule.N() trials each: the first pass (AddChunk) tallies every
// stored trial, keyed by (case, trial) (TrialRecordOf: a result line's trial, 1 when omitted); the second
// (ShowChunk) shows each case by one trial's result, with the case's verdict and score over its trials
// (AggregateCase); Finish adds the cases no trial's result shows (unrecorded says why a trial has no stored
// result) and status.trials. The summary then counts cases, and the section's cost every stored trial. With one
// trial it leaves m as it is.
func (m *Merger) WithTrials(rule TrialRule, unrecorded func(index, trial int) string) *Merger {
	if rule.N() <= 1 {
		return m
	}
	m.trials = &trialMerge{rule: rule, tallies: make([]TrialTally, len(m.seen)), shown: make([]bool, len(m.seen)), unrecorded: unrecorded}
	return m
}

// add tallies one stored trial result (the first pass).
func (t *trialMerge) add(m *Merger, l *Line) {
	i, ok := m.index[l.ID]
	if !ok || !t.tallies[i].Add(t.rule, TrialRecordOf(l)) {
		return
	}
	m.stored++
	m.builder.AddUsage(l.Usage())
	if u := l.ModelUsage; u != nil {
		t.judges.Add(*u)
	}
}

// ShowLine takes one stored result in the second pass (ShowChunk): the result of the trial that shows its case.
func (m *Merger) ShowLine(l *Line, raw []byte) error {
	t := m.trials
	if t == nil {
		return nil
	}
	i, ok := m.index[l.ID]
	if !ok || t.shown[i] {
		return nil
	}
	c := t.tallies[i].Result(t.rule)
	if c.Shown == 0 || l.TrialNumber() != c.Shown {
		return nil
	}
	return t.show(m, i, c, l, raw)
}

// show adds the case at index to the section, decided as c says, shown by the result of one of its trials (l).
func (t *trialMerge) show(m *Merger, i int, c CaseTrials, l *Line, raw []byte) error {
	t.shown[i], m.seen[i] = true, true
	caseLine := *l
	r := &caseLine.CaseResult
	r.Verdict, r.Score, r.Missing, r.BudgetUnjudged, r.ModelUsage = c.Verdict, c.Score, c.AllMissing, c.BudgetUnjudged, nil
	if c.Verdict == verdict.VerdictError && !c.AllMissing && c.Shown > 0 {
		r.Error = textbound.Head(fmt.Sprintf("trial %d of %d: %s", c.Shown, c.N, r.Error), verdict.MaxReasoningLength)
	}
	m.summary.Add(*r)
	if c.AllMissing {
		m.missing = append(m.missing, indexedID{index: i, id: r.ID})
	}
	v := evalsv1alpha1.Verdict(c.Verdict)
	bc := Case{Index: i, Missing: c.AllMissing, Line: raw}
	if !c.AllMissing && m.builder.MayShow(i, v) {
		bc.Status = caseLine.Status()
		bc.Status.Trials = &evalsv1alpha1.CaseTrials{Passed: int32(c.Passed), Count: int32(c.N)}
	} else {
		bc.Status.Verdict = v
	}
	return m.builder.Add(bc)
}

// finish adds every case no stored trial result shows (the second pass found none: its non-passing trials have no
// record at all, or a result was gone when read again), then status.trials.
func (t *trialMerge) finish(m *Merger, ids []string) error {
	cases := make([]stats.Case, len(ids))
	for i, id := range ids {
		c := t.tallies[i].Result(t.rule)
		cases[i] = c.StatsCase(id)
		if t.shown[i] {
			continue
		}
		var r verdict.CaseResult
		why := t.unrecorded(i, max(c.FirstAbsent, 1))
		switch {
		case c.AllMissing:
			r = verdict.MissingCase(id)
			if why != "" {
				r.Error = why
			}
		case c.Verdict == verdict.VerdictError:
			if why == "" {
				why = verdict.MissingReason
			}
			missing := c.Missing
			r = verdict.ErrorCase(id, fmt.Sprintf("%d of %d trials have no record; trial %d: %s", missing, c.N, max(c.FirstAbsent, c.Shown), why))
		default:
			r = verdict.CaseResult{ID: id, Verdict: c.Verdict}
		}
		if err := t.show(m, i, c, &Line{CaseResult: r}, nil); err != nil {
			return err
		}
	}
	m.tail.Trials = t.status(cases)
	return nil
}

// status is status.trials for the cases, as the statistics read them.
func (t *trialMerge) status(cases []stats.Case) *evalsv1alpha1.TrialsStatus {
	out := &evalsv1alpha1.TrialsStatus{Count: int32(t.rule.N()), PassRate: t.rule.PassRateText, Cases: int32(len(cases))}
	if out.PassRate == "" {
		out.PassRate = evalsv1alpha1.DefaultTrialsPassRate
	}
	if len(cases) == 0 {
		return out
	}
	s, err := stats.Summarize(cases, stats.SummaryOptions{CasePassRate: t.rule.PassRate, ScoreInterval: stats.IntervalBootstrap,
		Bootstrap: stats.BootstrapOptions{Seed: trialsSeed}})
	if err != nil {
		// The tallies give valid cases by construction; a failure leaves the figures out rather than the run.
		return out
	}
	out.RunPassRate = estimate(s.PassRate)
	out.MeanTrialPassRate = estimate(s.MeanPassRate)
	if s.Scored > 0 {
		out.MeanScore = estimate(s.MeanScore)
	}
	out.PassAtN, out.PassHatN = verdict.FormatScore(s.MeanPassAtN), verdict.FormatScore(s.MeanPassHatN)
	out.FlakyCases = int32(len(s.Flaky))
	for _, id := range capList(s.Flaky, evalsv1alpha1.MaxStatusFlakyIDs) {
		out.Flaky = append(out.Flaky, textbound.PrintableHead(id, MaxCaseIDBytes))
	}
	return out
}

func estimate(i stats.Interval) *evalsv1alpha1.TrialsEstimate {
	return &evalsv1alpha1.TrialsEstimate{Value: verdict.FormatScore(i.Estimate), Low: verdict.FormatScore(i.Low), High: verdict.FormatScore(i.High)}
}
