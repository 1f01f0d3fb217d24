package v1alpha1_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

var k8sClient client.Client

// envErr says why there is no API server (KUBEBUILDER_ASSETS is not set): the admission tests then skip, and the
// tests that read the generated CRDs still run.
var envErr error

func TestMain(m *testing.M) {
	env, cfg, err := testutil.StartEnv()
	if errors.Is(err, testutil.ErrNoAssets) {
		envErr = err
		fmt.Fprintln(os.Stderr, "api/v1alpha1: the admission tests skip:", err)
		os.Exit(m.Run())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	k8sClient, err = client.New(cfg, client.Options{Scheme: testutil.Scheme()})
	if err != nil {
		panic(err)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping envtest: %v\n", err)
	}
	os.Exit(code)
}

// needAPIServer ends an admission test when the package runs without envtest's API server: skipped with the
// reason, or failed under make test-unit (testutil.AssetMissing).
func needAPIServer(t *testing.T) {
	t.Helper()
	if envErr != nil {
		testutil.AssetMissing(t, envErr)
	}
}

func TestEvalRunAdmission(t *testing.T) {
	needAPIServer(t)
	mk := testutil.MakeEvalRun
	cases := []struct {
		name    string
		run     *evalsv1alpha1.EvalRun
		wantErr string // substring of the rejection; "" means accepted
	}{
		{name: "minimal batched run is accepted", run: mk("ok-minimal", "default").Obj()},
		{name: "configmap source is accepted", run: mk("ok-cm", "default").FromConfigMap("evals", "eval.yaml").Obj()},
		{name: "per-case placeholders with PerCase", run: mk("ok-percase", "default").PerCase(3).
			Command("run --id {EVAL_ID} --prompt {PROMPT} --file {PROMPT_FILE} --try {ATTEMPT} --out {OUTPUT_FILE}").
			Healthcheck("run --healthcheck --eval {EVAL_FILE}").Obj()},
		{name: "shell braces that are not placeholders are fine", run: mk("ok-braces", "default").
			Command(`run --out {OUTPUT_FILE} && echo ${HOME} {lower} '{"a":1}'`).Obj()},
		{name: "unknown placeholder", run: mk("bad-placeholder", "default").Command("run {EVAL_FILE} {OUTPUT_FILE} {MODEL}").Obj(),
			wantErr: "commandTemplate has an unknown placeholder; allowed: {EVAL_FILE}, {OUTPUT_FILE}, {EVAL_ID}, {PROMPT}, {PROMPT_FILE}, {ATTEMPT}"},
		{name: "no output file", run: mk("bad-no-output", "default").Command("run --eval {EVAL_FILE}").Obj(),
			wantErr: "commandTemplate must contain {OUTPUT_FILE}"},
		{name: "per-case placeholder in Batched mode", run: mk("bad-batched-id", "default").Command("run {EVAL_ID} {OUTPUT_FILE}").Obj(),
			wantErr: "{EVAL_ID}, {PROMPT} and {PROMPT_FILE} need batching: PerCase; with Batched the allowed placeholders are {EVAL_FILE}, {OUTPUT_FILE} and {ATTEMPT}"},
		{name: "the trial in Batched mode is accepted", run: mk("ok-batched-attempt", "default").
			Command("run --eval {EVAL_FILE} --trial {ATTEMPT} --out {OUTPUT_FILE}").Trials(3, "").Obj()},
		{name: "trials with shards are accepted", run: mk("ok-trials", "default").Shards(2, 0).Trials(3, "0.6").Obj()},
		{name: "trials up to 1000 pods are accepted", run: mk("ok-trials-1000", "default").Shards(10, 0).Trials(100, "1.000000").Obj()},
		{name: "one trial with a resume is accepted", run: mk("ok-trials-resume", "default").Trials(1, "").Resume("earlier", evalsv1alpha1.ResumeMissing).Obj()},
		{name: "zero trials", run: mk("bad-trials-0", "default").Trials(0, "").Obj(), wantErr: "spec.trials.count"},
		{name: "too many trials", run: mk("bad-trials-101", "default").Trials(101, "").Obj(), wantErr: "spec.trials.count"},
		{name: "shards times trials over 1000", run: mk("bad-trials-pods", "default").Shards(501, 0).Trials(2, "").Obj(),
			wantErr: "sharding.shards times trials.count must be at most 1000"},
		{name: "a trials pass rate of 0", run: mk("bad-trials-rate-0", "default").Trials(3, "0").Obj(),
			wantErr: "passRate must be a decimal in (0, 1]"},
		{name: "a trials pass rate above 1", run: mk("bad-trials-rate-big", "default").Trials(3, "1.5").Obj(),
			wantErr: "passRate must be a decimal in (0, 1]"},
		{name: "a trials pass rate without a leading digit", run: mk("bad-trials-rate-dot", "default").Trials(3, ".5").Obj(),
			wantErr: "passRate must be a decimal in (0, 1]"},
		{name: "a trials pass rate with 7 decimals", run: mk("bad-trials-rate-long", "default").Trials(3, "0.123456789").Obj(),
			wantErr: "spec.trials.passRate"},
		{name: "trials with a resume are accepted", run: mk("ok-trials-resume-3", "default").Trials(3, "0.6").Resume("earlier", evalsv1alpha1.ResumeNotPassed).Obj()},
		{name: "a re-judge's own pass rate is accepted", run: mk("ok-rejudge-rate", "default").Trials(1, "0.6").Rejudge("earlier").Obj()},
		{name: "a re-judge's own trial count", run: mk("bad-trials-rejudge", "default").Trials(3, "").Rejudge("earlier").Obj(),
			wantErr: "a re-judge judges every trial its source kept: its trials.count is its source's"},
		{name: "workers without PerCase", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-workers", "default").Obj()
			r.Spec.Target.Workers = ptr.To[int32](2)
			return r
		}(), wantErr: "target.workers is only meaningful with target.batching: PerCase"},
		{name: "a re-judge without a target is accepted", run: func() *evalsv1alpha1.EvalRun {
			r := mk("ok-rejudge", "default").Obj()
			r.Spec.Target, r.Spec.Rejudge = evalsv1alpha1.Target{}, &evalsv1alpha1.Rejudge{From: "earlier"}
			return r
		}()},
		{name: "no target and no re-judge", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-no-target", "default").Obj()
			r.Spec.Target = evalsv1alpha1.Target{}
			return r
		}(), wantErr: "target is required unless rejudge is set"},
		{name: "re-judge and resume", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-rejudge-resume", "default").Obj()
			r.Spec.Rejudge, r.Spec.Resume = &evalsv1alpha1.Rejudge{From: "earlier"}, &evalsv1alpha1.Resume{From: "earlier"}
			return r
		}(), wantErr: "rejudge and resume are exclusive"},
		{name: "re-judge without from", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-rejudge-from", "default").Obj()
			r.Spec.Rejudge = &evalsv1alpha1.Rejudge{}
			return r
		}(), wantErr: "spec.rejudge.from"},
		{name: "healthcheck unknown placeholder", run: mk("bad-hc", "default").Healthcheck("run {EVAL_ID}").Obj(),
			wantErr: "healthcheck.commandTemplate has an unknown placeholder"},
		{name: "both eval sources", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-both", "default").Obj()
			r.Spec.EvalFile.ConfigMapKeyRef = &evalsv1alpha1.ConfigMapKeyReference{Name: "x"}
			return r
		}(), wantErr: "evalFile needs exactly one of inline, configMapKeyRef, s3 or bundle"},
		{name: "inline and s3", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-inline-s3", "default").Obj()
			r.Spec.EvalFile.S3 = &evalsv1alpha1.S3Object{S3Bucket: s3Bucket(), Key: "e.yaml", SHA256: strings.Repeat("a", 64)}
			return r
		}(), wantErr: "evalFile needs exactly one of inline, configMapKeyRef, s3 or bundle"},
		{name: "bundle from a ConfigMap is accepted", run: withBundle("ok-bundle-cm", func(b *evalsv1alpha1.EvalBundle) {
			b.SHA256 = ptr.To(strings.Repeat("a", 64))
		})},
		{name: "bundle from a bucket prefix is accepted", run: withBundle("ok-bundle-s3", func(b *evalsv1alpha1.EvalBundle) {
			b.ConfigMap, b.S3 = nil, ptr.To(s3Bucket())
			b.S3.Prefix = ptr.To("bundles/math")
		})},
		{name: "bundle and inline", run: func() *evalsv1alpha1.EvalRun {
			r := withBundle("bad-bundle-inline", func(*evalsv1alpha1.EvalBundle) {})
			r.Spec.EvalFile.Inline = ptr.To("evalcases: []")
			return r
		}(), wantErr: "evalFile needs exactly one of inline, configMapKeyRef, s3 or bundle"},
		{name: "bundle with two roots", run: withBundle("bad-bundle-two", func(b *evalsv1alpha1.EvalBundle) {
			b.S3 = ptr.To(s3Bucket())
			b.S3.Prefix = ptr.To("b")
		}), wantErr: "evalFile.bundle needs exactly one of configMap or s3"},
		{name: "bundle without a root", run: withBundle("bad-bundle-none", func(b *evalsv1alpha1.EvalBundle) { b.ConfigMap = nil }),
			wantErr: "evalFile.bundle needs exactly one of configMap or s3"},
		{name: "bundle in a bucket without a prefix", run: withBundle("bad-bundle-prefix", func(b *evalsv1alpha1.EvalBundle) {
			b.ConfigMap, b.S3 = nil, ptr.To(s3Bucket())
			b.S3.Prefix = nil
		}), wantErr: "evalFile.bundle.s3 needs a prefix"},
		{name: "bundle eval file leaving the root", run: withBundle("bad-bundle-dotdot", func(b *evalsv1alpha1.EvalBundle) { b.EvalFile = "suite/../../eval.yaml" }),
			wantErr: "evalFile must not have"},
		{name: "bundle eval file absolute", run: withBundle("bad-bundle-abs", func(b *evalsv1alpha1.EvalBundle) { b.EvalFile = "/eval.yaml" }),
			wantErr: "spec.evalFile.bundle.evalFile"},
		{name: "bundle digest not hex", run: withBundle("bad-bundle-sha", func(b *evalsv1alpha1.EvalBundle) { b.SHA256 = ptr.To("xyz") }),
			wantErr: "spec.evalFile.bundle.sha256"},
		{name: "s3 eval file without a valid sha256", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-sha", "default").Obj()
			r.Spec.EvalFile = evalsv1alpha1.EvalFileSource{S3: &evalsv1alpha1.S3Object{S3Bucket: s3Bucket(), Key: "e.yaml", SHA256: strings.Repeat("A", 64)}}
			return r
		}(), wantErr: "spec.evalFile.s3.sha256"},
		{name: "storage endpoint not a URL", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-endpoint", "default").Obj()
			b := s3Bucket()
			b.Endpoint = "seaweedfs:8333"
			r.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: b}
			return r
		}(), wantErr: "spec.storage.s3.endpoint"},
		{name: "storage statusFrom Bucket is accepted", run: func() *evalsv1alpha1.EvalRun {
			r := mk("ok-bucket-only", "default").Obj()
			r.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: s3Bucket(), StatusFrom: ptr.To(evalsv1alpha1.StatusFromBucket)}
			return r
		}()},
		{name: "storage statusFrom not Pod or Bucket", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-status-from", "default").Obj()
			r.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: s3Bucket(), StatusFrom: ptr.To[evalsv1alpha1.StatusSource]("Collector")}
			return r
		}(), wantErr: "spec.storage.statusFrom"},
		{name: "llm judging is accepted", run: func() *evalsv1alpha1.EvalRun {
			r := mk("ok-llm", "default").Obj()
			r.Spec.Judging = &evalsv1alpha1.Judging{LLM: &evalsv1alpha1.LLMJudging{BaseURL: ptr.To("http://judge.ns.svc:8080/v1"),
				Model: ptr.To("gpt-4o-mini"), APIKeySecretRef: &evalsv1alpha1.SecretKeyRef{Name: "judge-key", Key: "api-key"}}}
			return r
		}()},
		{name: "llm judging base URL not a URL", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-llm-url", "default").Obj()
			r.Spec.Judging = &evalsv1alpha1.Judging{LLM: &evalsv1alpha1.LLMJudging{BaseURL: ptr.To("judge.ns.svc:8080")}}
			return r
		}(), wantErr: "spec.judging.llm.baseURL"},
		{name: "llm judging secret without a key", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-llm-secret", "default").Obj()
			r.Spec.Judging = &evalsv1alpha1.Judging{LLM: &evalsv1alpha1.LLMJudging{APIKeySecretRef: &evalsv1alpha1.SecretKeyRef{Name: "judge-key"}}}
			return r
		}(), wantErr: "spec.judging.llm.apiKeySecretRef.key"},
		{name: "llm judging concurrency out of range", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-llm-conc", "default").Obj()
			r.Spec.Judging = &evalsv1alpha1.Judging{LLM: &evalsv1alpha1.LLMJudging{MaxConcurrentRequests: ptr.To[int32](65)}}
			return r
		}(), wantErr: "spec.judging.llm.maxConcurrentRequests"},
		{name: "zero shards", run: mk("bad-shards", "default").Shards(0, 0).Obj(), wantErr: "spec.sharding.shards"},
		{name: "too many shards", run: mk("bad-shards-2", "default").Shards(1001, 0).Obj(), wantErr: "spec.sharding.shards"},
		{name: "unknown resume mode", run: mk("bad-resume", "default").Resume("x", "Failed").Obj(), wantErr: "spec.resume.cases"},
		{name: "neither eval source", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-neither", "default").Obj()
			r.Spec.EvalFile = evalsv1alpha1.EvalFileSource{}
			return r
		}(), wantErr: "evalFile needs exactly one of inline, configMapKeyRef, s3 or bundle"},
		{name: "inline too large", run: mk("bad-large", "default").Inline(strings.Repeat("x", 262145)).Obj(),
			wantErr: "spec.evalFile.inline: Too long"},
		{name: "workers out of range", run: mk("bad-workers-range", "default").PerCase(65).Obj(),
			wantErr: "spec.target.workers: Invalid value: 65: spec.target.workers in body should be less than or equal to 64"},
		{name: "negative backoff limit", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-backoff", "default").Obj()
			r.Spec.BackoffLimit = ptr.To[int32](-1)
			return r
		}(), wantErr: "spec.backoffLimit in body should be greater than or equal to 0"},
		{name: "deadline zero", run: mk("bad-deadline", "default").ActiveDeadline(0).Obj(),
			wantErr: "spec.activeDeadlineSeconds in body should be greater than or equal to 1"},
		{name: "results deadline too small", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-results-deadline", "default").Obj()
			r.Spec.ResultsDeadlineSeconds = ptr.To[int32](1)
			return r
		}(), wantErr: "spec.resultsDeadlineSeconds in body should be greater than or equal to 10"},
		{name: "pass threshold above 1", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-threshold", "default").Obj()
			r.Spec.Judging = &evalsv1alpha1.Judging{PassThreshold: "1.5"}
			return r
		}(), wantErr: "spec.judging.passThreshold in body should match"},
		{name: "bad batching enum", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-enum", "default").Obj()
			r.Spec.Target.Batching = "Streaming"
			return r
		}(), wantErr: `spec.target.batching: Unsupported value: "Streaming"`},
		{name: "privileged runner", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-priv", "default").Obj()
			r.Spec.Target.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			return r
		}(), wantErr: "the runner may not be privileged"},
		{name: "runner as root", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-root", "default").Obj()
			r.Spec.Target.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}
			return r
		}(), wantErr: "the runner may not run as user 0"},
		{name: "runner takes the collector's uid", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-uid", "default").Obj()
			r.Spec.Target.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](65531)}
			return r
		}(), wantErr: "reserved for the operator's collector and judge containers"},
		{name: "runner as another uid", run: func() *evalsv1alpha1.EvalRun {
			r := mk("ok-uid", "default").Obj()
			r.Spec.Target.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}
			return r
		}()},
		{name: "seLinuxOptions type outside the restricted profile", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-selinux", "default").Obj()
			r.Spec.Target.SecurityContext = &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"}}
			return r
		}(), wantErr: "seLinuxOptions may only set type"},
		{name: "seLinuxOptions user", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-selinux-user", "default").Obj()
			r.Spec.Target.SecurityContext = &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{User: "system_u"}}
			return r
		}(), wantErr: "seLinuxOptions may only set type"},
		{name: "seLinuxOptions container_t with a level", run: func() *evalsv1alpha1.EvalRun {
			r := mk("ok-selinux", "default").Obj()
			r.Spec.Target.SecurityContext = &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "container_t", Level: "s0:c1,c2"}}
			return r
		}()},
		{name: "AppArmor Unconfined", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-apparmor", "default").Obj()
			r.Spec.Target.SecurityContext = &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}}
			return r
		}(), wantErr: "may not be Unconfined"},
		{name: "legacy AppArmor annotation unconfined", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-apparmor-ann", "default").Obj()
			r.Spec.PodTemplate = &evalsv1alpha1.PodOverrides{Annotations: map[string]string{"container.apparmor.security.beta.kubernetes.io/runner": "unconfined"}}
			return r
		}(), wantErr: "AppArmor annotations in podTemplate.annotations"},
		{name: "legacy AppArmor annotation localhost", run: func() *evalsv1alpha1.EvalRun {
			r := mk("ok-apparmor-ann", "default").Obj()
			r.Spec.PodTemplate = &evalsv1alpha1.PodOverrides{Annotations: map[string]string{"container.apparmor.security.beta.kubernetes.io/runner": "localhost/agent"}}
			return r
		}()},
		{name: "podTemplate label owned by the operator", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-label", "default").Obj()
			r.Spec.PodTemplate = &evalsv1alpha1.PodOverrides{Labels: map[string]string{"evals.evalrun.io/run": "other"}}
			return r
		}(), wantErr: "podTemplate.labels may not set labels"},
		{name: "podTemplate label owned by the Job controller", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-label-job", "default").Obj()
			r.Spec.PodTemplate = &evalsv1alpha1.PodOverrides{Labels: map[string]string{"batch.kubernetes.io/job-name": "x"}}
			return r
		}(), wantErr: "podTemplate.labels may not set labels"},
		{name: "podTemplate cost label", run: func() *evalsv1alpha1.EvalRun {
			r := mk("ok-label", "default").Obj()
			r.Spec.PodTemplate = &evalsv1alpha1.PodOverrides{Labels: map[string]string{"team": "evals"}}
			return r
		}()},
		{name: "runner adds capabilities", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-caps", "default").Obj()
			r.Spec.Target.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
			return r
		}(), wantErr: "the runner may add no capability other than NET_BIND_SERVICE"},
		{name: "bad queue name", run: mk("bad-queue", "default").Queue("Not_A_Name").Obj(),
			wantErr: "spec.queueName in body should match"},
		{name: "paired baseline is accepted", run: mk("ok-paired", "default").PairedBaseline("earlier", "0.01", "0.05").Obj()},
		{name: "paired baseline, alpha with six decimals", run: mk("ok-paired-alpha", "default").PairedBaseline("earlier", "0.000001", "1").Obj()},
		{name: "unknown baseline test", run: func() *evalsv1alpha1.EvalRun {
			r := mk("bad-test", "default").Baseline("earlier", 0, "").Obj()
			r.Spec.Baseline.Test = ptr.To[evalsv1alpha1.BaselineTest]("Bayes")
			return r
		}(), wantErr: `spec.baseline.test: Unsupported value: "Bayes": supported values: "Count", "Paired"`},
		{name: "alpha 0", run: mk("bad-alpha-0", "default").PairedBaseline("earlier", "0.0", "").Obj(),
			wantErr: "spec.baseline.alpha: Invalid value: \"0.0\": alpha must be a decimal strictly between 0 and 1 with at most 6 decimals, such as 0.05 or 0.01"},
		{name: "alpha 1", run: mk("bad-alpha-1", "default").PairedBaseline("earlier", "1", "").Obj(),
			wantErr: "alpha must be a decimal strictly between 0 and 1"},
		{name: "alpha as a percentage", run: mk("bad-alpha-pct", "default").PairedBaseline("earlier", "5", "").Obj(),
			wantErr: "alpha must be a decimal strictly between 0 and 1"},
		{name: "alpha with seven decimals", run: mk("bad-alpha-7", "default").PairedBaseline("earlier", "0.0000001", "").Obj(),
			wantErr: "spec.baseline.alpha: Too long: may not be more than 8 bytes"},
		{name: "alpha negative", run: mk("bad-alpha-neg", "default").PairedBaseline("earlier", "-0.05", "").Obj(),
			wantErr: "alpha must be a decimal strictly between 0 and 1"},
		{name: "minEffect above 1", run: mk("bad-min-effect", "default").PairedBaseline("earlier", "", "1.5").Obj(),
			wantErr: "spec.baseline.minEffect in body should match"},
		{name: "minEffect as points", run: mk("bad-min-effect-pts", "default").PairedBaseline("earlier", "", "5").Obj(),
			wantErr: "spec.baseline.minEffect in body should match"},
		{name: "quarantine flakyOver 0.3", run: quarantine(mk("ok-quarantine", "default"), "0.3")},
		{name: "quarantine flakyOver 1", run: quarantine(mk("ok-quarantine-1", "default"), "1.000000")},
		{name: "quarantine flakyOver with six decimals", run: quarantine(mk("ok-quarantine-6", "default"), "0.000001")},
		{name: "quarantine flakyOver 0", run: quarantine(mk("bad-quarantine-0", "default"), "0.000"),
			wantErr: "spec.baseline.quarantine.flakyOver in body should match"},
		{name: "quarantine flakyOver above 1", run: quarantine(mk("bad-quarantine-big", "default"), "1.5"),
			wantErr: "spec.baseline.quarantine.flakyOver in body should match"},
		{name: "quarantine flakyOver as a percentage", run: quarantine(mk("bad-quarantine-pct", "default"), "30"),
			wantErr: "spec.baseline.quarantine.flakyOver in body should match"},
		{name: "quarantine flakyOver empty", run: quarantine(mk("bad-quarantine-empty", "default"), ""),
			wantErr: "spec.baseline.quarantine.flakyOver in body should match"},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := k8sClient.Create(ctx, tc.run)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Create() = %v, want it accepted", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Create() accepted the run, want rejection containing %q", tc.wantErr)
			}
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Create() = %v\nwant an Invalid error containing %q", err, tc.wantErr)
			}
		})
	}
}

// quotingRejection is the admission message for a misplaced placeholder.
const quotingRejection = "their values are already shell-quoted; write {PROMPT}, not \"{PROMPT}\""

// TestCommandTemplateQuoting sends internal/launcher's quotingCases (the same templates, behind a prefix that
// supplies {OUTPUT_FILE}) to the apiserver. There, TestAdmissionRuleAgreesWithRender checks the same rule against
// Render: admitted templates render, rejected ones do not, and the renderer-only ones are admitted and then refused
// by Render, because following their nesting needs more than the rule's regular expression.
func TestCommandTemplateQuoting(t *testing.T) {
	needAPIServer(t)
	cases := []struct {
		name     string
		tmpl     string
		admitted bool
	}{
		{"plain word", "r {PROMPT}", true},
		{"part of a word", "r --prompt={PROMPT} x{EVAL_ID}y", true},
		{"shell parameter syntax in any quotes", `r ${OUTPUT_FILE} "${OUTPUT_FILE}" '${OUTPUT_FILE}' \${PROMPT} $${PROMPT}`, true},
		{"quoted braces that are not placeholders", `awk '{print}' '{"a":1}' "{lower}" {PROMPT}`, true},
		{"after closed quotes", `r 'it'"'"'s' "a b" {PROMPT}`, true},
		{"after an escaped backslash or quote", `r \\{PROMPT} \'{EVAL_ID} \"{ATTEMPT}`, true},
		{"after closed substitutions", "r $(date) `date` \"$(date)\" $((1+2)) ${X:-d} $$ {PROMPT}", true},
		{"in a subshell, on a continued line", "( cd /tmp && r \\\n  {PROMPT} )", true},
		{"a quote in a comment; # inside a word", "r {OUTPUT_FILE} # it's {EVAL_ID}\nr a#'b' {PROMPT}", true},
		{"double quotes", `r "{PROMPT}"`, false},
		{"double quotes in an option", `r --prompt="{PROMPT}"`, false},
		{"double quotes after text", `r "$HOME/{EVAL_ID}"`, false},
		{"double quotes after a closed quote", `r 'a'"{PROMPT}"`, false},
		{"double quotes after a closed substitution", `r $(date) "{PROMPT}"`, false},
		{"escaped inside double quotes", `r "\{PROMPT}"`, false},
		{"single quotes", `r '{EVAL_ID}'`, false},
		{"single quotes refuse a placeholder but not ${VAR}", `r '${OUTPUT_FILE}' '{OUTPUT_FILE}'`, false},
		{"single quotes after # inside a word", `r x#'{PROMPT}'`, false},
		{"single quotes after a comment", "r # it's a comment\nr '{PROMPT}'", false},
		{"backslash", `r \{PROMPT}`, false},
		{"backquotes", "r `cat {PROMPT_FILE}`", false},
		{"backquotes in double quotes", "r \"`echo {EVAL_ID}`\"", false},
		{"command substitution", `r $(cat {PROMPT_FILE})`, false},
		{"command substitution in double quotes", `r "$(cat {PROMPT_FILE})"`, false},
		{"parameter expansion", `r ${X:-{PROMPT}}`, false},
		{"arithmetic expansion", `r $(( {ATTEMPT} + 1 ))`, false},
		{"bash arithmetic command", `(( {ATTEMPT} > 1 )) && r`, false},
		{"bash $'...' quotes", `r $'{PROMPT}'`, false},
		{`bash $'...' with \'`, `r $'\'' {PROMPT}`, false},
		// Admitted here, refused by the renderer.
		{"double quotes after a substitution holding quotes", `r $(echo "a") "{PROMPT}"`, true},
		{"here-document body", "cat <<EOF\n{PROMPT}\nEOF", true},
		{"after case inside $(...)", "r $(case x in a) echo;; esac) {PROMPT}", true},
		{"after quotes inside a double-quoted ${...}", `r "${X:-'a'}" {PROMPT}`, true},
		{"after bash $[...]", `r $[1+1] {PROMPT}`, true},
		{"after bash ${ cmd; }", `r ${ echo; } {PROMPT}`, true},
	}
	ctx := context.Background()
	check := func(t *testing.T, run *evalsv1alpha1.EvalRun, admitted bool) {
		t.Helper()
		err := k8sClient.Create(ctx, run)
		switch {
		case admitted && err != nil:
			t.Fatalf("Create() = %v, want it admitted", err)
		case !admitted && err == nil:
			t.Fatalf("Create() admitted %q, want a rejection containing %q", run.Spec.Target.CommandTemplate, quotingRejection)
		case !admitted && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), quotingRejection)):
			t.Fatalf("Create() = %v\nwant an Invalid error containing %q", err, quotingRejection)
		}
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := testutil.MakeEvalRun(fmt.Sprintf("quoting-%d", i), "default").PerCase(1).
				Command("run --out {OUTPUT_FILE} " + tc.tmpl).Obj()
			check(t, run, tc.admitted)
		})
	}
	t.Run("healthcheck", func(t *testing.T) {
		check(t, testutil.MakeEvalRun("quoting-hc-ok", "default").Healthcheck(`check {EVAL_FILE} "${OUTPUT_FILE}"`).Obj(), true)
		check(t, testutil.MakeEvalRun("quoting-hc-bad", "default").Healthcheck(`check "{EVAL_FILE}"`).Obj(), false)
	})
}

func TestEvalRunDefaults(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	run := testutil.MakeEvalRun("defaults", "default").FromConfigMap("evals", "").Healthcheck("check {EVAL_FILE}").Obj()
	run.Spec.Judging = &evalsv1alpha1.Judging{}
	run.Spec.SuccessPolicy = &evalsv1alpha1.SuccessPolicy{}
	run.Spec.Baseline = &evalsv1alpha1.Baseline{RunName: ptr.To("earlier")}
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("Create() = %v", err)
	}
	got := &evalsv1alpha1.EvalRun{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		field string
		got   any
		want  any
	}{
		{"target.batching", got.Spec.Target.Batching, evalsv1alpha1.DefaultBatching},
		{"target.evalFileView", got.Spec.Target.EvalFileView, evalsv1alpha1.DefaultEvalFileView},
		{"backoffLimit", ptr.Deref(got.Spec.BackoffLimit, -1), evalsv1alpha1.DefaultBackoffLimit},
		{"resultsDeadlineSeconds", ptr.Deref(got.Spec.ResultsDeadlineSeconds, -1), evalsv1alpha1.DefaultResultsDeadlineSeconds},
		{"evalFile.configMapKeyRef.key", got.Spec.EvalFile.ConfigMapKeyRef.Key, evalsv1alpha1.DefaultEvalFileKey},
		{"judging.passThreshold", got.Spec.Judging.PassThreshold, evalsv1alpha1.DefaultPassThreshold},
		{"judging.codeJudgeTimeoutSeconds", ptr.Deref(got.Spec.Judging.CodeJudgeTimeoutSeconds, -1), evalsv1alpha1.DefaultCodeJudgeTimeoutSeconds},
		{"judging.codeJudgeWorkers", ptr.Deref(got.Spec.Judging.CodeJudgeWorkers, -1), evalsv1alpha1.DefaultCodeJudgeWorkers},
		{"target.healthcheck.timeoutSeconds", ptr.Deref(got.Spec.Target.Healthcheck.TimeoutSeconds, -1), evalsv1alpha1.DefaultHealthcheckTimeoutSeconds},
		{"successPolicy.minPassRate", got.Spec.SuccessPolicy.MinPassRate, evalsv1alpha1.DefaultMinPassRate},
		{"successPolicy.regression", ptr.Deref(got.Spec.SuccessPolicy.Regression, ""), evalsv1alpha1.DefaultRegression},
		{"baseline.test", ptr.Deref(got.Spec.Baseline.Test, ""), evalsv1alpha1.DefaultBaselineTest},
		{"baseline.alpha", ptr.Deref(got.Spec.Baseline.Alpha, ""), evalsv1alpha1.DefaultBaselineAlpha},
		{"baseline.minEffect", ptr.Deref(got.Spec.Baseline.MinEffect, ""), evalsv1alpha1.DefaultBaselineMinEffect},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
		}
	}
}

func TestEvalRunImmutability(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	run := testutil.MakeEvalRun("immutable", "default").Obj()
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("Create() = %v", err)
	}
	mutations := []struct {
		name   string
		mutate func(r *evalsv1alpha1.EvalRun)
	}{
		{"image", func(r *evalsv1alpha1.EvalRun) { r.Spec.Target.Image = "other:1" }},
		{"eval file", func(r *evalsv1alpha1.EvalRun) { r.Spec.EvalFile.Inline = ptr.To("evalcases: []") }},
		{"deadline", func(r *evalsv1alpha1.EvalRun) { r.Spec.ActiveDeadlineSeconds = ptr.To[int64](5) }},
		{"resources", func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Target.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
		}},
		{"pod labels", func(r *evalsv1alpha1.EvalRun) {
			r.Spec.PodTemplate = &evalsv1alpha1.PodOverrides{Labels: map[string]string{"a": "b"}}
		}},
		{"shards", func(r *evalsv1alpha1.EvalRun) { r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](4)} }},
		{"resume", func(r *evalsv1alpha1.EvalRun) { r.Spec.Resume = &evalsv1alpha1.Resume{From: "earlier"} }},
		{"storage", func(r *evalsv1alpha1.EvalRun) { r.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: s3Bucket()} }},
		{"baseline", func(r *evalsv1alpha1.EvalRun) { r.Spec.Baseline = &evalsv1alpha1.Baseline{RunName: ptr.To("earlier")} }},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			cur := &evalsv1alpha1.EvalRun{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(run), cur); err != nil {
				t.Fatal(err)
			}
			m.mutate(cur)
			err := k8sClient.Update(ctx, cur)
			want := "spec is immutable except suspend"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Update() = %v, want an error containing %q", err, want)
			}
		})
	}
	t.Run("suspend may change", func(t *testing.T) {
		cur := &evalsv1alpha1.EvalRun{}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(run), cur); err != nil {
			t.Fatal(err)
		}
		cur.Spec.Suspend = ptr.To(true)
		if err := k8sClient.Update(ctx, cur); err != nil {
			t.Fatalf("Update(suspend=true) = %v", err)
		}
		cur.Spec.Suspend = ptr.To(false)
		if err := k8sClient.Update(ctx, cur); err != nil {
			t.Fatalf("Update(suspend=false) = %v", err)
		}
	})
	t.Run("status may change", func(t *testing.T) {
		cur := &evalsv1alpha1.EvalRun{}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(run), cur); err != nil {
			t.Fatal(err)
		}
		cur.Status.JobName = "immutable"
		cur.Status.Conditions = []metav1.Condition{{Type: evalsv1alpha1.ConditionReconciling, Status: metav1.ConditionTrue,
			Reason: evalsv1alpha1.ReasonPending, LastTransitionTime: metav1.Now()}}
		if err := k8sClient.Status().Update(ctx, cur); err != nil {
			t.Fatalf("Status().Update() = %v", err)
		}
	})
	// Once the run has finished (Succeeded True or False), its spec may change: the manager starts a new attempt.
	for _, finished := range []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse} {
		t.Run("spec may change once finished "+string(finished), func(t *testing.T) {
			cur := &evalsv1alpha1.EvalRun{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(run), cur); err != nil {
				t.Fatal(err)
			}
			cur.Status.Conditions = []metav1.Condition{{Type: evalsv1alpha1.ConditionSucceeded, Status: finished,
				Reason: evalsv1alpha1.ReasonCompleted, LastTransitionTime: metav1.Now()}}
			if err := k8sClient.Status().Update(ctx, cur); err != nil {
				t.Fatalf("Status().Update() = %v", err)
			}
			cur.Spec.Target.Image = "other:" + string(finished)
			if err := k8sClient.Update(ctx, cur); err != nil {
				t.Fatalf("Update(image) of a finished run = %v", err)
			}
		})
	}
}

// TestStatusZeroValuesRoundTrip writes a status whose required fields hold their zero values (counts of 0, line 0,
// runnerFinished false): they are always serialized, so the API server accepts them and they read back as written.
func TestStatusZeroValuesRoundTrip(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	run := testutil.MakeEvalRun("zero-status", "default").Obj()
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("Create() = %v", err)
	}
	want := evalsv1alpha1.EvalRunStatus{
		Summary:       &evalsv1alpha1.RunSummary{},
		Cases:         []evalsv1alpha1.CaseResult{{ID: "c1", Verdict: evalsv1alpha1.VerdictError}},
		MissingIDs:    []string{strings.Repeat("m", 256)},
		ParseErrors:   []evalsv1alpha1.ParseError{{Line: 0, Message: "the output file is empty"}},
		UnexpectedIDs: []string{strings.Repeat("u", 256)},
		Results:       &evalsv1alpha1.ResultsReference{ConfigMaps: []string{strings.Repeat("r", 253)}},
		Collection:    &evalsv1alpha1.CollectionStatus{RunnerFinished: false},
	}
	run.Status = want
	if err := k8sClient.Status().Update(ctx, run); err != nil {
		t.Fatalf("Status().Update() = %v", err)
	}
	got := &evalsv1alpha1.EvalRun{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.Status); diff != "" {
		t.Errorf("status read back (-want +got):\n%s", diff)
	}

	over := got.DeepCopy()
	over.Status.MissingIDs = []string{strings.Repeat("m", 257)}
	err := k8sClient.Status().Update(ctx, over)
	if wantErr := "status.missingIds[0]: Too long"; err == nil || !strings.Contains(err.Error(), wantErr) {
		t.Fatalf("Status().Update() with a 257-character missing id = %v, want an error containing %q", err, wantErr)
	}
}

// TestSamplesAreAccepted keeps the documented samples valid against the generated CRD.
func TestSamplesAreAccepted(t *testing.T) {
	needAPIServer(t)
	samples := []string{
		filepath.Join("..", "..", "config", "samples", "evals_v1alpha1_evalrun.yaml"),
		filepath.Join("..", "..", "examples", "screening", "evalrun.yaml"),
	}
	for _, path := range samples {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			run := &evalsv1alpha1.EvalRun{}
			if err := yaml.UnmarshalStrict(data, run); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			run.Name = "sample-" + filepath.Base(filepath.Dir(path))
			run.Namespace = "default"
			if err := k8sClient.Create(context.Background(), run); err != nil {
				t.Fatalf("%s was rejected: %v", path, err)
			}
		})
	}
}

// TestScheduleSamplesAreAccepted keeps the documented EvalSchedule sample valid against the generated CRD.
func TestScheduleSamplesAreAccepted(t *testing.T) {
	needAPIServer(t)
	path := filepath.Join("..", "..", "config", "samples", "evals_v1alpha1_evalschedule.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := &evalsv1alpha1.EvalSchedule{}
	if err := yaml.UnmarshalStrict(data, s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := s.Spec.Template.Spec.Baseline; b == nil || ptr.Deref(b.Test, "") != evalsv1alpha1.BaselineTestPaired {
		t.Errorf("%s: the sample's baseline %+v; the examples use test: Paired", path, b)
	}
	s.Namespace = "default"
	if err := k8sClient.Create(context.Background(), s); err != nil {
		t.Fatalf("%s was rejected: %v", path, err)
	}
}

// s3Bucket is a valid bucket for the admission tests.
func s3Bucket() evalsv1alpha1.S3Bucket {
	return evalsv1alpha1.S3Bucket{Endpoint: "http://seaweedfs.storage:8333", Bucket: "evals", CredentialsSecret: "s3-creds"}
}

// withBundle is a run whose eval file is suites/math/eval.yaml of the bundle in ConfigMap "bundle", changed by edit.
func withBundle(name string, edit func(*evalsv1alpha1.EvalBundle)) *evalsv1alpha1.EvalRun {
	r := testutil.MakeEvalRun(name, "default").Obj()
	b := &evalsv1alpha1.EvalBundle{EvalFile: "suites/math/eval.yaml", ConfigMap: &evalsv1alpha1.BundleConfigMap{Name: "bundle"}}
	edit(b)
	r.Spec.EvalFile = evalsv1alpha1.EvalFileSource{Bundle: b}
	return r
}

// quarantine gives w a Paired baseline that quarantines cases flipping more than flakyOver.
func quarantine(w *testutil.EvalRunWrapper, flakyOver string) *evalsv1alpha1.EvalRun {
	r := w.PairedBaseline("earlier", "", "").Obj()
	r.Spec.Baseline.Quarantine = &evalsv1alpha1.BaselineQuarantine{FlakyOver: flakyOver}
	return r
}
