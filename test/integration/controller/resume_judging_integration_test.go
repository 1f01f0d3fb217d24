package controller_test

import (
	"context"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// TestResumeRefusesOtherJudging: a resume whose judging differs from the earlier run's (here its pass threshold)
// ends ResumeSourceInvalid naming the setting, both values and what to do, and creates no Job; a resume that
// changes only what cannot change a verdict (successPolicy, shards, parallelism) proceeds; a resume of a run whose
// pinned run.json is gone ends ResumeSourceInvalid saying so.
func TestResumeRefusesOtherJudging(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t)
	eval := testutil.DecisionEval(4)
	first := createRun(t, testutil.MakeEvalRun("first", ns).Inline(eval))
	finishShards(t, first, func(id string) string {
		if id == "case-003" {
			return ""
		}
		return "CLEAR"
	})
	waitReason(t, first, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)

	w := testutil.MakeEvalRun("stricter", ns).Inline(eval).Resume("first", evalsv1alpha1.ResumeMissing)
	w.Spec.Judging = &evalsv1alpha1.Judging{PassThreshold: "0.95"}
	stricter := createRun(t, w)
	got := waitReason(t, stricter, metav1.ConditionFalse, evalsv1alpha1.ReasonResumeSourceInvalid)
	msg := runCondition(got, evalsv1alpha1.ConditionSucceeded).Message
	for _, want := range []string{`spec.judging.passThreshold is "0.8" there, "0.95" here`,
		"Re-judge EvalRun first with this judging first (spec.rejudge.from, kubectl evalrun rejudge first) and resume from that run"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q, want it to say %q", msg, want)
		}
	}

	// successPolicy, shards and parallelism do not change a case's verdict: the resume runs case-003.
	same := createRun(t, testutil.MakeEvalRun("same", ns).Inline(eval).Shards(2, 1).MinPassRate("0.5").
		Resume("first", evalsv1alpha1.ResumeMissing))
	var ran []string
	finishShards(t, same, func(id string) string { ran = append(ran, id); return "CLEAR" })
	if diff := cmp.Diff([]string{"case-003"}, ran); diff != "" {
		t.Errorf("cases run again (-want +got):\n%s", diff)
	}
	got = waitReason(t, same, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if r := got.Status.Resume; r == nil || r.From != "first" || r.Ran != 1 || r.Carried != 3 {
		t.Errorf("resume status %+v", got.Status.Resume)
	}

	// The earlier run's pinned run.json is gone: the judging of its verdicts is unknown.
	pinned := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: children.NamesFor("first").EvalConfigMap}}
	if err := k8s.Delete(ctx, pinned); err != nil {
		t.Fatal(err)
	}
	orphan := createRun(t, testutil.MakeEvalRun("orphan", ns).Inline(eval).Resume("first", evalsv1alpha1.ResumeMissing))
	got = waitReason(t, orphan, metav1.ConditionFalse, evalsv1alpha1.ReasonResumeSourceInvalid)
	want := "EvalRun first has no pinned eval ConfigMap first-evalrun-eval: the judging its verdicts were given under is unknown"
	if msg := runCondition(got, evalsv1alpha1.ConditionSucceeded).Message; !strings.Contains(msg, want) {
		t.Errorf("message %q, want it to say %q", msg, want)
	}

	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		if j.Name != children.NamesFor("first").Job && j.Name != children.NamesFor("same").Job {
			t.Errorf("Job %s was created for a run that cannot resume", j.Name)
		}
	}
}

// TestResumeRefusesOtherAnswerDelimiters: LLM judges that set the answer apart otherwise sent other prompts: a
// resume with answerDelimiters Nonce of a run judged with AgentV's (the default) ends ResumeSourceInvalid naming the
// setting, and creates no Job.
func TestResumeRefusesOtherAnswerDelimiters(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t)
	eval := testutil.DecisionEval(2)
	llm := func(d *evalsv1alpha1.AnswerDelimiters) *evalsv1alpha1.Judging {
		return &evalsv1alpha1.Judging{LLM: &evalsv1alpha1.LLMJudging{BaseURL: ptr.To("http://judge.example:8080/v1"), Model: ptr.To("m"),
			AnswerDelimiters: d}}
	}
	w := testutil.MakeEvalRun("agentv", ns).Inline(eval)
	w.Spec.Judging = llm(nil)
	first := createRun(t, w)
	finishShards(t, first, func(id string) string {
		if id == "case-001" {
			return ""
		}
		return "CLEAR"
	})
	waitReason(t, first, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)

	w = testutil.MakeEvalRun("nonce", ns).Inline(eval).Resume("agentv", evalsv1alpha1.ResumeMissing)
	w.Spec.Judging = llm(ptr.To(evalsv1alpha1.AnswerDelimitersNonce))
	nonce := createRun(t, w)
	got := waitReason(t, nonce, metav1.ConditionFalse, evalsv1alpha1.ReasonResumeSourceInvalid)
	want := `spec.judging.llm.answerDelimiters is "AgentV" there, "Nonce" here`
	if msg := runCondition(got, evalsv1alpha1.ConditionSucceeded).Message; !strings.Contains(msg, want) {
		t.Errorf("message %q, want it to say %q", msg, want)
	}
	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		if j.Name != children.NamesFor("agentv").Job {
			t.Errorf("Job %s was created for a run that cannot resume", j.Name)
		}
	}
}

// TestResumeFromRejudge: a run whose case-003 is not answered, judged again with a changed pass threshold and
// case-002's input changed; a resume of that re-judge with its judging and its eval file carries the re-judged
// verdicts (carriedFrom the re-judge, answeredBy the first run) and runs only the cases the re-judge did not judge
// (the one whose input changed, the one without a record).
func TestResumeFromRejudge(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t)
	eval := testutil.DecisionEval(4)
	first := createRun(t, testutil.MakeEvalRun("first", ns).Inline(eval).Shards(2, 0))
	finishShards(t, first, func(id string) string {
		switch id {
		case "case-001":
			return "REVIEW"
		case "case-003":
			return ""
		}
		return "CLEAR"
	})
	waitReason(t, first, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)

	changed := strings.Replace(eval, "  - id: case-002\n    input_messages:\n      - role: user\n        content: {row: {amount: 100",
		"  - id: case-002\n    input_messages:\n      - role: user\n        content: {row: {amount: 900", 1)
	if changed == eval {
		t.Fatal("the eval file was not changed")
	}
	judging := func() *evalsv1alpha1.Judging { return &evalsv1alpha1.Judging{PassThreshold: "0.5"} }
	w := testutil.MakeEvalRun("rejudged", ns).Inline(changed).Rejudge("first")
	w.Spec.Judging = judging()
	rejudged := createRun(t, w)
	rejudgeShards(t, rejudged)
	src := waitReason(t, rejudged, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
	if diff := cmp.Diff([]string{"case-002", "case-003"}, src.Status.MissingIDs); diff != "" {
		t.Fatalf("the re-judge's missing ids (-want +got):\n%s", diff)
	}

	// With the first run's threshold the resume is refused: the re-judge judged under 0.5.
	refused := createRun(t, testutil.MakeEvalRun("refused", ns).Inline(changed).Resume("rejudged", evalsv1alpha1.ResumeMissing))
	got := waitReason(t, refused, metav1.ConditionFalse, evalsv1alpha1.ReasonResumeSourceInvalid)
	if msg := runCondition(got, evalsv1alpha1.ConditionSucceeded).Message; !strings.Contains(msg, `spec.judging.passThreshold is "0.5" there, "0.8" here`) {
		t.Errorf("message %q", msg)
	}

	w = testutil.MakeEvalRun("resumed", ns).Inline(changed).Resume("rejudged", evalsv1alpha1.ResumeMissing)
	w.Spec.Judging = judging()
	resumed := createRun(t, w)
	var ran []string
	finishShards(t, resumed, func(id string) string { ran = append(ran, id); return "CLEAR" })
	if diff := cmp.Diff([]string{"case-002", "case-003"}, ran); diff != "" {
		t.Errorf("cases run again (-want +got):\n%s", diff)
	}
	got = waitReason(t, resumed, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	type origin struct{ Verdict, CarriedFrom, AnsweredBy string }
	wantCases := map[string]origin{
		"case-000": {"Pass", "rejudged", "first"}, "case-001": {"Fail", "rejudged", "first"},
		"case-002": {"Pass", "", ""}, "case-003": {"Pass", "", ""},
	}
	cases := map[string]origin{}
	for _, c := range got.Status.Cases {
		cases[c.ID] = origin{string(c.Verdict), ptr.Deref(c.CarriedFrom, ""), ptr.Deref(c.AnsweredBy, "")}
	}
	if diff := cmp.Diff(wantCases, cases); diff != "" {
		t.Errorf("status cases (-want +got):\n%s", diff)
	}
	// The carried verdicts are the re-judge's, line for line in the stored results too.
	rejudgedLines := map[string]results.Line{}
	if msg, err := stored.EachLine(ctx, k8s, src, func(l *results.Line) error { rejudgedLines[l.ID] = *l; return nil }); msg != "" || err != nil {
		t.Fatalf("reading the re-judge's results: %s %v", msg, err)
	}
	msg, err := stored.EachLine(ctx, k8s, got, func(l *results.Line) error {
		if l.CarriedFrom == "" {
			return nil
		}
		want := rejudgedLines[l.ID]
		want.CarriedFrom = "rejudged"
		if diff := cmp.Diff(want, *l); diff != "" {
			t.Errorf("carried result %s (-the re-judge's +the resume's):\n%s", l.ID, diff)
		}
		return nil
	})
	if msg != "" || err != nil {
		t.Fatalf("reading the resumed run's results: %s %v", msg, err)
	}
	if r := got.Status.Resume; r == nil || r.From != "rejudged" || r.FromUID != string(src.UID) || r.Ran != 2 || r.Carried != 2 {
		t.Errorf("resume status %+v", got.Status.Resume)
	}
	if s := got.Status.Summary; s == nil || s.Total != 4 || s.Passed != 3 || s.Failed != 1 || s.Missing != 0 {
		t.Errorf("summary %+v", got.Status.Summary)
	}
	if got.Status.EvalFileSHA256 != src.Status.EvalFileSHA256 {
		t.Errorf("the resumed run's eval file digest %s, the re-judge's %s", got.Status.EvalFileSHA256, src.Status.EvalFileSHA256)
	}
	cfg := pinnedConfig(t, resumed)
	if cfg.PassThreshold != "0.5" {
		t.Errorf("the resumed run's run.json passThreshold %q", cfg.PassThreshold)
	}
}

// pinnedConfig is run's pinned run.json.
func pinnedConfig(t *testing.T, run *evalsv1alpha1.EvalRun) podwire.RunConfig {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: run.Namespace, Name: children.NamesFor(run.Name).EvalConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	cfg, err := children.RunConfigFrom(cm)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
