package podwire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShardRange: the shards of n cases cover every case exactly once, in order, and differ in size by at most one.
func TestShardRange(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100, 100_000} {
		for _, shards := range []int{1, 2, 3, 10, 1000} {
			next, smallest, largest := 0, n, 0
			for i := range max(shards, 1) {
				lo, hi := ShardRange(n, shards, i)
				if lo != next || hi < lo {
					t.Fatalf("ShardRange(%d, %d, %d) = [%d, %d), want it to start at %d", n, shards, i, lo, hi, next)
				}
				next = hi
				smallest, largest = min(smallest, hi-lo), max(largest, hi-lo)
			}
			if next != n {
				t.Errorf("the %d shards of %d cases end at %d", shards, n, next)
			}
			if largest-smallest > 1 {
				t.Errorf("the %d shards of %d cases hold %d to %d cases", shards, n, smallest, largest)
			}
		}
	}
}

func TestLoadShard(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e"}
	sixCMs := []string{"r0", "r1", "r2", "r3", "r4", "r5"}
	tests := []struct {
		name          string
		shards        int32
		trials        int32
		per           int32
		cms           []string
		index         string
		wantIDs       []string
		wantCMs       []string
		wantShard     int32
		wantTrial     int32
		wantRunnerTry int32 // the RunnerConfig's Trial
		wantErr       string
	}{
		{name: "one shard, no index", shards: 1, wantIDs: ids, wantCMs: []string{"r0", "r1", "r2", "r3"}, wantTrial: 1},
		{name: "one shard, index 0", shards: 1, index: "0", wantIDs: ids, wantCMs: []string{"r0", "r1", "r2", "r3"}, wantTrial: 1},
		{name: "first of two", shards: 2, per: 2, index: "0", wantIDs: []string{"a", "b"}, wantCMs: []string{"r0", "r1"}, wantTrial: 1},
		{name: "last of two", shards: 2, per: 2, index: "1", wantIDs: []string{"c", "d", "e"}, wantCMs: []string{"r2", "r3"}, wantShard: 1, wantTrial: 1},
		{name: "an index past the shards", shards: 2, index: "2", wantErr: "shard 2 does not exist"},
		{name: "a negative index", shards: 2, index: "-1", wantErr: "not a shard index"},
		{name: "not a number", shards: 2, index: "1; rm -rf /", wantErr: "not a shard index"},
		{name: "sharded without an index", shards: 2, wantErr: EnvShardIndex + " is not set"},
		{name: "trials: the first trial of the second shard", shards: 2, trials: 3, per: 1, cms: sixCMs, index: "1",
			wantIDs: []string{"c", "d", "e"}, wantCMs: []string{"r1"}, wantShard: 1, wantTrial: 1, wantRunnerTry: 1},
		{name: "trials: the third trial of the first shard", shards: 2, trials: 3, per: 1, cms: sixCMs, index: "4",
			wantIDs: []string{"a", "b"}, wantCMs: []string{"r4"}, wantShard: 0, wantTrial: 3, wantRunnerTry: 3},
		{name: "trials of one shard: every case in each pod", shards: 1, trials: 3, per: 2, cms: sixCMs, index: "2",
			wantIDs: ids, wantCMs: []string{"r4", "r5"}, wantShard: 0, wantTrial: 3, wantRunnerTry: 3},
		{name: "trials: an index past the pods", shards: 2, trials: 3, per: 1, cms: sixCMs, index: "6",
			wantErr: "index 6 does not exist: the run has 6 pods (2 shards × 3 trials)"},
		{name: "trials of one shard without an index", shards: 1, trials: 2, per: 1, cms: sixCMs[:2],
			wantErr: "the run has 2 pods (1 shards × 2 trials) but " + EnvShardIndex + " is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cms := tt.cms
			if cms == nil {
				cms = []string{"r0", "r1", "r2", "r3"}
			}
			c := &RunConfig{Shards: tt.shards, Trials: tt.trials, ResultConfigMapsPerShard: tt.per, CaseIDs: ids, ResultConfigMaps: cms}
			err := c.LoadShard(tt.index)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LoadShard(%q) = %v, want an error with %q", tt.index, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantIDs, c.CaseIDs); diff != "" {
				t.Errorf("case ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCMs, c.ResultConfigMaps); diff != "" {
				t.Errorf("result ConfigMaps (-want +got):\n%s", diff)
			}
			if c.ShardIndex != tt.wantShard || c.Trial != tt.wantTrial {
				t.Errorf("shard %d, trial %d; want shard %d, trial %d", c.ShardIndex, c.Trial, tt.wantShard, tt.wantTrial)
			}
			rc := c.RunnerConfig("/view/eval.yaml")
			if rc.Trial != tt.wantRunnerTry || rc.Attempt() != int(c.Trial) {
				t.Errorf("the runner's trial %d (attempt %d); want %d (attempt %d)", rc.Trial, rc.Attempt(), tt.wantRunnerTry, c.Trial)
			}
		})
	}
}

// TestPodIndex: every completion index of a run of shards × trials is one (shard, trial), trial-major, and back.
func TestPodIndex(t *testing.T) {
	for _, shards := range []int{1, 2, 7, 1000} {
		for _, trials := range []int{1, 3, 100} {
			if shards*trials > 1000 {
				continue
			}
			for i := range shards * trials {
				shard, trial := ShardTrial(i, shards)
				if shard < 0 || shard >= shards || trial < 1 || trial > trials {
					t.Fatalf("ShardTrial(%d, %d) = (%d, %d), outside %d shards × %d trials", i, shards, shard, trial, shards, trials)
				}
				if got := PodIndex(shard, trial, shards); got != i {
					t.Fatalf("PodIndex(%d, %d, %d) = %d, want %d", shard, trial, shards, got, i)
				}
				// Trial-major: every shard's first trial comes before any second.
				if want := (trial-1)*shards + shard; i != want {
					t.Fatalf("index %d is shard %d trial %d, want index %d", i, shard, trial, want)
				}
			}
		}
	}
}

func TestIDsRoundTrip(t *testing.T) {
	data, err := EncodeIDs([]string{"b", "c"}, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	var c RunConfig
	if err := c.LoadIDs(data); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b", "c"}, c.CaseIDs); diff != "" {
		t.Errorf("case ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, c.AllCaseIDs); diff != "" {
		t.Errorf("all case ids (-want +got):\n%s", diff)
	}
	if err := c.LoadIDs([]byte("not gzip")); err == nil || !strings.Contains(err.Error(), "the case ids file") {
		t.Errorf("LoadIDs(garbage) = %v, want an error naming the case ids file", err)
	}
}

// TestJudgeContainerNames: every judge container's name is recognised, and nothing else is.
func TestJudgeContainerNames(t *testing.T) {
	seen := map[string]bool{}
	for i := range MaxJudgeContainers {
		name, vol := JudgeContainer(i), JudgeVolume(i)
		if !IsJudgeContainer(name) {
			t.Errorf("IsJudgeContainer(%q) = false", name)
		}
		if seen[name] || seen[vol] {
			t.Errorf("judge %d reuses a name: %q or %q", i, name, vol)
		}
		seen[name], seen[vol] = true, true
	}
	for _, name := range []string{ContainerRunner, ContainerCollector, "judge-", "judge-x", "judge--1", fmt.Sprintf("%s-01", ContainerJudge), "judges"} {
		if IsJudgeContainer(name) {
			t.Errorf("IsJudgeContainer(%q) = true", name)
		}
	}
}

func TestOutcomeDescribe(t *testing.T) {
	code := func(c int32) *int32 { return &c }
	tests := []struct {
		o         Outcome
		want      string
		succeeded bool
	}{
		{Outcome{ExitCode: code(0)}, "exited with code 0", true},
		{Outcome{ExitCode: code(7)}, "exited with code 7", false},
		{Outcome{TimedOut: true, DurationMs: 1500, ExitCode: code(0)}, "timed out after 1.5s and was killed", false},
		{Outcome{Signal: "SIGKILL"}, "was killed by SIGKILL", false},
		{Outcome{StartError: "no shell"}, "no shell", false},
		{Outcome{Terminated: true, ExitCode: code(0)}, "was stopped because the container was asked to terminate", false},
		{Outcome{}, "ended in an unknown way", false},
	}
	for _, tt := range tests {
		if got := tt.o.Describe(); got != tt.want {
			t.Errorf("%+v.Describe() = %q, want %q", tt.o, got, tt.want)
		}
		if got := tt.o.Succeeded(); got != tt.succeeded {
			t.Errorf("%+v.Succeeded() = %v, want %v", tt.o, got, tt.succeeded)
		}
	}
}
