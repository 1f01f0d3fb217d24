package check

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The collector's 100,000-case reference workload (internal/collector's benchmark, same recipe): an eval file of
// one case per record judged by file-level tool_trajectory, latency and cost evaluators, and a batch output of
// records of about 1.26 KB.
const benchCases = 100_000

// writeBenchWorkload writes eval.yaml and results.jsonl into dir.
func writeBenchWorkload(dir string, n int) error {
	create := func(name string) (*os.File, *bufio.Writer, error) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return nil, nil, err
		}
		return f, bufio.NewWriterSize(f, 1<<20), nil
	}
	ef, ew, err := create("eval.yaml")
	if err != nil {
		return err
	}
	of, w, err := create("results.jsonl")
	if err != nil {
		return err
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
	for i := range n {
		id := fmt.Sprintf("case-%06d", i)
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
		pf(w, `{"type":"model_step","timestamp":%q,"id":"s-%d","name":"plan","input":{"prompt_tokens":%d},"output":{"completion_tokens":%d}},`, ts(0), i, 200+rng.IntN(800), 10+rng.IntN(90))
		pf(w, `{"type":"tool_call","timestamp":%q,"id":"c-%d-0","name":"search_registry","input":{"query":"row %d"}},`, ts(1), i, i)
		pf(w, `{"type":"tool_result","timestamp":%q,"id":"c-%d-0","output":{"hits":%d}}],"output_messages":[{"role":"assistant","tool_calls":[`, ts(2), i, rng.IntN(4))
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
			return err
		}
		if err := fw.f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// checkArgs are the arguments of `collector check` on the workload in dir: judged, summary only (the format whose
// memory does not grow with the cases).
func checkArgs(dir string) []string {
	return []string{"--mode", "batch", "--eval", filepath.Join(dir, "eval.yaml"), "--output",
		filepath.Join(dir, "results.jsonl"), "--format", "summary"}
}

// BenchmarkCheck100k runs `collector check --format summary` on the 100,000-case reference workload: judging
// every case, as the in-pod collector does. It also reports the peak RSS (VmHWM) of a fresh process doing one
// check.
func BenchmarkCheck100k(b *testing.B) {
	dir := b.TempDir()
	if err := writeBenchWorkload(dir, benchCases); err != nil {
		b.Fatalf("generate the workload: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var stderr strings.Builder
		if code := Main(context.Background(), checkArgs(dir), io.Discard, &stderr); code != ExitOK {
			b.Fatalf("exit code %d: %s", code, stderr.String())
		}
	}
	b.StopTimer()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckRSSHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CHECK_RSS_WORK="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("peak RSS: %v: %s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM-KiB="); ok {
			if kib, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				b.ReportMetric(float64(kib)/1024, "peak-RSS-MiB")
				return
			}
		}
	}
	b.Logf("peak RSS not measured: no VmHWM in %s", out)
}

// TestCheckRSSHelper is the child process of BenchmarkCheck100k; it does nothing in a normal test run.
func TestCheckRSSHelper(t *testing.T) {
	dir := os.Getenv("CHECK_RSS_WORK")
	if dir == "" {
		t.Skip("helper process for BenchmarkCheck100k")
	}
	runtime.GC()
	var stderr strings.Builder
	if code := Main(context.Background(), checkArgs(dir), io.Discard, &stderr); code != ExitOK {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			if _, err := fmt.Printf("VmHWM-KiB=%s\n", strings.TrimSuffix(strings.TrimSpace(v), " kB")); err != nil {
				t.Fatal(err)
			}
		}
	}
}
