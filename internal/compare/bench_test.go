package compare

import (
	"fmt"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// BenchmarkCompare100k compares two runs of 100,000 cases (every 50th case flipped), lines already decoded: the
// comparison's own cost and memory, what the manager adds to reading both runs' stored results.
func BenchmarkCompare100k(b *testing.B) {
	const n = 100_000
	base := make([]*results.Line, n)
	run := make([]*results.Line, n)
	for i := range n {
		id := fmt.Sprintf("case-%06d", i)
		base[i] = line(id, verdict.VerdictPass, 1)
		run[i] = line(id, verdict.VerdictPass, 1)
		if i%50 == 0 {
			run[i] = line(id, verdict.VerdictFail, 0)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		c := NewBuilder(100)
		for _, l := range base {
			c.AddBaseline(l)
		}
		for _, l := range run {
			c.AddRun(l)
		}
		if got := c.Finish(); got.NewlyFailingCount != n/50 {
			b.Fatalf("newly failing %d", got.NewlyFailingCount)
		}
	}
}
