package controller_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/collector"
	"github.com/evalrun-operator/evalrun-operator/internal/controller"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// rejudgeShards does what each pod of a re-judge does (collector.WriteRejudgeSnapshot, then the pipeline), with
// the collector's own identity: it reads the source's record ConfigMaps with the re-judge's token, judges, and
// records each shard's collection; then it marks the pods and the Job done.
func rejudgeShards(t *testing.T, run *evalsv1alpha1.EvalRun) {
	t.Helper()
	ctx := context.Background()
	job := waitJob(t, run)
	shards := int(ptr.Deref(job.Spec.Completions, 1))
	sa := collectorClient(t, run)
	var indexes []string
	for i := range shards {
		pod := startShardPod(t, job, i)
		cfg, dir := shardConfig(t, run, i)
		data, err := os.ReadFile(cfg.EvalFile)
		if err != nil {
			t.Fatal(err)
		}
		file, err := evalfile.Parse(data, evalfile.WithDefaultEvaluators(cfg.DefaultEvaluators))
		if err != nil {
			t.Fatal(err)
		}
		out := layout.Output{Root: dir + "/snapshot"}
		src := collector.ConfigMapRecords(sa, run.Namespace, cfg.Rejudge.ConfigMaps, collector.Backoff{})
		rj, err := collector.WriteRejudgeSnapshot(ctx, &cfg, file, src, out)
		if err != nil {
			t.Fatal(err)
		}
		g, err := collector.Gather(ctx, collector.GatherInput{Config: &cfg, Output: out, Snapshot: rj.Snapshot, EndCause: outcome.EndEnded,
			PodName: pod.Name, Now: time.Now(), EvalFile: file, MissingReasons: rj.MissingReasons, AnsweredBy: cfg.Rejudge.From,
			Note: rj.Note(cfg.Rejudge.From)})
		if err != nil {
			t.Fatal(err)
		}
		if err := collector.WriteResultConfigMaps(ctx, sa, run.Namespace, cfg.ResultConfigMaps, g.Output.Chunks); err != nil {
			t.Fatal(err)
		}
		writeSection(t, sa, run, cfg, g)
		updatePodStatus(t, pod, func(s *corev1.PodStatus) { s.Phase = corev1.PodSucceeded })
		indexes = append(indexes, strconv.Itoa(i))
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) {
		s.StartTime = ptr.To(metav1.Now())
		s.CompletedIndexes = strings.Join(indexes, ",")
	})
}

// TestRejudgeJudgesKeptRecords: a re-judge of a 2-shard run, with a changed pass threshold, no target and one
// case's input changed in its eval file. Its Job has the source's 2 shards and no runner container; its collector's
// Role may get the source's record ConfigMaps and nothing else of the source; the cases are judged from the kept
// records (answeredBy the source), with the verdicts the source's answers get, and the case whose input changed is
// missing with its reason.
func TestRejudgeJudgesKeptRecords(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t)
	eval := testutil.DecisionEval(4)
	first := createRun(t, testutil.MakeEvalRun("first", ns).Inline(eval).Shards(2, 0))
	finishShards(t, first, func(id string) string {
		if id == "case-001" {
			return "REVIEW"
		}
		return "CLEAR"
	})
	got := waitReason(t, first, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if r := got.Status.Records; r == nil || r.Kept != 4 {
		t.Fatalf("the source's status.records %+v, want 4 kept", got.Status.Records)
	}

	// case-003's input changes: its record is not judged.
	changed := strings.Replace(eval, "  - id: case-003\n    input_messages:\n      - role: user\n        content: {row: {amount: 100",
		"  - id: case-003\n    input_messages:\n      - role: user\n        content: {row: {amount: 900", 1)
	if changed == eval {
		t.Fatal("the eval file was not changed")
	}
	w := testutil.MakeEvalRun("second", ns).Inline(changed).Rejudge("first")
	w.Spec.Judging = &evalsv1alpha1.Judging{PassThreshold: "0.5"}
	second := createRun(t, w)
	job := waitJob(t, second)
	if n := ptr.Deref(job.Spec.Completions, 0); n != 2 {
		t.Errorf("the re-judge's Job has %d shards, want the source's 2", n)
	}
	var names []string
	for _, c := range job.Spec.Template.Spec.Containers {
		names = append(names, c.Name)
	}
	if slices.Contains(names, layout.ContainerRunner) || !slices.Contains(names, layout.JudgeContainer(0)) {
		t.Errorf("the re-judge's pod has containers %v: want a judge and no runner", names)
	}

	expectRejudgeGrants(t, ns, second)

	rejudgeShards(t, second)
	got = waitReason(t, second, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
	verdicts := map[string]string{}
	for _, c := range got.Status.Cases {
		verdicts[c.ID] = string(c.Verdict) + "/" + ptr.Deref(c.AnsweredBy, "")
	}
	want := map[string]string{"case-000": "Pass/first", "case-001": "Fail/first", "case-002": "Pass/first"}
	if diff := cmp.Diff(want, verdicts); diff != "" {
		t.Errorf("verdict/answeredBy by case (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"case-003"}, got.Status.MissingIDs); diff != "" {
		t.Errorf("missing ids (-want +got):\n%s", diff)
	}
	// The stored result of the case whose input changed says why it was not judged.
	msg, err := stored.EachLine(ctx, k8s, got, func(l *results.Line) error {
		if l.ID == "case-003" && (!l.Missing || !strings.Contains(l.Error, "not judged: the case's input changed since EvalRun first answered it")) {
			t.Errorf("case-003's stored result: missing %v, error %q", l.Missing, l.Error)
		}
		return nil
	})
	if msg != "" || err != nil {
		t.Fatalf("reading the stored results: %s %v", msg, err)
	}
	if s := got.Status.Summary; s == nil || s.Total != 4 || s.Passed != 2 || s.Failed != 1 || s.Missing != 1 {
		t.Errorf("summary %+v", got.Status.Summary)
	}
}

// TestRejudgeSourceProblems: a re-judge of a run that kept no records, of a run that does not exist, or of itself
// ends RejudgeSourceInvalid, naming what is wrong, and creates no Job.
func TestRejudgeSourceProblems(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	// A run that failed before its pod ran kept no records.
	invalid := createRun(t, testutil.MakeEvalRun("invalid", ns).Inline("evalcases: [oops"))
	waitReason(t, invalid, metav1.ConditionFalse, evalsv1alpha1.ReasonInvalidEvalFile)
	for name, tc := range map[string]struct{ from, message string }{
		"of-invalid": {"invalid", "EvalRun invalid kept no records (status.records: none;"},
		"of-nowhere": {"nowhere", "EvalRun nowhere, named by spec.rejudge.from, does not exist"},
		"of-itself":  {"of-itself", "spec.rejudge.from names this run itself"},
	} {
		run := createRun(t, testutil.MakeEvalRun(name, ns).Inline(testutil.DecisionEval(2)).Rejudge(tc.from))
		got := waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonRejudgeSourceInvalid)
		if c := runCondition(got, evalsv1alpha1.ConditionSucceeded); !strings.Contains(c.Message, tc.message) {
			t.Errorf("%s: message %q, want it to say %q", name, c.Message, tc.message)
		}
	}
	var jobs batchv1.JobList
	if err := k8s.List(context.Background(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) > 0 {
		t.Errorf("%d Jobs were created for runs that cannot be judged again", len(jobs.Items))
	}
}

// expectRejudgeGrants checks the Role of re-judge second of EvalRun first: get on exactly the source's record
// ConfigMaps, nothing else of the source's.
func expectRejudgeGrants(t *testing.T, ns string, second *evalsv1alpha1.EvalRun) {
	t.Helper()
	ctx := context.Background()
	srcPinned := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: controller.NamesFor("first").EvalConfigMap}, srcPinned); err != nil {
		t.Fatal(err)
	}
	srcCfg, err := controller.RunConfigFrom(srcPinned)
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: controller.NamesFor("second").Role}, role); err != nil {
		t.Fatal(err)
	}
	var readOnly [][]string
	for _, r := range role.Rules {
		if slices.Equal(r.Verbs, []string{"get"}) {
			readOnly = append(readOnly, r.ResourceNames)
		}
	}
	if diff := cmp.Diff([][]string{srcCfg.Records.ConfigMaps}, readOnly); diff != "" {
		t.Errorf("the re-judge's read-only grants (-want +got):\n%s", diff)
	}
	sa := collectorClient(t, second)
	if err := sa.Get(ctx, client.ObjectKey{Namespace: ns, Name: srcCfg.Records.ConfigMaps[0]}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the re-judge's collector reading the source's record ConfigMap: %v", err)
	}
	for _, other := range []string{srcCfg.ResultConfigMaps[0], controller.NamesFor("first").EvalConfigMap} {
		if err := sa.Get(ctx, client.ObjectKey{Namespace: ns, Name: other}, &corev1.ConfigMap{}); !apierrors.IsForbidden(err) {
			t.Errorf("the re-judge's collector reading the source's ConfigMap %s: got %v, want Forbidden", other, err)
		}
	}
}
