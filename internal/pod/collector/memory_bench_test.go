package collector

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/memlimit"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// The collector's memory must not grow with the node's core count or with long lines (issue 11, item 7). The
// workload: a Batched output whose valid records are lines of exactly the 16 MiB line limit (half of them a long
// "text" holding a JSON answer, half a long structured answer; field_accuracy judges both), two lines over the limit (line errors)
// and ordinary short records in between. Gather runs in a fresh child process, so that its peak resident set
// (VmHWM) and peak live heap are its own, once with GOMAXPROCS 16 and once with GOMAXPROCS 2 to compare.
const (
	longLineOversized = 2
	longLineShort     = 200
	// longLineBytes is the length of each long valid line, without its newline: the parser's limit.
	longLineBytes = jsonlresult.DefaultMaxLineBytes
)

// writeLongLineWorkload writes the eval file, an output with records long valid lines and run.json into dir and
// returns run.json's path and the output's size.
func writeLongLineWorkload(dir string, records int) (string, int64, error) {
	p := podwire.Output{Root: filepath.Join(dir, "out")}
	if err := os.MkdirAll(p.Root, 0o755); err != nil {
		return "", 0, err
	}
	var eval strings.Builder
	eval.WriteString("$schema: agentv-eval-v2\nexecution:\n  evaluators:\n" +
		"    - {name: decision, type: field_accuracy, fields: [{path: decision, match: exact, required: true}]}\nevalcases:\n")
	var ids []string
	addCase := func() string {
		id := fmt.Sprintf("l%05d", len(ids))
		ids = append(ids, id)
		fmt.Fprintf(&eval, "  - {id: %s, input_messages: [{role: user, content: \"screen %s\"}], "+
			"expected_messages: [{role: assistant, content: {decision: CLEAR}}]}\n", id, id)
		return id
	}
	f, err := os.Create(p.BatchOutput())
	if err != nil {
		return "", 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	pad := func(n int) string { return strings.Repeat("a", max(n, 0)) }
	// A long line of exactly size bytes: the padding goes into text or into the structured answer's notes.
	long := func(id string, size int, inText bool) {
		head, tail := fmt.Sprintf(`{"id":%q,"output_messages":[{"role":"assistant","content":{"decision":"CLEAR","notes":"`, id), `"}}]}`
		if inText {
			// The text is the answer (it wins over output_messages), a JSON document itself for field_accuracy.
			head = fmt.Sprintf(`{"id":%q,"text":"{\"decision\":\"CLEAR\",\"notes\":\"`, id)
			tail = `\"}"}`
		}
		_, _ = w.WriteString(head + pad(size-len(head)-len(tail)) + tail + "\n")
	}
	short := func(id string) {
		_, _ = fmt.Fprintf(w, `{"id":%q,"output_messages":[{"role":"assistant","content":{"decision":"CLEAR"}}]}`+"\n", id)
	}
	perGap := longLineShort / (records + longLineOversized)
	for i := range records + longLineOversized {
		for range perGap {
			short(addCase())
		}
		size := longLineBytes
		if i >= records {
			size = longLineBytes + 4096 // over the limit: a line error, its case missing
		}
		long(addCase(), size, i%2 == 0)
	}
	// A bufio.Writer keeps its first error: Flush reports every write's.
	if err := w.Flush(); err != nil {
		return "", 0, err
	}
	if err := f.Close(); err != nil {
		return "", 0, err
	}
	evalPath := filepath.Join(dir, "eval.yaml")
	if err := os.WriteFile(evalPath, []byte(eval.String()), 0o644); err != nil {
		return "", 0, err
	}
	data, err := json.Marshal(benchRunConfig("longlines", evalPath, ids))
	if err != nil {
		return "", 0, err
	}
	cfgPath := filepath.Join(dir, "run.json")
	if err := os.WriteFile(cfgPath, data, 0o644); err != nil {
		return "", 0, err
	}
	st, err := os.Stat(p.BatchOutput())
	if err != nil {
		return "", 0, err
	}
	return cfgPath, st.Size(), nil
}

// BenchmarkGatherLongLines reports the peak resident set and heap of one Gather of the long-line workload (4 and
// 20 lines of 16 MiB) in a fresh process, with GOMAXPROCS 16 and 2 and with the collector container's memory
// limit, and times Gather in this process with GOMAXPROCS 16.
// Run it alone: go test -run '^$' -bench GatherLongLines -benchtime 1x ./internal/collector/
func BenchmarkGatherLongLines(b *testing.B) {
	for _, records := range []int{4, 20} {
		b.Run(fmt.Sprintf("lines=%d", records), func(b *testing.B) { benchLongLines(b, records) })
	}
}

func benchLongLines(b *testing.B, records int) {
	dir := b.TempDir()
	cfgPath, size, err := writeLongLineWorkload(dir, records)
	if err != nil {
		b.Fatalf("generate the workload: %v", err)
	}
	b.Logf("output: %.0f MiB, %d lines of %d bytes, %d over the limit, %d short", float64(size)/(1<<20),
		records, longLineBytes, longLineOversized, longLineShort)
	// The collector container's memory limit is 512Mi (256Mi before); `collector collect` sets the runtime's soft limit to 90% of
	// it (GOMEMLIMIT does the same for the child).
	limited := strconv.FormatInt(memlimit.Soft(256<<20), 10)
	limited512 := strconv.FormatInt(memlimit.Soft(512<<20), 10)
	for _, run := range []struct {
		name     string
		procs    int
		memLimit string
	}{{"procs16", 16, ""}, {"procs2", 2, ""}, {"procs16-limit256Mi", 16, limited}, {"procs16-limit512Mi", 16, limited512}} {
		m, err := longLinesChild(cfgPath, dir, run.procs, run.memLimit)
		if err != nil {
			b.Fatalf("%s: %v", run.name, err)
		}
		b.Logf("%s: peak RSS %.1f MiB, peak heap in use %.1f MiB, peak live heap after a GC %.1f MiB, %v GC cycles",
			run.name, m["VmHWM-KiB"]/1024, m["peak-heap-KiB"]/1024, m["peak-live-KiB"]/1024, m["gc-cycles"])
		b.ReportMetric(m["VmHWM-KiB"]/1024, "peak-RSS-MiB-"+run.name)
		b.ReportMetric(m["peak-heap-KiB"]/1024, "peak-heap-MiB-"+run.name)
		b.ReportMetric(m["peak-live-KiB"]/1024, "peak-live-MiB-"+run.name)
	}

	cfg, err := podwire.LoadRunConfig(cfgPath)
	if err != nil {
		b.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16))
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		g, err := Gather(context.Background(), GatherInput{Config: cfg, Output: podwire.Output{Root: filepath.Join(dir, "out")},
			EndCause: outcome.EndEnded, Now: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
		checkLongLines(b, g, len(cfg.CaseIDs))
	}
}

// checkLongLines fails unless every case was gathered and the over-long lines are line errors.
func checkLongLines(tb testing.TB, g *Gathered, cases int) {
	tb.Helper()
	if g.Summary.Total != int32(cases) || g.Summary.Missing != longLineOversized || g.Summary.ParseErrors != longLineOversized {
		tb.Fatalf("summary %+v, want %d cases, %d missing and %d parse errors", g.Summary, cases, longLineOversized, longLineOversized)
	}
	if g.Summary.Passed != int32(cases-longLineOversized) {
		tb.Fatalf("summary %+v, want every valid record passed", g.Summary)
	}
}

// figures are what TestGatherLongLinesHelper prints.
var figures = []string{"VmHWM-KiB", "peak-heap-KiB", "peak-live-KiB", "gc-cycles"}

// longLinesChild runs TestGatherLongLinesHelper in a child process with GOMAXPROCS procs and returns its figures.
func longLinesChild(cfgPath, dir string, procs int, memLimit string) (map[string]float64, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestGatherLongLinesHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "COLLECTOR_LONGLINES_CONFIG="+cfgPath, "COLLECTOR_LONGLINES_WORK="+dir,
		"COLLECTOR_LONGLINES_PROCS="+strconv.Itoa(procs), "GOMEMLIMIT="+memLimit)
	if memLimit == "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT=off")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	m := map[string]float64{}
	for _, l := range strings.Split(string(out), "\n") {
		for _, key := range figures {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), key+"="); ok {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					return nil, err
				}
				m[key] = f
			}
		}
	}
	if len(m) != len(figures) {
		return nil, fmt.Errorf("no figures in the helper's output: %s", out)
	}
	return m, nil
}

// TestGatherLongLinesHelper is the child process of BenchmarkGatherLongLines; it does nothing in a normal test
// run. It gathers the workload as `collector collect` does (the container's memory limit applied) with the
// GOMAXPROCS it is given, sampling the live heap meanwhile, and prints the peaks.
func TestGatherLongLinesHelper(t *testing.T) {
	cfgPath := os.Getenv("COLLECTOR_LONGLINES_CONFIG")
	if cfgPath == "" {
		t.Skip("helper process for BenchmarkGatherLongLines")
	}
	procs, err := strconv.Atoi(os.Getenv("COLLECTOR_LONGLINES_PROCS"))
	if err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(procs)
	cfg, err := podwire.LoadRunConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	memlimit.Apply(memlimit.CgroupFiles) // as `collector collect` does (GOMEMLIMIT, when set, wins)
	runtime.GC()

	stop := make(chan struct{})
	var peakHeap, peakLive, cycles uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		sample := []metrics.Sample{
			{Name: "/memory/classes/heap/objects:bytes"}, // live objects and dead ones not yet swept
			{Name: "/gc/heap/live:bytes"},                // the live heap marked by the last GC
			{Name: "/gc/cycles/total:gc-cycles"},
		}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peakHeap = max(peakHeap, sample[0].Value.Uint64())
			peakLive = max(peakLive, sample[1].Value.Uint64())
			cycles = sample[2].Value.Uint64()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	g, err := Gather(context.Background(), GatherInput{Config: cfg,
		Output: podwire.Output{Root: filepath.Join(os.Getenv("COLLECTOR_LONGLINES_WORK"), "out")}, EndCause: outcome.EndEnded, Now: time.Now()})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	checkLongLines(t, g, len(cfg.CaseIDs))
	if _, err := fmt.Printf("peak-heap-KiB=%d\npeak-live-KiB=%d\ngc-cycles=%d\n", peakHeap>>10, peakLive>>10, cycles); err != nil {
		t.Fatal(err)
	}
	printHWM(t)
}
