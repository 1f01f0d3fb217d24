package children

import (
	"slices"
	"testing"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestBuildJobBundle pins a bundle run's pod: the whole bundle in its own volume that install writes and only the
// judging containers read; its source (the pinned copy, or the bucket's credentials) install's alone; the runner
// mounts what it mounts in every run, and its eval file sits at its bundle path in the view volume.
func TestBuildJobBundle(t *testing.T) {
	bucket := evalsv1alpha1.S3Bucket{Endpoint: "http://s3.example", Bucket: "b", Prefix: ptr.To("bundles/math"), CredentialsSecret: "creds"}
	for name, tc := range map[string]struct {
		mutate     func(*evalsv1alpha1.EvalRun)
		source     string
		sourceEval string
	}{
		"configmap": {mutate: func(r *evalsv1alpha1.EvalRun) {
			r.Spec.EvalFile = evalsv1alpha1.EvalFileSource{Bundle: &evalsv1alpha1.EvalBundle{EvalFile: "suites/math/eval.yaml",
				ConfigMap: &evalsv1alpha1.BundleConfigMap{Name: "math"}}}
		}, source: podwire.VolumeBundleSource},
		"bucket": {mutate: func(r *evalsv1alpha1.EvalRun) {
			r.Spec.EvalFile = evalsv1alpha1.EvalFileSource{Bundle: &evalsv1alpha1.EvalBundle{EvalFile: "suites/math/eval.yaml", S3: &bucket}}
		}, source: podwire.VolumeEvalCredentials, sourceEval: "/evalrun/bundle/suites/math/eval.yaml"},
		"bucket, sharded, code judges": {mutate: func(r *evalsv1alpha1.EvalRun) {
			r.Spec.EvalFile = evalsv1alpha1.EvalFileSource{Bundle: &evalsv1alpha1.EvalBundle{EvalFile: "suites/math/eval.yaml", S3: &bucket}}
			r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](2)}
		}, source: podwire.VolumeEvalCredentials, sourceEval: "/evalrun/bundle/suites/math/eval.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			run := testutil.UnitRun(tc.mutate)
			cfg := BuildRunConfig(run, []string{"case-001", "case-002", "case-003"}, nil, JudgeLoad{CodeJudgeCases: 2}, options.Options{})
			cfg.Bundle.SHA256, cfg.Bundle.Files, cfg.Bundle.Bytes = "d", 3, 1<<20
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if cfg.RunnerEvalFile != "/evalrun/view/bundle/suites/math/eval.yaml" || cfg.SourceEvalFile != tc.sourceEval && cfg.Shards == 1 {
				t.Errorf("runner eval file %q, source eval file %q", cfg.RunnerEvalFile, cfg.SourceEvalFile)
			}
			if got := cfg.EvalFileInBucket(); got != (tc.sourceEval != "") {
				t.Errorf("EvalFileInBucket() = %v", got)
			}
			job := BuildJob(run, cfg, options.Options{})
			runner := runnerOf(job)
			if diff := cmp.Diff([]corev1.VolumeMount{binRO, outRW, viewRO, {Name: "shm-runner", MountPath: "/dev/shm"}}, runner.VolumeMounts); diff != "" {
				t.Errorf("runner mounts (-want +got):\n%s", diff)
			}
			if i := slices.IndexFunc(runner.Env, func(e corev1.EnvVar) bool { return e.Name == podwire.EnvEvalFile }); i < 0 || runner.Env[i].Value != cfg.RunnerEvalFile {
				t.Errorf("runner env %v, want EVAL_FILE %s", runner.Env, cfg.RunnerEvalFile)
			}
			readers := map[string][]string{}
			for _, c := range allContainers(job) {
				for _, m := range c.VolumeMounts {
					access := "ro"
					if !m.ReadOnly {
						access = "rw"
					}
					if m.Name == podwire.VolumeBundle || m.Name == tc.source {
						readers[m.Name] = append(readers[m.Name], c.Name+" "+access+" "+m.MountPath)
					}
				}
			}
			want := map[string][]string{
				podwire.VolumeBundle: {"install rw /evalrun/bundle", "collector ro /evalrun/bundle", "judge ro /evalrun/bundle", "judge-1 ro /evalrun/bundle"},
				tc.source:            {"install ro " + map[string]string{podwire.VolumeBundleSource: podwire.BundleSourceDir, podwire.VolumeEvalCredentials: podwire.EvalCredentialsDir}[tc.source]},
			}
			if diff := cmp.Diff(want, readers); diff != "" {
				t.Errorf("who mounts the bundle and its source (-want +got):\n%s", diff)
			}
			for _, v := range job.Spec.Template.Spec.Volumes {
				if v.Name == podwire.VolumeBundle && (v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Value() < 1<<20) {
					t.Errorf("bundle volume %+v, want an emptyDir bounded above the bundle's bytes", v)
				}
				if v.Name == podwire.VolumeBundleSource && (v.ConfigMap == nil || v.ConfigMap.Name != "screen-evalrun-bundle") {
					t.Errorf("bundle source volume %+v, want the pinned copy", v)
				}
			}
		})
	}
}
