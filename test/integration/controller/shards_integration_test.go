package controller_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/collector"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/install"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// collectorClient is a client acting as the run's collector (its ServiceAccount), so that the shard writes below
// go through the collector's own RBAC.
func collectorClient(t *testing.T, run *evalsv1alpha1.EvalRun) client.Client {
	t.Helper()
	cfg := *restCfg
	cfg.Impersonate.UserName = fmt.Sprintf("system:serviceaccount:%s:%s", run.Namespace, children.NamesFor(run.Name).ServiceAccount)
	cfg.Impersonate.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + run.Namespace, "system:authenticated"}
	c, err := client.New(&cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// shardPod is the pod of shard index as the Job controller would create it (its labels and completion index
// annotation, the Job as its controller).
func shardPod(job *batchv1.Job, index int) *corev1.Pod {
	labels := map[string]string{"batch.kubernetes.io/job-name": job.Name, "batch.kubernetes.io/controller-uid": string(job.UID),
		"batch.kubernetes.io/job-completion-index": strconv.Itoa(index)}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%d-x7k2p", job.Name, index), Namespace: job.Namespace, Labels: labels,
			Annotations:     map[string]string{podwire.AnnotationJobCompletionIndex: strconv.Itoa(index)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
}

// startShardPod creates the pod of shard index as the Job controller would and marks it running.
func startShardPod(t *testing.T, job *batchv1.Job, index int) *corev1.Pod {
	t.Helper()
	pod := shardPod(job, index)
	if err := k8s.Create(context.Background(), pod); err != nil {
		t.Fatalf("creating pod: %v", err)
	}
	updatePodStatus(t, pod, func(s *corev1.PodStatus) { s.Phase = corev1.PodRunning })
	return pod
}

// collectShard does what shard index's pod (or a one-pod run's pod) does with the runner's output: install writes the shard's eval file
// from the pinned one, and the collector (the real pipeline) judges the output and records the shard's collection
// with the collector's identity.
func collectShard(t *testing.T, run *evalsv1alpha1.EvalRun, index int, podName, output string) {
	t.Helper()
	collectShardInto(t, run, index, podName, output, nil)
}

// collectShardInto is collectShard for a run whose results go to store (its spec.storage bucket, as the
// collector's credentials open it) when store is not nil: the shard's results object and summary, as the
// collector puts them, then its shard section (none with statusFrom: Bucket: the pod makes no API call). It
// returns what was gathered.
func collectShardInto(t *testing.T, run *evalsv1alpha1.EvalRun, index int, podName, output string, store *objstore.Store) *collector.Gathered {
	t.Helper()
	ctx := context.Background()
	cfg, dir := shardConfig(t, run, index)
	out := podwire.Output{Root: filepath.Join(dir, "out")}
	if err := os.MkdirAll(out.Root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out.BatchOutput(), []byte(output), 0o644); err != nil {
		t.Fatal(err)
	}
	in := collector.GatherInput{Config: &cfg, Output: out, EndCause: outcome.EndEnded, PodName: podName, Now: time.Now()}
	ref := objstore.RunRef{Namespace: run.Namespace, Name: run.Name, UID: string(run.UID)}
	resultsKey, err := ref.ShardResultsKey(int(cfg.PodIndex))
	if err != nil {
		t.Fatal(err)
	}
	if store != nil {
		in.ResultsObject = store.URI(resultsKey)
	}
	g, err := collector.Gather(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	sa := collectorClient(t, run)
	if store != nil {
		for _, ch := range g.Output.Chunks {
			if err := store.Put(ctx, resultsKey, bytes.NewReader(ch.Data), objstore.ContentTypeGzip); err != nil {
				t.Fatal(err)
			}
		}
		summaryKey, err := ref.ShardSummaryKey(int(cfg.PodIndex))
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(g.Output.Section)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, summaryKey, bytes.NewReader(body), objstore.ContentTypeJSON); err != nil {
			t.Fatal(err)
		}
	} else if err := collector.WriteResultConfigMaps(ctx, sa, run.Namespace, cfg.ResultConfigMaps, g.Output.Chunks); err != nil {
		t.Fatal(err)
	}
	if r := cfg.Records; store == nil && r != nil && len(r.ConfigMaps) > 0 {
		if err := collector.WriteRecordConfigMaps(ctx, sa, run.Namespace, r.ConfigMaps, g.Records); err != nil {
			t.Fatal(err)
		}
	}
	writeSection(t, sa, run, cfg, g)
	return g
}

// shardConfig is the run.json of the pod of completion index index (with trials, a trial of a shard), with the
// shard's eval file written as install writes it, in a directory of the test's.
func shardConfig(t *testing.T, run *evalsv1alpha1.EvalRun, index int) (podwire.RunConfig, string) {
	t.Helper()
	ctx := context.Background()
	pinned := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: children.NamesFor(run.Name).EvalConfigMap}, pinned); err != nil {
		t.Fatal(err)
	}
	cfg, err := children.RunConfigFrom(pinned)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	source := filepath.Join(dir, "eval.yaml")
	if err := os.WriteFile(source, []byte(pinned.Data[podwire.EvalFileKey]), 0o644); err != nil {
		t.Fatal(err)
	}
	shardIndex := ""
	if cfg.Pods() > 1 {
		// The pod's completion index: with trials, trial·shards + shard.
		shardIndex = strconv.Itoa(index)
	}
	if cfg.SourceEvalFile != "" {
		// A sharded run's, or a resumed run's whose trials run different cases: each pod cuts its own.
		cfg.SourceEvalFile, cfg.EvalFile = source, filepath.Join(dir, "shard", "eval.yaml")
	} else {
		cfg.EvalFile = source
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := cfg.LoadShard(shardIndex); err != nil {
		t.Fatal(err)
	}
	if err := install.WriteShardEvalFile(ctx, &cfg, ""); err != nil {
		t.Fatal(err)
	}
	return cfg, dir
}

// writeSection records the shard's collection as its collector does: in its shard ConfigMap, or the run's status
// (none with statusFrom: Bucket).
func writeSection(t *testing.T, sa client.Client, run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig, g *collector.Gathered) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch {
	case cfg.BucketOnly:
	case cfg.ShardConfigMap() == "":
		err = collector.ApplyStatus(ctx, sa, run.Namespace, run.Name, string(run.UID), g.Output.Section)
	default:
		err = collector.WriteShardSection(ctx, sa, run.Namespace, cfg.ShardConfigMap(), g.Output.Section)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestShardedRunMergesItsShards runs 7 cases in 3 shards (cases 0-1, 2-3, 4-6): shard 0 passes, shard 1's runner
// fails after answering one case wrongly, shard 2 leaves one case out. The run waits for every shard, then ends
// with the most fundamental reason (RunnerFailed) and one merged picture: every result any shard got, the missing
// ids (the failed shard's unanswered case and shard 2's), each shard's own entry.
func TestShardedRunMergesItsShards(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("sharded", ns).Inline(testutil.DecisionEval(7)).Shards(3, 2))
	job := waitJob(t, run)
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion ||
		*job.Spec.Completions != 3 || *job.Spec.Parallelism != 2 || ptr.Deref(job.Spec.BackoffLimitPerIndex, -1) != 0 {
		t.Fatalf("Job spec: mode %v completions %v parallelism %v backoffLimitPerIndex %v", job.Spec.CompletionMode,
			job.Spec.Completions, job.Spec.Parallelism, job.Spec.BackoffLimitPerIndex)
	}
	// The collectors of a sharded run may not write the EvalRun at all.
	sa := collectorClient(t, run)
	if err := sa.Get(ctx, client.ObjectKeyFromObject(run), &evalsv1alpha1.EvalRun{}); !apierrors.IsForbidden(err) {
		t.Errorf("a shard collector reading its EvalRun: got %v, want Forbidden", err)
	}

	pods := []*corev1.Pod{startShardPod(t, job, 0), startShardPod(t, job, 1)}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.StartTime = ptr.To(metav1.Now()); s.Active = 2 })
	waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonRunning)

	// Shard 0 completes.
	collectShard(t, run, 0, pods[0].Name, testutil.DecisionLine(0, "CLEAR")+testutil.DecisionLine(1, "CLEAR"))
	updatePodStatus(t, pods[0], runnerTerminated(0, "Completed", time.Now()))
	// Shard 1's runner answers case 2 wrongly, then exits 3.
	collectShard(t, run, 1, pods[1].Name, testutil.DecisionLine(2, "REVIEW"))
	updatePodStatus(t, pods[1], runnerTerminated(3, "Error", time.Now()))
	updateJobStatus(t, job, func(s *batchv1.JobStatus) {
		s.CompletedIndexes, s.FailedIndexes, s.Succeeded, s.Failed, s.Active = "0", ptr.To("1"), 1, 1, 0
	})
	// Two of three shards ended; the run waits for the third.
	eventually(t, "the run waits for shard 2", func() error {
		got := getRun(t, run)
		if got.Status.Sharding == nil || got.Status.Sharding.Succeeded != 1 || got.Status.Sharding.Failed != 1 {
			return fmt.Errorf("sharding %+v", got.Status.Sharding)
		}
		if c := runCondition(got, evalsv1alpha1.ConditionSucceeded); c == nil || c.Status != metav1.ConditionUnknown {
			return fmt.Errorf("succeeded %+v", c)
		}
		return nil
	})

	// Shard 2 leaves case-005 out.
	pod2 := startShardPod(t, job, 2)
	collectShard(t, run, 2, pod2.Name, testutil.DecisionLine(4, "CLEAR")+testutil.DecisionLine(6, "CLEAR"))
	updatePodStatus(t, pod2, runnerTerminated(0, "Completed", time.Now()))
	got := waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonRunnerFailed)

	c := runCondition(got, evalsv1alpha1.ConditionSucceeded)
	if !strings.HasPrefix(c.Message, "2 of 3 shards failed; shard 1: ") {
		t.Errorf("Succeeded message %q", c.Message)
	}
	wantSummary := evalsv1alpha1.RunSummary{Total: 7, Passed: 4, Failed: 1, Errored: 2, Missing: 2,
		MeanScore: "0.8000", MedianScore: "1.0000", MinScore: "0.0000", MaxScore: "1.0000", PassRate: "0.5714", Histogram: []int32{1, 0, 0, 0, 4}}
	if diff := cmp.Diff(&wantSummary, got.Status.Summary); diff != "" {
		t.Errorf("merged summary (-want +got):\n%s", diff)
	}
	// Each missing id names its shard.
	expectMissing(t, got, []string{"case-003", "case-005"},
		[]evalsv1alpha1.MissingIDRun{{Shard: ptr.To[int32](1), Count: 1}, {Shard: ptr.To[int32](2), Count: 1}})
	var verdicts []string
	for _, cs := range got.Status.Cases {
		verdicts = append(verdicts, cs.ID+"="+string(cs.Verdict))
	}
	// Non-passing first, then passing, each in case order; missing cases are listed in missingIds only.
	if diff := cmp.Diff([]string{"case-002=Fail", "case-000=Pass", "case-001=Pass", "case-004=Pass", "case-006=Pass"}, verdicts); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	var shards []string
	for _, s := range got.Status.Shards {
		shards = append(shards, fmt.Sprintf("%d:%s/%s cases=%d passed=%d failed=%d missing=%d %v", s.Index, s.State, s.Reason, s.Cases, s.Passed, s.Failed, s.Missing, s.MissingIDs))
	}
	if diff := cmp.Diff([]string{
		"1:Failed/RunnerFailed cases=2 passed=0 failed=1 missing=1 [case-003]",
		"2:Failed/MissingResults cases=3 passed=2 failed=0 missing=1 [case-005]",
		"0:Succeeded/Completed cases=2 passed=2 failed=0 missing=0 []",
	}, shards); diff != "" {
		t.Errorf("shards (-want +got):\n%s", diff)
	}
	if s := got.Status.Sharding; s == nil || s.Shards != 3 || s.Split != assess.SplitContiguous || s.Failed != 2 || s.Succeeded != 1 {
		t.Errorf("sharding %+v", got.Status.Sharding)
	}
	if p := runCondition(got, evalsv1alpha1.ConditionPassed); p == nil || p.Status != metav1.ConditionFalse {
		t.Errorf("Passed %+v", p)
	}
	if r := got.Status.Results; r == nil || r.TotalCases != 7 || len(r.ConfigMaps) != 3 {
		t.Errorf("results reference %+v", got.Status.Results)
	}
	if got.Status.Collection != nil {
		t.Errorf("a sharded run has no one collection: %+v", got.Status.Collection)
	}
}

// expectMissing checks the run's missing ids and their shards.
func expectMissing(t *testing.T, run *evalsv1alpha1.EvalRun, ids []string, shards []evalsv1alpha1.MissingIDRun) {
	t.Helper()
	if diff := cmp.Diff(ids, run.Status.MissingIDs); diff != "" {
		t.Errorf("missing ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(shards, run.Status.MissingIDShards); diff != "" {
		t.Errorf("missing ids' shards (-want +got):\n%s", diff)
	}
}

func runCondition(run *evalsv1alpha1.EvalRun, t string) *metav1.Condition {
	for i := range run.Status.Conditions {
		if run.Status.Conditions[i].Type == t {
			return &run.Status.Conditions[i]
		}
	}
	return nil
}

// finishShards runs every shard of run through collectShard with the answers answer gives (one decision per case
// id, "" to leave the case out), and marks their runners ended with exit code 0.
func finishShards(t *testing.T, run *evalsv1alpha1.EvalRun, answer func(id string) string) {
	t.Helper()
	finishShardsInto(t, run, answer, nil)
}

// finishShardsInto is finishShards for a run whose results go to store (nil: its result ConfigMaps).
func finishShardsInto(t *testing.T, run *evalsv1alpha1.EvalRun, answer func(id string) string, store *objstore.Store) {
	t.Helper()
	job := waitJob(t, run)
	shards := 1
	if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion {
		shards = int(*job.Spec.Completions)
	}
	pinned := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: run.Namespace, Name: children.NamesFor(run.Name).EvalConfigMap}, pinned); err != nil {
		t.Fatal(err)
	}
	cfg, err := children.RunConfigFrom(pinned)
	if err != nil {
		t.Fatal(err)
	}
	var indexes []string
	for i := range shards {
		pod := startShardPod(t, job, i)
		lo, hi := podwire.ShardRange(len(cfg.CaseIDs), shards, i)
		var out strings.Builder
		for _, id := range cfg.CaseIDs[lo:hi] {
			if d := answer(id); d != "" {
				n, _ := strconv.Atoi(strings.TrimPrefix(id, "case-"))
				out.WriteString(testutil.DecisionLine(n, d))
			}
		}
		collectShardInto(t, run, i, pod.Name, out.String(), store)
		updatePodStatus(t, pod, runnerTerminated(0, "Completed", time.Now()))
		indexes = append(indexes, strconv.Itoa(i))
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) {
		s.StartTime = ptr.To(metav1.Now())
		if shards > 1 {
			s.CompletedIndexes = strings.Join(indexes, ",")
		}
	})
}

// TestResumeRunsOnlyWhatIsLeft resumes a run whose case-002 failed and case-003 and case-005 are missing: with
// NotPassed (in 2 shards) only those three run; with Missing only the two missing ones. The other results are
// carried, marked with the earlier run, and the status is the combined picture.
func TestResumeRunsOnlyWhatIsLeft(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	eval := testutil.DecisionEval(7)
	first := createRun(t, testutil.MakeEvalRun("first", ns).Inline(eval).Shards(3, 0))
	finishShards(t, first, func(id string) string {
		switch id {
		case "case-002":
			return "REVIEW"
		case "case-003", "case-005":
			return ""
		}
		return "CLEAR"
	})
	waitReason(t, first, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)

	// NotPassed, in 2 shards: case-002, case-003 and case-005 run again, and now pass.
	second := createRun(t, testutil.MakeEvalRun("second", ns).Inline(eval).Shards(2, 0).Resume("first", evalsv1alpha1.ResumeNotPassed))
	job := waitJob(t, second)
	if *job.Spec.Completions != 2 || job.Annotations[podwire.AnnotationCases] != "3" {
		t.Fatalf("the resumed run's Job: %d shards, %s cases; want 2 shards, 3 cases", *job.Spec.Completions, job.Annotations[podwire.AnnotationCases])
	}
	var ran []string
	finishShards(t, second, func(id string) string { ran = append(ran, id); return "CLEAR" })
	if diff := cmp.Diff([]string{"case-002", "case-003", "case-005"}, ran); diff != "" {
		t.Errorf("cases run again (-want +got):\n%s", diff)
	}
	got := waitReason(t, second, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if s := got.Status.Summary; s == nil || s.Total != 7 || s.Passed != 7 || s.Missing != 0 {
		t.Errorf("combined summary %+v", got.Status.Summary)
	}
	if p := runCondition(got, evalsv1alpha1.ConditionPassed); p == nil || p.Status != metav1.ConditionTrue {
		t.Errorf("Passed %+v", p)
	}
	checkCarried(t, got, map[string]string{"case-000": "first", "case-001": "first", "case-002": "", "case-003": "",
		"case-004": "first", "case-005": "", "case-006": "first"})
	if r := got.Status.Resume; r == nil || r.From != "first" || r.FromUID != string(first.UID) || r.Ran != 3 || r.Carried != 4 || r.Cases != evalsv1alpha1.ResumeNotPassed {
		t.Errorf("resume status %+v", got.Status.Resume)
	}
	if got.Status.EvalFileSHA256 != getRun(t, first).Status.EvalFileSHA256 {
		t.Errorf("the resumed run's eval file digest %s is not the whole file's", got.Status.EvalFileSHA256)
	}

	// Missing, one pod: only the two missing cases run; the failed case-002 is carried as it was.
	third := createRun(t, testutil.MakeEvalRun("third", ns).Inline(eval).Resume("first", evalsv1alpha1.ResumeMissing))
	ran = nil
	finishShards(t, third, func(id string) string { ran = append(ran, id); return "CLEAR" })
	if diff := cmp.Diff([]string{"case-003", "case-005"}, ran); diff != "" {
		t.Errorf("cases run again (-want +got):\n%s", diff)
	}
	got = waitReason(t, third, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if s := got.Status.Summary; s == nil || s.Total != 7 || s.Passed != 6 || s.Failed != 1 {
		t.Errorf("combined summary %+v", got.Status.Summary)
	}

	// Resuming the complete second run with NotPassed leaves nothing to run: no Job, every result carried.
	fourth := createRun(t, testutil.MakeEvalRun("fourth", ns).Inline(eval).Resume("second", evalsv1alpha1.ResumeNotPassed))
	got = waitReason(t, fourth, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if s := got.Status.Summary; s == nil || s.Total != 7 || s.Passed != 7 || got.Status.JobName != "" {
		t.Errorf("nothing to run: summary %+v, job %q", got.Status.Summary, got.Status.JobName)
	}
	// A result carried twice keeps the run it came from.
	checkCarried(t, got, map[string]string{"case-000": "first", "case-001": "first", "case-002": "second", "case-003": "second",
		"case-004": "first", "case-005": "second", "case-006": "first"})
}

// checkCarried compares the run's status cases' carriedFrom with want, by case id.
func checkCarried(t *testing.T, run *evalsv1alpha1.EvalRun, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, c := range run.Status.Cases {
		got[c.ID] = ptr.Deref(c.CarriedFrom, "")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("carriedFrom by case (-want +got):\n%s", diff)
	}
}

// TestResumeSourceProblems: a resume of a run that is not there, of another eval file, or of itself ends with
// ResumeSourceInvalid and no pod; a resume of a run still in progress waits for it.
func TestResumeSourceProblems(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	gone := createRun(t, testutil.MakeEvalRun("gone", ns).Inline(testutil.DecisionEval(2)).Resume("nowhere", evalsv1alpha1.ResumeMissing))
	got := waitReason(t, gone, metav1.ConditionFalse, evalsv1alpha1.ReasonResumeSourceInvalid)
	if c := runCondition(got, evalsv1alpha1.ConditionSucceeded); !strings.Contains(c.Message, "EvalRun nowhere, named by spec.resume.from, does not exist") {
		t.Errorf("message %q", c.Message)
	}
	self := createRun(t, testutil.MakeEvalRun("self", ns).Inline(testutil.DecisionEval(2)).Resume("self", evalsv1alpha1.ResumeMissing))
	waitReason(t, self, metav1.ConditionFalse, evalsv1alpha1.ReasonResumeSourceInvalid)

	running := createRun(t, testutil.MakeEvalRun("running", ns).Inline(testutil.DecisionEval(2)))
	waitJob(t, running)
	waiting := createRun(t, testutil.MakeEvalRun("waiting", ns).Inline(testutil.DecisionEval(2)).Resume("running", evalsv1alpha1.ResumeMissing))
	got = waitReason(t, waiting, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
	if c := runCondition(got, evalsv1alpha1.ConditionSucceeded); !strings.Contains(c.Message, "waiting for EvalRun running to finish") {
		t.Errorf("message %q", c.Message)
	}

	other := createRun(t, testutil.MakeEvalRun("other", ns).Inline(testutil.DecisionEval(3)).Resume("running", evalsv1alpha1.ResumeMissing))
	finishShards(t, running, func(string) string { return "CLEAR" })
	waitReason(t, running, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	got = waitReason(t, other, metav1.ConditionFalse, evalsv1alpha1.ReasonResumeSourceInvalid)
	if c := runCondition(got, evalsv1alpha1.ConditionSucceeded); !strings.Contains(c.Message, "a run resumes only the same eval file") {
		t.Errorf("message %q", c.Message)
	}
	var jobs batchv1.JobList
	if err := k8s.List(context.Background(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		if j.Name != children.NamesFor("running").Job && j.Name != children.NamesFor("waiting").Job {
			t.Errorf("Job %s was created for a run that cannot resume", j.Name)
		}
	}
}
