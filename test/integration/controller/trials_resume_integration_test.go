package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/collector"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// trialsSource is TestTrialsRunMergesItsTrials' run, finished: 4 cases in 2 shards × 3 trials; case-001 fails its
// second trial, case-003 has no result in its third (the runner of shard 1's third trial left it out).
func trialsSource(t *testing.T, ns, name string) *evalsv1alpha1.EvalRun {
	t.Helper()
	run := createRun(t, testutil.MakeEvalRun(name, ns).Inline(testutil.DecisionEval(4)).
		Command("run --eval {EVAL_FILE} --trial {ATTEMPT} --out {OUTPUT_FILE}").Shards(2, 4).Trials(3, ""))
	runTrialPods(t, run, waitJob(t, run))
	return waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
}

// trialPods runs every pod of run as its pod would: each answers its own cases (answer gives a decision by case id
// and trial, "" to leave the case out) and its collector stores them, or, with nothing to run, records its empty
// collection; then the Job is complete. It returns the cases each completion index ran.
func trialPods(t *testing.T, run *evalsv1alpha1.EvalRun, answer func(id string, trial int) string) map[int][]string {
	t.Helper()
	ctx := context.Background()
	job := waitJob(t, run)
	pods := int(ptr.Deref(job.Spec.Completions, 1))
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.StartTime = ptr.To(metav1.Now()) })
	ran := map[int][]string{}
	var indexes []string
	for i := range pods {
		pod := startShardPod(t, job, i)
		cfg, _ := shardConfig(t, run, i)
		if cfg.NothingToRun {
			g := collector.NothingToRun(&cfg, pod.Name, time.Now())
			sa := collectorClient(t, run)
			if err := collector.WriteResultConfigMaps(ctx, sa, run.Namespace, cfg.ResultConfigMaps, g.Output.Chunks); err != nil {
				t.Fatal(err)
			}
			writeSection(t, sa, run, cfg, g)
		} else {
			var out strings.Builder
			for _, id := range cfg.CaseIDs {
				ran[i] = append(ran[i], id)
				if d := answer(id, int(cfg.Trial)); d != "" {
					n, _ := strconv.Atoi(strings.TrimPrefix(id, "case-"))
					out.WriteString(testutil.DecisionLine(n, d))
				}
			}
			collectShard(t, run, i, pod.Name, out.String())
		}
		updatePodStatus(t, pod, runnerTerminated(0, "Completed", time.Now()))
		indexes = append(indexes, strconv.Itoa(i))
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = strings.Join(indexes, ","), int32(pods) })
	return ran
}

// storedTrials are a run's stored results as "<id>/<trial>=<verdict>@<carriedFrom>", sorted.
func storedTrials(t *testing.T, run *evalsv1alpha1.EvalRun) []string {
	t.Helper()
	var out []string
	msg, err := stored.EachLine(context.Background(), k8s, run, func(l *results.Line) error {
		out = append(out, fmt.Sprintf("%s/%d=%s@%s", l.ID, l.TrialNumber(), l.Verdict, l.CarriedFrom))
		return nil
	})
	if msg != "" || err != nil {
		t.Fatal(msg, err)
	}
	slices.Sort(out)
	return out
}

// caseTrials are the run's status cases as "<id>=<verdict> <passed>/<count>", in id order.
func caseTrials(run *evalsv1alpha1.EvalRun) []string {
	var out []string
	for _, c := range run.Status.Cases {
		tr := ptr.Deref(c.Trials, evalsv1alpha1.CaseTrials{})
		out = append(out, fmt.Sprintf("%s=%s %d/%d", c.ID, c.Verdict, tr.Passed, tr.Count))
	}
	slices.Sort(out)
	return out
}

// TestTrialsResumeMissing resumes a run of 2 shards × 3 trials whose third trial of case-003 has no result, with
// cases Missing: only that one trial runs. The resumed run (2 shards × 3 trials, of the one case left) is a Job
// of 3 pods (one shard: one case), of which the first two trials' have nothing to run; the third runs case-003
// alone. Every other trial's result is carried with its trial and carriedFrom, case-001's failed trial too; the
// merged picture decides each case over its 3 trials.
func TestTrialsResumeMissing(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	src := trialsSource(t, ns, "source")
	run := createRun(t, testutil.MakeEvalRun("missing", ns).Inline(testutil.DecisionEval(4)).
		Command("run --eval {EVAL_FILE} --trial {ATTEMPT} --out {OUTPUT_FILE}").Shards(2, 4).Trials(3, "").Resume("source", evalsv1alpha1.ResumeMissing))
	job := waitJob(t, run)
	if n := ptr.Deref(job.Spec.Completions, 0); n != 3 || job.Annotations[podwire.AnnotationTrials] != "3" || job.Annotations[podwire.AnnotationCases] != "1" {
		t.Fatalf("the resumed run's Job: %d pods, trials %q, cases %q; want 1 shard × 3 trials of 1 case", n,
			job.Annotations[podwire.AnnotationTrials], job.Annotations[podwire.AnnotationCases])
	}
	ran := trialPods(t, run, func(string, int) string { return "CLEAR" })
	if diff := cmp.Diff(map[int][]string{2: {"case-003"}}, ran); diff != "" {
		t.Errorf("cases run by index (-want +got):\n%s", diff)
	}
	got := waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if diff := cmp.Diff([]string{"case-000=Pass 3/3", "case-001=Fail 2/3", "case-002=Pass 3/3", "case-003=Pass 3/3"}, caseTrials(got)); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if s := got.Status.Summary; s == nil || s.Total != 4 || s.Passed != 3 || s.Failed != 1 || s.Missing != 0 {
		t.Errorf("summary %+v", got.Status.Summary)
	}
	want := []string{"case-003/3=Pass@"}
	for _, id := range []string{"case-000", "case-001", "case-002", "case-003"} {
		for trial := 1; trial <= 3; trial++ {
			v := "Pass"
			switch {
			case id == "case-001" && trial == 2:
				v = "Fail"
			case id == "case-003" && trial == 3:
				continue
			}
			want = append(want, fmt.Sprintf("%s/%d=%s@source", id, trial, v))
		}
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, storedTrials(t, got)); diff != "" {
		t.Errorf("stored results (-want +got):\n%s", diff)
	}
	if r := got.Status.Resume; r == nil || r.From != "source" || r.FromUID != string(src.UID) || r.Ran != 1 || r.Carried != 11 ||
		ptr.Deref(r.RanTrials, 0) != 1 {
		t.Errorf("status.resume %+v", got.Status.Resume)
	}
	if tr := got.Status.Trials; tr == nil || tr.Count != 3 || tr.FlakyCases != 1 || !slices.Equal(tr.Flaky, []string{"case-001"}) {
		t.Errorf("status.trials %+v", got.Status.Trials)
	}
	// The pods with nothing to run succeeded with no case.
	var entries []string
	for _, s := range got.Status.Shards {
		entries = append(entries, fmt.Sprintf("%d/%d:%s/%s cases=%d", s.Index, ptr.Deref(s.Trial, 0), s.State, s.Reason, s.Cases))
	}
	if diff := cmp.Diff([]string{"0/1:Succeeded/Completed cases=0", "0/2:Succeeded/Completed cases=0", "0/3:Succeeded/Completed cases=1"}, entries); diff != "" {
		t.Errorf("pods' entries (-want +got):\n%s", diff)
	}
}

// TestTrialsResumeNotPassed resumes the same run with cases NotPassed: case-001 (failed one trial of 3) and
// case-003 (no result in one) run every trial again, none of their passing trials carried (carrying them and running
// only the failed trial would bias their pass rate upward); the two cases that passed are carried whole.
func TestTrialsResumeNotPassed(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	trialsSource(t, ns, "source")
	run := createRun(t, testutil.MakeEvalRun("notpassed", ns).Inline(testutil.DecisionEval(4)).
		Command("run --eval {EVAL_FILE} --trial {ATTEMPT} --out {OUTPUT_FILE}").Shards(2, 4).Trials(3, "").Resume("source", evalsv1alpha1.ResumeNotPassed))
	ran := trialPods(t, run, func(id string, trial int) string {
		if id == "case-001" && trial == 1 {
			return "REVIEW"
		}
		return "CLEAR"
	})
	// Two shards of one case each, every trial of both.
	if diff := cmp.Diff(map[int][]string{0: {"case-001"}, 1: {"case-003"}, 2: {"case-001"}, 3: {"case-003"}, 4: {"case-001"}, 5: {"case-003"}}, ran); diff != "" {
		t.Errorf("cases run by index (-want +got):\n%s", diff)
	}
	got := waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if diff := cmp.Diff([]string{"case-000=Pass 3/3", "case-001=Fail 2/3", "case-002=Pass 3/3", "case-003=Pass 3/3"}, caseTrials(got)); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	want := []string{"case-001/1=Fail@", "case-001/2=Pass@", "case-001/3=Pass@", "case-003/1=Pass@", "case-003/2=Pass@", "case-003/3=Pass@"}
	for _, id := range []string{"case-000", "case-002"} {
		for trial := 1; trial <= 3; trial++ {
			want = append(want, fmt.Sprintf("%s/%d=Pass@source", id, trial))
		}
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, storedTrials(t, got)); diff != "" {
		t.Errorf("stored results (-want +got):\n%s", diff)
	}
	if r := got.Status.Resume; r == nil || r.Ran != 2 || r.Carried != 6 || ptr.Deref(r.RanTrials, 0) != 6 || r.Cases != evalsv1alpha1.ResumeNotPassed {
		t.Errorf("status.resume %+v", got.Status.Resume)
	}
}

// TestTrialsResumeNeedsTheSameTrials: a resume whose trials' count is not its source's ends ResumeSourceInvalid,
// naming both counts, with no Job: of a run of 3 trials with 2, and of a run of one trial with 3.
func TestTrialsResumeNeedsTheSameTrials(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	trialsSource(t, ns, "three")
	one := createRun(t, testutil.MakeEvalRun("one", ns).Inline(testutil.DecisionEval(4)))
	finishShards(t, one, func(string) string { return "CLEAR" })
	waitReason(t, one, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	for _, tc := range []struct {
		name, from string
		trials     int32
		want       string
	}{
		{"two-of-three", "three", 2, "EvalRun three answered every case 3 times (its trials.count); this run's spec.trials.count is 2"},
		{"three-of-one", "one", 3, "EvalRun one answered every case 1 times (its trials.count); this run's spec.trials.count is 3"},
	} {
		run := createRun(t, testutil.MakeEvalRun(tc.name, ns).Inline(testutil.DecisionEval(4)).Trials(tc.trials, "").Resume(tc.from, evalsv1alpha1.ResumeMissing))
		got := waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonResumeSourceInvalid)
		if c := runCondition(got, evalsv1alpha1.ConditionSucceeded); !strings.Contains(c.Message, tc.want) {
			t.Errorf("%s: message %q, want %q", tc.name, c.Message, tc.want)
		}
		if got.Status.JobName != "" {
			t.Errorf("%s: Job %s created", tc.name, got.Status.JobName)
		}
	}
}

// TestTrialsRejudgeKeepsTheTrials re-judges the run of 2 shards × 3 trials: the re-judge (whose spec says no
// trials) is a Job of the source's 6 pods; each judges its source pod's kept records, keyed by that pod's trial; the
// cases are decided over their 3 trials at the source's pass rate, exactly as the source decided them (case-003's
// third trial kept no record: not judged, missing). A second re-judge with its own pass rate, 0.6, decides
// case-001 and case-003 (2 of 3 trials) passing from the same records.
func TestTrialsRejudgeKeepsTheTrials(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	src := trialsSource(t, ns, "source")
	if r := src.Status.Records; r == nil || r.Kept != 11 {
		t.Fatalf("the source's status.records %+v, want its 11 answered trials kept", src.Status.Records)
	}
	again := createRun(t, testutil.MakeEvalRun("again", ns).Inline(testutil.DecisionEval(4)).Rejudge("source"))
	job := waitJob(t, again)
	if n := ptr.Deref(job.Spec.Completions, 0); n != 6 || job.Annotations[podwire.AnnotationTrials] != "3" {
		t.Fatalf("the re-judge's Job: %d pods, trials %q; want the source's 2 shards × 3 trials", n, job.Annotations[podwire.AnnotationTrials])
	}
	rejudgeShards(t, again)
	checkTrialsRejudge(t, src, waitReason(t, again, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults))

	lenient := createRun(t, testutil.MakeEvalRun("lenient", ns).Inline(testutil.DecisionEval(4)).Trials(1, "0.6").Rejudge("source"))
	rejudgeShards(t, lenient)
	got := waitReason(t, lenient, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
	if diff := cmp.Diff([]string{"case-000=Pass 3/3", "case-001=Pass 2/3", "case-002=Pass 3/3", "case-003=Pass 2/3"}, caseTrials(got)); diff != "" {
		t.Errorf("cases at 0.6 (-want +got):\n%s", diff)
	}
	if tr := got.Status.Trials; tr == nil || tr.Count != 3 || tr.PassRate != "0.6" {
		t.Errorf("status.trials %+v, want 3 trials at this run's 0.6", got.Status.Trials)
	}
}

// checkTrialsRejudge checks TestTrialsRejudgeKeepsTheTrials' first re-judge, got, of src: the same cases, summary
// and trials as src, its pods listed by shard and trial, every judged result answered by src and keyed by its trial.
func checkTrialsRejudge(t *testing.T, src, got *evalsv1alpha1.EvalRun) {
	t.Helper()
	if diff := cmp.Diff(caseTrials(src), caseTrials(got)); diff != "" {
		t.Errorf("the re-judge's cases against the source's (-source +re-judge):\n%s", diff)
	}
	if diff := cmp.Diff(src.Status.Summary, got.Status.Summary); diff != "" {
		t.Errorf("the re-judge's summary against the source's (-source +re-judge):\n%s", diff)
	}
	if tr := got.Status.Trials; tr == nil || tr.Count != 3 || tr.PassRate != "1" || tr.FlakyCases != 2 {
		t.Errorf("status.trials %+v, want the source's 3 trials at 1", got.Status.Trials)
	}
	// Its pods are the source's shards' trials (its Job says them; its spec does not).
	var entries []string
	for _, s := range got.Status.Shards {
		entries = append(entries, fmt.Sprintf("%d/%d:%s", s.Index, ptr.Deref(s.Trial, 0), s.Reason))
	}
	if diff := cmp.Diff([]string{"1/3:MissingResults", "0/1:Completed", "1/1:Completed", "0/2:Completed", "1/2:Completed", "0/3:Completed"}, entries); diff != "" {
		t.Errorf("the re-judge's pods' entries (-want +got):\n%s", diff)
	}
	if s := got.Status.Sharding; s == nil || s.Shards != 2 || s.Succeeded != 5 || s.Failed != 1 {
		t.Errorf("sharding %+v, want 2 shards of 3 trials", got.Status.Sharding)
	}
	var answered []string
	msg, err := stored.EachLine(context.Background(), k8s, got, func(l *results.Line) error {
		if l.AnsweredBy == "source" {
			answered = append(answered, fmt.Sprintf("%s/%d=%s", l.ID, l.TrialNumber(), l.Verdict))
		} else if l.ID != "case-003" || l.TrialNumber() != 3 || !l.Missing || !strings.Contains(l.Error, "not judged: EvalRun source kept no record of this case") {
			t.Errorf("stored result %s trial %d: missing %v, error %q", l.ID, l.TrialNumber(), l.Missing, l.Error)
		}
		return nil
	})
	if msg != "" || err != nil {
		t.Fatal(msg, err)
	}
	slices.Sort(answered)
	var want []string
	for _, id := range []string{"case-000", "case-001", "case-002", "case-003"} {
		for trial := 1; trial <= 3; trial++ {
			if id == "case-003" && trial == 3 {
				continue
			}
			v := "Pass"
			if id == "case-001" && trial == 2 {
				v = "Fail"
			}
			want = append(want, fmt.Sprintf("%s/%d=%s", id, trial, v))
		}
	}
	if diff := cmp.Diff(want, answered); diff != "" {
		t.Errorf("results judged from the source's records, by trial (-want +got):\n%s", diff)
	}
}
