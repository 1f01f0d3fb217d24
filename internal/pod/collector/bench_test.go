package collector

import (
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

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/memlimit"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"golang.org/x/sys/unix"
)

// The reference workload of the jsonlresult benchmark, generated here by the same recipe: 100,000 records of
// about 1.26 KB, each with an id, a ~150-character text, 3 trace events, output_messages with 3 tool calls and a
// final assistant message with structured content, and metrics. The eval file has one case per record, judged by
// file-level tool_trajectory, latency and cost evaluators.
const benchRecords = 100_000

var benchWork struct {
	once sync.Once
	dir  string
	cfg  *podwire.RunConfig
	size int64
	err  error
}

func benchWorkload(tb testing.TB) (*podwire.RunConfig, podwire.Output, int64) {
	tb.Helper()
	benchWork.once.Do(func() {
		dir, err := os.MkdirTemp("", "collector-bench-")
		if err != nil {
			benchWork.err = err
			return
		}
		benchWork.dir = dir
		benchWork.cfg, benchWork.size, benchWork.err = writeBenchWorkload(dir, benchRecords)
	})
	if benchWork.err != nil {
		tb.Fatalf("generate the workload: %v", benchWork.err)
	}
	return benchWork.cfg, podwire.Output{Root: filepath.Join(benchWork.dir, "out")}, benchWork.size
}

func removeBenchWorkload() {
	if benchWork.dir != "" {
		_ = os.RemoveAll(benchWork.dir)
	}
}

func writeBenchWorkload(dir string, n int) (*podwire.RunConfig, int64, error) {
	p := podwire.Output{Root: filepath.Join(dir, "out")}
	if err := os.MkdirAll(p.Root, 0o755); err != nil {
		return nil, 0, err
	}
	evalPath := filepath.Join(dir, "eval.yaml")
	ids, err := testutil.WriteReferenceWorkload(evalPath, p.BatchOutput(), n)
	if err != nil {
		return nil, 0, err
	}
	st, err := os.Stat(p.BatchOutput())
	if err != nil {
		return nil, 0, err
	}
	cfg := benchRunConfig("bench", evalPath, ids)
	// As the manager decides, having validated the same file: every case is judged by its id and the file's
	// evaluators, so the collector reads only the file's header.
	file, err := podwire.LoadEvalFile(cfg)
	if err != nil {
		return nil, 0, err
	}
	cfg.SharedEvaluators = evalfile.JudgedByID(file, false)
	return cfg, st.Size(), nil
}

// benchRunConfig is a resolved run configuration with every result ConfigMap a run can have and no output bound
// that a benchmark workload could reach.
func benchRunConfig(name, evalPath string, ids []string) *podwire.RunConfig {
	cfg := testutil.RunConfig(evalPath, ids, ": {OUTPUT_FILE}")
	cfg.RunName, cfg.MaxOutputBytes = name, 1<<40
	cfg.ResultConfigMaps = make([]string, podwire.MaxResultConfigMaps)
	for i := range cfg.ResultConfigMaps {
		cfg.ResultConfigMaps[i] = fmt.Sprintf("%s-results-%d", name, i)
	}
	return cfg
}

// BenchmarkParseOnly is the reference: jsonlresult's streaming parse of the workload, responses discarded.
func BenchmarkParseOnly(b *testing.B) {
	cfg, p, size := benchWorkload(b)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for range b.N {
		n := 0
		res, err := jsonlresult.ParseBatchFile(p.BatchOutput(), cfg.CaseIDs, jsonlresult.Options{}, func(*jsonlresult.Response) error {
			n++
			return nil
		})
		if err != nil || !res.OK() || n != benchRecords {
			b.Fatalf("parse: %v, %d responses", err, n)
		}
	}
	b.StopTimer()
	b.ReportMetric(cpu.seconds()/float64(b.N), "cpu-s/op")
}

// cpuClock measures this process's CPU time (user and system, all threads): on a shared machine it is a fairer
// comparison than wall time.
type cpuClock struct{ start float64 }

func startCPU() cpuClock { return cpuClock{processCPU()} }

func (c cpuClock) seconds() float64 { return processCPU() - c.start }

func processCPU() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkGather is collect end to end without the API, as the pod runs it: eval file, parse, judge, status
// budget and gzip'd result chunks. Every case of the workload inherits the file's evaluators, which read nothing of
// the case, so the eval file's header alone is read (podwire.RunConfig.SharedEvaluators, set as the manager sets it).
// It also reports the peak RSS of a fresh process doing one Gather.
func BenchmarkGather(b *testing.B) {
	cfg, p, size := benchWorkload(b)
	g := benchGather(b, cfg, size, func() GatherInput {
		return GatherInput{Config: cfg, Output: p, EndCause: outcome.EndEnded, Now: time.Now()}
	})
	reportChunks(b, g)
	reportRSS(b, cfg, "peak-RSS-MiB")
}

// BenchmarkGatherWholeEvalFile is BenchmarkGather for a file whose cases must be read (evaluators of their own,
// or evaluators that read them): the whole 8 MiB eval file of 100,000 cases is parsed, item by item. It also
// reports the peak RSS of a fresh process doing one Gather, and of one parsing the eval file alone.
func BenchmarkGatherWholeEvalFile(b *testing.B) {
	shared, p, size := benchWorkload(b)
	cfg := *shared
	cfg.SharedEvaluators = false
	g := benchGather(b, &cfg, size, func() GatherInput {
		return GatherInput{Config: &cfg, Output: p, EndCause: outcome.EndEnded, Now: time.Now()}
	})
	reportChunks(b, g)
	reportRSS(b, &cfg, "peak-RSS-MiB")
	reportRSS(b, &cfg, "evalfile-peak-RSS-MiB", rssEvalOnly+"=1")
}

// reportRSS reports the peak RSS of a fresh process doing one Gather with cfg (what it does is changed by env:
// rssEvalOnly, rssRejudge) as metric, and its peak heap (live objects and dead ones not yet swept, sampled every
// millisecond) as metric with "RSS" replaced by "heap".
func reportRSS(b *testing.B, cfg *podwire.RunConfig, metric string, env ...string) {
	if rss, heap, err := gatherRSS(cfg, env...); err != nil {
		b.Logf("%s not measured: %v", metric, err)
	} else {
		b.ReportMetric(rss, metric)
		b.ReportMetric(heap, strings.Replace(metric, "RSS", "heap", 1))
	}
}

// BenchmarkGatherParsedEvalFile is BenchmarkGather with the eval file parsed outside the timed region: parse,
// judge, status budget and gzip'd result chunks.
func BenchmarkGatherParsedEvalFile(b *testing.B) {
	cfg, p, size := benchWorkload(b)
	file, err := podwire.LoadEvalFile(cfg)
	if err != nil {
		b.Fatal(err)
	}
	g := benchGather(b, cfg, size, func() GatherInput {
		return GatherInput{Config: cfg, Output: p, EndCause: outcome.EndEnded, Now: time.Now(), EvalFile: file}
	})
	reportChunks(b, g)
}

func benchGather(b *testing.B, cfg *podwire.RunConfig, size int64, input func() GatherInput) *Gathered {
	b.Helper()
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	var g *Gathered
	for range b.N {
		var err error
		g, err = Gather(context.Background(), input())
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(cpu.seconds()/float64(b.N), "cpu-s/op")
	if want := int32(len(cfg.CaseIDs)); g.Summary.Total != want || g.Output.StoredCases != int(want) {
		b.Fatalf("gathered %d cases, stored %d, want %d", g.Summary.Total, g.Output.StoredCases, want)
	}
	return g
}

func reportChunks(b *testing.B, g *Gathered) {
	chunkBytes := 0
	for _, c := range g.Output.Chunks {
		chunkBytes += len(c.Data)
	}
	b.ReportMetric(float64(len(g.Output.Chunks)), "chunks")
	b.ReportMetric(float64(chunkBytes)/(1<<20), "chunk-MiB")
}

// The child process of gatherRSS does one Gather, unless its environment has one of these.
const (
	// rssEvalOnly (set to anything): only the eval file's whole parse.
	rssEvalOnly = "PODRUNTIME_RSS_EVAL_ONLY"
	// rssRejudge: a re-judge (rejudgeSnapshot, then Gather) of the records chunks in this directory, read one
	// file at a time as the collector reads its source's record ConfigMaps.
	rssRejudge = "PODRUNTIME_RSS_REJUDGE"
)

// gatherRSS runs one Gather in a child test process, with env added to its environment (rssEvalOnly,
// rssRejudge), and returns its peak resident set (VmHWM) and peak heap, in MiB.
func gatherRSS(cfg *podwire.RunConfig, env ...string) (rss, heap float64, err error) {
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return 0, 0, err
	}
	cfgPath := filepath.Join(benchWork.dir, "run.json")
	if err := os.WriteFile(cfgPath, cfgJSON, 0o644); err != nil {
		return 0, 0, err
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGatherRSSHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PODRUNTIME_RSS_CONFIG="+cfgPath, "PODRUNTIME_RSS_WORK="+benchWork.dir)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, out)
	}
	found := 0
	for _, l := range strings.Split(string(out), "\n") {
		for key, to := range map[string]*float64{"VmHWM-KiB=": &rss, "peak-heap-KiB=": &heap} {
			if v, ok := strings.CutPrefix(l, key); ok {
				kib, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					return 0, 0, err
				}
				*to = float64(kib) / 1024
				found++
			}
		}
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("no VmHWM or peak heap in the helper's output: %s", out)
	}
	return rss, heap, nil
}

// TestGatherRSSHelper is the child process of gatherRSS; it does nothing in a normal test run.
func TestGatherRSSHelper(t *testing.T) {
	cfgPath := os.Getenv("PODRUNTIME_RSS_CONFIG")
	if cfgPath == "" {
		t.Skip("helper process for BenchmarkGather")
	}
	cfg, err := podwire.LoadRunConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	memlimit.Apply(memlimit.CgroupFiles) // as `collector collect` does
	runtime.GC()
	stop := make(chan struct{})
	var peakHeap uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}} // live objects and dead ones not yet swept
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peakHeap = max(peakHeap, sample[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	printPeaks := func() {
		close(stop)
		wg.Wait()
		if _, err := fmt.Printf("peak-heap-KiB=%d\n", peakHeap>>10); err != nil {
			t.Fatal(err)
		}
		printHWM(t)
	}
	if dir := os.Getenv(rssRejudge); dir != "" {
		g := rejudgeFromFiles(t, cfg, dir)
		if g.Summary.Total != int32(len(cfg.CaseIDs)) {
			t.Fatalf("re-judged %d cases", g.Summary.Total)
		}
		printPeaks()
		return
	}
	if os.Getenv(rssEvalOnly) != "" {
		if _, err := podwire.LoadEvalFile(cfg); err != nil {
			t.Fatal(err)
		}
		printPeaks()
		return
	}
	g, err := Gather(context.Background(), GatherInput{Config: cfg, Output: podwire.Output{Root: filepath.Join(os.Getenv("PODRUNTIME_RSS_WORK"), "out")}, EndCause: outcome.EndEnded, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if g.Summary.Total != int32(len(cfg.CaseIDs)) {
		t.Fatalf("gathered %d cases", g.Summary.Total)
	}
	printPeaks()
}

func printHWM(t *testing.T) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			if _, err := fmt.Printf("VmHWM-KiB=%s\n", strings.TrimSuffix(strings.TrimSpace(v), " kB")); err != nil {
				t.Fatalf("report VmHWM: %v", err)
			}
		}
	}
}
