package controller_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/collector"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
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
		out := podwire.Output{Root: dir + "/snapshot"}
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
	if !slices.Equal(names, []string{podwire.ContainerCollector}) {
		t.Errorf("the re-judge's pod has containers %v: want the collector only (no runner; no code judges, no judge)", names)
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
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: children.NamesFor("first").EvalConfigMap}, srcPinned); err != nil {
		t.Fatal(err)
	}
	srcCfg, err := children.RunConfigFrom(srcPinned)
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: children.NamesFor("second").Role}, role); err != nil {
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
	for _, other := range []string{srcCfg.ResultConfigMaps[0], children.NamesFor("first").EvalConfigMap} {
		if err := sa.Get(ctx, client.ObjectKey{Namespace: ns, Name: other}, &corev1.ConfigMap{}); !apierrors.IsForbidden(err) {
			t.Errorf("the re-judge's collector reading the source's ConfigMap %s: got %v, want Forbidden", other, err)
		}
	}
}

// TestRejudgeBothSidesOfAComparison: the common use of a re-judge, judging both sides of a comparison again with the
// same judge. Run a (2 shards, the baseline) and run b (3 shards) answer differently; a2 and b2 re-judge them with
// the same eval file, whose case-002 now expects REVIEW, and b2 names a2 as its baseline. b2 waits for a2 to be
// judged, then compares the two re-judges: the same eval file, every case shared, case-004 (answered by a only)
// newly failing and missing in b2, case-001, case-002 (judged by the new expectation) and case-005 (answered by b
// only) newly passing. Compared as first judged, b's case-002 was newly failing instead.
func TestRejudgeBothSidesOfAComparison(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	eval := testutil.DecisionEval(6)
	a := createRun(t, testutil.MakeEvalRun("a", ns).Inline(eval).Shards(2, 0))
	finishShards(t, a, answers(map[string]string{"case-001": "REVIEW", "case-005": ""}))
	waitReason(t, a, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
	b := createRun(t, testutil.MakeEvalRun("b", ns).Inline(eval).Shards(3, 0).Baseline("a", 0, ""))
	finishShards(t, b, answers(map[string]string{"case-002": "REVIEW", "case-004": ""}))
	got := waitRegressed(t, b, metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed)
	if c := got.Status.Baseline; c == nil || !cmp.Equal(c.NewlyFailing, []string{"case-002", "case-004"}) {
		t.Errorf("b against a, as first judged: status.baseline %+v, want case-002 and case-004 newly failing", got.Status.Baseline)
	}

	// The new judging: case-002 expects REVIEW. Its runner view (the inputs) is unchanged.
	judged := strings.Replace(eval, "  - id: case-002\n    input_messages:\n      - role: user\n        content: {row: {amount: 100, origin_country: NZ}}\n"+
		"    expected_messages:\n      - role: assistant\n        content: {decision: CLEAR}\n",
		"  - id: case-002\n    input_messages:\n      - role: user\n        content: {row: {amount: 100, origin_country: NZ}}\n"+
			"    expected_messages:\n      - role: assistant\n        content: {decision: REVIEW}\n", 1)
	if judged == eval {
		t.Fatal("the eval file was not changed")
	}
	judging := &evalsv1alpha1.Judging{PassThreshold: "0.5"}
	wa := testutil.MakeEvalRun("a2", ns).Inline(judged).Rejudge("a")
	wa.Spec.Judging = judging.DeepCopy()
	a2 := createRun(t, wa)
	wb := testutil.MakeEvalRun("b2", ns).Inline(judged).Rejudge("b").Baseline("a2", 0, "").FailWhenRegressed()
	wb.Spec.Judging = judging.DeepCopy()
	b2 := createRun(t, wb)

	// b2 is judged first: it waits for its baseline, a re-judge still in progress.
	rejudgeShards(t, b2)
	waitRegressed(t, b2, metav1.ConditionUnknown, evalsv1alpha1.ReasonBaselinePending)
	rejudgeShards(t, a2)
	gotA2 := waitReason(t, a2, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
	got = waitRegressed(t, b2, metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed)
	if got.Status.EvalFileSHA256 == "" || got.Status.EvalFileSHA256 != gotA2.Status.EvalFileSHA256 {
		t.Errorf("the re-judges' eval file digests %q and %q: want the same", got.Status.EvalFileSHA256, gotA2.Status.EvalFileSHA256)
	}
	want := &evalsv1alpha1.BaselineComparison{
		RunName: "a2", RunUID: string(a2.UID), EvalFile: evalsv1alpha1.EvalFileSame, SharedCases: 6,
		NewlyFailing: []string{"case-004"}, NewlyFailingCount: 1,
		NewlyPassing: []string{"case-001", "case-002", "case-005"}, NewlyPassingCount: 3,
		MissingInRun: []string{"case-004"}, MissingInRunCount: 1,
		MissingInBaseline: []string{"case-005"}, MissingInBaselineCount: 1,
		MeanScore: "1.0000", BaselineMeanScore: "0.5000", MeanScoreDelta: "+0.5000", Test: evalsv1alpha1.BaselineTestCount,
	}
	if diff := cmp.Diff(want, got.Status.Baseline, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("b2 against a2: status.baseline (-want +got):\n%s", diff)
	}
	c := runCondition(got, evalsv1alpha1.ConditionRegressed)
	if !strings.Contains(c.Message, "compared with baseline EvalRun a2 over 6 shared cases") || !strings.Contains(c.Message, `"case-004"`) {
		t.Errorf("Regressed message %q: want the comparison with a2 naming case-004", c.Message)
	}
	if p := runCondition(got, evalsv1alpha1.ConditionPassed); p == nil || p.Status != metav1.ConditionFalse {
		t.Errorf("Passed %+v: want False, b2 regressed (successPolicy.regression: Fail)", p)
	}
	for _, run := range []*evalsv1alpha1.EvalRun{gotA2, got} {
		for _, cs := range run.Status.Cases {
			if by := ptr.Deref(cs.AnsweredBy, ""); by != strings.TrimSuffix(run.Name, "2") {
				t.Errorf("%s: case %s answeredBy %q", run.Name, cs.ID, by)
			}
		}
	}
}

// answers is a runner's answer by case for finishShards: the decision given for an id ("" leaves it unanswered),
// CLEAR for every other.
func answers(given map[string]string) func(id string) string {
	return func(id string) string {
		if d, ok := given[id]; ok {
			return d
		}
		return "CLEAR"
	}
}
