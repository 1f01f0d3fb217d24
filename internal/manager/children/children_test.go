package children

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

func TestBuildRunConfig(t *testing.T) {
	base := func() podwire.RunConfig {
		return podwire.RunConfig{
			RunName: "screen", Namespace: "team-a", UID: testutil.UnitRunUID,
			EvalFile: "/evalrun-eval/eval.yaml", CaseIDs: []string{"case-001", "case-002"}, Shards: 1,
			EvalFileView: "Inputs", RunnerEvalFile: "/evalrun/view/eval.yaml", RunnerConfigFile: "/evalrun/view/launch.json",
			Launch: podwire.Launch{CommandTemplate: "/app/runner --eval {EVAL_FILE} --output {OUTPUT_FILE}", Batching: "Batched", Workers: 1,
				KillGraceSeconds: 10, CollectorStartSeconds: 300},
			PassThreshold: evalsv1alpha1.DefaultPassThreshold, CodeJudgeTimeoutSeconds: evalsv1alpha1.DefaultCodeJudgeTimeoutSeconds,
			CodeJudgeWorkers: evalsv1alpha1.DefaultCodeJudgeWorkers, ResultConfigMaps: []string{"screen-evalrun-results-0"},
			Records:           &podwire.Records{ConfigMaps: []string{"screen-evalrun-records-0"}, ConfigMapsPerShard: 1},
			StatusBudgetBytes: evalsv1alpha1.DefaultStatusBudgetBytes, ResultsDeadlineSeconds: evalsv1alpha1.DefaultResultsDeadlineSeconds,
			MaxOutputBytes: 1 << 30, JudgeContainers: 1,
		}
	}
	cases := []struct {
		name       string
		run        *evalsv1alpha1.EvalRun
		ids        []string
		defaults   []map[string]any
		codeJudges int
		opts       options.Options
		want       func(*podwire.RunConfig)
	}{
		{
			name: "defaults: no timeout means no runner deadline, no code judges means no judge deadline",
			run:  testutil.UnitRun(), ids: []string{"case-001", "case-002"}, want: func(*podwire.RunConfig) {},
		},
		{
			name: "evalFileView Full: the runner gets the whole file, in the same place",
			run:  testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.Target.EvalFileView = evalsv1alpha1.EvalFileViewFull }),
			ids:  []string{"case-001", "case-002"},
			want: func(c *podwire.RunConfig) { c.EvalFileView = "Full" },
		},
		{
			name: "per case with workers, timeout, healthcheck and working dir",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.Batching = evalsv1alpha1.BatchingPerCase
				r.Spec.Target.Workers = ptr.To[int32](4)
				r.Spec.Target.TimeoutSeconds = ptr.To[int32](900)
				r.Spec.Target.WorkingDir = "/app"
				r.Spec.Target.Healthcheck = &evalsv1alpha1.Healthcheck{CommandTemplate: "/app/runner --healthcheck"}
			}),
			ids: []string{"case-001", "case-002"},
			want: func(c *podwire.RunConfig) {
				c.Batching, c.Workers, c.TimeoutSeconds, c.WorkingDir = "PerCase", 4, 900, "/app"
				c.HealthcheckTemplate, c.HealthcheckTimeoutSeconds = "/app/runner --healthcheck", 60
				// One round (2 cases, 4 workers): (900+10) + healthcheck 60 + kill grace 10 + margin 60.
				c.RunnerDeadlineSeconds = 1040
			},
		},
		{
			name: "per case runner deadline counts one round per worker batch",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.Batching = evalsv1alpha1.BatchingPerCase
				r.Spec.Target.Workers = ptr.To[int32](3)
				r.Spec.Target.TimeoutSeconds = ptr.To[int32](30)
				r.Spec.Target.Healthcheck = &evalsv1alpha1.Healthcheck{CommandTemplate: "true", TimeoutSeconds: ptr.To[int32](5)}
			}),
			ids: testutil.CaseIDs(10),
			want: func(c *podwire.RunConfig) {
				c.CaseIDs = testutil.CaseIDs(10)
				c.Batching, c.Workers, c.TimeoutSeconds = "PerCase", 3, 30
				c.HealthcheckTemplate, c.HealthcheckTimeoutSeconds = "true", 5
				// ceil(10/3) = 4 rounds of (30+10), + 5 + 10 + 60.
				c.RunnerDeadlineSeconds = 4*40 + 5 + 10 + 60
			},
		},
		{
			name: "batched runner deadline is one invocation whatever the case count",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.Workers = ptr.To[int32](4)
				r.Spec.Target.TimeoutSeconds = ptr.To[int32](100)
			}),
			ids: testutil.CaseIDs(4001),
			want: func(c *podwire.RunConfig) {
				c.CaseIDs = testutil.CaseIDs(4001)
				c.ResultConfigMaps = []string{"screen-evalrun-results-0", "screen-evalrun-results-1", "screen-evalrun-results-2"}
				c.Records = &podwire.Records{ConfigMaps: []string{"screen-evalrun-records-0", "screen-evalrun-records-1", "screen-evalrun-records-2"}, ConfigMapsPerShard: 3}
				c.TimeoutSeconds = 100
				c.RunnerDeadlineSeconds = 100 + 10 + 10 + 60
			},
		},
		{
			// A hostile spec at the API's bounds: 4001 cases, one worker, a week each. The sum overflows int32;
			// the deadline saturates instead of wrapping to a negative (or small) wait.
			name: "per case runner deadline saturates instead of overflowing",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.Batching = evalsv1alpha1.BatchingPerCase
				r.Spec.Target.Workers = ptr.To[int32](1)
				r.Spec.Target.TimeoutSeconds = ptr.To[int32](604800)
			}),
			ids: testutil.CaseIDs(4001),
			want: func(c *podwire.RunConfig) {
				c.CaseIDs = testutil.CaseIDs(4001)
				c.ResultConfigMaps = []string{"screen-evalrun-results-0", "screen-evalrun-results-1", "screen-evalrun-results-2"}
				c.Records = &podwire.Records{ConfigMaps: []string{"screen-evalrun-records-0", "screen-evalrun-records-1", "screen-evalrun-records-2"}, ConfigMapsPerShard: 3}
				c.Batching, c.Workers, c.TimeoutSeconds = "PerCase", 1, 604800
				c.RunnerDeadlineSeconds = math.MaxInt32
			},
		},
		{
			name: "workers are ignored when batched",
			run:  testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.Target.Workers = ptr.To[int32](4) }),
			ids:  []string{"case-001", "case-002"},
			want: func(*podwire.RunConfig) {},
		},
		{
			name: "judging, results deadline and status budget",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Judging = &evalsv1alpha1.Judging{PassThreshold: "0.5", CodeJudgeTimeoutSeconds: ptr.To[int32](5), CodeJudgeWorkers: ptr.To[int32](8),
					InputFiles: ptr.To(evalsv1alpha1.InputFilesReference)}
				r.Spec.ResultsDeadlineSeconds = ptr.To[int32](60)
			}),
			ids:      []string{"case-001", "case-002"},
			defaults: []map[string]any{{"name": "exact", "type": "field_accuracy"}},
			opts:     options.Options{StatusBudgetBytes: 1000},
			want: func(c *podwire.RunConfig) {
				c.PassThreshold, c.CodeJudgeTimeoutSeconds, c.CodeJudgeWorkers, c.InputFiles = "0.5", 5, 8, "Reference"
				c.DefaultEvaluators = []map[string]any{{"name": "exact", "type": "field_accuracy"}}
				c.ResultsDeadlineSeconds, c.StatusBudgetBytes = 60, 1000
			},
		},
		{
			name:       "code judges with the default timeout and workers",
			run:        testutil.UnitRun(),
			ids:        []string{"case-001", "case-002"},
			codeJudges: 1,
			want: func(c *podwire.RunConfig) {
				// One judge container (one code-judged case): 1 round of 60s + 4s, + margin 60.
				c.CodeJudges, c.JudgeContainers, c.JudgeDeadlineSeconds = true, 1, 64+60
				// The scripts run in the manager's judge image, never the runner's by default.
				c.CodeJudgeImage, c.CodeJudgeImageSource = "localhost/evalrun/judge:dev", "Default"
			},
		},
		{
			name: "code judge deadline counts one round per judge worker batch",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Judging = &evalsv1alpha1.Judging{CodeJudgeTimeoutSeconds: ptr.To[int32](7), CodeJudgeWorkers: ptr.To[int32](3),
					Image: "registry.example/judge:v1"}
			}),
			ids:        testutil.CaseIDs(10),
			codeJudges: 10,
			want: func(c *podwire.RunConfig) {
				c.CaseIDs = testutil.CaseIDs(10)
				c.CodeJudgeTimeoutSeconds, c.CodeJudgeWorkers = 7, 3
				// Three judge containers, each one case at a time: ceil(10/3) = 4 rounds of 7s + 4s, + margin 60.
				c.CodeJudges, c.JudgeContainers, c.JudgeDeadlineSeconds = true, 3, 4*11+60
				c.CodeJudgeImage, c.CodeJudgeImageSource = "registry.example/judge:v1", "Spec"
			},
		},
		{
			name: "4001 cases get three result ConfigMaps",
			run:  testutil.UnitRun(),
			ids:  testutil.CaseIDs(4001),
			want: func(c *podwire.RunConfig) {
				c.CaseIDs = testutil.CaseIDs(4001)
				c.ResultConfigMaps = []string{"screen-evalrun-results-0", "screen-evalrun-results-1", "screen-evalrun-results-2"}
				c.Records = &podwire.Records{ConfigMaps: []string{"screen-evalrun-records-0", "screen-evalrun-records-1", "screen-evalrun-records-2"}, ConfigMapsPerShard: 3}
			},
		},
		{
			name: "4001 cases in 3 shards: each shard its own result ConfigMaps and shard ConfigMap, the shard's eval file",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](3)}
				r.Spec.Target.Batching = evalsv1alpha1.BatchingPerCase
				r.Spec.Target.TimeoutSeconds = ptr.To[int32](10)
			}),
			ids: testutil.CaseIDs(4001),
			want: func(c *podwire.RunConfig) {
				c.CaseIDs = testutil.CaseIDs(4001)
				c.Batching = "PerCase"
				c.Shards, c.ResultConfigMapsPerShard = 3, 1
				c.ResultConfigMaps = []string{"screen-evalrun-results-0", "screen-evalrun-results-1", "screen-evalrun-results-2"}
				c.Records = &podwire.Records{ConfigMaps: []string{"screen-evalrun-records-0", "screen-evalrun-records-1", "screen-evalrun-records-2"}, ConfigMapsPerShard: 1}
				c.ShardConfigMaps = []string{"screen-evalrun-shard-0", "screen-evalrun-shard-1", "screen-evalrun-shard-2"}
				c.SourceEvalFile, c.EvalFile = "/evalrun-eval/eval.yaml", "/evalrun/shard/eval.yaml"
				c.StatusBudgetBytes = podwire.ShardSectionBudgetBytes
				c.TimeoutSeconds = 10
				// A shard runs ceil(4001/3) = 1334 cases: 1334 rounds of (10+10), + 10 + 60.
				c.RunnerDeadlineSeconds = 1334*20 + 10 + 60
			},
		},
		{
			name: "4001 cases in 2 shards × 3 trials: a pod per trial of each shard, each its own result, record and shard ConfigMaps",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](2)}
				r.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](3), PassRate: ptr.To("0.6")}
			}),
			ids: testutil.CaseIDs(4001),
			want: func(c *podwire.RunConfig) {
				c.CaseIDs = testutil.CaseIDs(4001)
				c.Shards, c.Trials, c.TrialsPassRate, c.TrialsSource, c.ResultConfigMapsPerShard = 2, 3, "0.6", "Spec", 2
				c.ResultConfigMaps = names("screen-evalrun-results-", 12)
				c.Records = &podwire.Records{ConfigMaps: names("screen-evalrun-records-", 12), ConfigMapsPerShard: 2}
				c.ShardConfigMaps = names("screen-evalrun-shard-", 6)
				c.SourceEvalFile, c.EvalFile = "/evalrun-eval/eval.yaml", "/evalrun/shard/eval.yaml"
				c.StatusBudgetBytes = podwire.ShardSectionBudgetBytes
			},
		},
		{
			name: "3 trials of one shard: every pod runs every case of the pinned file",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](3)}
			}),
			ids: []string{"case-001", "case-002"},
			want: func(c *podwire.RunConfig) {
				c.Trials, c.TrialsPassRate, c.TrialsSource, c.ResultConfigMapsPerShard = 3, "1", "Spec", 1
				c.ResultConfigMaps = names("screen-evalrun-results-", 3)
				c.Records = &podwire.Records{ConfigMaps: names("screen-evalrun-records-", 3), ConfigMapsPerShard: 1}
				c.ShardConfigMaps = names("screen-evalrun-shard-", 3)
				c.StatusBudgetBytes = podwire.ShardSectionBudgetBytes
			},
		},
		{
			name: "one trial set explicitly is a run without trials",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](1), PassRate: ptr.To("1")}
			}),
			ids:  []string{"case-001", "case-002"},
			want: func(*podwire.RunConfig) {},
		},
		{
			name: "more shards than cases: one shard per case",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](5)}
			}),
			ids: []string{"case-001", "case-002"},
			want: func(c *podwire.RunConfig) {
				c.Shards, c.ResultConfigMapsPerShard = 2, 1
				c.ResultConfigMaps = []string{"screen-evalrun-results-0", "screen-evalrun-results-1"}
				c.Records = &podwire.Records{ConfigMaps: []string{"screen-evalrun-records-0", "screen-evalrun-records-1"}, ConfigMapsPerShard: 1}
				c.ShardConfigMaps = []string{"screen-evalrun-shard-0", "screen-evalrun-shard-1"}
				c.SourceEvalFile, c.EvalFile = "/evalrun-eval/eval.yaml", "/evalrun/shard/eval.yaml"
				c.StatusBudgetBytes = podwire.ShardSectionBudgetBytes
			},
		},
		{
			name: "a resumed run of one shard records its collection in a shard ConfigMap",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Resume = &evalsv1alpha1.Resume{From: "earlier"}
			}),
			ids: []string{"case-001", "case-002"},
			want: func(c *podwire.RunConfig) {
				c.ShardConfigMaps = []string{"screen-evalrun-shard-0"}
				c.StatusBudgetBytes = podwire.ShardSectionBudgetBytes
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := base()
			tc.want(&want)
			got := BuildRunConfig(tc.run, tc.ids, tc.defaults, JudgeLoad{CodeJudgeCases: tc.codeJudges}, tc.opts)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("BuildRunConfig mismatch (-want +got):\n%s", diff)
			}
			// The pod's containers refuse a configuration with an unresolved default.
			if err := got.Validate(); err != nil {
				t.Errorf("BuildRunConfig left a default unresolved: %v", err)
			}
		})
	}
}

// names are count names prefix0, prefix1, ...
func names(prefix string, count int) []string {
	out := make([]string, count)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func TestDefaultEvaluators(t *testing.T) {
	cases := []struct {
		name    string
		raw     []string
		want    []map[string]any
		wantErr string
	}{
		{name: "none"},
		{name: "objects", raw: []string{`{"name":"a","type":"contains","value":"x"}`}, want: []map[string]any{{"name": "a", "type": "contains", "value": "x"}}},
		{name: "not an object", raw: []string{`{"name":"a"}`, `["x"]`}, wantErr: "spec.judging.evaluators[1] is not an object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				if tc.raw == nil {
					return
				}
				r.Spec.Judging = &evalsv1alpha1.Judging{}
				for _, s := range tc.raw {
					r.Spec.Judging.Evaluators = append(r.Spec.Judging.Evaluators, runtime.RawExtension{Raw: []byte(s)})
				}
			})
			got, err := DefaultEvaluators(run)
			if gotErr := errString(err); gotErr != tc.wantErr {
				t.Fatalf("error = %q, want %q", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DefaultEvaluators mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestBuildEvalConfigMapRoundTrip(t *testing.T) {
	run := testutil.UnitRun()
	cfg := BuildRunConfig(run, []string{"case-001"}, nil, JudgeLoad{CodeJudgeCases: 1}, options.Options{})
	cm, err := BuildEvalConfigMap(run, []byte("evalcases: []\n"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantMeta := metav1.ObjectMeta{
		Name: "screen-evalrun-eval", Namespace: "team-a",
		Labels:          map[string]string{"evals.evalrun.io/run": "screen", "evals.evalrun.io/component": "eval"},
		OwnerReferences: ownerRefs(),
	}
	if diff := cmp.Diff(wantMeta, cm.ObjectMeta); diff != "" {
		t.Errorf("metadata mismatch (-want +got):\n%s", diff)
	}
	if !ptr.Deref(cm.Immutable, false) || cm.Data["eval.yaml"] != "evalcases: []\n" {
		t.Errorf("ConfigMap is not an immutable pinned copy: immutable=%v data=%q", cm.Immutable, cm.Data["eval.yaml"])
	}
	back, err := RunConfigFrom(cm)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cfg, back); diff != "" {
		t.Errorf("run.json round trip mismatch (-want +got):\n%s", diff)
	}
	if _, err := RunConfigFrom(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}); err == nil || !strings.Contains(err.Error(), "has no key run.json") {
		t.Errorf("RunConfigFrom of an empty ConfigMap: error %v", err)
	}
}

func TestEvalSHA256(t *testing.T) {
	// sha256("abc"), from FIPS 180-2.
	if got, want := EvalSHA256([]byte("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Errorf("EvalSHA256 = %s, want %s", got, want)
	}
}

func TestBuildCollectorRBAC(t *testing.T) {
	run := testutil.UnitRun()
	cfg := BuildRunConfig(run, testutil.CaseIDs(2500), nil, JudgeLoad{}, options.Options{})
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "team-a", OwnerReferences: ownerRefs(),
			Labels: map[string]string{"evals.evalrun.io/run": "screen", "evals.evalrun.io/component": "collector"}}
	}
	wantRole := &rbacv1.Role{
		ObjectMeta: meta("screen-evalrun-collector"),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"evals.evalrun.io"}, Resources: []string{"evalruns"}, ResourceNames: []string{"screen"}, Verbs: []string{"get"}},
			{APIGroups: []string{"evals.evalrun.io"}, Resources: []string{"evalruns/status"}, ResourceNames: []string{"screen"}, Verbs: []string{"get", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"screen-evalrun-results-0", "screen-evalrun-results-1",
				"screen-evalrun-records-0", "screen-evalrun-records-1"}, Verbs: []string{"get", "update", "patch"}},
		},
	}
	if diff := cmp.Diff(wantRole, BuildCollectorRole(run, cfg)); diff != "" {
		t.Errorf("Role mismatch (-want +got):\n%s", diff)
	}
	wantBinding := &rbacv1.RoleBinding{
		ObjectMeta: meta("screen-evalrun-collector"),
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "screen-evalrun-collector"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "screen-evalrun-collector", Namespace: "team-a"}},
	}
	if diff := cmp.Diff(wantBinding, BuildCollectorRoleBinding(run)); diff != "" {
		t.Errorf("RoleBinding mismatch (-want +got):\n%s", diff)
	}
	wantSA := &corev1.ServiceAccount{ObjectMeta: meta("screen-evalrun-collector"), AutomountServiceAccountToken: ptr.To(false)}
	if diff := cmp.Diff(wantSA, BuildCollectorServiceAccount(run)); diff != "" {
		t.Errorf("ServiceAccount mismatch (-want +got):\n%s", diff)
	}
	var gotNames []string
	for _, cm := range BuildResultConfigMaps(run, cfg) {
		if cm.Labels["evals.evalrun.io/component"] != "results" || len(cm.Data)+len(cm.BinaryData) != 0 {
			t.Errorf("result ConfigMap %s: labels %v, %d keys; want component=results and empty", cm.Name, cm.Labels, len(cm.Data)+len(cm.BinaryData))
		}
		gotNames = append(gotNames, cm.Name)
	}
	if diff := cmp.Diff([]string{"screen-evalrun-results-0", "screen-evalrun-results-1"}, gotNames); diff != "" {
		t.Errorf("result ConfigMaps mismatch (-want +got):\n%s", diff)
	}
}
