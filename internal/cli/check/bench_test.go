package check

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// The collector's 100,000-case reference workload (internal/collector's benchmark, same recipe): an eval file of
// one case per record judged by file-level tool_trajectory, latency and cost evaluators, and a batch output of
// records of about 1.26 KB.
const benchCases = 100_000

// writeBenchWorkload writes eval.yaml and results.jsonl into dir.
func writeBenchWorkload(dir string, n int) error {
	_, err := testutil.WriteReferenceWorkload(filepath.Join(dir, "eval.yaml"), filepath.Join(dir, "results.jsonl"), n)
	return err
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
