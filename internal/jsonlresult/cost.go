package jsonlresult

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// NanosPerUSD is the unit a reported cost_usd is counted in: a nanodollar (1e-9 USD).
const NanosPerUSD = 1_000_000_000

// CostNanos converts a reported cost_usd to whole nanodollars, rounded: 0 for a value that is not a non-negative
// number (the parser drops those; a caller never trusts that it did) and math.MaxInt64 for one past it (1e308,
// +Inf), so sums of it can saturate instead of wrapping. It is the one conversion of a runner's cost: the
// collector's status.cost and the launcher's cost budget (spec.target.maxCostUSD) both count with it.
func CostNanos(usd float64) int64 {
	if !(usd >= 0) { // NaN or negative
		return 0
	}
	x := math.Round(usd * NanosPerUSD)
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(x)
}

// RecordCost reads one non-blank line of a batch output (without its line ending) as ParseBatch reads it and
// returns its record's id and cost_usd (nil when the record has none, or one that is not a non-negative number).
// ok is false for a line that is not a valid record. A line that is valid JSON but too long for ParseBatch is the
// caller's to refuse (Options.MaxLineBytes).
func RecordCost(line []byte) (id string, cost *float64, ok bool) {
	p := recordParser{alone: true}
	resp, msg := p.parseLine(line)
	if msg != "" {
		return "", nil, false
	}
	return resp.ID, resp.CostUSD, true
}

// FormatNanoUSD writes nanodollars as status.cost's decimal dollar amount: dollars, and the fraction without its
// trailing zeros ("0", "12.5", "0.000000001"); a negative amount is written as "0".
func FormatNanoUSD(n int64) string {
	n = max(n, 0)
	whole, frac := n/NanosPerUSD, n%NanosPerUSD
	if frac == 0 {
		return strconv.FormatInt(whole, 10)
	}
	return strings.TrimRight(fmt.Sprintf("%d.%09d", whole, frac), "0")
}
