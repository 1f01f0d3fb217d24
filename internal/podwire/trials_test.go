package podwire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoadShardTrialRuns: in a resumed run with trials whose trials run different cases, a pod gets its shard's
// cases that its own trial runs (by index), which may be none; its result ConfigMaps stay its index's.
func TestLoadShardTrialRuns(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e"}
	cms := []string{"r0", "r1", "r2", "r3", "r4", "r5"}
	// Trial 1 runs a, c, d, e; trial 2 runs b only; trial 3 nothing.
	runs := [][]CaseSpan{{{0, 1}, {2, 5}}, {{1, 2}}, nil}
	tests := []struct {
		name        string
		shards      int32
		index       string
		wantIDs     []string
		wantIndexes []int
		wantCMs     []string
		wantNothing bool
	}{
		{name: "two shards: shard 0 trial 1", shards: 2, index: "0", wantIDs: []string{"a"}, wantIndexes: []int{0}, wantCMs: []string{"r0"}},
		{name: "two shards: shard 1 trial 1", shards: 2, index: "1", wantIDs: []string{"c", "d", "e"}, wantIndexes: []int{2, 3, 4}, wantCMs: []string{"r1"}},
		{name: "two shards: shard 0 trial 2", shards: 2, index: "2", wantIDs: []string{"b"}, wantIndexes: []int{1}, wantCMs: []string{"r2"}},
		{name: "two shards: shard 1 trial 2 runs nothing", shards: 2, index: "3", wantIDs: []string{}, wantIndexes: []int{}, wantCMs: []string{"r3"},
			wantNothing: true},
		{name: "two shards: shard 1 trial 3 runs nothing", shards: 2, index: "5", wantIDs: []string{}, wantIndexes: []int{}, wantCMs: []string{"r5"},
			wantNothing: true},
		{name: "one shard: trial 1", shards: 1, index: "0", wantIDs: []string{"a", "c", "d", "e"}, wantIndexes: []int{0, 2, 3, 4},
			wantCMs: []string{"r0", "r1"}},
		{name: "one shard: trial 2", shards: 1, index: "1", wantIDs: []string{"b"}, wantIndexes: []int{1}, wantCMs: []string{"r2", "r3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			per := int32(1)
			if tt.shards == 1 {
				per = 2
			}
			c := &RunConfig{Shards: tt.shards, Trials: 3, ResultConfigMapsPerShard: per, CaseIDs: ids, ResultConfigMaps: cms, TrialRuns: runs}
			if err := c.LoadShard(tt.index); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantIDs, c.CaseIDs); diff != "" {
				t.Errorf("case ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantIndexes, c.CaseIndexes); diff != "" {
				t.Errorf("case indexes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCMs, c.ResultConfigMaps); diff != "" {
				t.Errorf("result ConfigMaps (-want +got):\n%s", diff)
			}
			if c.NothingToRun != tt.wantNothing {
				t.Errorf("NothingToRun = %v, want %v", c.NothingToRun, tt.wantNothing)
			}
			if rc := c.RunnerConfig("/view/eval.yaml"); rc.NothingToRun != tt.wantNothing || len(rc.CaseIDs) != len(tt.wantIDs) {
				t.Errorf("the runner's configuration: nothing to run %v, %d cases", rc.NothingToRun, len(rc.CaseIDs))
			}
		})
	}
}

// TestTrialRunsValidate: a run.json's trialRuns are one list per trial of ascending, disjoint spans within the run's
// cases, with a source eval file for each pod to cut its cases from; anything else is refused, naming the field.
func TestTrialRunsValidate(t *testing.T) {
	tests := []struct {
		name string
		runs [][]CaseSpan
		ok   bool
	}{
		{name: "none", ok: true},
		{name: "one list per trial, one of them empty", runs: [][]CaseSpan{{{0, 2}}, {}, {{1, 3}}}, ok: true},
		{name: "a list short", runs: [][]CaseSpan{{{0, 2}}, {}}},
		{name: "a list too many", runs: [][]CaseSpan{{{0, 2}}, {}, {}, {}}},
		{name: "a span past the cases", runs: [][]CaseSpan{{{0, 4}}, {}, {}}},
		{name: "an empty span", runs: [][]CaseSpan{{{1, 1}}, {}, {}}},
		{name: "a reversed span", runs: [][]CaseSpan{{{2, 1}}, {}, {}}},
		{name: "overlapping spans", runs: [][]CaseSpan{{{0, 2}, {1, 3}}, {}, {}}},
		{name: "spans out of order", runs: [][]CaseSpan{{{2, 3}, {0, 1}}, {}, {}}},
		{name: "a negative start", runs: [][]CaseSpan{{{-1, 1}}, {}, {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			c.CaseIDs, c.Trials, c.TrialRuns = []string{"a", "b", "c"}, 3, tt.runs
			c.ShardConfigMaps, c.ResultConfigMapsPerShard, c.ResultConfigMaps = []string{"s0", "s1", "s2"}, 1, []string{"r0", "r1", "r2"}
			c.SourceEvalFile = "/evalrun/eval/eval.yaml"
			err := c.Validate()
			if tt.ok != (err == nil) {
				t.Fatalf("Validate() = %v, want ok %v", err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "trialRuns") {
				t.Errorf("the error %q does not name trialRuns", err)
			}
		})
	}
	c := validConfig()
	c.CaseIDs, c.Trials, c.TrialRuns = []string{"a", "b"}, 2, [][]CaseSpan{{{0, 1}}, {{1, 2}}}
	c.ShardConfigMaps, c.ResultConfigMapsPerShard, c.ResultConfigMaps = []string{"s0", "s1"}, 1, []string{"r0", "r1"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "sourceEvalFile (each pod cuts its own cases)") {
		t.Errorf("trialRuns without a source eval file: Validate() = %v", err)
	}
}

// validConfig is a run configuration of one pod that Validate accepts.
func validConfig() *RunConfig {
	return &RunConfig{EvalFile: "/evalrun/eval/eval.yaml", EvalFileView: EvalFileViewInputs, RunnerEvalFile: "/evalrun/view/eval.yaml",
		RunnerConfigFile: "/evalrun/view/launch.json", Shards: 1, PassThreshold: "0.8", CodeJudgeTimeoutSeconds: 30, CodeJudgeWorkers: 1,
		StatusBudgetBytes: 1 << 20, ResultsDeadlineSeconds: 60, MaxOutputBytes: 1 << 30,
		Launch: Launch{CommandTemplate: "run {EVAL_FILE}", Batching: "Batched", Workers: 1, KillGraceSeconds: 10, CollectorStartSeconds: 300}}
}

// TestRunsInTrial: whether a trial runs a case, from the trial's spans; every case of every trial without them.
func TestRunsInTrial(t *testing.T) {
	c := &RunConfig{Trials: 3, TrialRuns: [][]CaseSpan{{{0, 1}, {3, 5}, {7, 8}}, {}, {{0, 8}}}}
	var got []string
	for trial := 0; trial <= 4; trial++ {
		var b strings.Builder
		for i := range 9 {
			if c.RunsInTrial(i, trial) {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		got = append(got, b.String())
	}
	if diff := cmp.Diff([]string{".........", "x..xx..x.", ".........", "xxxxxxxx.", "........."}, got); diff != "" {
		t.Errorf("runs by trial 0..4 (-want +got):\n%s", diff)
	}
	all := &RunConfig{Trials: 3}
	if !all.RunsInTrial(5, 2) {
		t.Error("without trialRuns every trial runs every case")
	}
}

// TestSpansOf: the spans of a trial's cases cover exactly them, fewest spans first; they round-trip through run.json.
func TestSpansOf(t *testing.T) {
	for _, pattern := range []string{"", ".", "x", "xx.x", ".x..xxx.", "xxxxxxxx", "x.x.x.x."} {
		spans := SpansOf(len(pattern), func(i int) bool { return pattern[i] == 'x' })
		c := &RunConfig{Trials: 1, TrialRuns: [][]CaseSpan{spans}}
		data, err := json.Marshal(c.TrialRuns)
		if err != nil {
			t.Fatal(err)
		}
		var back [][]CaseSpan
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		c.TrialRuns = back
		var b strings.Builder
		for i := range pattern {
			if c.RunsInTrial(i, 1) {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		if b.String() != pattern || !validTrialRuns(back, 1, len(pattern)) {
			t.Errorf("SpansOf(%q) = %v (%s): covers %q", pattern, spans, data, b.String())
		}
		runs := 0
		for i := range pattern {
			if pattern[i] == 'x' && (i == 0 || pattern[i-1] != 'x') {
				runs++
			}
		}
		if len(spans) != runs {
			t.Errorf("SpansOf(%q) = %d spans, want one per run of cases: %d", pattern, len(spans), runs)
		}
	}
}

// TestLoadShardRejudgeSourcePod: a re-judge's pod reads the record ConfigMaps of its source's pod of the same shard
// and trial, counted with the source's shard count: a re-judge of 2 shards (its eval file has 2 cases) of a source
// of 3 shards × 2 trials reads, for its shard 1's trial 2 (index 3), the source's index 4, never the source's
// index 3 (shard 0's trial 2).
func TestLoadShardRejudgeSourcePod(t *testing.T) {
	src := []string{"src-0", "src-1", "src-2", "src-3", "src-4", "src-5"}
	for index, want := range map[string][]string{"0": {"src-0"}, "1": {"src-1"}, "2": {"src-3"}, "3": {"src-4"}} {
		c := &RunConfig{Shards: 2, Trials: 2, CaseIDs: []string{"a", "b"}, ResultConfigMapsPerShard: 1, ResultConfigMaps: []string{"r0", "r1", "r2", "r3"},
			Rejudge: &Rejudge{From: "source", FromUID: "u", ConfigMaps: src, ConfigMapsPerShard: 1, Shards: 3}}
		if err := c.LoadShard(index); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, c.Rejudge.ConfigMaps); diff != "" {
			t.Errorf("index %s reads (-want +got):\n%s", index, diff)
		}
	}
	// A run.json from before the source's shard count was recorded: pod i reads the source's pod i.
	c := &RunConfig{Shards: 2, CaseIDs: []string{"a", "b"}, ResultConfigMapsPerShard: 1, ResultConfigMaps: []string{"r0", "r1"},
		Rejudge: &Rejudge{From: "source", FromUID: "u", ConfigMaps: src[:2], ConfigMapsPerShard: 1}}
	if err := c.LoadShard("1"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"src-1"}, c.Rejudge.ConfigMaps); diff != "" {
		t.Errorf("shard 1 reads (-want +got):\n%s", diff)
	}
}
