package testutil

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"
)

// WriteReferenceWorkload writes the benchmarks' reference workload of n cases: an eval file (evalPath) of one case
// per record, judged by file-level tool_trajectory, latency and cost evaluators, and the runner's batch output
// (outputPath) of records of about 1.26 KB each, deterministic (a fixed seed). It returns the case ids in order.
func WriteReferenceWorkload(evalPath, outputPath string, n int) ([]string, error) {
	create := func(path string) (*os.File, *bufio.Writer, error) {
		f, err := os.Create(path)
		if err != nil {
			return nil, nil, err
		}
		return f, bufio.NewWriterSize(f, 1<<20), nil
	}
	ef, ew, err := create(evalPath)
	if err != nil {
		return nil, err
	}
	of, w, err := create(outputPath)
	if err != nil {
		return nil, err
	}
	// A bufio.Writer keeps its first error: Flush reports every write's.
	pf := func(w *bufio.Writer, format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }
	pf(ew, "%s", "$schema: agentv-eval-v2\nexecution:\n  evaluators:\n"+
		"    - {name: tools, type: tool_trajectory, mode: any_order, minimums: {search_registry: 1, score_risk: 1}}\n"+
		"    - {name: fast, type: latency, threshold: 1800}\n"+
		"    - {name: cheap, type: cost, budget: 0.008}\n"+
		"evalcases:\n")
	words := strings.Fields("the screening check found no match against the sanctions list and the customer record " +
		"is consistent with prior reviews; amount within threshold, jurisdiction AU, risk score low — décision: " +
		"CLEAR after \"manual\" review of 3 sources")
	tools := []string{"search_registry", "fetch_profile", "score_risk"}
	rng := rand.New(rand.NewPCG(11, 12))
	js := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	base := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	ids := make([]string, n)
	for i := range n {
		id := fmt.Sprintf("case-%06d", i)
		ids[i] = id
		pf(ew, "  - id: %s\n    input_messages: [{role: user, content: \"screen row %d\"}]\n", id, i)
		var text strings.Builder
		for text.Len() < 150 {
			text.WriteString(words[rng.IntN(len(words))])
			text.WriteByte(' ')
		}
		ts := func(k int) string {
			return base.Add(time.Duration(i*1000+k) * time.Millisecond).Format(time.RFC3339Nano)
		}
		pf(w, `{"id":%s,"text":%s,"trace":[`, js(id), js(text.String()))
		pf(w, `{"type":"model_step","timestamp":%q,"id":"s-%d","name":"plan","input":{"prompt_tokens":%d},`+
			`"output":{"completion_tokens":%d}},`, ts(0), i, 200+rng.IntN(800), 10+rng.IntN(90))
		pf(w, `{"type":"tool_call","timestamp":%q,"id":"c-%d-0","name":"search_registry","input":{"query":"row %d"}},`, ts(1), i, i)
		pf(w, `{"type":"tool_result","timestamp":%q,"id":"c-%d-0","output":{"hits":%d}}],`+
			`"output_messages":[{"role":"assistant","tool_calls":[`, ts(2), i, rng.IntN(4))
		for k, tool := range tools {
			if k > 0 {
				pf(w, ",")
			}
			pf(w, `{"tool":%q,"input":{"id":%q},"output":{"value":%d},"id":"c-%d-%d","timestamp":%q}`, tool, id, rng.IntN(100000), i, k, ts(3+k))
		}
		pf(w, `]},{"role":"assistant","content":{"decision":%q,"score":%.3f,"reasons":["threshold","jurisdiction AU"]},"timestamp":%q}],`,
			[]string{"CLEAR", "REVIEW", "BLOCK"}[rng.IntN(3)], rng.Float64(), ts(9))
		pf(w, `"token_usage":{"input":%d,"output":%d},"cost_usd":%.5f,"duration_ms":%d}`+"\n",
			1000+rng.IntN(500), 50+rng.IntN(50), rng.Float64()/100, 500+rng.IntN(2000))
	}
	for _, fw := range []struct {
		f *os.File
		w *bufio.Writer
	}{{ef, ew}, {of, w}} {
		if err := fw.w.Flush(); err != nil {
			return nil, err
		}
		if err := fw.f.Close(); err != nil {
			return nil, err
		}
	}
	return ids, nil
}
