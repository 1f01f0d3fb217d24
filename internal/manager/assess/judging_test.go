package assess

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// judgingRun is a run with every judging setting set, and code judges, as a resume's earlier run would have it.
func judgingRun(mutate ...func(*evalsv1alpha1.EvalRun)) *evalsv1alpha1.EvalRun {
	run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
		r.Spec.Judging = &evalsv1alpha1.Judging{
			PassThreshold:           "0.8",
			Evaluators:              []runtime.RawExtension{{Raw: []byte(`{"name":"exact","type":"equals","value":"CLEAR"}`)}},
			CodeJudgeTimeoutSeconds: ptr.To[int32](30),
			CodeJudgeWorkers:        ptr.To[int32](2),
			LLM: &evalsv1alpha1.LLMJudging{BaseURL: ptr.To("http://judge:8080/v1"), Model: ptr.To("m1"),
				TimeoutSeconds: ptr.To[int32](20), MaxConcurrentRequests: ptr.To[int32](4), RequestsPerMinute: ptr.To[int32](60),
				MaxRequests: ptr.To[int64](100), MaxTokens: ptr.To[int64](50000),
				APIKeySecretRef: &evalsv1alpha1.SecretKeyRef{Name: "judge-key", Key: "token"}},
		}
	})
	for _, m := range mutate {
		m(run)
	}
	return run
}

// judgingConfig is run's run.json for that many cases, with code judges and LLM judges, its default evaluators
// parsed as the manager parses them.
func judgingConfig(t *testing.T, run *evalsv1alpha1.EvalRun, cases int, opts ...options.Options) podwire.RunConfig {
	t.Helper()
	defaults, err := children.DefaultEvaluators(run)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, cases)
	for i := range ids {
		ids[i] = "case-" + string(rune('a'+i))
	}
	var o options.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	return children.BuildRunConfig(run, ids, defaults, children.JudgeLoad{CodeJudgeCases: 1, LLMRequests: cases, LLMRequestsPerCase: 1}, o)
}

// TestJudgingDifferences: every setting that can change a case's verdict or score is named, with both values,
// when it differs between the earlier run and this one; a setting that cannot (credentials, concurrency, rates,
// the code judges' workers and resources, shards and parallelism, storage, deadlines, successPolicy, the runner's
// settings) is no difference, nor is another spelling of the same threshold.
func TestJudgingDifferences(t *testing.T) {
	judging := func(f func(j *evalsv1alpha1.Judging)) func(*evalsv1alpha1.EvalRun) {
		return func(r *evalsv1alpha1.EvalRun) { f(r.Spec.Judging) }
	}
	cases := []struct {
		name     string
		here     *evalsv1alpha1.EvalRun
		hereOpts options.Options // the manager's options when this run was built
		cases    int             // this run's cases (the earlier run had 4; 0: 4)
		counts   []string
	}{
		{name: "the same judging", here: judgingRun(), cases: 4},
		{name: "passThreshold", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.PassThreshold = "0.5" })),
			counts: []string{`spec.judging.passThreshold is "0.8" there, "0.5" here`}},
		{name: "passThreshold spelt otherwise", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.PassThreshold = "0.80" }))},
		{name: "passThreshold unset is its default, 0.8", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.PassThreshold = "" }))},
		{name: "evaluators", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) {
			j.Evaluators = []runtime.RawExtension{{Raw: []byte(`{"name":"exact","type":"equals","value":"REVIEW"}`)}}
		})), counts: []string{`spec.judging.evaluators is "[{\"name\":\"exact\",\"type\":\"equals\",\"value\":\"CLEAR\"}]" there, ` +
			`"[{\"name\":\"exact\",\"type\":\"equals\",\"value\":\"REVIEW\"}]" here`}},
		{name: "evaluators with their keys in another order", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) {
			j.Evaluators = []runtime.RawExtension{{Raw: []byte(`{"value":"CLEAR","type":"equals","name":"exact"}`)}}
		}))},
		{name: "evaluators removed", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.Evaluators = nil })),
			counts: []string{`spec.judging.evaluators is "[{\"name\":\"exact\",\"type\":\"equals\",\"value\":\"CLEAR\"}]" there, unset here`}},
		{name: "llm.baseURL", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.LLM.BaseURL = ptr.To("http://other:8080/v1") })),
			counts: []string{`spec.judging.llm.baseURL is "http://judge:8080/v1" there, "http://other:8080/v1" here`}},
		{name: "llm.model", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.LLM.Model = ptr.To("m2") })),
			counts: []string{`spec.judging.llm.model is "m1" there, "m2" here`}},
		{name: "llm.timeoutSeconds", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.LLM.TimeoutSeconds = ptr.To[int32](90) })),
			counts: []string{`spec.judging.llm.timeoutSeconds is "20" there, "90" here`}},
		{name: "llm.maxRequests", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.LLM.MaxRequests = ptr.To[int64](10) })),
			counts: []string{`spec.judging.llm.maxRequests is "100" there, "10" here`}},
		{name: "llm.maxTokens removed", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.LLM.MaxTokens = nil })),
			counts: []string{`spec.judging.llm.maxTokens is "50000" there, "none" here`}},
		{name: "no llm", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.LLM = nil })),
			counts: []string{`spec.judging.llm.baseURL is "http://judge:8080/v1" there, unset here`,
				`spec.judging.llm.model is "m1" there, unset here`, `spec.judging.llm.timeoutSeconds is "20" there, unset here`,
				`spec.judging.llm.maxRequests is "100" there, unset here`, `spec.judging.llm.maxTokens is "50000" there, unset here`,
				`spec.judging.llm.answerDelimiters is "AgentV" there, unset here`}},
		// A source judged with other answer delimiters sent other prompts: its verdicts are not carried.
		{name: "llm.answerDelimiters", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) {
			j.LLM.AnswerDelimiters = ptr.To(evalsv1alpha1.AnswerDelimitersNonce)
		})), counts: []string{`spec.judging.llm.answerDelimiters is "AgentV" there, "Nonce" here`}},
		{name: "llm.answerDelimiters AgentV spelt out is its default", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) {
			j.LLM.AnswerDelimiters = ptr.To(evalsv1alpha1.AnswerDelimitersAgentV)
		}))},
		// A source that showed input files otherwise sent other prompts; unset is the format's own, which an
		// explicit value is never taken to equal (a resume refused, never a verdict carried wrongly).
		{name: "inputFiles", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.InputFiles = ptr.To(evalsv1alpha1.InputFilesReference) })),
			counts: []string{`spec.judging.inputFiles is unset there, "Reference" here`}},
		{name: "codeJudgeTimeoutSeconds", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.CodeJudgeTimeoutSeconds = ptr.To[int32](60) })),
			counts: []string{`spec.judging.codeJudgeTimeoutSeconds is "30" there, "60" here`}},
		{name: "judging.image", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.Image = "judges:v2" })),
			counts: []string{`the code judges' image (spec.judging.image, else the manager's --judge-image) is "localhost/evalrun/judge:dev" there, "judges:v2" here`}},
		{name: "judging.image set to target.image", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.Image = "runner:v1" })),
			counts: []string{`the code judges' image (spec.judging.image, else the manager's --judge-image) is "localhost/evalrun/judge:dev" there, "runner:v1" here`}},
		{name: "target.image: not the code judges' image any more", here: judgingRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.Target.Image = "runner:v2" })},
		{name: "the manager's --judge-image", here: judgingRun(), hereOpts: options.Options{JudgeImage: "registry.example/judge:v9"},
			counts: []string{`the code judges' image (spec.judging.image, else the manager's --judge-image) is "localhost/evalrun/judge:dev" there, "registry.example/judge:v9" here`}},
		{name: "several at once", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) { j.PassThreshold, j.LLM.Model = "0.9", ptr.To("m3") })),
			counts: []string{`spec.judging.passThreshold is "0.8" there, "0.9" here`, `spec.judging.llm.model is "m1" there, "m3" here`}},
		// What cannot change a case's verdict.
		{name: "the API key, concurrency, rates and workers", here: judgingRun(judging(func(j *evalsv1alpha1.Judging) {
			j.LLM.APIKeySecretRef = &evalsv1alpha1.SecretKeyRef{Name: "other-key", Key: "k"}
			j.LLM.MaxConcurrentRequests, j.LLM.RequestsPerMinute, j.CodeJudgeWorkers = ptr.To[int32](16), nil, ptr.To[int32](8)
			j.Resources = &corev1.ResourceRequirements{}
		}))},
		{name: "shards, parallelism and fewer cases", cases: 2, here: judgingRun(func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](2), Parallelism: ptr.To[int32](1)}
		})},
		{name: "successPolicy, deadlines, storage and the runner's command", here: judgingRun(func(r *evalsv1alpha1.EvalRun) {
			r.Spec.SuccessPolicy = &evalsv1alpha1.SuccessPolicy{MinPassRate: "0.5"}
			r.Spec.ResultsDeadlineSeconds, r.Spec.ActiveDeadlineSeconds = ptr.To[int32](999), ptr.To[int64](3600)
			r.Spec.Target.CommandTemplate, r.Spec.Target.TimeoutSeconds = "other --out {OUTPUT_FILE}", ptr.To[int32](5)
			r.Spec.Target.MaxCostUSD = ptr.To("1.5")
			r.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: evalsv1alpha1.S3Bucket{Endpoint: "http://s3:9000", Bucket: "b"}}
		})},
	}
	there := judgingConfig(t, judgingRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.Target.Image = "runner:v1" }), 4)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.here.Spec.Target.Image == testutil.UnitRun().Spec.Target.Image {
				tc.here.Spec.Target.Image = "runner:v1"
			}
			n := tc.cases
			if n == 0 {
				n = 4
			}
			here := judgingConfig(t, tc.here, n, tc.hereOpts)
			if diff := cmp.Diff(tc.counts, JudgingDifferences(there, here)); diff != "" {
				t.Errorf("differences (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJudgingDifferencesAnswerDelimitersBeforeTheField: a source whose run.json was written before
// answerDelimiters existed judged with AgentV's: it compares equal to AgentV, and differs from Nonce.
func TestJudgingDifferencesAnswerDelimitersBeforeTheField(t *testing.T) {
	there := judgingConfig(t, judgingRun(), 4)
	there.LLM.AnswerDelimiters = ""
	if diff := JudgingDifferences(there, judgingConfig(t, judgingRun(), 4)); len(diff) > 0 {
		t.Errorf("an older source differs from AgentV's delimiters: %v", diff)
	}
	nonce := judgingConfig(t, judgingRun(func(r *evalsv1alpha1.EvalRun) {
		r.Spec.Judging.LLM.AnswerDelimiters = ptr.To(evalsv1alpha1.AnswerDelimitersNonce)
	}), 4)
	want := []string{`spec.judging.llm.answerDelimiters is "AgentV" there, "Nonce" here`}
	if diff := cmp.Diff(want, JudgingDifferences(there, nonce)); diff != "" {
		t.Errorf("differences (-want +got):\n%s", diff)
	}
}

// TestJudgingDifferencesWithoutCodeJudges: without code judges, their image and timeout are no difference: a
// resume may run a new runner image when its scripts judge nothing.
func TestJudgingDifferencesWithoutCodeJudges(t *testing.T) {
	there, here := judgingConfig(t, judgingRun(), 4), judgingConfig(t, judgingRun(func(r *evalsv1alpha1.EvalRun) {
		r.Spec.Target.Image = "runner:v2"
		r.Spec.Judging.CodeJudgeTimeoutSeconds = ptr.To[int32](99)
	}), 4)
	there.CodeJudges, here.CodeJudges = false, false
	if diff := JudgingDifferences(there, here); len(diff) > 0 {
		t.Errorf("differences without code judges: %q", diff)
	}
}

// TestJudgingDifferencesBundle: the eval bundle's digest (the files the judges read beside the eval file) counts.
func TestJudgingDifferencesBundle(t *testing.T) {
	there, here := judgingConfig(t, judgingRun(), 4), judgingConfig(t, judgingRun(), 4)
	there.Bundle, here.Bundle = &podwire.Bundle{SHA256: "aaa"}, &podwire.Bundle{SHA256: "bbb"}
	want := []string{`spec.evalFile.bundle (the digest of its files) is "aaa" there, "bbb" here`}
	if diff := cmp.Diff(want, JudgingDifferences(there, here)); diff != "" {
		t.Errorf("differences (-want +got):\n%s", diff)
	}
	here.Bundle = nil
	want = []string{`spec.evalFile.bundle (the digest of its files) is "aaa" there, unset here`}
	if diff := cmp.Diff(want, JudgingDifferences(there, here)); diff != "" {
		t.Errorf("differences (-want +got):\n%s", diff)
	}
}

// TestJudgingMismatchBounded: the message names the run and says what to do however many and however long the
// differences are, within a condition message's bound, and each value is bounded.
func TestJudgingMismatchBounded(t *testing.T) {
	long := strings.Repeat("x", 5000)
	there, here := judgingConfig(t, judgingRun(), 4), judgingConfig(t, judgingRun(), 4)
	here.LLM.Model, here.PassThreshold = long, "0.5"
	diff := JudgingDifferences(there, here)
	if len(diff) != 2 || len(diff[1]) > 200 || !strings.Contains(diff[1], "…") {
		t.Fatalf("differences %q: want 2, the long value cut", diff)
	}
	many := make([]string, 50)
	for i := range many {
		many[i] = diff[1]
	}
	for _, d := range [][]string{diff, many} {
		msg := JudgingMismatch("nightly", d)
		if len(msg) > MaxConditionMessage || !utf8.ValidString(msg) {
			t.Errorf("message of %d bytes (bound %d)", len(msg), MaxConditionMessage)
		}
		for _, want := range []string{"EvalRun nightly judged under other settings than this run: spec.judging.passThreshold is \"0.8\" there, \"0.5\" here",
			"Re-judge EvalRun nightly with this judging first (spec.rejudge.from, kubectl evalrun rejudge nightly) and resume from that run"} {
			if d[0] == diff[0] && !strings.Contains(msg, want) {
				t.Errorf("message %q, want it to say %q", msg, want)
			}
		}
		if !strings.HasSuffix(msg, "and resume from that run") {
			t.Errorf("message %q does not end with what to do", msg)
		}
	}
}
