package suite42

import (
	"fmt"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// benchSuite42 is the 4.42 suite of the same n tests (file-level tool-trajectory, latency and cost graders), inline
// or, jsonl set, as a JSONL file beside it.
func benchSuite42(n int, jsonl bool) (suite []byte, opt evalfile.ParseOption) {
	var b, lines strings.Builder
	b.WriteString("assertions:\n" +
		"  - {name: tools, type: tool-trajectory, mode: any_order, minimums: {search_registry: 1, score_risk: 1}}\n" +
		"  - {name: fast, type: latency, threshold: 1800}\n" +
		"  - {name: cheap, type: cost, budget: 0.008}\n")
	if jsonl {
		b.WriteString("tests: ./cases.jsonl\n")
		for i := range n {
			fmt.Fprintf(&lines, "{\"id\": \"case-%06d\", \"input\": \"screen row %d\", \"criteria\": \"screened\"}\n", i, i)
		}
	} else {
		b.WriteString("tests:\n")
		for i := range n {
			fmt.Fprintf(&b, "  - {id: case-%06d, input: \"screen row %d\", criteria: screened}\n", i, i)
		}
	}
	files := map[string]string{"evals/cases.jsonl": lines.String()}
	return []byte(b.String()), evalfile.WithFiles(bundleOf(b.String(), files), suiteName)
}

// BenchmarkParseSuite42 parses a 4.42 suite of 10,000 tests, inline and as a JSONL file (a 4.42 suite is read whole,
// its cases built).
func BenchmarkParseSuite42(b *testing.B) {
	for _, jsonl := range []bool{false, true} {
		b.Run(fmt.Sprintf("jsonl=%v", jsonl), func(b *testing.B) {
			data, opt := benchSuite42(10_000, jsonl)
			b.ReportAllocs()
			for b.Loop() {
				f, err := evalfile.Parse(data, opt)
				if err != nil {
					b.Fatal(err)
				}
				if f.NumCases() != 10_000 {
					b.Fatalf("parsed %d cases", f.NumCases())
				}
			}
		})
	}
}
