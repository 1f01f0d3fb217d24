package compare

import (
	"fmt"
	"math/big"
	"strconv"
)

// countRegressed is the Count test: whether c exceeds the bounds (more newly failing cases than MaxNewFailures,
// or a mean score drop above MaxScoreDrop), and why (or why not) in one line.
func (c *Comparison) countRegressed(b Bounds) (bool, string) {
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
