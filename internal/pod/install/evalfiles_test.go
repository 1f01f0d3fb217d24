package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// TestTrialRunsEvalFiles: in a resumed run with trials (2 shards × 2 trials of 5 cases) whose trials run different
// cases, each pod's eval file and runner view hold exactly the cases of its shard that its trial runs; a pod with
// none gets no eval file, and a runner configuration that says so.
func TestTrialRunsEvalFiles(t *testing.T) {
	dir := t.TempDir()
	source := filepath.Join(dir, "pinned.yaml")
	write(t, source, testutil.DecisionEval(5), 0o644)
	// Trial 1 runs case-000, case-003 and case-004; trial 2 case-001 only.
	runs := [][]podwire.CaseSpan{{{0, 1}, {3, 5}}, {{1, 2}}}
	want := map[int][]string{0: {"case-000"}, 1: {"case-003", "case-004"}, 2: {"case-001"}, 3: nil}
	for index := range 4 {
		t.Run(fmt.Sprint("index ", index), func(t *testing.T) {
			pod := filepath.Join(dir, strconv.Itoa(index))
			ids := []string{testutil.CaseID(0), testutil.CaseID(1), testutil.CaseID(2), testutil.CaseID(3), testutil.CaseID(4)}
			cfg := &podwire.RunConfig{CaseIDs: ids, Shards: 2, Trials: 2, TrialRuns: runs,
				SourceEvalFile: source, EvalFile: filepath.Join(pod, "shard", "eval.yaml"), EvalFileView: podwire.EvalFileViewInputs,
				RunnerEvalFile: filepath.Join(pod, "view", "eval.yaml"), RunnerConfigFile: filepath.Join(pod, "view", "launch.json"),
				Launch: podwire.Launch{CommandTemplate: "run {EVAL_FILE}", Batching: "Batched", Workers: 1, KillGraceSeconds: 10, CollectorStartSeconds: 300}}
			if err := cfg.LoadShard(strconv.Itoa(index)); err != nil {
				t.Fatal(err)
			}
			if err := WriteShardEvalFile(context.Background(), cfg, ""); err != nil {
				t.Fatal(err)
			}
			n, err := WriteRunnerView(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rc, err := podwire.LoadRunnerConfig(cfg.RunnerConfigFile)
			if err != nil {
				t.Fatal(err)
			}
			if want[index] == nil {
				if !rc.NothingToRun || len(rc.CaseIDs) != 0 || n != 0 {
					t.Errorf("a pod with nothing to run: the runner's configuration %+v, %d cases in its view", rc, n)
				}
				for _, f := range []string{cfg.EvalFile, cfg.RunnerEvalFile} {
					if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s written for a pod with nothing to run (%v)", f, err)
					}
				}
				return
			}
			for _, f := range []string{cfg.EvalFile, cfg.RunnerEvalFile} {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				file, err := evalfile.Parse(data)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want[index], file.CaseIDs()); diff != "" {
					t.Errorf("%s's cases (-want +got):\n%s", f, diff)
				}
			}
			if rc.NothingToRun || n != len(want[index]) {
				t.Errorf("the runner's configuration %+v, %d cases in its view", rc, n)
			}
			if diff := cmp.Diff(want[index], rc.CaseIDs); diff != "" {
				t.Errorf("the runner's case ids (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResumedBucketBundleEvalFile: a resumed run whose eval file is a bundle's in a bucket cuts its pod's cases out
// of the bundle's whole eval file by id (AllCaseIDs), as an eval file object's: not by their indexes among the
// cases the run runs, which are not the file's.
func TestResumedBucketBundleEvalFile(t *testing.T) {
	dir := t.TempDir()
	source := filepath.Join(dir, "bundle", "eval.yaml")
	write(t, source, testutil.DecisionEval(5), 0o644)
	all := []string{testutil.CaseID(0), testutil.CaseID(1), testutil.CaseID(2), testutil.CaseID(3), testutil.CaseID(4)}
	run := []string{testutil.CaseID(1), testutil.CaseID(3)}
	cfg := &podwire.RunConfig{CaseIDs: run, AllCaseIDs: all, Shards: 1, SourceEvalFile: source, EvalFile: filepath.Join(dir, "shard", "eval.yaml"),
		Bundle: &podwire.Bundle{Objects: &podwire.Bucket{Endpoint: "http://s3.example", Bucket: "bundles"}}}
	if err := cfg.LoadShard(""); err != nil {
		t.Fatal(err)
	}
	if err := WriteShardEvalFile(context.Background(), cfg, ""); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cfg.EvalFile)
	if err != nil {
		t.Fatal(err)
	}
	file, err := evalfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(run, file.CaseIDs()); diff != "" {
		t.Errorf("the pod's cases (-want +got):\n%s", diff)
	}
}
