package evalsource

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// peakHeap runs fn and returns the most heap its objects took while it ran (sampled every 200µs), in bytes.
func peakHeap(fn func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	idle := read()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	fn()
	close(done)
	wg.Wait()
	return max(peak, read()) - min(idle, peak)
}

// aliasBombs are the alias bombs the manager must refuse within a bounded heap: issue 37's (a 100 KB string, 20
// aliases to it in a message list, 1,500 cases aliasing the list: 160 KB inline; EVALRUN_BOMB_CASES changes the
// number of cases, to measure a manager without the bound at a fraction of it), and bombs of a million tiny
// values, read one case at a time and as one whole tree.
func aliasBombs() []struct {
	name string
	data []byte
} {
	cases := 1500
	if v, err := strconv.Atoi(os.Getenv("EVALRUN_BOMB_CASES")); err == nil && v > 0 {
		cases = v
	}
	return []struct {
		name string
		data []byte
	}{
		{"string", testutil.AliasBomb(100_000, 20, cases)},
		{"tiny-values", testutil.AliasBombOfTinyValues(1000, 1100, true)},
		{"tiny-values-whole-tree", testutil.AliasBombOfTinyValues(1000, 1100, false)},
	}
}

// inlineRun is an EvalRun whose inline eval file is data.
func inlineRun(data []byte) *evalsv1alpha1.EvalRun {
	text := string(data)
	return testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.EvalFile = evalsv1alpha1.EvalFileSource{Inline: &text} })
}

// BenchmarkManagerMemoryAliasBomb validates alias bombs as the manager does on reconcile (ValidateEvalFile of the
// inline text) and reports B/op and the peak heap the call took (peak-heap-MiB). Before the byte bound on alias
// expansion, issue 37's bomb grew the heap by about 2 MiB per case (3 GiB at 1,500 cases) and the tiny-values one
// to 344 MiB; now each ends InvalidEvalFile within the bound.
func BenchmarkManagerMemoryAliasBomb(b *testing.B) {
	for _, bomb := range aliasBombs() {
		b.Run(bomb.name, func(b *testing.B) {
			run := inlineRun(bomb.data)
			var peak uint64
			var invalid string
			b.ReportAllocs()
			for b.Loop() {
				peak = max(peak, peakHeap(func() { _, invalid = ValidateEvalFile(run, bomb.data) }))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.Logf("%d bytes inline; InvalidEvalFile message: %.200s", len(bomb.data), invalid)
		})
	}
}

// TestManagerRefusesAliasBombs: each bomb is InvalidEvalFile with a message naming the bound, and the manager's
// heap while it decides so stays far below its 256Mi limit.
func TestManagerRefusesAliasBombs(t *testing.T) {
	for _, bomb := range aliasBombs() {
		t.Run(bomb.name, func(t *testing.T) {
			var invalid string
			peak := peakHeap(func() { _, invalid = ValidateEvalFile(inlineRun(bomb.data), bomb.data) })
			if !strings.Contains(invalid, "expands the file by more than 16 MiB") {
				t.Errorf("InvalidEvalFile message %q does not name the expansion bound", invalid)
			}
			if peak > 96<<20 {
				t.Errorf("validating the alias bomb took %d MiB of heap, want under 96 MiB", peak>>20)
			}
			t.Logf("%d bytes: peak heap %d MiB: %.160s", len(bomb.data), peak>>20, invalid)
		})
	}
}
