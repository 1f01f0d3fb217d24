//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// TestShardedRunWithTrials runs the sample's 12 cases in 2 shards of 6 with 3 trials each on the real cluster: an
// Indexed Job of 6 pods, completion index trial·2 + shard. The runner learns its trial from {ATTEMPT} and $ATTEMPT
// and answers case-003 with the opposite decision in its second trial only, so case-003 is flaky; the sample
// runner never answers case-012 (every trial of shard 1 misses it). The run ends MissingResults with one merged
// picture: every case decided over its 3 trials (every trial must pass), case-003 failing and listed flaky,
// case-012 missing, every trial's result of every case stored, each pod's entry naming its shard and trial.
func TestShardedRunWithTrials(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "trials", nil)
	// The runner prints its trial (the placeholder and the variable), and flips case-003 in trial 2.
	command := `echo trial {ATTEMPT} "$ATTEMPT" >&2; flip=; [ "$ATTEMPT" != 2 ] || flip=case-003; ` + sampleCommand + ` --flip-case "$flip"`
	run := sampleRun("trials", ns).Inline(sampleEvalFile(t)).Shards(2, 0).Trials(3, "").Command(command).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	if c := succeeded(got); !strings.HasPrefix(c.Message, "3 of 6 shard trials failed; shard 1 trial 1: ") {
		t.Errorf("Succeeded message %q: want shard 1's three trials failed, each missing case-012", c.Message)
	}
	expectDiff(t, "summary", counts{Total: 12, Passed: 9, Failed: 2, Errored: 1, Missing: 1}, summaryCounts(got))
	expectDiff(t, "missing ids", []string{"case-012"}, got.Status.MissingIDs)
	wantVerdicts := map[string]evalsv1alpha1.Verdict{}
	for id, v := range sampleVerdicts {
		wantVerdicts[id] = v
	}
	wantVerdicts["case-003"] = evalsv1alpha1.VerdictFail
	expectDiff(t, "verdicts", wantVerdicts, verdicts(got))
	trials := map[string]string{}
	for _, c := range got.Status.Cases {
		if c.Trials == nil {
			t.Errorf("case %s shows no trials", c.ID)
			continue
		}
		trials[c.ID] = fmt.Sprintf("%d/%d", c.Trials.Passed, c.Trials.Count)
	}
	if trials["case-003"] != "2/3" || trials["case-001"] != "3/3" || trials["case-011"] != "0/3" {
		t.Errorf("trials passed of 3: %v; want case-003 2/3, case-001 3/3, case-011 0/3", trials)
	}

	tr := got.Status.Trials
	if tr == nil {
		t.Fatal("no status.trials")
	}
	if tr.Count != 3 || tr.PassRate != "1" || tr.Cases != 12 || tr.FlakyCases != 1 || !slices.Equal(tr.Flaky, []string{"case-003"}) {
		t.Errorf("status.trials %+v: want 3 trials at 1 over 12 cases, case-003 the one flaky case", tr)
	}
	if tr.RunPassRate == nil || tr.RunPassRate.Value != "0.7500" || tr.MeanTrialPassRate == nil || tr.MeanScore == nil {
		t.Errorf("status.trials' rates %+v %+v %+v: want 9 of 12 cases passing, and both means", tr.RunPassRate, tr.MeanTrialPassRate, tr.MeanScore)
	}

	// One entry per pod: shard 1's trials each miss case-012.
	var shards []string
	for _, s := range got.Status.Shards {
		shards = append(shards, fmt.Sprintf("%d/%d %s/%s cases=%d missing=%d %v", s.Index, ptr.Deref(s.Trial, 0), s.State, s.Reason,
			s.Cases, s.Missing, s.MissingIDs))
	}
	expectDiff(t, "shards", []string{
		"1/1 Failed/MissingResults cases=6 missing=1 [case-012]",
		"1/2 Failed/MissingResults cases=6 missing=1 [case-012]",
		"1/3 Failed/MissingResults cases=6 missing=1 [case-012]",
		"0/1 Succeeded/Completed cases=6 missing=0 []",
		"0/2 Succeeded/Completed cases=6 missing=0 []",
		"0/3 Succeeded/Completed cases=6 missing=0 []",
	}, shards)
	if s := got.Status.Sharding; s == nil || s.Shards != 2 || s.Succeeded != 3 || s.Failed != 3 {
		t.Errorf("sharding %+v", got.Status.Sharding)
	}

	// Every trial of every case is stored, keyed by its trial; case-003 failed its second trial only.
	stored := map[int]int{}
	eachStoredResult(t, got, func(l *results.Line, _ []byte) {
		stored[l.TrialNumber()]++
		if l.ID == "case-003" && (l.Verdict == "Pass") == (l.TrialNumber() == 2) {
			t.Errorf("case-003's trial %d is %s", l.TrialNumber(), l.Verdict)
		}
	})
	expectDiff(t, "stored results by trial", map[int]int{1: 12, 2: 12, 3: 12}, stored)
	if r := got.Status.Results; r == nil || r.TotalCases != 36 {
		t.Errorf("results reference %+v: want 36 stored trial results", got.Status.Results)
	}

	expectTrialsSeen(t, ns, run.Name, 2, 6)
}

// expectTrialsSeen checks that each of the run's pods ran, and its runner saw its own trial: the pod's completion
// index / shards + 1, as {ATTEMPT} and $ATTEMPT (the runner logs "trial <placeholder> <variable>").
func expectTrialsSeen(t *testing.T, ns, runName string, shards, pods int) {
	t.Helper()
	all := runPods(t, ns, runName)
	if len(all) != pods {
		t.Errorf("%d pods, want %d", len(all), pods)
	}
	for _, pod := range all {
		index, err := strconv.Atoi(pod.Annotations[podwire.AnnotationJobCompletionIndex])
		if err != nil {
			t.Errorf("pod %s has no completion index", pod.Name)
			continue
		}
		_, trial := podwire.ShardTrial(index, shards)
		want := fmt.Sprintf("trial %d %d", trial, trial)
		if logs := podLogs(t, ns, pod.Name, podwire.ContainerRunner); !strings.Contains(logs, want) {
			t.Errorf("index %d's runner log %q does not say %q", index, textbound.Head(logs, 300), want)
		}
	}
}
