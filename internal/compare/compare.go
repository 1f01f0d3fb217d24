// Package compare compares the per-case results of a run with a baseline run's and decides whether the run
// regressed (spec.baseline.test): Count counts newly failing and newly passing cases, cases only one of them has,
// and the mean score over the cases both have; Paired tests the per-case pass rates with internal/stats (McNemar's
// exact test with one trial per case, the sign-flip test with more) and reports the effect with its interval and
// the p-value. The manager's baseline comparison (status.baseline, the Regressed condition) and `kubectl evalrun
// compare` share it. It also keeps an EvalSchedule's case history (History: each case's last verdicts, its flips,
// the flakiest cases) and the cases spec.baseline.quarantine leaves out. Pure: it reads result lines (or per-case
// counts over trials), wherever they were stored, and encodes the history it is given.
package compare

import (
	"math/big"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// Case is one case's results in one run: its verdict, which the Count test compares, and its trials, which the
// Paired test compares. A stored result line is a case of one trial (CaseOf); a case answered N times carries its
// verdict over the trials and its counts of them, so nothing here assumes one trial.
type Case struct {
	ID string
	// Verdict is the case's verdict (over its trials); Missing marks a case the runner gave no record for.
	Verdict verdict.Verdict
	Missing bool
	// Score is the case's score: the mean over its trials that have one (Error counts 0).
	Score float64
	// Trials counts the trials that say how the agent did: judged (Pass, Fail, Error) or without a record (a failed
	// trial); Skipped trials, which nothing could judge, are not counted. Passed counts those that passed.
	Trials, Passed int
	// overTrials marks a case decided over several trials (caseOfTrials): its Score is already the mean the
	// comparison counts (its Error trials at 0), and it has one when hasScore says so.
	overTrials, hasScore bool
}

// caseOfTrials is a case of a run with trials, as results.AggregateCase decided it over its stored trials.
func caseOfTrials(id string, c results.CaseTrials) Case {
	return Case{ID: id, Verdict: c.Verdict, Missing: c.AllMissing, Score: c.Score, Trials: c.Judged(), Passed: c.Passed,
		overTrials: true, hasScore: c.Scored > 0}
}

// TrialRuleOf is how run decided its cases over its trials, as its status.trials says (one trial when unset: a run
// without trials, or one whose results were not merged yet).
func TrialRuleOf(run *evalsv1alpha1.EvalRun) results.TrialRule {
	t := run.Status.Trials
	if t == nil || t.Count <= 1 {
		return results.TrialRule{Count: 1}
	}
	rule, err := results.ParseTrialRule(t.Count, t.PassRate)
	if err != nil {
		// A status the manager did not write: the count with every trial required, the API's default.
		rule, _ = results.ParseTrialRule(min(t.Count, results.MaxTrialRuleCount), "")
	}
	return rule
}

// CaseOf is a stored result line as a case of one trial: passed when its verdict is Pass, not counted when it
// was Skipped, failed otherwise (Fail, Error, no record).
func CaseOf(l *results.Line) Case {
	c := Case{ID: l.ID, Verdict: l.Verdict, Missing: l.Missing, Score: l.Score, Trials: 1}
	switch {
	case l.Missing:
	case l.Verdict == verdict.VerdictPass:
		c.Passed = 1
	case l.Verdict == verdict.VerdictSkipped:
		c.Trials = 0
	}
	return c
}

// passes reports a passing verdict; Fail, Error, Skipped and a missing record do not pass.
func (c *Case) passes() bool { return !c.Missing && c.Verdict == verdict.VerdictPass }

// scored reports whether the case counts in the mean score: it has a record that was not skipped (over trials:
// a trial with one).
func (c *Case) scored() bool {
	if c.overTrials {
		return c.hasScore
	}
	return !c.Missing && c.Verdict != verdict.VerdictSkipped
}

// meanScore is the score the mean counts: the score of a judged case, 0 for an error (over trials: the mean over
// its trials, each error at 0).
func (c *Case) meanScore() float64 {
	if c.Verdict == verdict.VerdictError && !c.overTrials {
		return 0
	}
	return c.Score
}

// trials is what the Paired test keeps of one side of a shared case.
type trials struct {
	passed, trials int
	score          float64
	scored         bool
}

func trialsOf(c *Case) trials {
	return trials{passed: c.Passed, trials: c.Trials, score: c.meanScore(), scored: c.scored()}
}

// pair is a case both runs have, as the Paired test reads it.
type pair struct {
	id            string
	baseline, run trials
}

// entry is what the comparison keeps of one baseline case.
type entry struct {
	Case
	// seen marks a baseline case the run has a line for.
	seen bool
}

// Comparison is the outcome of comparing a run with its baseline. The id lists hold at most the limit given to
// Builder.Finish; the counts count every case.
type Comparison struct {
	Shared                                                      int
	NewlyFailing, NewlyPassing, MissingInRun, MissingInBaseline []string
	NewlyFailingCount, NewlyPassingCount                        int
	MissingInRunCount, MissingInBaselineCount                   int
	// Scored is the number of cases in the mean scores; the means are unset (HasScores false) when it is 0.
	Scored                       int
	MeanScore, BaselineMeanScore float64
	// OnlyInBaseline and OnlyInRun count the case ids only one run has (with or without a record).
	OnlyInBaseline, OnlyInRun int
	// Quarantined are the run's cases left out as flaky (Builder.Quarantine), at most the limit; QuarantinedCount
	// counts them all.
	Quarantined      []string
	QuarantinedCount int

	// pairs are the shared cases, in the run's order, for the Paired test.
	pairs []pair
}

// HasScores reports whether any case counted in the mean scores.
func (c *Comparison) HasScores() bool { return c.Scored > 0 }

// Delta is the run's mean score minus the baseline's, at the precision the status shows.
func (c *Comparison) Delta() *big.Rat {
	run, _ := new(big.Rat).SetString(verdict.FormatScore(c.MeanScore))
	base, _ := new(big.Rat).SetString(verdict.FormatScore(c.BaselineMeanScore))
	return run.Sub(run, base)
}

// Builder builds a Comparison: every baseline case first (AddBaseline or AddBaselineCase), then the run's (AddRun
// or AddRunCase), then Finish. The result lines of a run with trials (Trials) are grouped by case, each case
// decided over its trials by its run's rule (results.AggregateCase); the cases are compared once every line is in.
type Builder struct {
	baseline      map[string]*entry
	baselineOrder []string
	limit         int
	out           Comparison
	runSeen       map[string]bool
	runSum        float64
	baseSum       float64
	// baseLines and runLines group the lines of a side with trials (nil: one trial, a line is a case).
	baseLines, runLines *lineGroups
	// quarantine are the case ids left out of the comparison (Quarantine).
	quarantine map[string]bool
}

// Quarantine leaves the cases ids out of the comparison (spec.baseline.quarantine: cases that flip from run to
// run), both the Count and the Paired test; the run's cases among them are listed in Comparison.Quarantined. Call
// it before adding cases.
func (b *Builder) Quarantine(ids map[string]bool) { b.quarantine = ids }

// lineGroups are one run's result lines grouped by case id, in the order the ids first came, each case's trials
// tallied under the run's rule.
type lineGroups struct {
	rule    results.TrialRule
	index   map[string]int
	ids     []string
	tallies []results.TrialTally
}

func (g *lineGroups) add(l *results.Line) {
	i, ok := g.index[l.ID]
	if !ok {
		i = len(g.ids)
		g.index[l.ID] = i
		g.ids = append(g.ids, l.ID)
		g.tallies = append(g.tallies, results.TrialTally{})
	}
	g.tallies[i].Add(g.rule, results.TrialRecordOf(l))
}

// each calls f with every case, decided over its trials, in the order its id first came; then it empties g.
func (g *lineGroups) each(f func(Case)) {
	for i, id := range g.ids {
		f(caseOfTrials(id, g.tallies[i].Result(g.rule)))
	}
	g.index, g.ids, g.tallies = map[string]int{}, nil, nil
}

// Trials says how many trials each run's cases have and how each decides a case over them (TrialRuleOf). A side
// with more than one trial has its lines (AddBaseline, AddRun) grouped by case: a case is every line of its id,
// keyed by trial (the first line of a trial wins; a missing trial is a failed one). Call it before adding lines.
func (b *Builder) Trials(baseline, run results.TrialRule) {
	group := func(r results.TrialRule) *lineGroups {
		if r.N() <= 1 {
			return nil
		}
		return &lineGroups{rule: r, index: map[string]int{}}
	}
	b.baseLines, b.runLines = group(baseline), group(run)
}

// NewBuilder returns a Builder whose id lists hold at most limit ids each (0: no bound).
func NewBuilder(limit int) *Builder {
	return &Builder{baseline: map[string]*entry{}, runSeen: map[string]bool{}, limit: limit}
}

// AddBaseline records one baseline result line. A repeated id keeps its first line (with trials: of its trial).
func (b *Builder) AddBaseline(l *results.Line) {
	if b.baseLines != nil {
		b.baseLines.add(l)
		return
	}
	b.AddBaselineCase(CaseOf(l))
}

// AddRun compares one of the run's result lines with the baseline's. A repeated id keeps its first line (with
// trials: of its trial, and the case is compared at Finish).
func (b *Builder) AddRun(l *results.Line) {
	if b.runLines != nil {
		b.sealBaseline()
		b.runLines.add(l)
		return
	}
	b.AddRunCase(CaseOf(l))
}

// sealBaseline records the baseline's grouped lines as its cases: every baseline line is in once the run's come.
func (b *Builder) sealBaseline() {
	if b.baseLines != nil && len(b.baseLines.ids) > 0 {
		b.baseLines.each(b.AddBaselineCase)
	}
}

// AddBaselineCase records one baseline case. A repeated id keeps its first case.
func (b *Builder) AddBaselineCase(c Case) {
	if _, dup := b.baseline[c.ID]; dup || b.quarantine[c.ID] {
		return
	}
	b.baseline[c.ID] = &entry{Case: c}
	b.baselineOrder = append(b.baselineOrder, c.ID)
}

// AddRunCase compares one of the run's cases with the baseline's. A repeated id keeps its first case.
func (b *Builder) AddRunCase(run Case) {
	b.sealBaseline()
	if b.runSeen[run.ID] {
		return
	}
	b.runSeen[run.ID] = true
	if b.quarantine[run.ID] {
		b.add(&b.out.Quarantined, &b.out.QuarantinedCount, run.ID)
		return
	}
	e, ok := b.baseline[run.ID]
	if !ok {
		b.out.OnlyInRun++
		if !run.Missing {
			b.add(&b.out.MissingInBaseline, &b.out.MissingInBaselineCount, run.ID)
		}
		return
	}
	base := &e.Case
	e.seen = true
	b.out.Shared++
	if b.out.pairs == nil {
		b.out.pairs = make([]pair, 0, len(b.baselineOrder))
	}
	b.out.pairs = append(b.out.pairs, pair{id: run.ID, baseline: trialsOf(base), run: trialsOf(&run)})
	switch {
	case base.passes() && !run.passes():
		b.add(&b.out.NewlyFailing, &b.out.NewlyFailingCount, run.ID)
	case run.passes() && !base.passes():
		b.add(&b.out.NewlyPassing, &b.out.NewlyPassingCount, run.ID)
	}
	if run.Missing && !base.Missing {
		b.add(&b.out.MissingInRun, &b.out.MissingInRunCount, run.ID)
	}
	if base.Missing && !run.Missing {
		b.add(&b.out.MissingInBaseline, &b.out.MissingInBaselineCount, run.ID)
	}
	if run.scored() && base.scored() {
		b.out.Scored++
		b.runSum += run.meanScore()
		b.baseSum += base.meanScore()
	}
}

func (b *Builder) add(list *[]string, count *int, id string) {
	*count++
	if b.limit == 0 || len(*list) < b.limit {
		*list = append(*list, id)
	}
}

// Finish returns the comparison: the baseline's cases the run has no line for are missing in the run, in the
// baseline's order.
func (b *Builder) Finish() Comparison {
	b.sealBaseline()
	if b.runLines != nil {
		b.runLines.each(b.AddRunCase)
	}
	for _, id := range b.baselineOrder {
		if e := b.baseline[id]; !e.seen {
			b.out.OnlyInBaseline++
			if !e.Missing {
				b.add(&b.out.MissingInRun, &b.out.MissingInRunCount, id)
			}
		}
	}
	if b.out.Scored > 0 {
		b.out.MeanScore = b.runSum / float64(b.out.Scored)
		b.out.BaselineMeanScore = b.baseSum / float64(b.out.Scored)
	}
	return b.out
}

// Status is the comparison in the form of status.baseline (without the baseline's name, uid and eval file).
func (c *Comparison) Status() evalsv1alpha1.BaselineComparison {
	out := evalsv1alpha1.BaselineComparison{
		SharedCases:            int32(c.Shared),
		NewlyFailing:           c.NewlyFailing,
		NewlyFailingCount:      int32(c.NewlyFailingCount),
		NewlyPassing:           c.NewlyPassing,
		NewlyPassingCount:      int32(c.NewlyPassingCount),
		MissingInRun:           c.MissingInRun,
		MissingInRunCount:      int32(c.MissingInRunCount),
		MissingInBaseline:      c.MissingInBaseline,
		MissingInBaselineCount: int32(c.MissingInBaselineCount),
		Quarantined:            c.Quarantined,
		QuarantinedCount:       int32(c.QuarantinedCount),
	}
	if c.HasScores() {
		out.MeanScore = verdict.FormatScore(c.MeanScore)
		out.BaselineMeanScore = verdict.FormatScore(c.BaselineMeanScore)
		out.MeanScoreDelta = FormatDelta(c.Delta())
	}
	return out
}
