// Package compare compares the per-case results of a run with a baseline run's: newly failing and newly passing
// cases, cases only one of them has, and the mean score over the cases both have. The manager's baseline
// comparison (status.baseline, the Regressed condition) and `kubectl evalrun compare` share it. Pure: it reads
// result lines, wherever they were stored.
package compare

import (
	"fmt"
	"math/big"
	"strconv"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// entry is what the comparison keeps of one case's result.
type entry struct {
	verdict verdict.Verdict
	score   float64
	missing bool
	// seen marks a baseline case the run has a line for.
	seen bool
}

// passes reports a passing result; Fail, Error, Skipped and a missing record do not pass.
func (e entry) passes() bool { return !e.missing && e.verdict == verdict.VerdictPass }

// scored reports whether the case counts in the mean score: it has a record that was not skipped.
func (e entry) scored() bool { return !e.missing && e.verdict != verdict.VerdictSkipped }

// meanScore is the score the mean counts: the score of a judged case, 0 for an error.
func (e entry) meanScore() float64 {
	if e.verdict == verdict.VerdictError {
		return 0
	}
	return e.score
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
}

// HasScores reports whether any case counted in the mean scores.
func (c *Comparison) HasScores() bool { return c.Scored > 0 }

// Delta is the run's mean score minus the baseline's, at the precision the status shows.
func (c *Comparison) Delta() *big.Rat {
	run, _ := new(big.Rat).SetString(verdict.FormatScore(c.MeanScore))
	base, _ := new(big.Rat).SetString(verdict.FormatScore(c.BaselineMeanScore))
	return run.Sub(run, base)
}

// Builder builds a Comparison: every baseline line first (AddBaseline), then the run's (AddRun), then Finish.
type Builder struct {
	baseline      map[string]*entry
	baselineOrder []string
	limit         int
	out           Comparison
	runSeen       map[string]bool
	runSum        float64
	baseSum       float64
}

// NewBuilder returns a Builder whose id lists hold at most limit ids each (0: no bound).
func NewBuilder(limit int) *Builder {
	return &Builder{baseline: map[string]*entry{}, runSeen: map[string]bool{}, limit: limit}
}

// AddBaseline records one baseline result line. A repeated id keeps its first line.
func (b *Builder) AddBaseline(l *results.Line) {
	if _, dup := b.baseline[l.ID]; dup {
		return
	}
	b.baseline[l.ID] = &entry{verdict: l.Verdict, score: l.Score, missing: l.Missing}
	b.baselineOrder = append(b.baselineOrder, l.ID)
}

// AddRun compares one of the run's result lines with the baseline's. A repeated id keeps its first line.
func (b *Builder) AddRun(l *results.Line) {
	if b.runSeen[l.ID] {
		return
	}
	b.runSeen[l.ID] = true
	run := entry{verdict: l.Verdict, score: l.Score, missing: l.Missing}
	base, ok := b.baseline[l.ID]
	if !ok {
		if !run.missing {
			b.add(&b.out.MissingInBaseline, &b.out.MissingInBaselineCount, l.ID)
		}
		return
	}
	base.seen = true
	b.out.Shared++
	switch {
	case base.passes() && !run.passes():
		b.add(&b.out.NewlyFailing, &b.out.NewlyFailingCount, l.ID)
	case run.passes() && !base.passes():
		b.add(&b.out.NewlyPassing, &b.out.NewlyPassingCount, l.ID)
	}
	if run.missing && !base.missing {
		b.add(&b.out.MissingInRun, &b.out.MissingInRunCount, l.ID)
	}
	if base.missing && !run.missing {
		b.add(&b.out.MissingInBaseline, &b.out.MissingInBaselineCount, l.ID)
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
	for _, id := range b.baselineOrder {
		if e := b.baseline[id]; !e.seen && !e.missing {
			b.add(&b.out.MissingInRun, &b.out.MissingInRunCount, id)
		}
	}
	if b.out.Scored > 0 {
		b.out.MeanScore = b.runSum / float64(b.out.Scored)
		b.out.BaselineMeanScore = b.baseSum / float64(b.out.Scored)
	}
	return b.out
}

// Bounds are how much worse a run may be than its baseline before it counts as regressed.
type Bounds struct {
	// MaxNewFailures is how many newly failing cases are allowed.
	MaxNewFailures int
	// MaxScoreDrop, when set, is how far the mean score may fall (a decimal in [0, 1]).
	MaxScoreDrop *big.Rat
}

// BoundsOf reads spec.baseline's bounds.
func BoundsOf(spec *evalsv1alpha1.Baseline) (Bounds, error) {
	var out Bounds
	if spec.MaxNewFailures != nil {
		out.MaxNewFailures = int(*spec.MaxNewFailures)
	}
	if spec.MaxScoreDrop != nil {
		drop, ok := new(big.Rat).SetString(*spec.MaxScoreDrop)
		if !ok || drop.Sign() < 0 {
			return out, fmt.Errorf("baseline.maxScoreDrop %q is not a decimal in [0, 1]", *spec.MaxScoreDrop)
		}
		out.MaxScoreDrop = drop
	}
	return out, nil
}

// Regressed reports whether c exceeds the bounds, and says why (or why not) in one line.
func (c *Comparison) Regressed(b Bounds) (bool, string) {
	var why []string
	regressed := false
	failing := fmt.Sprintf("%d newly failing cases (at most %d allowed)", c.NewlyFailingCount, b.MaxNewFailures)
	if c.NewlyFailingCount > b.MaxNewFailures {
		regressed = true
		failing += examples(c.NewlyFailing, c.NewlyFailingCount)
	}
	why = append(why, failing)
	if b.MaxScoreDrop != nil && c.HasScores() {
		drop := new(big.Rat).Neg(c.Delta())
		if drop.Cmp(b.MaxScoreDrop) > 0 {
			regressed = true
			why = append(why, fmt.Sprintf("mean score fell by %s (at most %s allowed)", drop.FloatString(4), b.MaxScoreDrop.FloatString(4)))
		} else {
			why = append(why, fmt.Sprintf("mean score delta %s (a fall of at most %s allowed)", FormatDelta(c.Delta()), b.MaxScoreDrop.FloatString(4)))
		}
	}
	msg := why[0]
	for _, w := range why[1:] {
		msg += "; " + w
	}
	return regressed, msg
}

// examples names the first few ids of a list for a condition message.
func examples(ids []string, count int) string {
	const shown = 5
	if len(ids) == 0 {
		return ""
	}
	n := min(len(ids), shown)
	out := ": "
	for i, id := range ids[:n] {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(id)
	}
	if count > n {
		out += fmt.Sprintf(" and %d more", count-n)
	}
	return out
}

// FormatDelta formats a score delta with its sign and 4 decimals ("+0.1250", "-0.0500", "0.0000").
func FormatDelta(d *big.Rat) string {
	s := d.FloatString(4)
	if d.Sign() > 0 {
		return "+" + s
	}
	return s
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
	}
	if c.HasScores() {
		out.MeanScore = verdict.FormatScore(c.MeanScore)
		out.BaselineMeanScore = verdict.FormatScore(c.BaselineMeanScore)
		out.MeanScoreDelta = FormatDelta(c.Delta())
	}
	return out
}
