package controller_test

import (
	"context"
	"fmt"
	"slices"
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

// TestTrialsRunMergesItsTrials runs 4 cases in 2 shards (cases 0-1, 2-3) with 3 trials: an Indexed Job of 6
// pods, completion index trial·2 + shard. Every pod's collector stores its own trial's results through its own
// RBAC; case-001 fails its second trial (flaky), and the third trial of shard 1 leaves case-003 out (a missing
// trial). The run ends with that pod's reason, and one merged picture: each case decided over its 3 trials (every
// trial must pass), the summary counting cases, each pod's entry naming its shard and trial, status.trials with the
// flaky cases, every trial's result stored and keyed by its trial.
func TestTrialsRunMergesItsTrials(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("trials", ns).Inline(testutil.DecisionEval(4)).
		Command("run --eval {EVAL_FILE} --trial {ATTEMPT} --out {OUTPUT_FILE}").Shards(2, 4).Trials(3, ""))
	job := waitJob(t, run)
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion ||
		*job.Spec.Completions != 6 || *job.Spec.Parallelism != 4 || ptr.Deref(job.Spec.BackoffLimitPerIndex, -1) != 0 {
		t.Fatalf("Job spec: mode %v completions %v parallelism %v backoffLimitPerIndex %v", job.Spec.CompletionMode,
			job.Spec.Completions, job.Spec.Parallelism, job.Spec.BackoffLimitPerIndex)
	}
	if r := job.Spec.PodFailurePolicy.Rules[0]; r.Action != batchv1.PodFailurePolicyActionFailIndex {
		t.Errorf("the first pod failure rule %+v: want a stopped pod to fail its index only", r)
	}

	runTrialPods(t, run, job)
	got := waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
	checkTrialsCases(t, got)
	checkTrialsStatus(t, got)

	// Every pod's results are stored, each keyed by its trial (omitted for the first).
	if r := got.Status.Results; r == nil || len(r.ConfigMaps) != 6 || r.TotalCases != 12 {
		t.Fatalf("results reference %+v: want every pod's result ConfigMap and its 12 stored trials", got.Status.Results)
	}
	byTrial := map[int][]string{}
	msg, err := stored.EachLine(ctx, k8s, got, func(l *results.Line) error {
		byTrial[l.TrialNumber()] = append(byTrial[l.TrialNumber()], l.ID)
		return nil
	})
	if msg != "" || err != nil {
		t.Fatal(msg, err)
	}
	for trial := 1; trial <= 3; trial++ {
		if ids := byTrial[trial]; len(ids) != 4 {
			t.Errorf("trial %d stored %v, want a result of every case (one missing)", trial, ids)
		}
	}
}

// runTrialPods runs the 6 pods of TestTrialsRunMergesItsTrials: each collects its trial's answers through its
// collector's RBAC; the third trial of shard 1 leaves case-003 out.
func runTrialPods(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job) {
	t.Helper()
	// What each pod's runner answers: index i is trial i/2+1 of shard i%2.
	answers := map[int]string{
		0: testutil.DecisionLine(0, "CLEAR") + testutil.DecisionLine(1, "CLEAR"),
		1: testutil.DecisionLine(2, "CLEAR") + testutil.DecisionLine(3, "CLEAR"),
		2: testutil.DecisionLine(0, "CLEAR") + testutil.DecisionLine(1, "REVIEW"),
		3: testutil.DecisionLine(2, "CLEAR") + testutil.DecisionLine(3, "CLEAR"),
		4: testutil.DecisionLine(0, "CLEAR") + testutil.DecisionLine(1, "CLEAR"),
		5: testutil.DecisionLine(2, "CLEAR"),
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.StartTime = ptr.To(metav1.Now()); s.Active = 4 })
	var completed []string
	for i := range 6 {
		pod := startShardPod(t, job, i)
		cfg, _ := shardConfig(t, run, i)
		if cfg.Trial != int32(i/2+1) || cfg.ShardIndex != int32(i%2) || len(cfg.CaseIDs) != 2 || cfg.Trials != 3 {
			t.Fatalf("index %d: shard %d trial %d of %d, %d cases; want shard %d trial %d of 3, 2 cases", i, cfg.ShardIndex,
				cfg.Trial, cfg.Trials, len(cfg.CaseIDs), i%2, i/2+1)
		}
		if rc := cfg.RunnerConfig(cfg.RunnerEvalFile); rc.Attempt() != i/2+1 {
			t.Errorf("index %d: the runner's {ATTEMPT} is %d", i, rc.Attempt())
		}
		collectShard(t, run, i, pod.Name, answers[i])
		updatePodStatus(t, pod, runnerTerminated(0, "Completed", time.Now()))
		if i != 5 {
			completed = append(completed, fmt.Sprint(i))
		}
		if i == 3 {
			// Two trials of each shard are in: the run waits for the third.
			eventually(t, "the run waits for the third trial", func() error {
				got := getRun(t, run)
				if s := got.Status.Sharding; s == nil || s.Shards != 2 || s.Succeeded != 4 {
					return fmt.Errorf("sharding %+v", s)
				}
				if c := runCondition(got, evalsv1alpha1.ConditionSucceeded); c == nil || c.Status != metav1.ConditionUnknown {
					return fmt.Errorf("succeeded %+v", c)
				}
				return nil
			})
		}
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) {
		s.CompletedIndexes, s.FailedIndexes, s.Succeeded, s.Failed, s.Active = strings.Join(completed, ","), ptr.To("5"), 5, 1, 0
	})
}

// checkTrialsCases checks TestTrialsRunMergesItsTrials' merged cases: each decided over its 3 trials.
func checkTrialsCases(t *testing.T, got *evalsv1alpha1.EvalRun) {
	t.Helper()
	if c := runCondition(got, evalsv1alpha1.ConditionSucceeded); !strings.HasPrefix(c.Message, "1 of 6 shard trials failed; shard 1 trial 3: ") {
		t.Errorf("Succeeded message %q", c.Message)
	}
	// Cases, each decided over its 3 trials: case-001 failed a trial, case-003 lost one (an Error, not missing).
	wantSummary := evalsv1alpha1.RunSummary{Total: 4, Passed: 2, Failed: 1, Errored: 1, PassRate: "0.5000",
		MeanScore: "0.8889", MedianScore: "1.0000", MinScore: "0.6667", MaxScore: "1.0000", Histogram: []int32{0, 0, 0, 1, 2}}
	if diff := cmp.Diff(&wantSummary, got.Status.Summary); diff != "" {
		t.Errorf("merged summary (-want +got):\n%s", diff)
	}
	if len(got.Status.MissingIDs) != 0 {
		t.Errorf("missing ids %v: a case with a trial left is not missing", got.Status.MissingIDs)
	}
	var cases []string
	for _, c := range got.Status.Cases {
		tr := ptr.Deref(c.Trials, evalsv1alpha1.CaseTrials{})
		cases = append(cases, fmt.Sprintf("%s=%s %d/%d score=%s", c.ID, c.Verdict, tr.Passed, tr.Count, c.Score))
	}
	if diff := cmp.Diff([]string{"case-001=Fail 2/3 score=0.6667", "case-003=Error 2/3 score=", "case-000=Pass 3/3 score=1.0000",
		"case-002=Pass 3/3 score=1.0000"}, cases); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	for _, c := range got.Status.Cases {
		if c.ID == "case-003" && !strings.Contains(c.Error, "1 of 3 trials have no record; trial 3: ") &&
			!strings.Contains(c.Error, "trial 3 of 3: ") {
			t.Errorf("case-003's error %q does not name its lost trial", c.Error)
		}
	}
}

// checkTrialsStatus checks TestTrialsRunMergesItsTrials' pods' entries and status.trials.
func checkTrialsStatus(t *testing.T, got *evalsv1alpha1.EvalRun) {
	t.Helper()
	// One entry per pod: its shard and trial, failed first, then in completion order.
	var shards []string
	for _, s := range got.Status.Shards {
		shards = append(shards, fmt.Sprintf("%d/%d:%s/%s cases=%d passed=%d missing=%d", s.Index, ptr.Deref(s.Trial, 0), s.State, s.Reason,
			s.Cases, s.Passed, s.Missing))
	}
	if diff := cmp.Diff([]string{
		"1/3:Failed/MissingResults cases=2 passed=1 missing=1",
		"0/1:Succeeded/Completed cases=2 passed=2 missing=0",
		"1/1:Succeeded/Completed cases=2 passed=2 missing=0",
		"0/2:Succeeded/Completed cases=2 passed=1 missing=0",
		"1/2:Succeeded/Completed cases=2 passed=2 missing=0",
		"0/3:Succeeded/Completed cases=2 passed=2 missing=0",
	}, shards); diff != "" {
		t.Errorf("shards (-want +got):\n%s", diff)
	}
	if s := got.Status.Sharding; s == nil || s.Shards != 2 || s.Succeeded != 5 || s.Failed != 1 {
		t.Errorf("sharding %+v", got.Status.Sharding)
	}
	tr := got.Status.Trials
	if tr == nil {
		t.Fatal("no status.trials")
	}
	if tr.Count != 3 || tr.PassRate != "1" || tr.Cases != 4 || tr.FlakyCases != 2 || !slices.Equal(tr.Flaky, []string{"case-001", "case-003"}) ||
		tr.RunPassRate == nil || tr.RunPassRate.Value != "0.5000" || tr.MeanTrialPassRate == nil || tr.MeanTrialPassRate.Value != "0.8333" ||
		tr.PassAtN != "1.0000" || tr.PassHatN != "0.5000" {
		t.Errorf("status.trials %+v", tr)
	}
	if p := runCondition(got, evalsv1alpha1.ConditionPassed); p == nil || p.Status != metav1.ConditionFalse {
		t.Errorf("Passed %+v: 2 of 4 cases pass", p)
	}
}

// TestTrialsOfOneShard: 3 trials of an unsharded run are 3 pods of every case, merged by the manager; with a pass
// rate of 0.6 a case passing 2 of its 3 trials passes.
func TestTrialsOfOneShard(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("trials-one-shard", ns).Inline(testutil.DecisionEval(2)).Trials(3, "0.6"))
	job := waitJob(t, run)
	if *job.Spec.Completions != 3 || *job.Spec.Parallelism != 3 {
		t.Fatalf("Job of %d completions, %d at once; want 3 and 3", *job.Spec.Completions, *job.Spec.Parallelism)
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.StartTime = ptr.To(metav1.Now()) })
	for i := range 3 {
		pod := startShardPod(t, job, i)
		decision := "CLEAR"
		if i == 1 {
			decision = "REVIEW"
		}
		collectShard(t, run, i, pod.Name, testutil.DecisionLine(0, "CLEAR")+testutil.DecisionLine(1, decision))
		updatePodStatus(t, pod, runnerTerminated(0, "Completed", time.Now()))
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0-2", 3 })
	got := waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if s := got.Status.Summary; s.Total != 2 || s.Passed != 2 {
		t.Errorf("summary %+v: want both cases passing (case-001 passed 2 of 3 at 0.6)", s)
	}
	if tr := got.Status.Trials; tr == nil || tr.PassRate != "0.6" || tr.FlakyCases != 1 || tr.PassHatN != "0.5000" {
		t.Errorf("status.trials %+v", got.Status.Trials)
	}
	if p := runCondition(got, evalsv1alpha1.ConditionPassed); p == nil || p.Status != metav1.ConditionTrue {
		t.Errorf("Passed %+v", p)
	}
	if s := got.Status.Sharding; s == nil || s.Shards != 1 || len(got.Status.Shards) != 3 {
		t.Errorf("sharding %+v, %d entries", s, len(got.Status.Shards))
	}
}

// trialsSuite442 is an AgentV 4.42 suite of two tests graded by contains, whose execution says trials (indented
// under execution:).
func trialsSuite442(trials string) string {
	return "execution:\n" + trials + "tests:\n" +
		"  - id: greet\n    input: Say hello\n    criteria: says hello\n    assertions:\n      - {type: contains, value: hello}\n" +
		"  - id: part\n    input: Say bye\n    criteria: says bye\n    assertions:\n      - {type: contains, value: bye}\n"
}

// answer442 is a batch runner's answer to one test of trialsSuite442.
func answer442(id, text string) string { return fmt.Sprintf(`{"id":%q,"text":%q}`, id, text) + "\n" }

// TestTrialsFromTheEvalFile: an AgentV 4.42 suite's execution.trials ({count: 3}, strategy pass_at_k by default)
// are the run's trials when its spec sets none: a Job of 3 pods, each a trial, and every case decided as
// pass_at_k decides it (a case passes when any of its trials passes: passRate 1/3), status.trials saying the eval
// file was their source.
func TestTrialsFromTheEvalFile(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("trials-file", ns).Inline(trialsSuite442("  trials: {count: 3}\n")))
	job := waitJob(t, run)
	if *job.Spec.Completions != 3 || *job.Spec.Parallelism != 3 || job.Annotations[podwire.AnnotationTrials] != "3" {
		t.Fatalf("Job of %d completions, %d at once, annotations %v; want 3 and 3, and its 3 trials", *job.Spec.Completions,
			*job.Spec.Parallelism, job.Annotations)
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.StartTime = ptr.To(metav1.Now()) })
	// greet passes its first trial only, part its first two: both pass, both flaky.
	answers := []string{
		answer442("greet", "hello there") + answer442("part", "bye now"),
		answer442("greet", "hi") + answer442("part", "goodbye"),
		answer442("greet", "hi") + answer442("part", "see you"),
	}
	for i := range 3 {
		pod := startShardPod(t, job, i)
		cfg, _ := shardConfig(t, run, i)
		if cfg.Trials != 3 || cfg.TrialsSource != string(evalsv1alpha1.TrialsSourceEvalFile) || cfg.Trial != int32(i+1) {
			t.Fatalf("index %d: run.json trials %d from %q, trial %d", i, cfg.Trials, cfg.TrialsSource, cfg.Trial)
		}
		collectShard(t, run, i, pod.Name, answers[i])
		updatePodStatus(t, pod, runnerTerminated(0, "Completed", time.Now()))
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0-2", 3 })
	got := waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if got.Spec.Trials != nil {
		t.Errorf("the run's spec.trials became %+v: the manager never writes the spec", got.Spec.Trials)
	}
	if s := got.Status.Summary; s == nil || s.Total != 2 || s.Passed != 2 {
		t.Errorf("summary %+v: want both cases passing (any passed trial passes a case)", s)
	}
	tr := got.Status.Trials
	if tr == nil || tr.Count != 3 || tr.PassRate != "0.333333" || tr.Source != evalsv1alpha1.TrialsSourceEvalFile || tr.FlakyCases != 2 ||
		tr.PassAtN != "1.0000" || tr.PassHatN != "0.0000" {
		t.Fatalf("status.trials %+v", tr)
	}
	var cases []string
	for _, c := range got.Status.Cases {
		tr := ptr.Deref(c.Trials, evalsv1alpha1.CaseTrials{})
		cases = append(cases, fmt.Sprintf("%s=%s %d/%d", c.ID, c.Verdict, tr.Passed, tr.Count))
	}
	if diff := cmp.Diff([]string{"greet=Pass 1/3", "part=Pass 2/3"}, cases); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if s := got.Status.Sharding; s == nil || s.Shards != 1 || len(got.Status.Shards) != 3 {
		t.Errorf("sharding %+v, %d entries", s, len(got.Status.Shards))
	}
}

// TestTrialsSpecWinsOverTheEvalFile: spec.trials win over the eval file's own (count and pass rate), and
// status.trials says so; the eval file's trials in a run whose shards they would multiply past 1000 pods end it
// InvalidSpec, naming both numbers, before any child is created.
func TestTrialsSpecWinsOverTheEvalFile(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("trials-spec", ns).Inline(trialsSuite442("  trials: {count: 3}\n")).Trials(2, ""))
	job := waitJob(t, run)
	if *job.Spec.Completions != 2 {
		t.Fatalf("Job of %d completions, want the spec's 2 trials", *job.Spec.Completions)
	}
	if n := job.Annotations[podwire.AnnotationTrials]; n != "2" {
		t.Errorf("the Job records %q trials, want the spec's 2", n)
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.StartTime = ptr.To(metav1.Now()) })
	for i := range 2 {
		pod := startShardPod(t, job, i)
		greet := "hello"
		if i == 1 {
			greet = "hi"
		}
		collectShard(t, run, i, pod.Name, answer442("greet", greet)+answer442("part", "bye"))
		updatePodStatus(t, pod, runnerTerminated(0, "Completed", time.Now()))
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0-1", 2 })
	got := waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if tr := got.Status.Trials; tr == nil || tr.Count != 2 || tr.PassRate != "1" || tr.Source != evalsv1alpha1.TrialsSourceSpec {
		t.Errorf("status.trials %+v", tr)
	}
	if s := got.Status.Summary; s == nil || s.Passed != 1 || s.Failed != 1 {
		t.Errorf("summary %+v: greet failed a trial, and the spec asks for every trial", s)
	}

	big := createRun(t, testutil.MakeEvalRun("trials-too-many", ns).Inline(trialsSuite442("  trials:\n    count: 3\n")).Shards(400, 0))
	failed := waitReason(t, big, metav1.ConditionFalse, evalsv1alpha1.ReasonInvalidSpec)
	if c := runCondition(failed, evalsv1alpha1.ConditionSucceeded); !strings.Contains(c.Message,
		"spec.sharding.shards 400 times the eval file's execution.trials.count 3 (line 3) is 1200 pods, above 1000") {
		t.Errorf("Succeeded message %q", c.Message)
	}
	if failed.Status.JobName != "" || failed.Status.EvalConfigMapName != "" {
		t.Errorf("a run refused at pinning created its children: job %q, eval ConfigMap %q", failed.Status.JobName, failed.Status.EvalConfigMapName)
	}
}

// suiteTrialPods runs every pod of run, a run of trialsSuite442, as its pod would: each answers its own tests
// (answer gives the text by test id and trial, "" to leave the test out) and its collector stores them, or, with
// nothing to run, records its empty collection; then the Job is complete. It returns the tests each completion
// index ran.
func suiteTrialPods(t *testing.T, run *evalsv1alpha1.EvalRun, answer func(id string, trial int) string) map[int][]string {
	t.Helper()
	ctx := context.Background()
	job := waitJob(t, run)
	pods := int(ptr.Deref(job.Spec.Completions, 1))
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.StartTime = ptr.To(metav1.Now()) })
	ran := map[int][]string{}
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
				if text := answer(id, int(cfg.Trial)); text != "" {
					out.WriteString(answer442(id, text))
				}
			}
			collectShard(t, run, i, pod.Name, out.String())
		}
		updatePodStatus(t, pod, runnerTerminated(0, "Completed", time.Now()))
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) {
		s.CompletedIndexes, s.Succeeded = fmt.Sprintf("0-%d", pods-1), int32(pods)
	})
	return ran
}

// TestTrialsFromTheEvalFileResumedAndRejudged: a run whose trials are its eval file's (3, pass_at_k) is resumed and
// re-judged with their trials. Its third trial of part has no result; a resume with the same suite (its trials the
// file's again, as many as its source's) runs that one trial; a re-judge of it takes its 3 trials and pass rate from
// it, never from its eval file, and names no source.
func TestTrialsFromTheEvalFileResumedAndRejudged(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	suite := trialsSuite442("  trials: {count: 3}\n")
	src := createRun(t, testutil.MakeEvalRun("file-source", ns).Inline(suite))
	suiteTrialPods(t, src, func(id string, trial int) string {
		switch {
		case id == "greet" && trial == 2:
			return "hi"
		case id == "greet":
			return "hello"
		case trial == 3:
			return ""
		}
		return "bye"
	})
	src = waitReason(t, src, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
	if diff := cmp.Diff([]string{"greet=Pass 2/3", "part=Pass 2/3"}, caseTrials(src)); diff != "" {
		t.Errorf("the source's cases (-want +got):\n%s", diff)
	}

	resumed := createRun(t, testutil.MakeEvalRun("file-resumed", ns).Inline(suite).Resume(src.Name, evalsv1alpha1.ResumeMissing))
	job := waitJob(t, resumed)
	if n := ptr.Deref(job.Spec.Completions, 0); n != 3 || job.Annotations[podwire.AnnotationTrials] != "3" {
		t.Fatalf("the resumed run's Job: %d pods, trials %q; want its eval file's 3 trials", n, job.Annotations[podwire.AnnotationTrials])
	}
	ran := suiteTrialPods(t, resumed, func(string, int) string { return "bye" })
	if diff := cmp.Diff(map[int][]string{2: {"part"}}, ran); diff != "" {
		t.Errorf("tests run by index (-want +got):\n%s", diff)
	}
	got := waitReason(t, resumed, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if diff := cmp.Diff([]string{"greet=Pass 2/3", "part=Pass 3/3"}, caseTrials(got)); diff != "" {
		t.Errorf("the resumed run's cases (-want +got):\n%s", diff)
	}
	if tr := got.Status.Trials; tr == nil || tr.Count != 3 || tr.PassRate != "0.333333" || tr.Source != evalsv1alpha1.TrialsSourceEvalFile {
		t.Errorf("the resumed run's status.trials %+v", got.Status.Trials)
	}

	again := createRun(t, testutil.MakeEvalRun("file-rejudged", ns).Inline(suite).Rejudge(src.Name))
	job = waitJob(t, again)
	if n := ptr.Deref(job.Spec.Completions, 0); n != 3 || job.Annotations[podwire.AnnotationTrials] != "3" {
		t.Fatalf("the re-judge's Job: %d pods, trials %q; want its source's 3 trials", n, job.Annotations[podwire.AnnotationTrials])
	}
	rejudgeShards(t, again)
	got = waitReason(t, again, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
	if diff := cmp.Diff(caseTrials(src), caseTrials(got)); diff != "" {
		t.Errorf("the re-judge's cases against the source's (-source +re-judge):\n%s", diff)
	}
	if tr := got.Status.Trials; tr == nil || tr.Count != 3 || tr.PassRate != "0.333333" || tr.Source != "" {
		t.Errorf("the re-judge's status.trials %+v: want its source's 3 trials at 1/3, no source", got.Status.Trials)
	}
}
