package launcher

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/safefile"
	"github.com/google/go-cmp/cmp"
)

func TestCostTally(t *testing.T) {
	type add struct {
		id    string
		nanos int64
	}
	tests := []struct {
		name   string
		budget int64
		adds   []add
		want   podwire.CostBudgetStop
		passed bool
	}{
		{name: "within the budget", budget: 10, adds: []add{{"alpha", 4}, {"beta", 6}},
			want: podwire.CostBudgetStop{CostNanoUSD: 10, MaxCostNanoUSD: 10, Cases: 2}},
		{name: "passed", budget: 10, adds: []add{{"alpha", 4}, {"beta", 7}},
			want: podwire.CostBudgetStop{CostNanoUSD: 11, MaxCostNanoUSD: 10, Cases: 2}, passed: true},
		{name: "a case counts once, at the most it reported", budget: 10, adds: []add{{"alpha", 4}, {"alpha", 2}, {"alpha", 6}},
			want: podwire.CostBudgetStop{CostNanoUSD: 6, MaxCostNanoUSD: 10, Cases: 1}},
		{name: "ids nobody asked for are not counted", budget: 10, adds: []add{{"zeta", 100}, {"", 100}},
			want: podwire.CostBudgetStop{CostNanoUSD: 0, MaxCostNanoUSD: 10}},
		{name: "a zero cost is a report", budget: 0, adds: []add{{"alpha", 0}},
			want: podwire.CostBudgetStop{CostNanoUSD: 0, MaxCostNanoUSD: 0, Cases: 1}},
		{name: "a zero budget passes at the first cost", budget: 0, adds: []add{{"alpha", 1}},
			want: podwire.CostBudgetStop{CostNanoUSD: 1, MaxCostNanoUSD: 0, Cases: 1}, passed: true},
		{name: "the sum saturates", budget: math.MaxInt64 - 1, adds: []add{{"alpha", math.MaxInt64}, {"beta", math.MaxInt64}},
			want: podwire.CostBudgetStop{CostNanoUSD: math.MaxInt64, MaxCostNanoUSD: math.MaxInt64 - 1, Cases: 2}, passed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCostTally(tt.budget, []string{"alpha", "beta", "gamma"})
			for _, a := range tt.adds {
				c.add(a.id, a.nanos)
			}
			if diff := cmp.Diff(&tt.want, c.stop()); diff != "" {
				t.Errorf("tally (-want +got):\n%s", diff)
			}
			if got := c.passed(); got != tt.passed {
				t.Errorf("passed %v, want %v", got, tt.passed)
			}
		})
	}
}

// tailFixture is an output directory, its batch output's path and a tail of it with a small line bound.
type tailFixture struct {
	path  string
	tally *costTally
	tail  *batchTail
}

func newTailFixture(t *testing.T, budget int64) *tailFixture {
	t.Helper()
	dir := t.TempDir()
	d, err := safefile.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	tally := newCostTally(budget, []string{"alpha", "beta", "gamma", "delta"})
	tail := newBatchTail(d, podwire.BatchOutputName, 256, tally)
	t.Cleanup(tail.close)
	return &tailFixture{path: filepath.Join(dir, podwire.BatchOutputName), tally: tally, tail: tail}
}

func (f *tailFixture) appendText(t *testing.T, s string) {
	t.Helper()
	w, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// The tail of a hostile runner's output: every step is what the runner does to the file before a poll, and the
// sum the tally holds after that poll.
func TestBatchTailHostile(t *testing.T) {
	type step struct {
		do   func(t *testing.T, f *tailFixture)
		want int64 // nanodollars
	}
	write := func(s string) func(*testing.T, *tailFixture) {
		return func(t *testing.T, f *tailFixture) { f.appendText(t, s) }
	}
	rewrite := func(s string) func(*testing.T, *tailFixture) {
		return func(t *testing.T, f *tailFixture) {
			if err := os.WriteFile(f.path, []byte(s), 0o644); err != nil { // O_TRUNC: the file shrinks
				t.Fatal(err)
			}
		}
	}
	replace := func(s string) func(*testing.T, *tailFixture) {
		return func(t *testing.T, f *tailFixture) {
			tmp := f.path + ".new"
			if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, f.path); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove := func(t *testing.T, f *tailFixture) {
		if err := os.Remove(f.path); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "records as they are appended", steps: []step{
			{write(`{"id":"alpha","text":"A","cost_usd":0.25}` + "\n"), 250_000_000},
			{write(`{"id":"beta","text":"B","cost_usd":1}` + "\n" + `{"id":"gamma","text":"C"}` + "\n"), 1_250_000_000},
		}},
		{name: "a line in the middle of being written counts once it ends", steps: []step{
			{write(`{"id":"alpha","text":"A","cos`), 0},
			{write(`t_usd":0.5}`), 0},
			{write("\n"), 500_000_000},
		}},
		{name: "malformed lines, wrong ids and bad costs count nothing", steps: []step{
			{write("not json\n{\"id\":7,\"cost_usd\":5}\n[1,2]\n{\"text\":\"no id\",\"cost_usd\":5}\n" +
				`{"id":"alpha","cost_usd":-3}` + "\n" + `{"id":"beta","cost_usd":NaN}` + "\n" + `{"id":"gamma","cost_usd":"5"}` + "\n" +
				`{"id":"delta","cost_usd":1e999}` + "\n" + `{"id":"zeta","cost_usd":5}` + "\n" + `{"id":"alpha","cost_usd":5} trailing` + "\n"), 0},
			{write(`{"id":"alpha","cost_usd":0.000000001}` + "\n"), 1},
		}},
		{name: "1e308 saturates", steps: []step{
			{write(`{"id":"alpha","cost_usd":1e308}` + "\n" + `{"id":"beta","cost_usd":1e308}` + "\n"), math.MaxInt64},
		}},
		{name: "a line over the bound is skipped, not held; the next one counts", steps: []step{
			{write(`{"id":"alpha","cost_usd":9,"text":"` + strings.Repeat("x", 200)), 0},
			{write(strings.Repeat("y", 300) + `"}` + "\n"), 0},
			{write(`{"id":"beta","cost_usd":2}` + "\n"), 2_000_000_000},
		}},
		{name: "a byte-order mark, CRLF and blank lines", steps: []step{
			{write("\xEF\xBB\xBF" + `{"id":"alpha","cost_usd":1}` + "\r\n\n  \n" + `{"id":"beta","cost_usd":1}` + "\r\n"), 2_000_000_000},
		}},
		{name: "reported, then truncated and rewritten lower: not taken back", steps: []step{
			{write(`{"id":"alpha","cost_usd":5}` + "\n" + `{"id":"beta","cost_usd":1}` + "\n"), 6_000_000_000},
			{rewrite(`{"id":"alpha","cost_usd":0}` + "\n"), 6_000_000_000},
			{write(`{"id":"gamma","cost_usd":1}` + "\n"), 7_000_000_000},
		}},
		{name: "replaced by a new file: read from its start, nothing counted twice", steps: []step{
			{write(`{"id":"alpha","cost_usd":1}` + "\n"), 1_000_000_000},
			{replace(`{"id":"alpha","cost_usd":1}` + "\n" + `{"id":"beta","cost_usd":1}` + "\n" + `{"id":"gamma","cost_usd":1}` + "\n"), 3_000_000_000},
		}},
		{name: "removed, then written again", steps: []step{
			{write(`{"id":"alpha","cost_usd":2}` + "\n"), 2_000_000_000},
			{remove, 2_000_000_000},
			{write(`{"id":"beta","cost_usd":2}` + "\n"), 4_000_000_000},
		}},
		{name: "a symlink to a file of costs is not followed", steps: []step{
			{func(t *testing.T, f *tailFixture) {
				target := filepath.Join(filepath.Dir(f.path), "elsewhere")
				if err := os.WriteFile(target, []byte(`{"id":"alpha","cost_usd":9}`+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, f.path); err != nil {
					t.Fatal(err)
				}
			}, 0},
		}},
		{name: "a FIFO is not opened (no hang)", steps: []step{
			{func(t *testing.T, f *tailFixture) {
				if err := unix.Mkfifo(f.path, 0o644); err != nil {
					t.Fatal(err)
				}
			}, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTailFixture(t, math.MaxInt64)
			for i, s := range tt.steps {
				s.do(t, f)
				f.tail.poll()
				if got := f.tally.stop().CostNanoUSD; got != s.want {
					t.Fatalf("after step %d: %d nanodollars, want %d", i, got, s.want)
				}
			}
		})
	}
}

// A poll stops reading at the record that passes the budget.
func TestBatchTailStopsAtTheBudget(t *testing.T) {
	f := newTailFixture(t, 1_500_000_000)
	f.appendText(t, `{"id":"alpha","cost_usd":1}`+"\n"+`{"id":"beta","cost_usd":1}`+"\n"+`{"id":"gamma","cost_usd":1}`+"\n")
	if !f.tail.poll() {
		t.Fatal("poll did not report the budget passed")
	}
	if diff := cmp.Diff(&podwire.CostBudgetStop{CostNanoUSD: 2_000_000_000, MaxCostNanoUSD: 1_500_000_000, Cases: 2}, f.tally.stop()); diff != "" {
		t.Errorf("stop (-want +got):\n%s", diff)
	}
}

// FuzzBatchTail: whatever the runner writes, in whatever pieces, the tally is the same as when it is read whole,
// and never more than the sum of what the requested cases reported.
func FuzzBatchTail(f *testing.F) {
	f.Add([]byte(`{"id":"alpha","cost_usd":1}`+"\n"+`{"id":"beta","cost_usd":2.5}`+"\n"), uint16(7))
	f.Add([]byte("\xEF\xBB\xBF"+`{"id":"alpha","cost_usd":1e308}`+"\r\n"), uint16(3))
	f.Add([]byte(strings.Repeat("x", 300)+"\n"+`{"id":"gamma","cost_usd":0.1}`), uint16(299))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		whole := &batchTail{maxLine: 256, tally: newCostTally(math.MaxInt64, []string{"alpha", "beta", "gamma"})}
		whole.consume(data)
		pieces := &batchTail{maxLine: 256, tally: newCostTally(math.MaxInt64, []string{"alpha", "beta", "gamma"})}
		at := int(cut) % (len(data) + 1)
		pieces.consume(data[:at])
		pieces.consume(data[at:])
		if a, b := whole.tally.stop(), pieces.tally.stop(); *a != *b {
			t.Fatalf("read whole %+v, in two pieces %+v", a, b)
		}
		if whole.offset != int64(len(data)) || pieces.offset != int64(len(data)) {
			t.Fatalf("offsets %d and %d, want %d", whole.offset, pieces.offset, len(data))
		}
	})
}

// launchCost runs Launch as fixture.launch does, reading a Batched output for the cost budget every 20 ms.
func (f *fixture) launchCost(t *testing.T, budget int64) (int, *podwire.LauncherReport) {
	t.Helper()
	f.Config.MaxCostNanoUSD = &budget
	w := podwire.WatchRunnerEnd(f.Pod.RunnerEnd(), false)
	code := Launch(context.Background(), Options{Config: f.Config.RunnerConfig(f.Config.EvalFile), Pod: f.Pod,
		Stdout: io.Discard, Stderr: io.Discard, Log: io.Discard, CostPoll: 20 * time.Millisecond})
	return code, reportOf(t, w, code)
}

// A Batched runner that reports a cost with every record and keeps going is stopped once the sum passes the
// budget; the records it wrote stay in its output, and the report says what was read and the budget.
func TestLaunchBatchedStoppedByCostBudget(t *testing.T) {
	f := newFixture(t, `for id in alpha beta gamma delta; do printf '{"id":"%s","text":"A","cost_usd":0.5}\n' $id >> {OUTPUT_FILE}; sleep 0.2; done; sleep 100`)
	start := time.Now()
	code, rep := f.launchCost(t, 1_000_000_000)
	if code != ExitCostBudgetExceeded {
		t.Errorf("exit code %d, want %d", code, ExitCostBudgetExceeded)
	}
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Errorf("took %s: the runner was not stopped", elapsed)
	}
	if diff := cmp.Diff(&podwire.CostBudgetStop{CostNanoUSD: 1_500_000_000, MaxCostNanoUSD: 1_000_000_000, Cases: 3}, rep.CostBudget); diff != "" {
		t.Errorf("cost budget (-want +got):\n%s", diff)
	}
	if rep.Runner == nil || !rep.Runner.Terminated {
		t.Errorf("runner %+v, want it stopped", rep.Runner)
	}
	data, err := os.ReadFile(f.Pod.Output().BatchOutput())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 3 {
		t.Errorf("%d records in the output, want the 3 written before the stop:\n%s", n, data)
	}
}

// A runner that reports no cost, or stays within the budget, is not stopped.
func TestLaunchBatchedWithinCostBudget(t *testing.T) {
	for name, template := range map[string]string{
		"no cost reported": `for id in alpha beta gamma delta; do printf '{"id":"%s","text":"A"}\n' $id >> {OUTPUT_FILE}; sleep 0.05; done`,
		"within":           `for id in alpha beta gamma delta; do printf '{"id":"%s","text":"A","cost_usd":0.25}\n' $id >> {OUTPUT_FILE}; sleep 0.05; done`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, template)
			code, rep := f.launchCost(t, 1_000_000_000)
			if code != 0 || rep.CostBudget != nil {
				t.Errorf("exit code %d, cost budget %+v; want 0 and none", code, rep.CostBudget)
			}
		})
	}
}

// PerCase: the budget is checked after each invocation; once passed no other case starts, and the cases that
// ran are neither failed nor lost.
func TestLaunchPerCaseStoppedByCostBudget(t *testing.T) {
	f := newFixture(t, `printf '{"text":"A","cost_usd":0.6}' > {OUTPUT_FILE}`)
	f.Config.Batching = "PerCase"
	code, rep := f.launchCost(t, 1_000_000_000)
	if code != ExitCostBudgetExceeded {
		t.Errorf("exit code %d, want %d", code, ExitCostBudgetExceeded)
	}
	if diff := cmp.Diff(&podwire.CostBudgetStop{CostNanoUSD: 1_200_000_000, MaxCostNanoUSD: 1_000_000_000, Cases: 2}, rep.CostBudget); diff != "" {
		t.Errorf("cost budget (-want +got):\n%s", diff)
	}
	if rep.Invocations != 2 || rep.FailedCases != 0 {
		t.Errorf("invocations %d, failed %d; want 2 and 0", rep.Invocations, rep.FailedCases)
	}
	for id, want := range map[string]bool{"alpha": true, "beta": true, "gamma": false, "delta": false} {
		if _, err := os.Stat(f.Pod.Output().CaseOutput(id)); (err == nil) != want {
			t.Errorf("output of %s: %v, want written %v", id, err, want)
		}
	}
}

// PerCase with several workers: the invocation still running when the budget passes is stopped, not failed.
func TestLaunchPerCaseStopsRunningInvocations(t *testing.T) {
	f := newFixture(t, `if [ {EVAL_ID} = alpha ]; then printf '{"text":"A","cost_usd":2}' > {OUTPUT_FILE}; else sleep 100; fi`)
	f.Config.Batching, f.Config.Workers = "PerCase", 2
	start := time.Now()
	code, rep := f.launchCost(t, 1_000_000_000)
	if code != ExitCostBudgetExceeded || rep.CostBudget == nil {
		t.Fatalf("exit code %d, cost budget %+v; want %d and a stop", code, rep.CostBudget, ExitCostBudgetExceeded)
	}
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Errorf("took %s: the running invocation was not stopped", elapsed)
	}
	if rep.Invocations != 2 || rep.FailedCases != 0 {
		t.Errorf("invocations %d, failed %d; want 2 (alpha, and beta stopped) and 0", rep.Invocations, rep.FailedCases)
	}
}

// PerCase: a budget passed by the last case stops nothing, so the run is not said to be stopped.
func TestLaunchPerCaseBudgetPassedByTheLastCase(t *testing.T) {
	f := newFixture(t, `printf '{"text":"A","cost_usd":0.6}' > {OUTPUT_FILE}`)
	f.Config.Batching = "PerCase"
	code, rep := f.launchCost(t, 2_000_000_000)
	if code != 0 || rep.CostBudget != nil || rep.Invocations != 4 {
		t.Errorf("exit code %d, cost budget %+v, invocations %d; want 0, none, 4", code, rep.CostBudget, rep.Invocations)
	}
}
