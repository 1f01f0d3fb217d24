package children

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

func withLLM(l *evalsv1alpha1.LLMJudging) func(*evalsv1alpha1.EvalRun) {
	return func(r *evalsv1alpha1.EvalRun) { r.Spec.Judging = &evalsv1alpha1.Judging{LLM: l} }
}

func TestResolveLLM(t *testing.T) {
	defaults := options.Options{LLMBaseURL: "http://judge.cluster:8080/v1", LLMModel: "cluster-model"}
	cases := []struct {
		name    string
		run     *evalsv1alpha1.EvalRun
		opts    options.Options
		want    *podwire.LLM
		wantMsg string
	}{
		{name: "no judging.llm", run: testutil.UnitRun(), opts: defaults},
		{name: "the manager's defaults", run: testutil.UnitRun(withLLM(&evalsv1alpha1.LLMJudging{})), opts: defaults,
			want: &podwire.LLM{BaseURL: "http://judge.cluster:8080/v1", Model: "cluster-model", TimeoutSeconds: 60, MaxConcurrentRequests: 4,
				AnswerDelimiters: "AgentV"}},
		{name: "the spec wins, with the key as a file", opts: defaults, run: testutil.UnitRun(withLLM(&evalsv1alpha1.LLMJudging{
			BaseURL: ptr.To("https://api.example.com/v1"), Model: ptr.To("m"), TimeoutSeconds: ptr.To[int32](5),
			MaxConcurrentRequests: ptr.To[int32](2), RequestsPerMinute: ptr.To[int32](30),
			APIKeySecretRef:  &evalsv1alpha1.SecretKeyRef{Name: "judge-key", Key: "token"},
			AnswerDelimiters: ptr.To(evalsv1alpha1.AnswerDelimitersNonce)})),
			want: &podwire.LLM{BaseURL: "https://api.example.com/v1", Model: "m", TimeoutSeconds: 5, MaxConcurrentRequests: 2,
				RequestsPerMinute: 30, APIKeyFile: "/evalrun/llm-credentials/api-key", APIKeySecret: "judge-key/token",
				AnswerDelimiters: "Nonce"}},
		{name: "nothing to resolve to", run: testutil.UnitRun(withLLM(&evalsv1alpha1.LLMJudging{})),
			wantMsg: "set spec.judging.llm.baseURL (the manager has no --llm-base-url default) and spec.judging.llm.model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := ResolveLLM(tc.run, tc.opts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ResolveLLM (-want +got):\n%s", diff)
			}
			if !strings.Contains(msg, tc.wantMsg) || (tc.wantMsg == "") != (msg == "") {
				t.Errorf("message %q, want %q", msg, tc.wantMsg)
			}
			cfg := BuildRunConfig(tc.run, []string{"a"}, nil, JudgeLoad{}, tc.opts)
			if diff := cmp.Diff(tc.want, cfg.LLM); diff != "" {
				t.Errorf("run.json's llm (-want +got):\n%s", diff)
			}
			if err := cfg.Validate(); tc.want != nil && err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// TestBuildJobLLMKeyOnlyInCollector: the API key's Secret is a volume of the pod with only the selected key, mounted
// by the collector and by no other container, and run.json holds its path, never the key.
func TestBuildJobLLMKeyOnlyInCollector(t *testing.T) {
	for _, codeJudges := range []int{0, 1} {
		run := testutil.UnitRun(withLLM(&evalsv1alpha1.LLMJudging{BaseURL: ptr.To("http://judge:8080/v1"), Model: ptr.To("m"),
			APIKeySecretRef: &evalsv1alpha1.SecretKeyRef{Name: "judge-key", Key: "token"}}))
		cfg := BuildRunConfig(run, []string{"a"}, nil, JudgeLoad{CodeJudgeCases: codeJudges}, options.Options{})
		job := BuildJob(run, cfg, options.Options{})
		var vol *corev1.Volume
		for i, v := range job.Spec.Template.Spec.Volumes {
			if v.Secret != nil && v.Secret.SecretName == "judge-key" {
				vol = &job.Spec.Template.Spec.Volumes[i]
			}
		}
		if vol == nil {
			t.Fatalf("no volume of the Secret judge-key: %+v", job.Spec.Template.Spec.Volumes)
		}
		want := &corev1.SecretVolumeSource{SecretName: "judge-key", DefaultMode: ptr.To[int32](0o440), Optional: ptr.To(true),
			Items: []corev1.KeyToPath{{Key: "token", Path: "api-key"}}}
		if diff := cmp.Diff(want, vol.Secret); diff != "" {
			t.Errorf("the key's volume (-want +got):\n%s", diff)
		}
		mounted := map[string]string{}
		for _, c := range allContainers(job) {
			for _, m := range c.VolumeMounts {
				if m.Name == vol.Name {
					mounted[c.Name] = m.MountPath
					if !m.ReadOnly {
						t.Errorf("%s mounts the key read-write", c.Name)
					}
				}
			}
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					t.Errorf("%s has the Secret in its environment", c.Name)
				}
			}
		}
		if diff := cmp.Diff(map[string]string{"collector": "/evalrun/llm-credentials"}, mounted); diff != "" {
			t.Errorf("code judges %d: containers mounting the key (-want +got):\n%s", codeJudges, diff)
		}
		data, _ := json.Marshal(cfg)
		if !strings.Contains(string(data), `"apiKeyFile":"/evalrun/llm-credentials/api-key"`) {
			t.Errorf("run.json: %s", data)
		}
	}
}

func TestBuildJobNoKeyNoVolume(t *testing.T) {
	run := testutil.UnitRun(withLLM(&evalsv1alpha1.LLMJudging{BaseURL: ptr.To("http://judge:8080/v1"), Model: ptr.To("m")}))
	job := BuildJob(run, BuildRunConfig(run, []string{"a"}, nil, JudgeLoad{}, options.Options{}), options.Options{})
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Name == podwire.VolumeLLMCredentials {
			t.Errorf("a key volume without apiKeySecretRef: %+v", v)
		}
	}
}

// TestLLMJudgeDeadline: the LLM judges' deadline grows with the pod's requests as the code judges' does (rounds of
// maxConcurrentRequests, one timeoutSeconds each, no less than requestsPerMinute needs, plus 60 s), counts only a
// shard's share, stops at the run's deadline, and the collection deadline the manager waits for includes it.
func TestLLMJudgeDeadline(t *testing.T) {
	endpoint := func(mutate ...func(*evalsv1alpha1.LLMJudging)) func(*evalsv1alpha1.EvalRun) {
		l := &evalsv1alpha1.LLMJudging{BaseURL: ptr.To("http://judge:8080/v1"), Model: ptr.To("m")}
		for _, m := range mutate {
			m(l)
		}
		return withLLM(l)
	}
	shards := func(n int32) func(*evalsv1alpha1.EvalRun) {
		return func(r *evalsv1alpha1.EvalRun) { r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To(n)} }
	}
	cases := []struct {
		name  string
		run   *evalsv1alpha1.EvalRun
		cases int
		load  JudgeLoad
		want  int32
	}{
		{name: "no model endpoint", run: testutil.UnitRun(), cases: 3, load: JudgeLoad{LLMRequests: 3, LLMRequestsPerCase: 1}},
		{name: "one round", run: testutil.UnitRun(endpoint()), cases: 3, load: JudgeLoad{LLMRequests: 3, LLMRequestsPerCase: 1},
			want: 60 + 60},
		{name: "nothing to ask the model", run: testutil.UnitRun(endpoint()), cases: 3, want: 60},
		{name: "1,000 cases of two requests, four at once", run: testutil.UnitRun(endpoint()), cases: 1000,
			load: JudgeLoad{LLMRequests: 2000, LLMRequestsPerCase: 2}, want: 500*60 + 60},
		{name: "a shard's share of them, one at a time (its share of four)", run: testutil.UnitRun(endpoint(), shards(10)), cases: 1000,
			load: JudgeLoad{LLMRequests: 2000, LLMRequestsPerCase: 2}, want: 200*60 + 60},
		{name: "the timeout and concurrency set", cases: 100, load: JudgeLoad{LLMRequests: 100, LLMRequestsPerCase: 1},
			run: testutil.UnitRun(endpoint(func(l *evalsv1alpha1.LLMJudging) {
				l.TimeoutSeconds, l.MaxConcurrentRequests = ptr.To[int32](10), ptr.To[int32](8)
			})), want: 13*10 + 60},
		{name: "the rate is the bound", cases: 200, load: JudgeLoad{LLMRequests: 200, LLMRequestsPerCase: 1},
			run: testutil.UnitRun(endpoint(func(l *evalsv1alpha1.LLMJudging) {
				l.TimeoutSeconds, l.MaxConcurrentRequests, l.RequestsPerMinute = ptr.To[int32](5), ptr.To[int32](64), ptr.To[int32](30)
			})), want: 7*60 + 60},
		{name: "at most the run's deadline", cases: 1000, load: JudgeLoad{LLMRequests: 2000, LLMRequestsPerCase: 2},
			run: testutil.UnitRun(endpoint(), func(r *evalsv1alpha1.EvalRun) { r.Spec.ActiveDeadlineSeconds = ptr.To[int64](600) }), want: 600},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := BuildRunConfig(tc.run, testutil.CaseIDs(tc.cases), nil, tc.load, options.Options{})
			if cfg.LLMJudgeDeadlineSeconds != tc.want {
				t.Errorf("llmJudgeDeadlineSeconds %d, want %d", cfg.LLMJudgeDeadlineSeconds, tc.want)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			job := BuildJob(tc.run, cfg, options.Options{})
			want := strconv.Itoa(int(cfg.JudgeDeadlineSeconds + tc.want + cfg.ResultsDeadlineSeconds + collectionMarginSeconds))
			if got := job.Annotations[podwire.AnnotationCollectionDeadline]; got != want {
				t.Errorf("collection deadline %s, want %s", got, want)
			}
		})
	}
}

// TestLLMBoundsPerRun: spec.judging.llm.maxConcurrentRequests and requestsPerMinute hold per run: run.json gives
// each pod that runs at once (shards, at most sharding.parallelism) its share, rounded up, at least 1.
func TestLLMBoundsPerRun(t *testing.T) {
	bounds := func(concurrent, perMinute *int32, shards, parallelism *int32) *evalsv1alpha1.EvalRun {
		return testutil.UnitRun(withLLM(&evalsv1alpha1.LLMJudging{BaseURL: ptr.To("http://judge:8080/v1"), Model: ptr.To("m"),
			MaxConcurrentRequests: concurrent, RequestsPerMinute: perMinute}), func(r *evalsv1alpha1.EvalRun) {
			if shards != nil {
				r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: shards, Parallelism: parallelism}
			}
		})
	}
	n := ptr.To[int32]
	cases := []struct {
		name                     string
		run                      *evalsv1alpha1.EvalRun
		cases                    int
		wantConcurrent, wantRate int32
		pods                     int32
	}{
		{name: "one pod keeps the run's bounds", run: bounds(n(8), n(120), nil, nil), cases: 100, wantConcurrent: 8, wantRate: 120, pods: 1},
		{name: "ten shards share them", run: bounds(n(8), n(120), n(10), nil), cases: 100, wantConcurrent: 1, wantRate: 12, pods: 10},
		{name: "shards at once, not shards", run: bounds(n(64), n(100), n(10), n(3)), cases: 100, wantConcurrent: 22, wantRate: 34, pods: 3},
		{name: "fewer cases than shards", run: bounds(n(8), n(120), n(10), nil), cases: 4, wantConcurrent: 2, wantRate: 30, pods: 4},
		{name: "at least one each", run: bounds(nil, n(5), n(10), nil), cases: 100, wantConcurrent: 1, wantRate: 1, pods: 10},
		{name: "no rate stays none", run: bounds(nil, nil, n(2), nil), cases: 100, wantConcurrent: 2, pods: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := BuildRunConfig(tc.run, testutil.CaseIDs(tc.cases), nil, JudgeLoad{}, options.Options{})
			if cfg.LLM.MaxConcurrentRequests != tc.wantConcurrent || cfg.LLM.RequestsPerMinute != tc.wantRate {
				t.Errorf("run.json's llm: maxConcurrentRequests %d, requestsPerMinute %d; want %d and %d",
					cfg.LLM.MaxConcurrentRequests, cfg.LLM.RequestsPerMinute, tc.wantConcurrent, tc.wantRate)
			}
			if pods := podsAtOnce(tc.run, cfg.Shards); pods != tc.pods {
				t.Errorf("%d pods at once, want %d", pods, tc.pods)
			}
			// What the pods at once start per minute exceeds the run's rate by less than one request per pod.
			if spec := tc.run.Spec.Judging.LLM.RequestsPerMinute; spec != nil && *spec >= tc.pods &&
				tc.pods*cfg.LLM.RequestsPerMinute >= *spec+tc.pods {
				t.Errorf("%d pods at %d requests per minute exceed the run's %d", tc.pods, cfg.LLM.RequestsPerMinute, *spec)
			}
		})
	}
}
