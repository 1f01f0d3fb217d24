package results

import (
	"fmt"
	"strconv"

	"github.com/evalrun-operator/evalrun-operator/internal/stats"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// A case's verdict under trials, stated once (docs/design/trials.md): a case of N trials, p of them passed, passes
// when p/N reaches the rule's pass rate (rounded up to whole trials: stats.Case.Passes); otherwise it is Error when
// every trial that did not pass errored or has no record, else Fail. A trial without a record counts as not
// passed, so a run that loses trials cannot look better for it; the case is missing only when all its trials are.
// Skipped trials (nothing could judge them) are left out of N; a case whose trials were all skipped is Skipped.
// Its score is the mean of its trials' scores over those with a record that were not skipped (an Error counts 0).
// AggregateCase says it for one case's records; TrialTally is the same rule kept as a case's records stream in.

// TrialRule is how a run decides each case over its trials: spec.trials.
type TrialRule struct {
	// Count is the number of trials of every case, N (0 or 1: one).
	Count int
	// PassRate is the share of its trials a case must pass, in (0, 1] (0: 1, every trial).
	PassRate float64
	// PassRateText is PassRate as the spec writes it, for the status ("" for "1").
	PassRateText string
}

// N is the rule's number of trials, at least 1.
func (r TrialRule) N() int { return max(r.Count, 1) }

// MaxTrialRuleCount bounds TrialRule.Count: spec.trials.count's maximum, and what a TrialTally can hold.
const MaxTrialRuleCount = 100

// ParseTrialRule reads spec.trials' count and passRate ("" is "1"); one the API's validation would refuse is an
// error naming it.
func ParseTrialRule(count int32, passRate string) (TrialRule, error) {
	if count < 0 || count > MaxTrialRuleCount {
		return TrialRule{}, fmt.Errorf("trials.count %d is not between 1 and %d", count, MaxTrialRuleCount)
	}
	r := TrialRule{Count: max(int(count), 1), PassRate: 1, PassRateText: passRate}
	if passRate == "" {
		r.PassRateText = "1"
		return r, nil
	}
	f, err := strconv.ParseFloat(passRate, 64)
	if err != nil || !(f > 0 && f <= 1) {
		return TrialRule{}, fmt.Errorf("trials.passRate %q is not a decimal in (0, 1]", passRate)
	}
	r.PassRate = f
	return r, nil
}

// TrialRecord is what one stored result says of one trial of a case.
type TrialRecord struct {
	// Trial is the trial, from 1 (Line.TrialNumber).
	Trial   int
	Verdict verdict.Verdict
	// Missing: the runner gave no record for this trial (the collector stored the case as missing).
	Missing bool
	Score   float64
	// BudgetUnjudged: the LLM judging budget left the trial unjudged (an Error).
	BudgetUnjudged bool
}

// TrialRecordOf is a stored result line as a trial record.
func TrialRecordOf(l *Line) TrialRecord {
	return TrialRecord{Trial: l.TrialNumber(), Verdict: l.Verdict, Missing: l.Missing, Score: l.Score, BudgetUnjudged: l.BudgetUnjudged}
}

// CaseTrials is one case decided over its trials.
type CaseTrials struct {
	// N is the case's number of trials (the rule's).
	N int
	// Passed, Failed, Errored and Skipped count the trials whose record says so; Missing the trials without a
	// record (stored as missing, or not stored at all). They add up to N.
	Passed, Failed, Errored, Skipped, Missing int
	// Ignored counts the records left out: a second record of one trial (the first kept), or one of a trial
	// outside 1..N.
	Ignored int
	// Verdict is the case's verdict; AllMissing says every trial is missing (the case is missing).
	Verdict    verdict.Verdict
	AllMissing bool
	// Score is the mean score over the Scored trials: those with a record that were not skipped (an Error
	// counts 0). 0 when none.
	Score  float64
	Scored int
	// BudgetUnjudged: the case is an Error and a trial of it was left unjudged by the LLM judging budget.
	BudgetUnjudged bool
	// Shown is the trial whose record represents the case (its answer, error and evaluators in the status): the
	// first of its verdict's trials (for Error, the first errored trial with a record); 0 when no record stands
	// for the verdict (an Error whose non-passing trials have no record at all). FirstAbsent is the first trial
	// with no stored record at all (0: none).
	Shown, FirstAbsent int
}

// Judged is the number of the case's trials that count for its verdict: every trial but the skipped ones.
func (c CaseTrials) Judged() int { return c.N - c.Skipped }

// Flaky reports whether the case's trials disagree: some passed, some did not.
func (c CaseTrials) Flaky() bool { return c.Passed > 0 && c.Passed < c.Judged() }

// StatsCase is the case as internal/stats reads it: its passed trials of its judged trials (a case every trial of
// which was skipped counts as N trials, none passed, as the summary counts a Skipped case as not passing), its
// mean score, unscored unless its verdict is Pass or Fail (the cases summary.meanScore covers).
func (c CaseTrials) StatsCase(id string) stats.Case {
	trials := c.Judged()
	if trials == 0 {
		trials = c.N
	}
	judged := c.Verdict == verdict.VerdictPass || c.Verdict == verdict.VerdictFail
	return stats.Case{ID: id, Passed: c.Passed, Trials: trials, Score: c.Score, NoScore: !judged}
}

// AggregateCase decides one case from its stored trial records, in any order (the first record of a trial wins).
func AggregateCase(rule TrialRule, records []TrialRecord) CaseTrials {
	var t TrialTally
	for _, r := range records {
		t.Add(rule, r)
	}
	return t.Result(rule)
}

// TrialTally is one case's trial records as they stream in, in a few dozen bytes (the merge keeps one per case of
// a run): which trials have a record, counts by verdict, the score sum, the first trial of each verdict. The zero
// value is empty.
type TrialTally struct {
	seen                                      [2]uint64 // trials 1..128 with a record
	passed, failed, errored, skipped, missing uint8
	scored                                    uint8
	budgetUnjudged                            bool
	firstPass, firstFail, firstError, firstSk uint8
	ignored                                   uint32
	scoreSum                                  float64
}

// Add takes one record of the case and reports whether it was kept: a record of a trial outside 1..rule.N() or of
// a trial already recorded is ignored (counted).
func (t *TrialTally) Add(rule TrialRule, r TrialRecord) bool {
	n := min(rule.N(), MaxTrialRuleCount)
	if r.Trial < 1 || r.Trial > n {
		t.ignored++
		return false
	}
	word, bit := (r.Trial-1)/64, uint64(1)<<((r.Trial-1)%64)
	if t.seen[word]&bit != 0 {
		t.ignored++
		return false
	}
	t.seen[word] |= bit
	trial := uint8(r.Trial)
	first := func(f *uint8) {
		if *f == 0 || trial < *f {
			*f = trial
		}
	}
	switch {
	case r.Missing:
		t.missing++
		first(&t.firstError)
		return true
	case r.Verdict == verdict.VerdictPass:
		t.passed++
		first(&t.firstPass)
	case r.Verdict == verdict.VerdictFail:
		t.failed++
		first(&t.firstFail)
	case r.Verdict == verdict.VerdictSkipped:
		t.skipped++
		first(&t.firstSk)
		return true
	default:
		// Error, or a verdict nothing set: an Error, as the status spells it.
		t.errored++
		first(&t.firstError)
		t.budgetUnjudged = t.budgetUnjudged || r.BudgetUnjudged
		t.scored++
		return true
	}
	t.scored++
	t.scoreSum += verdict.ClampScore(r.Score)
	return true
}

// Result decides the case under rule.
func (t *TrialTally) Result(rule TrialRule) CaseTrials {
	n := min(rule.N(), MaxTrialRuleCount)
	c := CaseTrials{N: n, Passed: int(t.passed), Failed: int(t.failed), Errored: int(t.errored), Skipped: int(t.skipped),
		Ignored: int(t.ignored), Scored: int(t.scored)}
	recorded := c.Passed + c.Failed + c.Errored + c.Skipped + int(t.missing)
	c.Missing = int(t.missing) + n - recorded
	for trial := 1; trial <= n; trial++ {
		if t.seen[(trial-1)/64]&(uint64(1)<<((trial-1)%64)) == 0 {
			c.FirstAbsent = trial
			break
		}
	}
	if c.Scored > 0 {
		c.Score = t.scoreSum / float64(c.Scored)
	}
	switch {
	case c.Missing == n:
		c.Verdict, c.AllMissing, c.Shown = verdict.VerdictError, true, int(t.firstError)
	case c.Judged() == 0:
		c.Verdict, c.Shown = verdict.VerdictSkipped, int(t.firstSk)
	case (stats.Case{Passed: c.Passed, Trials: c.Judged()}).Passes(rule.PassRate):
		c.Verdict, c.Shown = verdict.VerdictPass, int(t.firstPass)
	case c.Failed == 0:
		c.Verdict, c.Shown, c.BudgetUnjudged = verdict.VerdictError, int(t.firstError), t.budgetUnjudged
	default:
		c.Verdict, c.Shown = verdict.VerdictFail, int(t.firstFail)
	}
	return c
}
