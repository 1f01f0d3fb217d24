package collect

import (
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// TestRejudgeFrom: where a re-judge reads its source's records, or why it cannot.
func TestRejudgeFrom(t *testing.T) {
	bucket := evalsv1alpha1.S3Bucket{Endpoint: "http://s3.example", Bucket: "b", CredentialsSecret: "creds"}
	other := bucket
	other.Prefix = ptr.To("elsewhere")
	source := func(storage *evalsv1alpha1.S3Bucket, where evalsv1alpha1.RecordsLocation) *evalsv1alpha1.EvalRun {
		src := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Name, r.UID = "nightly", types.UID("uid-1") })
		if storage != nil {
			src.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: *storage}
		}
		src.Status.Records = &evalsv1alpha1.RecordsStatus{Kept: 3, Where: where}
		return src
	}
	inConfigMaps := podwire.RunConfig{Shards: 2, Launch: podwire.Launch{Batching: "PerCase"},
		Records: &podwire.Records{ConfigMaps: []string{"nightly-evalrun-records-0", "nightly-evalrun-records-1"}, ConfigMapsPerShard: 1}}
	inBucket := podwire.RunConfig{Shards: 3, Bucket: &podwire.Bucket{Endpoint: bucket.Endpoint, Bucket: "b"}, Records: &podwire.Records{}}
	tests := []struct {
		name    string
		storage *evalsv1alpha1.S3Bucket // this run's
		bucket  evalsv1alpha1.StatusSource
		src     *evalsv1alpha1.EvalRun
		srcCfg  podwire.RunConfig
		// passRate is this run's spec.trials.passRate ("": no spec.trials).
		passRate string
		want     *RejudgePlan
		invalid  string
	}{
		{name: "ConfigMaps", src: source(nil, evalsv1alpha1.RecordsInConfigMaps), srcCfg: inConfigMaps,
			want: &RejudgePlan{shards: 2, trials: 1, batching: "PerCase", config: podwire.Rejudge{From: "nightly", FromUID: "uid-1",
				ConfigMaps: inConfigMaps.Records.ConfigMaps, ConfigMapsPerShard: 1, Shards: 2}}},
		{name: "the same bucket", storage: &bucket, src: source(&bucket, evalsv1alpha1.RecordsInBucket), srcCfg: inBucket,
			want: &RejudgePlan{shards: 3, trials: 1, batching: "Batched", config: podwire.Rejudge{From: "nightly", FromUID: "uid-1", InBucket: true, Shards: 3}}},
		{name: "a bucket, this run none", src: source(&bucket, evalsv1alpha1.RecordsInBucket), srcCfg: inBucket,
			invalid: "EvalRun nightly kept its records in a bucket: set spec.storage.s3 to the same bucket"},
		{name: "another prefix", storage: &other, src: source(&bucket, evalsv1alpha1.RecordsInBucket), srcCfg: inBucket,
			invalid: `this run's spec.storage.s3 is bucket b at http://s3.example (prefix "elsewhere")`},
		{name: "ConfigMaps, this pod without a token", storage: &bucket, bucket: evalsv1alpha1.StatusFromBucket,
			src: source(nil, evalsv1alpha1.RecordsInConfigMaps), srcCfg: inConfigMaps,
			invalid: "EvalRun nightly kept its records in ConfigMaps, which a pod with spec.storage.statusFrom: Bucket (no API access) cannot read"},
		{name: "a source with trials: its count and pass rate", src: source(nil, evalsv1alpha1.RecordsInConfigMaps),
			srcCfg: podwire.RunConfig{Shards: 2, Trials: 3, TrialsPassRate: "0.6", Records: inConfigMaps.Records},
			want: &RejudgePlan{shards: 2, trials: 3, passRate: "0.6", batching: "Batched", config: podwire.Rejudge{From: "nightly", FromUID: "uid-1",
				ConfigMaps: inConfigMaps.Records.ConfigMaps, ConfigMapsPerShard: 1, Shards: 2}}},
		{name: "a source with trials pinned before run.json said its pass rate: its spec's", src: withTrials(source(nil, evalsv1alpha1.RecordsInConfigMaps), "0.5"),
			srcCfg: podwire.RunConfig{Shards: 2, Trials: 3, Records: inConfigMaps.Records},
			want: &RejudgePlan{shards: 2, trials: 3, passRate: "0.5", batching: "Batched", config: podwire.Rejudge{From: "nightly", FromUID: "uid-1",
				ConfigMaps: inConfigMaps.Records.ConfigMaps, ConfigMapsPerShard: 1, Shards: 2}}},
		{name: "a source with trials, this run's own pass rate", passRate: "0.3", src: source(nil, evalsv1alpha1.RecordsInConfigMaps),
			srcCfg: podwire.RunConfig{Shards: 2, Trials: 3, TrialsPassRate: "0.6", Records: inConfigMaps.Records},
			want: &RejudgePlan{shards: 2, trials: 3, passRate: "0.3", batching: "Batched", config: podwire.Rejudge{From: "nightly", FromUID: "uid-1",
				ConfigMaps: inConfigMaps.Records.ConfigMaps, ConfigMapsPerShard: 1, Shards: 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Rejudge = &evalsv1alpha1.Rejudge{From: "nightly"}
				if tc.passRate != "" {
					r.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](1), PassRate: ptr.To(tc.passRate)}
				}
				if tc.storage != nil {
					r.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: *tc.storage}
					if tc.bucket != "" {
						r.Spec.Storage.StatusFrom = ptr.To(tc.bucket)
					}
				}
			})
			plan, a, err := rejudgeFrom(run, tc.src, tc.srcCfg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.invalid != "" {
				if a == nil || a.Reason != evalsv1alpha1.ReasonRejudgeSourceInvalid || !strings.Contains(a.Message, tc.invalid) {
					t.Errorf("assessment %+v, want RejudgeSourceInvalid saying %q", a, tc.invalid)
				}
				return
			}
			if a != nil {
				t.Fatalf("assessment %+v", a)
			}
			if diff := cmp.Diff(tc.want, plan, cmp.AllowUnexported(RejudgePlan{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildJobRejudge: a re-judge's run.json takes the source's shards and batching and is valid; its pod has no
// runner container and keeps the restricted security of the others; its collector may get the source's record
// ConfigMaps of every shard, read-only, and no EvalRun.
func TestBuildJobRejudge(t *testing.T) {
	run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
		r.Spec.Rejudge, r.Spec.Target = &evalsv1alpha1.Rejudge{From: "nightly"}, evalsv1alpha1.Target{}
	})
	plan := &RejudgePlan{shards: 2, batching: "PerCase", config: podwire.Rejudge{From: "nightly", FromUID: "uid-1",
		ConfigMaps: []string{"nightly-evalrun-records-0", "nightly-evalrun-records-1"}, ConfigMapsPerShard: 1}}
	cfg := children.BuildRunConfig(plan.configRun(run), testutil.CaseIDs(4), nil, children.JudgeLoad{}, options.Options{})
	plan.apply(&cfg)
	if err := cfg.Validate(); err != nil {
		t.Fatalf("run.json: %v", err)
	}
	if cfg.Shards != 2 || cfg.Batching != "PerCase" || cfg.RunnerDeadlineSeconds != 0 || !cfg.HasShardConfigMaps() {
		t.Errorf("run.json: %d shards, batching %s, runner deadline %d, merged %v", cfg.Shards, cfg.Batching, cfg.RunnerDeadlineSeconds, cfg.HasShardConfigMaps())
	}
	shard := cfg
	shard.Rejudge = ptr.To(*cfg.Rejudge)
	if err := shard.LoadShard("1"); err != nil || !cmp.Equal(shard.Rejudge.ConfigMaps, []string{"nightly-evalrun-records-1"}) {
		t.Errorf("shard 1 reads %v (%v), want the source's shard 1 record ConfigMap", shard.Rejudge.ConfigMaps, err)
	}
	job := children.BuildJob(run, cfg, options.Options{})
	spec := job.Spec.Template.Spec
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		if c.Name == podwire.ContainerRunner {
			t.Error("the re-judge's pod has a runner container")
		}
		if sc := c.SecurityContext; sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || ptr.Deref(sc.AllowPrivilegeEscalation, true) {
			t.Errorf("container %s is not restricted: %+v", c.Name, sc)
		}
	}
	if len(spec.Containers) == 0 || spec.Containers[0].Name != podwire.ContainerCollector {
		t.Errorf("the re-judge's pod's first container is not the collector, which keeps it until the results are persisted")
	}
	if n := ptr.Deref(job.Spec.Completions, 0); n != 2 {
		t.Errorf("completions %d, want the source's 2 shards", n)
	}
	var readOnly []rbacv1.PolicyRule
	for _, r := range children.BuildCollectorRole(run, cfg).Rules {
		if cmp.Equal(r.Verbs, []string{"get"}) {
			readOnly = append(readOnly, r)
		}
	}
	want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
		ResourceNames: []string{"nightly-evalrun-records-0", "nightly-evalrun-records-1"}, Verbs: []string{"get"}}}
	if diff := cmp.Diff(want, readOnly); diff != "" {
		t.Errorf("the collector's read-only grants (-want +got):\n%s", diff)
	}
}

// withTrials gives run 3 trials at passRate.
func withTrials(run *evalsv1alpha1.EvalRun, passRate string) *evalsv1alpha1.EvalRun {
	run.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](3), PassRate: ptr.To(passRate)}
	return run
}

// TestBuildJobRejudgeTrials: a re-judge of a source of 2 shards × 3 trials is a Job of 6 pods that says its 3
// trials (its spec does not); its run.json has the source's trials and pass rate and is valid, and its pod of
// shard 1 and trial 3 reads the source's record ConfigMaps of shard 1 and trial 3, carrying that trial on its
// results.
func TestBuildJobRejudgeTrials(t *testing.T) {
	run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
		r.Spec.Rejudge, r.Spec.Target = &evalsv1alpha1.Rejudge{From: "nightly"}, evalsv1alpha1.Target{}
	})
	records := children.NamesFor("nightly").RecordConfigMaps(6)
	plan := &RejudgePlan{shards: 2, trials: 3, passRate: "0.6", batching: "Batched", config: podwire.Rejudge{From: "nightly", FromUID: "uid-1",
		ConfigMaps: records, ConfigMapsPerShard: 1, Shards: 2}}
	cfg := children.BuildRunConfig(plan.configRun(run), testutil.CaseIDs(4), nil, children.JudgeLoad{}, options.Options{})
	plan.apply(&cfg)
	if err := cfg.Validate(); err != nil {
		t.Fatalf("run.json: %v", err)
	}
	if cfg.Shards != 2 || cfg.Trials != 3 || cfg.TrialsPassRate != "0.6" || cfg.Pods() != 6 || len(cfg.ShardConfigMaps) != 6 {
		t.Errorf("run.json: %d shards × %d trials at %q, %d pods, %d shard ConfigMaps", cfg.Shards, cfg.Trials, cfg.TrialsPassRate,
			cfg.Pods(), len(cfg.ShardConfigMaps))
	}
	if rule, err := children.ConfigTrialRule(run, cfg); err != nil || rule.N() != 3 || rule.PassRate != 0.6 {
		t.Errorf("the merge's rule %+v (%v), want the source's 3 trials at 0.6", rule, err)
	}
	pod := cfg
	pod.Rejudge = ptr.To(*cfg.Rejudge)
	if err := pod.LoadShard("5"); err != nil || !cmp.Equal(pod.Rejudge.ConfigMaps, records[5:6]) || pod.LineTrial() != 3 {
		t.Errorf("index 5 reads %v (%v), its results trial %d; want the source's shard 1 trial 3, %s", pod.Rejudge.ConfigMaps, err,
			pod.LineTrial(), records[5])
	}
	job := children.BuildJob(run, cfg, options.Options{})
	if n := ptr.Deref(job.Spec.Completions, 0); n != 6 || job.Annotations[podwire.AnnotationTrials] != "3" {
		t.Errorf("completions %d, trials annotation %q; want 6 and 3", n, job.Annotations[podwire.AnnotationTrials])
	}
}
