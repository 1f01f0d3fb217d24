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
// and answers case-003 with the opposite decision in its second trial only, so case-003 is flaky; in its third
// trial it leaves case-005 out of its output (a lost trial); the sample runner never answers case-012 (every trial
// of shard 1 misses it). The run ends MissingResults with one merged picture: every case decided over its 3 trials
// (every trial must pass), case-003 failing, case-005 an Error with a trial missing, both listed flaky, case-012
// missing, every trial's result of every case stored, each pod's entry naming its shard and trial. Then, both from
// that run: a re-judge keeps its 2 shards × 3 trials and decides every case as the run did, from its kept records;
// a resume with cases Missing runs only the trials without a result (TestShardedRunWithTrials' resume).
func TestShardedRunWithTrials(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "trials", nil)
	// The runner prints its trial (the placeholder and the variable), flips case-003 in trial 2 and drops case-005
	// in trial 3.
	command := `echo trial {ATTEMPT} "$ATTEMPT" >&2; flip=; [ "$ATTEMPT" != 2 ] || flip=case-003; ` + sampleCommand + ` --flip-case "$flip" && ` +
		`if [ "$ATTEMPT" = 3 ]; then sed -i '/"id":"case-005"/d' {OUTPUT_FILE}; fi`
	run := sampleRun("trials", ns).Inline(sampleEvalFile(t)).Shards(2, 0).Trials(3, "").Command(command).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	if c := succeeded(got); !strings.HasPrefix(c.Message, "4 of 6 shard trials failed; shard 1 trial 1: ") {
		t.Errorf("Succeeded message %q: want shard 1's three trials failed, each missing case-012, and shard 0's third, missing case-005", c.Message)
	}
	expectDiff(t, "summary", counts{Total: 12, Passed: 8, Failed: 2, Errored: 2, Missing: 1}, summaryCounts(got))
	expectDiff(t, "missing ids", []string{"case-012"}, got.Status.MissingIDs)
	wantVerdicts := map[string]evalsv1alpha1.Verdict{}
	for id, v := range sampleVerdicts {
		wantVerdicts[id] = v
	}
	wantVerdicts["case-003"], wantVerdicts["case-005"] = evalsv1alpha1.VerdictFail, evalsv1alpha1.VerdictError
	expectDiff(t, "verdicts", wantVerdicts, verdicts(got))
	trials := caseTrials(t, got)
	if trials["case-003"] != "2/3" || trials["case-005"] != "2/3" || trials["case-001"] != "3/3" || trials["case-011"] != "0/3" {
		t.Errorf("trials passed of 3: %v; want case-003 2/3, case-005 2/3, case-001 3/3, case-011 0/3", trials)
	}

	tr := got.Status.Trials
	if tr == nil {
		t.Fatal("no status.trials")
	}
	if tr.Count != 3 || tr.PassRate != "1" || tr.Cases != 12 || tr.FlakyCases != 2 || !slices.Equal(tr.Flaky, []string{"case-003", "case-005"}) {
		t.Errorf("status.trials %+v: want 3 trials at 1 over 12 cases, case-003 and case-005 flaky", tr)
	}
	if tr.RunPassRate == nil || tr.RunPassRate.Value != "0.6667" || tr.MeanTrialPassRate == nil || tr.MeanScore == nil {
		t.Errorf("status.trials' rates %+v %+v %+v: want 8 of 12 cases passing, and both means", tr.RunPassRate, tr.MeanTrialPassRate, tr.MeanScore)
	}

	// One entry per pod: shard 1's trials each miss case-012, shard 0's third case-005.
	expectDiff(t, "shards", []string{
		"1/1 Failed/MissingResults cases=6 missing=1 [case-012]",
		"1/2 Failed/MissingResults cases=6 missing=1 [case-012]",
		"0/3 Failed/MissingResults cases=6 missing=1 [case-005]",
		"1/3 Failed/MissingResults cases=6 missing=1 [case-012]",
		"0/1 Succeeded/Completed cases=6 missing=0 []",
		"0/2 Succeeded/Completed cases=6 missing=0 []",
	}, shardEntries(got))
	if s := got.Status.Sharding; s == nil || s.Shards != 2 || s.Succeeded != 2 || s.Failed != 4 {
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

	// Both from the finished run, at once: a re-judge and a resume.
	rejudge := sampleRun("trials-rejudge", ns).Inline(sampleEvalFile(t)).Obj()
	rejudge.Spec.Rejudge = &evalsv1alpha1.Rejudge{From: run.Name}
	create(t, rejudge)
	resume := sampleRun("trials-resume", ns).Inline(sampleEvalFile(t)).Shards(2, 0).Trials(3, "").
		Command(`echo trial {ATTEMPT} "$ATTEMPT" >&2; `+sampleCommand).Resume(run.Name, evalsv1alpha1.ResumeMissing).Obj()
	create(t, resume)
	expectRejudgeKeepsTrials(t, ns, got, rejudge.Name)
	expectResumeRunsLostTrials(t, ns, run.Name, resume.Name)
}

// caseTrials are the run's cases' trials passed of their count, by case id.
func caseTrials(t *testing.T, run *evalsv1alpha1.EvalRun) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range run.Status.Cases {
		if c.Trials == nil {
			t.Errorf("case %s of %s shows no trials", c.ID, run.Name)
			continue
		}
		out[c.ID] = fmt.Sprintf("%d/%d", c.Trials.Passed, c.Trials.Count)
	}
	return out
}

// shardEntries are the run's status.shards as "<shard>/<trial> <state>/<reason> cases=<n> missing=<n> <ids>".
func shardEntries(run *evalsv1alpha1.EvalRun) []string {
	var out []string
	for _, s := range run.Status.Shards {
		out = append(out, fmt.Sprintf("%d/%d %s/%s cases=%d missing=%d %v", s.Index, ptr.Deref(s.Trial, 0), s.State, s.Reason,
			s.Cases, s.Missing, s.MissingIDs))
	}
	return out
}

// expectRejudgeKeepsTrials checks the re-judge name of the trials run src: its spec says no trials, yet it is the
// source's 6 pods (2 shards × 3 trials, none with a runner), each judging its source pod's kept records; it decides
// every case over its 3 trials as src did (case-005's third trial and case-012 kept no record: missing again), and
// every judged result says its trial and that src answered it.
func expectRejudgeKeepsTrials(t *testing.T, ns string, src *evalsv1alpha1.EvalRun, name string) {
	t.Helper()
	got := waitFinished(t, ns, name, runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectDiff(t, "the re-judge's verdicts against the run's", verdicts(src), verdicts(got))
	expectDiff(t, "the re-judge's trials against the run's", caseTrials(t, src), caseTrials(t, got))
	expectDiff(t, "the re-judge's summary against the run's", summaryCounts(src), summaryCounts(got))
	if tr := got.Status.Trials; tr == nil || tr.Count != 3 || tr.PassRate != "1" || !slices.Equal(tr.Flaky, []string{"case-003", "case-005"}) {
		t.Errorf("the re-judge's status.trials %+v: want the run's 3 trials at 1, case-003 and case-005 flaky", got.Status.Trials)
	}
	pods := runPods(t, ns, name)
	if len(pods) != 6 {
		t.Errorf("the re-judge ran %d pods, want the run's 2 shards × 3 trials", len(pods))
	}
	for _, pod := range pods {
		for _, c := range pod.Spec.Containers {
			if c.Name == podwire.ContainerRunner {
				t.Errorf("the re-judge's pod %s has a runner container", pod.Name)
			}
		}
	}
	byTrial := map[int]int{}
	eachStoredResult(t, got, func(l *results.Line, _ []byte) {
		if l.Missing {
			if !strings.HasPrefix(l.Error, "not judged: EvalRun "+src.Name+" kept no record of this case") {
				t.Errorf("the re-judge's %s trial %d: missing with %q", l.ID, l.TrialNumber(), l.Error)
			}
			return
		}
		byTrial[l.TrialNumber()]++
		if l.AnsweredBy != src.Name {
			t.Errorf("the re-judge's %s trial %d was answered by %q", l.ID, l.TrialNumber(), l.AnsweredBy)
		}
	})
	// Judged: 11 cases of trials 1 and 2 (case-012 never answered), 10 of trial 3 (nor case-005).
	expectDiff(t, "the re-judge's judged results by trial", map[int]int{1: 11, 2: 11, 3: 10}, byTrial)
}

// expectResumeRunsLostTrials checks the resume name of the trials run from, with cases Missing: it runs only the
// trials without a result, case-005's third and case-012's three, in 2 shards (case-005, case-012) × 3 trials, of
// which shard 0's first two trials have nothing to run (their pods start no runner); every other trial's result is
// carried with its trial. case-005 now passes its 3 trials; case-012, which the sample runner never answers, is
// missing again; case-003 keeps its failed second trial.
func expectResumeRunsLostTrials(t *testing.T, ns, from, name string) {
	t.Helper()
	got := waitFinished(t, ns, name, runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectDiff(t, "summary", counts{Total: 12, Passed: 9, Failed: 2, Errored: 1, Missing: 1}, summaryCounts(got))
	trials := caseTrials(t, got)
	if trials["case-005"] != "3/3" || trials["case-003"] != "2/3" || trials["case-012"] != "0/3" {
		t.Errorf("trials passed of 3: %v; want case-005 3/3, case-003 2/3, case-012 0/3", trials)
	}
	if r := got.Status.Resume; r == nil || r.From != from || r.Ran != 2 || r.Carried != 32 || ptr.Deref(r.RanTrials, 0) != 4 {
		t.Errorf("status.resume %+v: want 2 cases run in 4 trials, 32 results carried", got.Status.Resume)
	}
	expectDiff(t, "shards", []string{
		"1/1 Failed/MissingResults cases=1 missing=1 [case-012]",
		"1/2 Failed/MissingResults cases=1 missing=1 [case-012]",
		"1/3 Failed/MissingResults cases=1 missing=1 [case-012]",
		"0/1 Succeeded/Completed cases=0 missing=0 []",
		"0/2 Succeeded/Completed cases=0 missing=0 []",
		"0/3 Succeeded/Completed cases=1 missing=0 []",
	}, shardEntries(got))
	ran := map[string]int{}
	eachStoredResult(t, got, func(l *results.Line, _ []byte) {
		if l.CarriedFrom == "" {
			ran[fmt.Sprintf("%s/%d", l.ID, l.TrialNumber())]++
		} else if l.CarriedFrom != from || (l.ID == "case-005" && l.TrialNumber() == 3) || l.ID == "case-012" {
			t.Errorf("%s trial %d carried from %q", l.ID, l.TrialNumber(), l.CarriedFrom)
		}
	})
	expectDiff(t, "results of the trials run", map[string]int{"case-005/3": 1, "case-012/1": 1, "case-012/2": 1, "case-012/3": 1}, ran)
	for _, pod := range runPods(t, ns, name) {
		index, err := strconv.Atoi(pod.Annotations[podwire.AnnotationJobCompletionIndex])
		if err != nil {
			t.Errorf("pod %s has no completion index", pod.Name)
			continue
		}
		logs := podLogs(t, ns, pod.Name, podwire.ContainerRunner)
		_, trial := podwire.ShardTrial(index, 2)
		if nothing := index == 0 || index == 2; nothing != strings.Contains(logs, "Nothing to run") ||
			nothing == strings.Contains(logs, fmt.Sprintf("trial %d %d", trial, trial)) {
			t.Errorf("index %d's runner log %q: want the runner started only in a pod with cases to run", index, textbound.Head(logs, 300))
		}
	}
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
