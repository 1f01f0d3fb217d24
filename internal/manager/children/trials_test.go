package children

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stats"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// fileTrials is an eval file's trials of count, as the 4.42 reader reads execution.trials at line 9.
func fileTrials(count int) *evalfile.FileTrials {
	t := evalfile.TrialsPassAtK(count)
	t.Line = 9
	return t
}

// TestEffectiveTrials: a run's trials are spec.trials when set (whatever its eval file says), else its eval
// file's own, else one; a re-judge never takes its eval file's, and names no source. What the run records of the
// decision (run.json, the Job) gives the same decision on a later reconcile.
func TestEffectiveTrials(t *testing.T) {
	spec := func(count int32, passRate string) *testutil.EvalRunWrapper {
		return testutil.MakeEvalRun("r", "ns").Trials(count, passRate)
	}
	one := RunTrials{Count: 1, PassRate: "1"}
	for _, tc := range []struct {
		name string
		run  *evalsv1alpha1.EvalRun
		file *evalfile.FileTrials
		want RunTrials
	}{
		{name: "neither", run: testutil.MakeEvalRun("r", "ns").Obj(), want: one},
		{name: "the eval file's", run: testutil.MakeEvalRun("r", "ns").Obj(), file: fileTrials(3),
			want: RunTrials{Count: 3, PassRate: "0.333333", Source: evalsv1alpha1.TrialsSourceEvalFile}},
		{name: "the eval file's 100", run: testutil.MakeEvalRun("r", "ns").Obj(), file: fileTrials(100),
			want: RunTrials{Count: 100, PassRate: "0.01", Source: evalsv1alpha1.TrialsSourceEvalFile}},
		{name: "the spec's", run: spec(3, "0.6").Obj(), want: RunTrials{Count: 3, PassRate: "0.6", Source: evalsv1alpha1.TrialsSourceSpec}},
		{name: "the spec wins", run: spec(5, "").Obj(), file: fileTrials(3),
			want: RunTrials{Count: 5, PassRate: "1", Source: evalsv1alpha1.TrialsSourceSpec}},
		{name: "a spec of one trial wins", run: spec(1, "").Obj(), file: fileTrials(3),
			want: RunTrials{Count: 1, PassRate: "1", Source: evalsv1alpha1.TrialsSourceSpec}},
		{name: "an eval file of one trial", run: testutil.MakeEvalRun("r", "ns").Obj(), file: &evalfile.FileTrials{Count: 1, PassRate: "1"}, want: one},
		{name: "a re-judge ignores its eval file's", run: testutil.MakeEvalRun("r", "ns").Rejudge("src").Obj(), file: fileTrials(3), want: one},
		{name: "a re-judge built with its source's", run: testutil.MakeEvalRun("r", "ns").Rejudge("src").Trials(4, "0.5").Obj(),
			file: fileTrials(3), want: RunTrials{Count: 4, PassRate: "0.5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EffectiveTrials(tc.run, tc.file)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("EffectiveTrials (-want +got):\n%s", diff)
			}
			// run.json and the Job record the decision: a later reconcile makes it again from them alone.
			cfg := BuildRunConfig(tc.run, []string{"a", "b"}, nil, JudgeLoad{FileTrials: tc.file}, options.Options{})
			if podwire.TrialCount(cfg.Trials) != got.Count || (got.Count > 1 && cfg.TrialsSource != string(got.Source)) {
				t.Errorf("run.json trials %d from %q, want %+v", cfg.Trials, cfg.TrialsSource, got)
			}
			if diff := cmp.Diff(got, PinnedTrials(tc.run, cfg)); diff != "" {
				t.Errorf("PinnedTrials (-decided +again):\n%s", diff)
			}
			job := BuildJob(tc.run, cfg, options.Options{})
			if diff := cmp.Diff(got, JobTrials(tc.run, job)); diff != "" {
				t.Errorf("JobTrials (-decided +again):\n%s", diff)
			}
			if c := job.Spec.Completions; c == nil || int(*c) != cfg.Pods() || cfg.Pods() != got.Count {
				t.Errorf("the Job has %v completions, run.json %d pods, want %d", c, cfg.Pods(), got.Count)
			}
			if _, ok := job.Annotations[podwire.AnnotationTrials]; ok != (got.Count > 1) || cfg.TrialsPassRate != map[bool]string{true: got.PassRate}[got.Count > 1] {
				t.Errorf("Job annotations %v, run.json's pass rate %q", job.Annotations, cfg.TrialsPassRate)
			}
			// What reads a run's trials from its spec is given the run as the manager runs it.
			as := RunWithTrials(tc.run, got)
			rule, err := TrialRule(as)
			if err != nil || Trials(as) != got.Count || rule.N() != got.Count || rule.PassRateText != got.PassRate {
				t.Errorf("the run as run: %d trials, rule %+v, %v; want %+v", Trials(as), rule, err, got)
			}
			if ManagerMerges(as) != (got.Count > 1 || tc.run.Spec.Rejudge != nil) {
				t.Errorf("ManagerMerges = %v with %d trials", ManagerMerges(as), got.Count)
			}
			if got.Count > 1 && len(cfg.ShardConfigMaps) != got.Count {
				t.Errorf("run.json names %d shard ConfigMaps, want one per trial", len(cfg.ShardConfigMaps))
			}
		})
	}
}

// TestRunWithTrialsLeavesTheRunAlone: the run as the manager runs it with its eval file's trials is a copy; the
// run itself keeps its spec (it is the one the reconciler writes from).
func TestRunWithTrialsLeavesTheRunAlone(t *testing.T) {
	run := testutil.MakeEvalRun("r", "ns").Obj()
	as := RunWithTrials(run, EffectiveTrials(run, fileTrials(3)))
	if run.Spec.Trials != nil || as == run || as.Spec.Trials == nil || *as.Spec.Trials.Count != 3 {
		t.Errorf("run's trials %+v, the copy's %+v", run.Spec.Trials, as.Spec.Trials)
	}
	if spec := testutil.MakeEvalRun("r", "ns").Trials(2, "").Obj(); RunWithTrials(spec, EffectiveTrials(spec, fileTrials(3))) != spec {
		t.Error("a run whose trials are its spec's is not run as itself")
	}
}

// TestPassAtKMeansOneTrial: the pass rate an eval file's pass_at_k gives N trials (1/N rounded down, as the API
// spells a decimal) passes a case with one passed trial, whatever N and however many of its trials were judged
// (skipped trials are left out), and fails it with none: the API's passRate rule (results.ParseTrialRule),
// stats.Case.Passes and results.AggregateCase agree it means "at least one trial".
func TestPassAtKMeansOneTrial(t *testing.T) {
	if evalfile.MaxTrials != evalsv1alpha1.MaxTrials {
		t.Fatalf("an eval file's trials are bounded at %d, spec.trials.count at %d", evalfile.MaxTrials, evalsv1alpha1.MaxTrials)
	}
	for n := 2; n <= evalsv1alpha1.MaxTrials; n++ {
		file := evalfile.TrialsPassAtK(n)
		rule, err := results.ParseTrialRule(int32(n), file.PassRate)
		if err != nil {
			t.Fatalf("N=%d: the API's rule refuses %q: %v", n, file.PassRate, err)
		}
		for judged := 1; judged <= n; judged++ {
			if !(stats.Case{Passed: 1, Trials: judged}).Passes(rule.PassRate) || (stats.Case{Passed: 0, Trials: judged}).Passes(rule.PassRate) {
				t.Fatalf("N=%d, %d judged: pass rate %s does not mean one passed trial", n, judged, file.PassRate)
			}
		}
		// One trial passes, the last; the others fail, and one is skipped.
		records := make([]results.TrialRecord, n)
		for i := range records {
			records[i] = results.TrialRecord{Trial: i + 1, Verdict: verdict.VerdictFail}
		}
		records[0].Verdict = verdict.VerdictSkipped
		records[n-1].Verdict = verdict.VerdictPass
		if c := results.AggregateCase(rule, records); c.Verdict != verdict.VerdictPass {
			t.Errorf("N=%d: a case with one passed trial is %s", n, c.Verdict)
		}
		records[n-1].Verdict = verdict.VerdictFail
		if c := results.AggregateCase(rule, records); c.Verdict != verdict.VerdictFail {
			t.Errorf("N=%d: a case with no passed trial is %s", n, c.Verdict)
		}
	}
	for n, want := range map[int]string{3: "0.333333", 7: "0.142857", 100: "0.01"} {
		if got := evalfile.PassAtKRate(n); got != want {
			t.Errorf("PassAtKRate(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestCheckFileTrials: the bound admission puts on spec.sharding.shards × spec.trials.count holds for an eval file's
// trials too, checked by the manager, whose message names both numbers; spec.trials are admission's.
func TestCheckFileTrials(t *testing.T) {
	for _, tc := range []struct {
		name   string
		run    *evalsv1alpha1.EvalRun
		file   *evalfile.FileTrials
		want   string
		wantOK bool
	}{
		{name: "1000 pods", run: testutil.MakeEvalRun("r", "ns").Shards(10, 0).Obj(), file: fileTrials(100), wantOK: true},
		{name: "1002 pods", run: testutil.MakeEvalRun("r", "ns").Shards(334, 0).Obj(), file: fileTrials(3),
			want: "spec.sharding.shards 334 times the eval file's execution.trials.count 3 (line 9) is 1002 pods, above 1000"},
		{name: "500 shards of 100 trials", run: testutil.MakeEvalRun("r", "ns").Shards(500, 0).Obj(), file: fileTrials(100),
			want: "spec.sharding.shards 500 times the eval file's execution.trials.count 100 (line 9) is 50000 pods"},
		{name: "spec.trials win", run: testutil.MakeEvalRun("r", "ns").Shards(500, 0).Trials(2, "").Obj(), file: fileTrials(100), wantOK: true},
		{name: "no trials", run: testutil.MakeEvalRun("r", "ns").Shards(1000, 0).Obj(), wantOK: true},
		{name: "a resume", run: testutil.MakeEvalRun("r", "ns").Resume("src", evalsv1alpha1.ResumeMissing).Obj(), file: fileTrials(3), wantOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckFileTrials(tc.run, EffectiveTrials(tc.run, tc.file), tc.file)
			if tc.wantOK != (got == "") || !strings.HasPrefix(got, tc.want) {
				t.Errorf("TooManyPods = %q, want %q", got, tc.want)
			}
		})
	}
	if msg := CheckFileTrials(testutil.MakeEvalRun("r", "ns").Shards(400, 0).Obj(), RunTrials{Count: 3, Source: evalsv1alpha1.TrialsSourceEvalFile}, nil); !strings.Contains(msg, fmt.Sprintf("count 3 is %d pods", 1200)) {
		t.Errorf("without the file's line: %q", msg)
	}
}
