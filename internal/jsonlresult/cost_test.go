package jsonlresult

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCostNanos(t *testing.T) {
	for _, tc := range []struct {
		usd  float64
		want int64
	}{
		{0, 0}, {1, 1_000_000_000}, {0.0000000014, 1}, {0.0000000004, 0}, {12.5, 12_500_000_000},
		{-1, 0}, {math.NaN(), 0}, {math.Inf(1), math.MaxInt64}, {1e308, math.MaxInt64}, {9.3e9, math.MaxInt64},
	} {
		if got := CostNanos(tc.usd); got != tc.want {
			t.Errorf("CostNanos(%v) = %d, want %d", tc.usd, got, tc.want)
		}
	}
}

func TestFormatNanoUSD(t *testing.T) {
	for n, want := range map[int64]string{0: "0", -5: "0", 1: "0.000000001", 12_500_000_000: "12.5", math.MaxInt64: "9223372036.854775807"} {
		if got := FormatNanoUSD(n); got != want {
			t.Errorf("FormatNanoUSD(%d) = %q, want %q", n, got, want)
		}
	}
}

// RecordCost reads a line as ParseBatch does: a record's id and its valid cost, nothing of an invalid line.
func TestRecordCost(t *testing.T) {
	type result struct {
		ID   string
		Cost *float64
		OK   bool
	}
	cost := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		line string
		want result
	}{
		{`{"id":"a","text":"x","cost_usd":0.25}`, result{"a", cost(0.25), true}},
		{`{"id":"a","text":"x"}`, result{"a", nil, true}},
		{`{"id":"a","cost_usd":-1}`, result{"a", nil, true}},
		{`{"id":"a","cost_usd":"1"}`, result{"a", nil, true}},
		{`{"id":"a","cost_usd":1e999}`, result{"a", nil, true}},
		{`{"id":"a","cost_usd":1e308}`, result{"a", cost(1e308), true}},
		{`{"id":"a","cost_usd":NaN}`, result{}},
		{`{"id":7,"cost_usd":1}`, result{}},
		{`{"id":"  ","cost_usd":1}`, result{}},
		{`{"id":"a","cost_usd":1} x`, result{}},
		{`[1]`, result{}},
	} {
		id, c, ok := RecordCost([]byte(tc.line))
		if diff := cmp.Diff(tc.want, result{id, c, ok}); diff != "" {
			t.Errorf("RecordCost(%s) (-want +got):\n%s", tc.line, diff)
		}
	}
}
