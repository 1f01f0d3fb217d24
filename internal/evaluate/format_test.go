package evaluate

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/google/go-cmp/cmp"
)

// The judging notes are built without fmt; these tests hold them to the fmt formats they replaced.

func TestDescribeCallsText(t *testing.T) {
	for _, n := range []int{0, 1, 3, 20, 21, 45} {
		calls := make([]toolCall, n)
		names := make([]string, 0, n)
		for i := range calls {
			calls[i].name = fmt.Sprintf("tool_%d", i)
			if i < 20 {
				names = append(names, calls[i].name)
			}
		}
		want := "the candidate made no tool calls (none in output_messages or trace)"
		if n > 20 {
			names = append(names, fmt.Sprintf("... %d more", n-20))
		}
		if n > 0 {
			want = fmt.Sprintf("%d tool calls from %s: %s", n, sourceTrace, strings.Join(names, ", "))
		}
		if got := describeCalls(calls, sourceTrace); got != want {
			t.Errorf("describeCalls(%d calls) = %q, want %q", n, got, want)
		}
	}
}

func TestMetricNotesText(t *testing.T) {
	for _, x := range []float64{0, math.Copysign(0, -1), 0.00005, 0.0079999, 0.008, 12.5, 1800, 1e21, 123456789} {
		for _, limit := range []float64{0.008, 1800} {
			cst, lat := cost(&evalfile.CostConfig{BudgetUSD: limit}, &jsonlresult.Response{CostUSD: &x}),
				latency(&evalfile.LatencyConfig{ThresholdMs: limit}, &jsonlresult.Response{DurationMs: &x})
			wantCost := []string{fmt.Sprintf("cost $%.4f (budget $%.4f)", x, limit)}
			wantLat := []string{fmt.Sprintf("took %sms by the runner's own duration_ms, a claim the launcher did not measure (threshold %sms)", fmtNum(x), fmtNum(limit))}
			if x <= limit {
				wantCost = append(wantCost, fmt.Sprintf("cost $%.4f <= $%.4f budget", x, limit))
				wantLat = append(wantLat, fmt.Sprintf("claimed duration %sms <= %sms", fmtNum(x), fmtNum(limit)))
			} else {
				wantCost = append(wantCost, fmt.Sprintf("cost $%.4f > $%.4f budget", x, limit))
				wantLat = append(wantLat, fmt.Sprintf("claimed duration %sms > %sms", fmtNum(x), fmtNum(limit)))
			}
			notes := func(o outcome) []string { return append(append([]string{o.reasoning}, o.hits...), o.misses...) }
			if diff := cmp.Diff(wantCost, notes(cst)); diff != "" {
				t.Errorf("cost(%v, budget %v) notes (-want +got):\n%s", x, limit, diff)
			}
			if diff := cmp.Diff(wantLat, notes(lat)); diff != "" {
				t.Errorf("latency(%v, threshold %v) notes (-want +got):\n%s", x, limit, diff)
			}
		}
	}
}

func TestAnyOrderNotesText(t *testing.T) {
	calls := []toolCall{{name: "a"}, {name: "b"}, {name: "a"}}
	mins := []evalfile.ToolMinimum{{Tool: "a", Count: 2}, {Tool: "b", Count: 2}, {Tool: "c", Count: 1}}
	o := anyOrder(mins, calls)
	want := outcome{score: 1.0 / 3,
		hits:   []string{"a: called 2 times (at least 2 required)"},
		misses: []string{"b: called 1 time (at least 2 required)", "c: called 0 times (at least 1 required)"}}
	if diff := cmp.Diff(want, o, cmp.AllowUnexported(outcome{})); diff != "" {
		t.Errorf("anyOrder (-want +got):\n%s", diff)
	}
	many := make([]toolCall, 300)
	for i := range many {
		many[i].name = "a"
	}
	if o := anyOrder(mins, many); o.hits[0] != "a: called 300 times (at least 2 required)" {
		t.Errorf("anyOrder(300 calls) hits = %q", o.hits)
	}
}
