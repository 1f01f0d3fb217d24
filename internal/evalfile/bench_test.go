package evalfile

import (
	"fmt"
	"strings"
	"testing"
)

// benchEvalFile is the eval file of the collector's collection benchmark: n cases judged by file-level
// tool_trajectory, latency and cost evaluators, one user message each.
func benchEvalFile(n int) []byte {
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\nexecution:\n  evaluators:\n" +
		"    - {name: tools, type: tool_trajectory, mode: any_order, minimums: {search_registry: 1, score_risk: 1}}\n" +
		"    - {name: fast, type: latency, threshold: 1800}\n" +
		"    - {name: cheap, type: cost, budget: 0.008}\n" +
		"evalcases:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - id: case-%06d\n    input_messages: [{role: user, content: \"screen row %d\"}]\n", i, i)
	}
	return []byte(b.String())
}

// BenchmarkParse parses a 100,000-case eval file (8 MiB), the size of the collection benchmark's.
func BenchmarkParse(b *testing.B) {
	data := benchEvalFile(100_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		if f.NumCases() != 100_000 {
			b.Fatalf("parsed %d cases", f.NumCases())
		}
	}
}

// BenchmarkParseWholeTree is Parse as it was before cutting the file into items: the whole YAML tree first.
func BenchmarkParseWholeTree(b *testing.B) {
	data := benchEvalFile(100000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseWholeTreeStreaming(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCaseAt builds every case of the 100,000-case file once, as judging a run does (cases kept as the place
// of their text are built again when asked for).
func BenchmarkCaseAt(b *testing.B) {
	f, err := Parse(benchEvalFile(100_000))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range f.NumCases() {
			if c := f.CaseAt(i); c.Index != i {
				b.Fatalf("case %d has index %d", i, c.Index)
			}
		}
	}
}
