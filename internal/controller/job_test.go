package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

const testUID = "0b5a8c3e-1111-2222-3333-444455556666"

func testRun(mutate ...func(*evalsv1alpha1.EvalRun)) *evalsv1alpha1.EvalRun {
	run := testutil.MakeEvalRun("screen", "team-a").Obj()
	run.UID = testUID
	run.Generation = 1
	for _, m := range mutate {
		m(run)
	}
	return run
}

func ownerRefs() []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: "evals.evalrun.io/v1alpha1", Kind: "EvalRun", Name: "screen", UID: testUID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
}

func ourContainerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// baseJob is the Job expected for testRun() with the default options, written out in full.
func baseJob() *batchv1.Job {
	small := func(limit string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(limit)},
		}
	}
	work := corev1.VolumeMount{Name: "work", MountPath: "/evalrun"}
	eval := corev1.VolumeMount{Name: "eval", MountPath: "/evalrun-eval", ReadOnly: true}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: "screen", Namespace: "team-a",
			Labels:          map[string]string{"evals.evalrun.io/run": "screen", "evals.evalrun.io/component": "job"},
			OwnerReferences: ownerRefs(),
		},
		Spec: batchv1.JobSpec{
			Parallelism:  ptr.To[int32](1),
			Completions:  ptr.To[int32](1),
			BackoffLimit: ptr.To[int32](0),
			Suspend:      ptr.To(false),
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget", Status: corev1.ConditionTrue}},
			}}},
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"evals.evalrun.io/run": "screen", "evals.evalrun.io/component": "pod"}},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					ServiceAccountName:            "screen-collector",
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](60),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532), FSGroup: ptr.To[int64](65532),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Volumes: []corev1.Volume{
						{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "eval", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: "screen-eval"}, DefaultMode: ptr.To[int32](0o444)}}},
						{Name: "collector-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
							DefaultMode: ptr.To[int32](0o444),
							Sources: []corev1.VolumeProjection{
								{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
								{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
									Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
								{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
									Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
							},
						}}},
					},
					InitContainers: []corev1.Container{
						{
							Name: "install", Image: "localhost/evalrun/collector:dev", ImagePullPolicy: corev1.PullIfNotPresent,
							Command:      []string{"/collector", "install", "--dest", "/evalrun/bin/collector"},
							VolumeMounts: []corev1.VolumeMount{work}, Resources: small("64Mi"), SecurityContext: ourContainerSecurity(),
							TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						},
						{
							Name: "collector", Image: "localhost/evalrun/collector:dev", ImagePullPolicy: corev1.PullIfNotPresent,
							RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
							Command:       []string{"/collector", "collect", "--config", "/evalrun-eval/run.json", "--work", "/evalrun"},
							Env: []corev1.EnvVar{
								{Name: "EVALRUN_NAME", Value: "screen"},
								{Name: "EVALRUN_NAMESPACE", Value: "team-a"},
								{Name: "EVALRUN_UID", Value: testUID},
								{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
							},
							VolumeMounts: []corev1.VolumeMount{work, eval,
								{Name: "collector-token", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
							StartupProbe: &corev1.Probe{
								ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
									Command: []string{"/collector", "probe", "--ready-file", "/evalrun/state/collector-ready"}}},
								PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 120,
							},
							Resources: small("256Mi"), SecurityContext: ourContainerSecurity(),
							TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						},
					},
					Containers: []corev1.Container{{
						Name: "runner", Image: "localhost/evalrun/screening-runner:dev",
						Command: []string{"/evalrun/bin/collector", "launch", "--config", "/evalrun-eval/run.json", "--work", "/evalrun"},
						Env: []corev1.EnvVar{
							{Name: "EVAL_FILE", Value: "/evalrun-eval/eval.yaml"},
							{Name: "OUTPUT_FILE", Value: "/evalrun/out/results.jsonl"},
						},
						VolumeMounts: []corev1.VolumeMount{work, eval},
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					}},
				},
			},
		},
	}
}

func runnerOf(j *batchv1.Job) *corev1.Container { return &j.Spec.Template.Spec.Containers[0] }

func TestBuildJob(t *testing.T) {
	cases := []struct {
		name string
		run  *evalsv1alpha1.EvalRun
		opts Options
		want func(*batchv1.Job)
	}{
		{name: "batched defaults", run: testRun(), want: func(*batchv1.Job) {}},
		{
			name: "collector image option",
			run:  testRun(),
			opts: Options{CollectorImage: "registry.example/collector:v1"},
			want: func(j *batchv1.Job) {
				j.Spec.Template.Spec.InitContainers[0].Image = "registry.example/collector:v1"
				j.Spec.Template.Spec.InitContainers[1].Image = "registry.example/collector:v1"
			},
		},
		{
			name: "per case: OUTPUT_FILE names the per-case directory",
			run: testRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.Batching = evalsv1alpha1.BatchingPerCase
				r.Spec.Target.Workers = ptr.To[int32](3)
			}),
			want: func(j *batchv1.Job) { runnerOf(j).Env[1].Value = "/evalrun/out/cases" },
		},
		{
			name: "kueue queue: label and created suspended even with suspend false",
			run:  testRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.QueueName = "team-a-queue"; r.Spec.Suspend = ptr.To(false) }),
			want: func(j *batchv1.Job) {
				j.Labels["kueue.x-k8s.io/queue-name"] = "team-a-queue"
				j.Spec.Suspend = ptr.To(true)
			},
		},
		{
			name: "spec.suspend",
			run:  testRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.Suspend = ptr.To(true) }),
			want: func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) },
		},
		{
			name: "run controls",
			run: testRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.BackoffLimit = ptr.To[int32](2)
				r.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600)
				r.Spec.TTLSecondsAfterFinished = ptr.To[int32](600)
			}),
			want: func(j *batchv1.Job) {
				j.Spec.BackoffLimit = ptr.To[int32](2)
				j.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600)
				j.Spec.TTLSecondsAfterFinished = ptr.To[int32](600)
			},
		},
		{
			name: "pod overrides: our labels win",
			run: testRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.PodTemplate = &evalsv1alpha1.PodOverrides{
					Labels:            map[string]string{"team": "a", "evals.evalrun.io/run": "other", "evals.evalrun.io/component": "x"},
					Annotations:       map[string]string{"note": "n"},
					NodeSelector:      map[string]string{"pool": "eval"},
					Tolerations:       []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					Affinity:          &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}},
					ImagePullSecrets:  []corev1.LocalObjectReference{{Name: "pull"}},
					PriorityClassName: "low",
				}
			}),
			want: func(j *batchv1.Job) {
				p := &j.Spec.Template
				p.Labels["team"] = "a"
				p.Annotations = map[string]string{"note": "n"}
				p.Spec.NodeSelector = map[string]string{"pool": "eval"}
				p.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
				p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
				p.Spec.PriorityClassName = "low"
			},
		},
		{
			name: "runner settings: env (ours win), envFrom, resources, workingDir, pull policy",
			run: testRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.Env = []corev1.EnvVar{{Name: "MODEL", Value: "m"}, {Name: "OUTPUT_FILE", Value: "/tmp/hijack"}}
				r.Spec.Target.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "keys"}}}}
				r.Spec.Target.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
				r.Spec.Target.WorkingDir = "/app"
				r.Spec.Target.ImagePullPolicy = corev1.PullAlways
			}),
			want: func(j *batchv1.Job) {
				c := runnerOf(j)
				c.Env = append([]corev1.EnvVar{{Name: "MODEL", Value: "m"}}, c.Env...)
				c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "keys"}}}}
				c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
				c.WorkingDir = "/app"
				c.ImagePullPolicy = corev1.PullAlways
			},
		},
		{
			name: "runner security override stays restricted",
			run: testRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.SecurityContext = &corev1.SecurityContext{
					RunAsUser:              ptr.To[int64](1000),
					ReadOnlyRootFilesystem: ptr.To(true),
					Capabilities:           &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE", "SYS_ADMIN"}},
					SeccompProfile:         &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined},
					ProcMount:              ptr.To(corev1.UnmaskedProcMount),
				}
			}),
			want: func(j *batchv1.Job) {
				runnerOf(j).SecurityContext = &corev1.SecurityContext{
					RunAsUser: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true),
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}},
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			names := NamesFor(tc.run.Name)
			cfg := BuildRunConfig(tc.run, []string{"case-001", "case-002"}, nil, tc.opts)
			if diff := cmp.Diff(names.ResultConfigMaps(1), cfg.ResultConfigMaps); diff != "" {
				t.Fatalf("result ConfigMaps (-want +got):\n%s", diff)
			}
			want := baseJob()
			tc.want(want)
			got := BuildJob(tc.run, cfg, tc.opts)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("BuildJob mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildJobTokenOnlyInCollector checks the security property directly: no container but the collector
// mounts the token volume.
func TestBuildJobTokenOnlyInCollector(t *testing.T) {
	run := testRun()
	job := BuildJob(run, BuildRunConfig(run, []string{"a"}, nil, Options{}), Options{})
	spec := job.Spec.Template.Spec
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		for _, m := range c.VolumeMounts {
			if m.Name == "collector-token" && c.Name != "collector" {
				t.Errorf("container %s mounts the collector's token", c.Name)
			}
		}
	}
}
