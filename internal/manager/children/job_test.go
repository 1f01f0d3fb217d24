package children

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

func ownerRefs() []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: "evals.evalrun.io/v1alpha1", Kind: "EvalRun", Name: "screen", UID: testutil.UnitRunUID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
}

func ourContainerSecurity(uid int64) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsUser:    ptr.To(uid),
		RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// Mounts of the run's pod, as the tests expect them.
var (
	binRW      = corev1.VolumeMount{Name: "bin", MountPath: "/evalrun/bin"}
	binRO      = corev1.VolumeMount{Name: "bin", MountPath: "/evalrun/bin", ReadOnly: true}
	judgeBinRW = corev1.VolumeMount{Name: "judge-bin", MountPath: "/evalrun/judge-bin"}
	judgeBinRO = corev1.VolumeMount{Name: "judge-bin", MountPath: "/evalrun/judge-bin", ReadOnly: true}
	outRW      = corev1.VolumeMount{Name: "out", MountPath: "/evalrun/out"}
	outRO      = corev1.VolumeMount{Name: "out", MountPath: "/evalrun/out", ReadOnly: true}
	snapshotRW = corev1.VolumeMount{Name: "snapshot", MountPath: "/evalrun/snapshot"}
	snapshotRO = corev1.VolumeMount{Name: "snapshot", MountPath: "/evalrun/snapshot", ReadOnly: true}
	verdictsRW = corev1.VolumeMount{Name: "verdicts", MountPath: "/evalrun/verdicts"}
	evalRO     = corev1.VolumeMount{Name: "eval", MountPath: "/evalrun-eval", ReadOnly: true}
	viewRW     = corev1.VolumeMount{Name: "view", MountPath: "/evalrun/view"}
	viewRO     = corev1.VolumeMount{Name: "view", MountPath: "/evalrun/view", ReadOnly: true}
	tokenRO    = corev1.VolumeMount{Name: "collector-token", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}
)

// defaultJudgeLimitList is the manager's default limits of a judge container (--judge-*-limit).
func defaultJudgeLimitList() corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
}

// codeJudge is the judge container expected for testutil.UnitRun() when some case has a code_judge: the manager's
// judge image, the judge runner the install container copied into the judge-bin volume.
func codeJudge() corev1.Container {
	return corev1.Container{
		Name: "judge", Image: "localhost/evalrun/judge:dev", ImagePullPolicy: corev1.PullIfNotPresent,
		Command:      []string{"/evalrun/judge-bin/collector", "judge", "--config", "/evalrun-eval/run.json", "--index", "0"},
		VolumeMounts: []corev1.VolumeMount{binRO, snapshotRO, verdictsRW, judgeBinRO, evalRO},
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits: defaultJudgeLimitList()},
		SecurityContext:        ourContainerSecurity(65530),
		TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// setJudge gives j one judge container, c.
func setJudge(j *batchv1.Job, c corev1.Container) { setJudges(j, 1, c) }

// setJudges gives j n judge containers, copies of c ("judge", "judge-1", ...), each with its index and its own
// volume, after the collector, and has install make their judge-end FIFOs and copy the judge runner into the
// judge-bin volume.
func setJudges(j *batchv1.Job, n int, c corev1.Container) {
	spec := &j.Spec.Template.Spec
	spec.InitContainers[0].Command = append(spec.InitContainers[0].Command, "--judges", strconv.Itoa(n))
	spec.InitContainers[0].VolumeMounts = append(spec.InitContainers[0].VolumeMounts, judgeBinRW)
	at := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == "eval" })
	spec.Volumes = slices.Insert(spec.Volumes, at, EmptyDirVolume("judge-bin", judgeBinSizeLimit))
	for i := range n {
		ci := *c.DeepCopy()
		name := "verdicts"
		if i > 0 {
			ci.Name = "judge-" + strconv.Itoa(i)
			ci.Command[len(ci.Command)-1] = strconv.Itoa(i)
			name = "verdicts-" + strconv.Itoa(i)
			ci.VolumeMounts[2].Name = name
		}
		spec.Containers = append(spec.Containers, ci)
		spec.Volumes = slices.Insert(spec.Volumes, at+1+i, EmptyDirVolume(name, VerdictsSizeLimit))
	}
}

// baseJob is the Job expected for testutil.UnitRun() with the default options and no code judges, written out in full.
func baseJob() *batchv1.Job {
	small := func(limit string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(limit)},
		}
	}
	emptyDir := func(name, limit string) corev1.Volume {
		q := resource.MustParse(limit)
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &q}}}
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: "screen-evalrun", Namespace: "team-a",
			Labels: map[string]string{"evals.evalrun.io/run": "screen", "evals.evalrun.io/component": "job"},
			// No code judges: the results deadline (300s) and a 30s margin.
			Annotations:     map[string]string{"evals.evalrun.io/collection-deadline-seconds": "330", "evals.evalrun.io/cases": "2"},
			OwnerReferences: ownerRefs(),
		},
		Spec: batchv1.JobSpec{
			CompletionMode:        ptr.To(batchv1.IndexedCompletion),
			Parallelism:           ptr.To[int32](1),
			Completions:           ptr.To[int32](1),
			BackoffLimitPerIndex:  ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To[int64](86400),
			Suspend:               ptr.To(false),
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget", Status: corev1.ConditionTrue}},
			}}},
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"evals.evalrun.io/run": "screen", "evals.evalrun.io/component": "pod"}},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					ServiceAccountName:            "screen-evalrun-collector",
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](60),
					ShareProcessNamespace:         ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532), FSGroup: ptr.To[int64](65532),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Volumes: []corev1.Volume{
						emptyDir("bin", "256Mi"), emptyDir("view", "64Mi"), emptyDir("out", "2Gi"), emptyDir("snapshot", "2064Mi"),
						{Name: "eval", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: "screen-evalrun-eval"}, DefaultMode: ptr.To[int32](0o444)}}},
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
							Command:      []string{"/collector", "install", "--bin", "/evalrun/bin", "--config", "/evalrun-eval/run.json"},
							VolumeMounts: []corev1.VolumeMount{binRW, evalRO, viewRW}, Resources: small("128Mi"), SecurityContext: ourContainerSecurity(65531),
							TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						},
					},
					Containers: []corev1.Container{
						{
							Name: "runner", Image: "localhost/evalrun/screening-runner:dev",
							Command: []string{"/evalrun/bin/launcher", "--config", "/evalrun/view/launch.json"},
							Env: []corev1.EnvVar{
								{Name: "EVAL_FILE", Value: "/evalrun/view/eval.yaml"},
								{Name: "OUTPUT_FILE", Value: "/evalrun/out/results.jsonl"},
							},
							VolumeMounts: []corev1.VolumeMount{binRO, outRW, viewRO},
							SecurityContext: &corev1.SecurityContext{
								RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
								Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							},
							TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						},
						{
							Name: "collector", Image: "localhost/evalrun/collector:dev", ImagePullPolicy: corev1.PullIfNotPresent,
							RestartPolicy: ptr.To(corev1.ContainerRestartPolicyOnFailure),
							Command:       []string{"/collector", "collect", "--config", "/evalrun-eval/run.json"},
							Env: []corev1.EnvVar{
								{Name: "EVALRUN_NAME", Value: "screen"},
								{Name: "EVALRUN_NAMESPACE", Value: "team-a"},
								{Name: "EVALRUN_UID", Value: testutil.UnitRunUID},
								{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
							},
							VolumeMounts: []corev1.VolumeMount{binRO, outRO, snapshotRW, evalRO, tokenRO},
							Resources:    small("512Mi"), SecurityContext: ourContainerSecurity(65531),
							TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						},
					},
				},
			},
		},
	}
}

// withoutShm returns j without the containers' own /dev/shm volumes and mounts (TestBuildJobMounts and
// TestEveryEmptyDirIsBounded pin those), so the golden Jobs stay readable.
func withoutShm(j *batchv1.Job) *batchv1.Job {
	j = j.DeepCopy()
	spec := &j.Spec.Template.Spec
	spec.Volumes = slices.DeleteFunc(spec.Volumes, func(v corev1.Volume) bool { return strings.HasPrefix(v.Name, "shm-") })
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			list[i].VolumeMounts = slices.DeleteFunc(list[i].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/dev/shm" })
		}
	}
	return j
}

// containerOf returns the named container of the Job's pod (init containers included), nil when there is none.
func containerOf(j *batchv1.Job, name string) *corev1.Container {
	spec := &j.Spec.Template.Spec
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

func runnerOf(j *batchv1.Job) *corev1.Container { return containerOf(j, "runner") }

// allContainers lists the pod's init and regular containers.
func allContainers(j *batchv1.Job) []corev1.Container {
	spec := j.Spec.Template.Spec
	return append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
}

func TestBuildJob(t *testing.T) {
	cases := []struct {
		name       string
		run        *evalsv1alpha1.EvalRun
		codeJudges int
		opts       options.Options
		want       func(*batchv1.Job)
	}{
		{name: "batched defaults", run: testutil.UnitRun(), want: func(*batchv1.Job) {}},
		{
			name: "collector image option",
			run:  testutil.UnitRun(),
			opts: options.Options{CollectorImage: "registry.example/collector:v1"},
			want: func(j *batchv1.Job) {
				containerOf(j, "install").Image = "registry.example/collector:v1"
				containerOf(j, "collector").Image = "registry.example/collector:v1"
			},
		},
		{
			name: "per case: OUTPUT_FILE names the per-case directory",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.Batching = evalsv1alpha1.BatchingPerCase
				r.Spec.Target.Workers = ptr.To[int32](3)
			}),
			want: func(j *batchv1.Job) { runnerOf(j).Env[1].Value = "/evalrun/out/cases" },
		},
		{
			name: "code judges, judging.image unset: the manager's judge image, never the runner's",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.WorkingDir = "/app"
				r.Spec.Target.ImagePullPolicy = corev1.PullNever
			}),
			codeJudges: 1,
			opts:       options.Options{JudgeImage: "registry.example/evalrun/judge@sha256:0123"},
			want: func(j *batchv1.Job) {
				runnerOf(j).WorkingDir, runnerOf(j).ImagePullPolicy = "/app", corev1.PullNever
				judge := codeJudge()
				judge.Image = "registry.example/evalrun/judge@sha256:0123"
				setJudge(j, judge)
				j.Annotations["evals.evalrun.io/collection-deadline-seconds"] = "454"
			},
		},
		{
			name: "code judges, judging.image is the runner's image: explicit, with the runner's working dir and pull policy",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.WorkingDir = "/app"
				r.Spec.Target.ImagePullPolicy = corev1.PullNever
				r.Spec.Judging = &evalsv1alpha1.Judging{Image: r.Spec.Target.Image}
			}),
			codeJudges: 1,
			want: func(j *batchv1.Job) {
				runnerOf(j).WorkingDir, runnerOf(j).ImagePullPolicy = "/app", corev1.PullNever
				judge := codeJudge()
				judge.Image, judge.WorkingDir, judge.ImagePullPolicy = "localhost/evalrun/screening-runner:dev", "/app", corev1.PullNever
				setJudge(j, judge)
				// One code judge case, one judge container: 1 round of 60s + 4s, + 60s, the results deadline 300s
				// and a 30s margin.
				j.Annotations["evals.evalrun.io/collection-deadline-seconds"] = "454"
			},
		},
		{
			name: "code judges: judging.image and judging.resources",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.ImagePullPolicy = corev1.PullNever
				r.Spec.Judging = &evalsv1alpha1.Judging{Image: "registry.example/judge:v1",
					Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}}
			}),
			codeJudges: 3,
			want: func(j *batchv1.Job) {
				runnerOf(j).ImagePullPolicy = corev1.PullNever
				judge := codeJudge()
				judge.Image, judge.ImagePullPolicy = "registry.example/judge:v1", corev1.PullIfNotPresent
				judge.Resources = corev1.ResourceRequirements{Limits: defaultJudgeLimitList()}
				judge.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("128Mi")
				// Two judge containers (the default two workers; the pod has two cases): 1 round of 60s + 4s, + 60s,
				// + 300s + 30s.
				setJudges(j, 2, judge)
				j.Annotations["evals.evalrun.io/collection-deadline-seconds"] = "454"
			},
		},
		{
			name: "judging image and resources without code judges: no judge container",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.WorkingDir = "/app"
				r.Spec.Judging = &evalsv1alpha1.Judging{Image: "registry.example/judge:v1",
					Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}}
			}),
			want: func(j *batchv1.Job) { runnerOf(j).WorkingDir = "/app" },
		},
		{
			name:       "results deadline and code judge settings size the collection deadline",
			codeJudges: 2,
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.ResultsDeadlineSeconds = ptr.To[int32](60)
				r.Spec.Judging = &evalsv1alpha1.Judging{CodeJudgeTimeoutSeconds: ptr.To[int32](7), CodeJudgeWorkers: ptr.To[int32](3)}
			}),
			want: func(j *batchv1.Job) {
				// Two judge containers (three workers, two cases): the judge deadline (1 round of 7s + 4s, + 60s),
				// the results deadline 60s, a 30s margin.
				setJudges(j, 2, codeJudge())
				j.Annotations["evals.evalrun.io/collection-deadline-seconds"] = "161"
			},
		},
		{
			name: "kueue queue: label and created suspended even with suspend false",
			run:  testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.QueueName = "team-a-queue"; r.Spec.Suspend = ptr.To(false) }),
			want: func(j *batchv1.Job) {
				j.Labels["kueue.x-k8s.io/queue-name"] = "team-a-queue"
				j.Spec.Suspend = ptr.To(true)
			},
		},
		{
			name: "spec.suspend",
			run:  testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.Suspend = ptr.To(true) }),
			want: func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) },
		},
		{
			name: "run controls",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.BackoffLimit = ptr.To[int32](2)
				r.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600)
				r.Spec.TTLSecondsAfterFinished = ptr.To[int32](600)
			}),
			want: func(j *batchv1.Job) {
				j.Spec.BackoffLimitPerIndex = ptr.To[int32](2)
				j.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600)
				j.Spec.TTLSecondsAfterFinished = ptr.To[int32](600)
			},
		},
		{
			name: "pod overrides: our labels win",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
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
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
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
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
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
		{
			name: "runner asking for the collector's uid runs as the pod's user",
			run: testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](65531)}
			}),
			codeJudges: 1,
			want: func(j *batchv1.Job) {
				setJudge(j, codeJudge())
				j.Annotations["evals.evalrun.io/collection-deadline-seconds"] = "454"
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			names := NamesFor(tc.run.Name)
			cfg := BuildRunConfig(tc.run, []string{"case-001", "case-002"}, nil, JudgeLoad{CodeJudgeCases: tc.codeJudges}, tc.opts)
			if diff := cmp.Diff(names.ResultConfigMaps(1), cfg.ResultConfigMaps); diff != "" {
				t.Fatalf("result ConfigMaps (-want +got):\n%s", diff)
			}
			want := baseJob()
			tc.want(want)
			got := withoutShm(BuildJob(tc.run, cfg, tc.opts))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("BuildJob mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildJobSharded checks a sharded run's Job: Indexed, one completion per shard, parallelism bounded,
// retries per index, and the shard's eval file written by install into a volume every other container reads.
func TestBuildJobSharded(t *testing.T) {
	run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
		r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](3), Parallelism: ptr.To[int32](2)}
		r.Spec.BackoffLimit = ptr.To[int32](1)
	})
	ids := testutil.CaseIDs(7)
	cfg := BuildRunConfig(run, ids, nil, JudgeLoad{}, options.Options{})
	got := BuildJob(run, cfg, options.Options{})

	want := baseJob()
	want.Annotations["evals.evalrun.io/cases"] = "7"
	want.Spec.Completions, want.Spec.Parallelism = ptr.To[int32](3), ptr.To[int32](2)
	want.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	// A shard the manager stops fails its index only.
	want.Spec.PodFailurePolicy.Rules = append([]batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionFailIndex,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: "evals.evalrun.io/ShardStopped", Status: corev1.ConditionTrue}}}},
		want.Spec.PodFailurePolicy.Rules...)
	pod := &want.Spec.Template.Spec
	shardRW := corev1.VolumeMount{Name: "shard", MountPath: "/evalrun/shard"}
	shardRO := corev1.VolumeMount{Name: "shard", MountPath: "/evalrun/shard", ReadOnly: true}
	shardLimit := resource.MustParse("1Gi")
	pod.Volumes = append([]corev1.Volume{{Name: "shard", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &shardLimit}}}}, pod.Volumes...)
	install := &pod.InitContainers[0]
	install.VolumeMounts = append(install.VolumeMounts, shardRW)
	collector := containerOf(want, "collector")
	collector.VolumeMounts = []corev1.VolumeMount{binRO, outRO, snapshotRW, evalRO, shardRO, tokenRO}
	if diff := cmp.Diff(want, withoutShm(got)); diff != "" {
		t.Errorf("BuildJob mismatch (-want +got):\n%s", diff)
	}

	// The collectors of a sharded run write shard ConfigMaps, never the EvalRun.
	role := BuildCollectorRole(run, cfg)
	if len(role.Rules) != 1 || role.Rules[0].Resources[0] != "configmaps" {
		t.Errorf("a sharded run's collector Role grants %v, want only its ConfigMaps", role.Rules)
	}
	if diff := cmp.Diff(append(append(slices.Clone(cfg.ResultConfigMaps), cfg.ShardConfigMaps...), cfg.Records.ConfigMaps...), role.Rules[0].ResourceNames); diff != "" {
		t.Errorf("Role resourceNames (-want +got):\n%s", diff)
	}
}

// TestBuildJobTrials: a run of 2 shards × 3 trials is an Indexed Job of 6 completions (trial-major: index
// trial·shards + shard), parallelism bounded by sharding.parallelism, one pod's stop failing its index only; 3 trials
// of one shard are 3 pods of the whole pinned file, without a shard volume. The collectors' Role names every pod's
// ConfigMaps, and nothing but them.
func TestBuildJobTrials(t *testing.T) {
	failIndex := batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionFailIndex,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: "evals.evalrun.io/ShardStopped", Status: corev1.ConditionTrue}}}
	tests := []struct {
		name                     string
		shards, trials, parallel int32
		wantPods, wantParallel   int32
		wantShardVolume          bool
	}{
		{name: "2 shards × 3 trials, 4 at once", shards: 2, trials: 3, parallel: 4, wantPods: 6, wantParallel: 4, wantShardVolume: true},
		{name: "2 shards × 3 trials, all at once", shards: 2, trials: 3, wantPods: 6, wantParallel: 6, wantShardVolume: true},
		{name: "3 trials of one shard", shards: 1, trials: 3, wantPods: 3, wantParallel: 3},
		{name: "10 shards × 100 trials", shards: 10, trials: 100, parallel: 50, wantPods: 1000, wantParallel: 50, wantShardVolume: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To(tc.shards)}
				if tc.parallel > 0 {
					r.Spec.Sharding.Parallelism = ptr.To(tc.parallel)
				}
				r.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To(tc.trials)}
			})
			cfg := BuildRunConfig(run, testutil.CaseIDs(20), nil, JudgeLoad{}, options.Options{})
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			job := BuildJob(run, cfg, options.Options{})
			if *job.Spec.CompletionMode != batchv1.IndexedCompletion || *job.Spec.Completions != tc.wantPods || *job.Spec.Parallelism != tc.wantParallel {
				t.Errorf("%s Job of %d completions, %d at once; want Indexed, %d and %d", *job.Spec.CompletionMode,
					*job.Spec.Completions, *job.Spec.Parallelism, tc.wantPods, tc.wantParallel)
			}
			if diff := cmp.Diff(failIndex, job.Spec.PodFailurePolicy.Rules[0]); diff != "" {
				t.Errorf("the first pod failure rule (-want +got):\n%s", diff)
			}
			hasShard := slices.ContainsFunc(job.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "shard" })
			if hasShard != tc.wantShardVolume {
				t.Errorf("shard volume %v, want %v", hasShard, tc.wantShardVolume)
			}
			// Every completion index has its own ConfigMaps: the pod of index i writes shard ConfigMap i.
			if len(cfg.ShardConfigMaps) != int(tc.wantPods) || len(cfg.ResultConfigMaps) != int(tc.wantPods*cfg.ResultConfigMapsPerShard) ||
				len(cfg.Records.ConfigMaps) != int(tc.wantPods*cfg.Records.ConfigMapsPerShard) {
				t.Errorf("%d shard, %d result and %d record ConfigMaps for %d pods", len(cfg.ShardConfigMaps), len(cfg.ResultConfigMaps),
					len(cfg.Records.ConfigMaps), tc.wantPods)
			}
			role := BuildCollectorRole(run, cfg)
			want := append(append(slices.Clone(cfg.ResultConfigMaps), cfg.ShardConfigMaps...), cfg.Records.ConfigMaps...)
			if len(role.Rules) != 1 || !cmp.Equal(want, role.Rules[0].ResourceNames) {
				t.Errorf("the collectors' Role %v, want only the run's %d ConfigMaps by name", role.Rules, len(want))
			}
			// The last index is the last trial of the last shard, whose pod reads the last shard's cases.
			last := cfg
			last.CaseIDs = slices.Clone(cfg.CaseIDs)
			last.ResultConfigMaps = slices.Clone(cfg.ResultConfigMaps)
			last.Records = &podwire.Records{ConfigMaps: slices.Clone(cfg.Records.ConfigMaps), ConfigMapsPerShard: cfg.Records.ConfigMapsPerShard}
			if err := last.LoadShard(strconv.Itoa(int(tc.wantPods) - 1)); err != nil {
				t.Fatal(err)
			}
			if last.Trial != tc.trials || last.ShardIndex != min(tc.shards, 20)-1 || last.ShardConfigMap() != cfg.ShardConfigMaps[tc.wantPods-1] {
				t.Errorf("the last pod is shard %d trial %d writing %s", last.ShardIndex, last.Trial, last.ShardConfigMap())
			}
		})
	}
}

// TestTrialsShareTheBudgets: the run's LLM bounds and budgets and its cost budget are shared between every pod of
// every trial: 2 shards × 3 trials are 6 pods at once.
func TestTrialsShareTheBudgets(t *testing.T) {
	run := testutil.UnitRun(withLLM(&evalsv1alpha1.LLMJudging{BaseURL: ptr.To("http://judge:8080/v1"), Model: ptr.To("m"),
		MaxConcurrentRequests: ptr.To[int32](8), RequestsPerMinute: ptr.To[int32](120), MaxRequests: ptr.To[int64](600), MaxTokens: ptr.To[int64](6001)}),
		func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](2)}
			r.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](3)}
			r.Spec.Target.MaxCostUSD = ptr.To("1")
		})
	cfg := BuildRunConfig(run, testutil.CaseIDs(20), nil, JudgeLoad{}, options.Options{})
	got := []int64{int64(cfg.LLM.MaxConcurrentRequests), int64(cfg.LLM.RequestsPerMinute), cfg.LLM.MaxRequests, cfg.LLM.MaxTokens,
		cfg.LLM.RunMaxRequests, *cfg.MaxCostNanoUSD}
	// ceil(8/6), ceil(120/6), ceil(600/6), ceil(6001/6), the run's own 600, ceil(1e9/6) nanodollars.
	if diff := cmp.Diff([]int64{2, 20, 100, 1001, 600, 166_666_667}, got); diff != "" {
		t.Errorf("pod shares (-want +got):\n%s", diff)
	}
}

// hostileTargets are runner specs that try to widen the runner's reach; the pod's anatomy must not change.
func hostileTargets() map[string]func(*evalsv1alpha1.EvalRun) {
	return map[string]func(*evalsv1alpha1.EvalRun){
		"plain": func(*evalsv1alpha1.EvalRun) {},
		"per case": func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Target.Batching = evalsv1alpha1.BatchingPerCase
			r.Spec.Target.Workers = ptr.To[int32](8)
		},
		"runner claims the judge's uid, root group and every capability": func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Target.SecurityContext = &corev1.SecurityContext{
				RunAsUser: ptr.To[int64](65530), RunAsGroup: ptr.To[int64](0), Privileged: ptr.To(true),
				Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_PTRACE", "SYS_ADMIN"}},
			}
		},
		"runner env points at the trusted volumes": func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Target.Env = []corev1.EnvVar{{Name: "OUTPUT_FILE", Value: "/evalrun/snapshot/out/results.jsonl"},
				{Name: "EVAL_FILE", Value: "/evalrun/verdicts/judges.jsonl"}}
			r.Spec.Target.WorkingDir = "/evalrun/snapshot"
		},
		"pod overrides with labels and annotations": func(r *evalsv1alpha1.EvalRun) {
			r.Spec.PodTemplate = &evalsv1alpha1.PodOverrides{Labels: map[string]string{"evals.evalrun.io/component": "collector"},
				Annotations: map[string]string{"container.apparmor.security.beta.kubernetes.io/runner": "unconfined"}}
		},
	}
}

// TestBuildJobMounts pins, container by container, exactly which volumes are mounted and whether read-only: the
// runner never mounts the snapshot, the verdicts or the token; the collector reads the runner's output read-only;
// the judge never sees the runner's output. Every volume has exactly one writer.
func TestBuildJobMounts(t *testing.T) {
	shm := func(c string) corev1.VolumeMount { return corev1.VolumeMount{Name: "shm-" + c, MountPath: "/dev/shm"} }
	forbidden := map[string][]string{
		"runner":    {"snapshot", "verdicts", "verdicts-1", "collector-token", "eval", "shard", "judge-bin"},
		"collector": {"verdicts", "verdicts-1", "judge-bin"},
	}
	for targetName, target := range hostileTargets() {
		for _, codeJudges := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s, %d code judge cases", targetName, codeJudges), func(t *testing.T) {
				want := map[string][]corev1.VolumeMount{
					"install":   {binRW, evalRO, viewRW, shm("install")},
					"collector": {binRO, outRO, snapshotRW, evalRO, tokenRO, shm("collector")},
					"runner":    {binRO, outRW, viewRO, shm("runner")},
				}
				// Each container has its own /dev/shm: nothing written there reaches another container.
				wantWriters := map[string][]string{"bin": {"install"}, "view": {"install"}, "out": {"runner"}, "snapshot": {"collector"},
					"shm-install": {"install"}, "shm-collector": {"collector"}, "shm-runner": {"runner"}}
				if codeJudges == 2 {
					// Two judge containers (the default two workers), each with its own volume, which no other
					// container mounts; without code judges there is none.
					wantWriters["verdicts"] = []string{"judge"}
					wantWriters["shm-judge"] = []string{"judge"}
					want["judge-1"] = []corev1.VolumeMount{binRO, snapshotRO, {Name: "verdicts-1", MountPath: "/evalrun/verdicts"}, judgeBinRO, evalRO, shm("judge-1")}
					wantWriters["verdicts-1"] = []string{"judge-1"}
					// The judge runner, in its own volume: only install writes it, only the judge containers read it.
					want["install"] = []corev1.VolumeMount{binRW, evalRO, viewRW, judgeBinRW, shm("install")}
					want["judge"] = []corev1.VolumeMount{binRO, snapshotRO, verdictsRW, judgeBinRO, evalRO, shm("judge")}
					wantWriters["judge-bin"] = []string{"install"}
					wantWriters["shm-judge-1"] = []string{"judge-1"}
				}
				run := testutil.UnitRun(target)
				job := BuildJob(run, BuildRunConfig(run, []string{"case-001", "case-002"}, nil, JudgeLoad{CodeJudgeCases: codeJudges}, options.Options{}), options.Options{})
				got := map[string][]corev1.VolumeMount{}
				writers := map[string][]string{}
				readers := map[string][]string{}
				for _, c := range allContainers(job) {
					got[c.Name] = c.VolumeMounts
					for _, m := range c.VolumeMounts {
						readers[m.Name] = append(readers[m.Name], c.Name)
						if !m.ReadOnly {
							writers[m.Name] = append(writers[m.Name], c.Name)
						}
						if m.SubPath != "" || m.SubPathExpr != "" || m.MountPropagation != nil {
							t.Errorf("container %s mounts %s with subPath %q/%q or propagation %v", c.Name, m.Name, m.SubPath, m.SubPathExpr, m.MountPropagation)
						}
						if slices.Contains(forbidden[c.Name], m.Name) || (podwire.IsJudgeContainer(c.Name) && slices.Contains([]string{"out", "collector-token"}, m.Name)) {
							t.Errorf("container %s mounts %s", c.Name, m.Name)
						}
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("mounts per container (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(wantWriters, writers); diff != "" {
					t.Errorf("read-write mounts per volume (-want +got):\n%s", diff)
				}
				for i := range 2 {
					if v := podwire.JudgeVolume(i); len(readers[v]) > 1 {
						t.Errorf("volume %s is mounted by %v, want its judge container only", v, readers[v])
					}
				}
			})
		}
	}
}

// TestBuildJobJudgeContainers pins the judge containers: one per code judge worker, at most 8 and at most one
// per code-judged case, each named, indexed and mounting its own volume; install makes one judge-end FIFO each.
func TestBuildJobJudgeContainers(t *testing.T) {
	cases := []struct {
		name              string
		workers           *int32
		cases, codeJudges int
		want              []string
	}{
		{name: "no code judges: none", cases: 3},
		{name: "default two workers", cases: 3, codeJudges: 3, want: []string{"judge", "judge-1"}},
		{name: "one code-judged case", cases: 3, codeJudges: 1, want: []string{"judge"}},
		{name: "workers above the cap", workers: ptr.To[int32](64), cases: 20, codeJudges: 20,
			want: []string{"judge", "judge-1", "judge-2", "judge-3", "judge-4", "judge-5", "judge-6", "judge-7"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Judging = &evalsv1alpha1.Judging{CodeJudgeWorkers: tc.workers}
			})
			job := BuildJob(run, BuildRunConfig(run, testutil.CaseIDs(tc.cases), nil, JudgeLoad{CodeJudgeCases: tc.codeJudges}, options.Options{}), options.Options{})
			var names []string
			for _, c := range job.Spec.Template.Spec.Containers {
				if !podwire.IsJudgeContainer(c.Name) {
					continue
				}
				index := strconv.Itoa(len(names))
				names = append(names, c.Name)
				if n := len(c.Command); n < 2 || c.Command[n-2] != "--index" || c.Command[n-1] != index {
					t.Errorf("container %s command %q, want --index %s", c.Name, c.Command, index)
				}
				if m := c.VolumeMounts[2]; m.Name != podwire.JudgeVolume(len(names)-1) || m.MountPath != podwire.VerdictsDir || m.ReadOnly {
					t.Errorf("container %s mounts %+v, want its own volume %s read-write", c.Name, m, podwire.JudgeVolume(len(names)-1))
				}
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("judge containers (-want +got):\n%s", diff)
			}
			install := job.Spec.Template.Spec.InitContainers[0].Command
			wantJudges := tc.codeJudges > 0
			if got := slices.Contains(install, "--judges"); got != wantJudges {
				t.Errorf("install command %q, want --judges: %v", install, wantJudges)
			} else if got {
				if i := slices.Index(install, "--judges"); install[i+1] != strconv.Itoa(len(tc.want)) {
					t.Errorf("install command %q, want --judges %d", install, len(tc.want))
				}
			}
		})
	}
}

// TestBuildJobRunnerUser pins the uid each container runs as: the operator's containers their own, the runner
// the pod's user or the user's runAsUser, never a trusted uid (65530, 65531) or root, whatever the spec asks.
func TestBuildJobRunnerUser(t *testing.T) {
	cases := []struct {
		name   string
		runAs  *int64
		runner int64
	}{
		{name: "unset: the pod's user", runner: 65532},
		{name: "a user of its own", runAs: ptr.To[int64](1000), runner: 1000},
		{name: "the pod's user explicitly", runAs: ptr.To[int64](65532), runner: 65532},
		{name: "root", runAs: ptr.To[int64](0), runner: 65532},
		{name: "the collector's uid", runAs: ptr.To[int64](65531), runner: 65532},
		{name: "the judge's uid", runAs: ptr.To[int64](65530), runner: 65532},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Target.SecurityContext = &corev1.SecurityContext{RunAsUser: tc.runAs}
			})
			job := BuildJob(run, BuildRunConfig(run, []string{"case-001"}, nil, JudgeLoad{CodeJudgeCases: 1}, options.Options{}), options.Options{})
			pod := job.Spec.Template.Spec
			got := map[string]int64{}
			for _, c := range allContainers(job) {
				uid := ptr.Deref(pod.SecurityContext.RunAsUser, 0)
				if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
					uid = *c.SecurityContext.RunAsUser
				}
				got[c.Name] = uid
				if c.SecurityContext == nil || !ptr.Deref(c.SecurityContext.RunAsNonRoot, false) || ptr.Deref(c.SecurityContext.AllowPrivilegeEscalation, true) {
					t.Errorf("container %s may run as root or escalate: %+v", c.Name, c.SecurityContext)
				}
			}
			want := map[string]int64{"install": 65531, "collector": 65531, "judge": 65530, "runner": tc.runner}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("uid per container (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildJobPodAnatomy pins what keeps the runner apart from the trusted containers beyond volumes: no shared
// process namespace, no probes (the runner could hold a startup probe's file back), the collector a regular
// container restarted by the kubelet should it fail (restartPolicy OnFailure, the pod's being Never), and judge
// containers only when some case has a code judge, in the judge image, judging.image or the runner's image named.
func TestBuildJobPodAnatomy(t *testing.T) {
	cases := []struct {
		name           string
		codeJudges     int
		judging        *evalsv1alpha1.Judging
		wantJudgeImage string
	}{
		{name: "no code judges: no judge container"},
		{name: "no code judges, judging.image set: still none", judging: &evalsv1alpha1.Judging{Image: "registry.example/judge:v1"}},
		{name: "code judges, judging.image unset: the judge image", codeJudges: 1, wantJudgeImage: "localhost/evalrun/judge:dev"},
		{name: "code judges in the runner's image, named", codeJudges: 1, judging: &evalsv1alpha1.Judging{Image: "localhost/evalrun/screening-runner:dev"},
			wantJudgeImage: "localhost/evalrun/screening-runner:dev"},
		{name: "code judges in judging.image", codeJudges: 2, judging: &evalsv1alpha1.Judging{Image: "registry.example/judge:v1"},
			wantJudgeImage: "registry.example/judge:v1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.Judging = tc.judging })
			job := BuildJob(run, BuildRunConfig(run, []string{"case-001", "case-002"}, nil, JudgeLoad{CodeJudgeCases: tc.codeJudges}, options.Options{}), options.Options{})
			spec := job.Spec.Template.Spec
			if ptr.Deref(spec.ShareProcessNamespace, false) {
				t.Errorf("shareProcessNamespace = %v, want false", spec.ShareProcessNamespace)
			}
			kinds := func(cs []corev1.Container) []string {
				var out []string
				for _, c := range cs {
					kind := "run once"
					if c.RestartPolicy != nil {
						kind = "restart " + string(*c.RestartPolicy)
					}
					out = append(out, c.Name+": "+kind)
				}
				return out
			}
			if diff := cmp.Diff([]string{"install: run once"}, kinds(spec.InitContainers)); diff != "" {
				t.Errorf("init containers (-want +got):\n%s", diff)
			}
			wantContainers := []string{"runner: run once", "collector: restart OnFailure"}
			if tc.codeJudges > 0 {
				wantContainers = append(wantContainers, "judge: run once")
			}
			if tc.codeJudges == 2 {
				wantContainers = append(wantContainers, "judge-1: run once") // the default two workers
			}
			if diff := cmp.Diff(wantContainers, kinds(spec.Containers)); diff != "" {
				t.Errorf("containers (-want +got):\n%s", diff)
			}
			for _, c := range allContainers(job) {
				if c.StartupProbe != nil || c.ReadinessProbe != nil || c.LivenessProbe != nil || c.Lifecycle != nil {
					t.Errorf("container %s has probes or hooks (startup %v, readiness %v, liveness %v, lifecycle %v)",
						c.Name, c.StartupProbe, c.ReadinessProbe, c.LivenessProbe, c.Lifecycle)
				}
			}
			if judge := containerOf(job, "judge"); (judge == nil) != (tc.wantJudgeImage == "") || judge != nil && judge.Image != tc.wantJudgeImage {
				t.Errorf("judge container %v, want image %q", judge, tc.wantJudgeImage)
			}
		})
	}
}

// TestBuildJobTokenOnlyInCollector checks the security property directly: no container but the collector
// mounts the token volume, and nothing mounts the ServiceAccount token path otherwise.
func TestBuildJobTokenOnlyInCollector(t *testing.T) {
	run := testutil.UnitRun()
	job := BuildJob(run, BuildRunConfig(run, []string{"a"}, nil, JudgeLoad{CodeJudgeCases: 1}, options.Options{}), options.Options{})
	if ptr.Deref(job.Spec.Template.Spec.AutomountServiceAccountToken, true) {
		t.Errorf("automountServiceAccountToken = %v, want false", job.Spec.Template.Spec.AutomountServiceAccountToken)
	}
	for _, c := range allContainers(job) {
		for _, m := range c.VolumeMounts {
			if (m.Name == "collector-token" || m.MountPath == "/var/run/secrets/kubernetes.io/serviceaccount") && c.Name != "collector" {
				t.Errorf("container %s mounts the collector's token", c.Name)
			}
		}
	}
}

// TestBuildJobBucketOnlyHasNoToken: a run whose pods make no API call (statusFrom: Bucket) has no token volume
// at all, and its collector mounts the bucket's credentials and nothing of the API; run.json says bucketOnly and
// names no shard or result ConfigMap. With statusFrom Pod (or unset) the collector keeps its token.
func TestBuildJobBucketOnlyHasNoToken(t *testing.T) {
	bucket := evalsv1alpha1.S3Bucket{Endpoint: "http://s3.example", Bucket: "b", CredentialsSecret: "creds"}
	cases := []struct {
		from      evalsv1alpha1.StatusSource
		shards    int32
		wantToken bool
	}{
		{from: "", shards: 3, wantToken: true},
		{from: evalsv1alpha1.StatusFromPod, shards: 1, wantToken: true},
		{from: evalsv1alpha1.StatusFromBucket, shards: 1},
		{from: evalsv1alpha1.StatusFromBucket, shards: 3},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%q %d shards", tc.from, tc.shards), func(t *testing.T) {
			run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: bucket, StatusFrom: ptr.To(tc.from)}
				r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To(tc.shards)}
			})
			cfg := BuildRunConfig(run, []string{"case-001", "case-002", "case-003"}, nil, JudgeLoad{}, options.Options{})
			if err := cfg.Validate(); err != nil {
				t.Fatalf("run.json: %v", err)
			}
			if bad := cfg; cfg.BucketOnly {
				// A bucket-only run.json that names a ConfigMap for the collector to write is refused.
				bad.ResultConfigMaps = []string{"nightly-evalrun-results-0"}
				if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "bucketOnly") {
					t.Errorf("a bucket-only run.json with a result ConfigMap: %v", err)
				}
			}
			if cfg.BucketOnly == tc.wantToken || (cfg.BucketOnly && (len(cfg.ShardConfigMaps)+len(cfg.ResultConfigMaps) > 0)) {
				t.Errorf("run.json bucketOnly %v, shard ConfigMaps %v, result ConfigMaps %v", cfg.BucketOnly, cfg.ShardConfigMaps, cfg.ResultConfigMaps)
			}
			job := BuildJob(run, cfg, options.Options{})
			spec := job.Spec.Template.Spec
			hasToken := slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == podwire.VolumeToken })
			if hasToken != tc.wantToken || ptr.Deref(spec.AutomountServiceAccountToken, true) {
				t.Errorf("token volume %v (want %v), automountServiceAccountToken %v", hasToken, tc.wantToken, spec.AutomountServiceAccountToken)
			}
			var mounted []string
			for _, m := range containerOf(job, "collector").VolumeMounts {
				mounted = append(mounted, m.Name)
			}
			if slices.Contains(mounted, podwire.VolumeToken) != tc.wantToken || !slices.Contains(mounted, podwire.VolumeBucketCredentials) {
				t.Errorf("collector mounts %v; want the token %v and the bucket's credentials", mounted, tc.wantToken)
			}
		})
	}
}

// TestBuildJobInheritsRunMetadata checks that the EvalRun's labels and annotations reach the Job and its pod
// template, except the keys of the operator, the Job controller, Kueue's queue and GitOps/Helm tracking, and that
// the operator's keys and spec.podTemplate's win.
func TestBuildJobInheritsRunMetadata(t *testing.T) {
	const runLabel = "screen"
	cases := []struct {
		name          string
		labels        map[string]string
		annotations   map[string]string
		queueName     string
		podTemplate   *evalsv1alpha1.PodOverrides
		wantJobLabels map[string]string
		wantJobAnns   map[string]string
		wantPodLabels map[string]string
		wantPodAnns   map[string]string
	}{
		{
			name:          "no metadata: only the operator's",
			wantJobLabels: map[string]string{"evals.evalrun.io/run": runLabel, "evals.evalrun.io/component": "job"},
			wantJobAnns:   map[string]string{"evals.evalrun.io/cases": "2", "evals.evalrun.io/collection-deadline-seconds": "330"},
			wantPodLabels: map[string]string{"evals.evalrun.io/run": runLabel, "evals.evalrun.io/component": "pod"},
		},
		{
			name: "Kueue priority class, cost allocation and team labels reach Job and pod",
			labels: map[string]string{"kueue.x-k8s.io/priority-class": "nightly", "cost-center": "ml-evals",
				"app.kubernetes.io/part-of": "screening"},
			annotations: map[string]string{"example.com/owner": "team-a", "description": "nightly screen"},
			wantJobLabels: map[string]string{"evals.evalrun.io/run": runLabel, "evals.evalrun.io/component": "job",
				"kueue.x-k8s.io/priority-class": "nightly", "cost-center": "ml-evals", "app.kubernetes.io/part-of": "screening"},
			wantJobAnns: map[string]string{"evals.evalrun.io/cases": "2", "evals.evalrun.io/collection-deadline-seconds": "330",
				"example.com/owner": "team-a", "description": "nightly screen"},
			wantPodLabels: map[string]string{"evals.evalrun.io/run": runLabel, "evals.evalrun.io/component": "pod",
				"kueue.x-k8s.io/priority-class": "nightly", "cost-center": "ml-evals", "app.kubernetes.io/part-of": "screening"},
			wantPodAnns: map[string]string{"example.com/owner": "team-a", "description": "nightly screen"},
		},
		{
			name: "operator, Job controller, queue and tracking keys are not inherited",
			labels: map[string]string{
				"evals.evalrun.io/run": "other", "evals.evalrun.io/component": "x", "evals.evalrun.io/schedule": "nightly",
				"batch.kubernetes.io/job-name": "x", "job-name": "x", "controller-uid": "x",
				"kueue.x-k8s.io/queue-name":        "sneaky",
				"kustomize.toolkit.fluxcd.io/name": "evals", "helm.toolkit.fluxcd.io/name": "evals",
				"argocd.argoproj.io/instance": "evals", "helm.sh/chart": "evals-1.0",
				"team": "a",
			},
			annotations: map[string]string{
				"kubectl.kubernetes.io/last-applied-configuration":      "{}",
				"argocd.argoproj.io/tracking-id":                        "evals:evals.evalrun.io/EvalRun:team-a/screen",
				"argocd.argoproj.io/sync-options":                       "Prune=false",
				"reconcile.fluxcd.io/requestedAt":                       "2026-11-26T00:00:00Z",
				"kustomize.toolkit.fluxcd.io/ssa":                       "IfNotPresent",
				"meta.helm.sh/release-name":                             "evals",
				"evals.evalrun.io/rerun":                                "1",
				"evals.evalrun.io/cases":                                "999",
				"batch.kubernetes.io/job-tracking":                      "",
				"kueue.x-k8s.io/job-min-parallelism":                    "1",
				"provreq.kueue.x-k8s.io/ValidUntilSeconds":              "60",
				"container.apparmor.security.beta.kubernetes.io/runner": "unconfined",
				"team": "a",
			},
			wantJobLabels: map[string]string{"evals.evalrun.io/run": runLabel, "evals.evalrun.io/component": "job", "team": "a"},
			wantJobAnns: map[string]string{"evals.evalrun.io/cases": "2", "evals.evalrun.io/collection-deadline-seconds": "330",
				"team": "a"},
			wantPodLabels: map[string]string{"evals.evalrun.io/run": runLabel, "evals.evalrun.io/component": "pod", "team": "a"},
			wantPodAnns:   map[string]string{"team": "a"},
		},
		{
			name:      "spec.queueName sets the queue label over nothing inherited",
			labels:    map[string]string{"kueue.x-k8s.io/priority-class": "high"},
			queueName: "evals",
			wantJobLabels: map[string]string{"evals.evalrun.io/run": runLabel, "evals.evalrun.io/component": "job",
				"kueue.x-k8s.io/priority-class": "high", "kueue.x-k8s.io/queue-name": "evals"},
			wantJobAnns:   map[string]string{"evals.evalrun.io/cases": "2", "evals.evalrun.io/collection-deadline-seconds": "330"},
			wantPodLabels: map[string]string{"evals.evalrun.io/run": runLabel, "evals.evalrun.io/component": "pod", "kueue.x-k8s.io/priority-class": "high"},
		},
		{
			name:        "spec.podTemplate wins over the run's metadata on the pod only",
			labels:      map[string]string{"tier": "run", "team": "a"},
			annotations: map[string]string{"note": "run"},
			podTemplate: &evalsv1alpha1.PodOverrides{Labels: map[string]string{"tier": "pod"}, Annotations: map[string]string{"note": "pod"}},
			wantJobLabels: map[string]string{"evals.evalrun.io/run": runLabel, "evals.evalrun.io/component": "job",
				"tier": "run", "team": "a"},
			wantJobAnns: map[string]string{"evals.evalrun.io/cases": "2", "evals.evalrun.io/collection-deadline-seconds": "330",
				"note": "run"},
			wantPodLabels: map[string]string{"evals.evalrun.io/run": runLabel, "evals.evalrun.io/component": "pod",
				"tier": "pod", "team": "a"},
			wantPodAnns: map[string]string{"note": "pod"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				r.Labels, r.Annotations = tc.labels, tc.annotations
				r.Spec.QueueName = tc.queueName
				r.Spec.PodTemplate = tc.podTemplate
			})
			job := BuildJob(run, BuildRunConfig(run, []string{"case-001", "case-002"}, nil, JudgeLoad{}, options.Options{}), options.Options{})
			if diff := cmp.Diff(tc.wantJobLabels, job.Labels); diff != "" {
				t.Errorf("Job labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantJobAnns, job.Annotations); diff != "" {
				t.Errorf("Job annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPodLabels, job.Spec.Template.Labels); diff != "" {
				t.Errorf("pod labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPodAnns, job.Spec.Template.Annotations); diff != "" {
				t.Errorf("pod annotations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildJobRunnerReachesNothingOfTheJudging pins the runner's reach in every kind of run (one pod, sharded,
// eval file in a bucket, results in a bucket, LLM judges with a key, evalFileView Full): it mounts bin and the
// view read-only and out read-write, nothing else (no eval ConfigMap with run.json, no shard volume with the cut
// file or source.yaml, no credentials); its command reads the view's launch.json, {EVAL_FILE} is the view's file,
// and its environment is the user's plus EVAL_FILE and OUTPUT_FILE only, none of it from the operator's Secrets.
func TestBuildJobRunnerReachesNothingOfTheJudging(t *testing.T) {
	runs := map[string]func(*evalsv1alpha1.EvalRun){
		"one pod": func(*evalsv1alpha1.EvalRun) {},
		"full view": func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Target.EvalFileView = evalsv1alpha1.EvalFileViewFull
		},
		"sharded": func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](2)}
		},
		"buckets and an LLM key": func(r *evalsv1alpha1.EvalRun) {
			bucket := evalsv1alpha1.S3Bucket{Endpoint: "http://s3.example", Bucket: "b", CredentialsSecret: "creds"}
			r.Spec.EvalFile = evalsv1alpha1.EvalFileSource{S3: &evalsv1alpha1.S3Object{S3Bucket: bucket, Key: "eval.yaml",
				SHA256: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}
			r.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: bucket}
			r.Spec.Judging = &evalsv1alpha1.Judging{LLM: &evalsv1alpha1.LLMJudging{BaseURL: ptr.To("http://llm"), Model: ptr.To("m"),
				APIKeySecretRef: &evalsv1alpha1.SecretKeyRef{Name: "llm", Key: "k"}}}
			r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](2)}
		},
		"user env": func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Target.Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
		},
		"statusFrom: Bucket": func(r *evalsv1alpha1.EvalRun) {
			bucket := evalsv1alpha1.S3Bucket{Endpoint: "http://s3.example", Bucket: "b", CredentialsSecret: "creds"}
			r.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: bucket, StatusFrom: ptr.To(evalsv1alpha1.StatusFromBucket)}
			r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](2)}
		},
	}
	for name, mutate := range runs {
		t.Run(name, func(t *testing.T) {
			run := testutil.UnitRun(mutate)
			cfg := BuildRunConfig(run, []string{"case-001", "case-002", "case-003"}, nil, JudgeLoad{CodeJudgeCases: 1}, options.Options{})
			job := BuildJob(run, cfg, options.Options{})
			runner := runnerOf(job)
			if diff := cmp.Diff([]corev1.VolumeMount{binRO, outRW, viewRO, {Name: "shm-runner", MountPath: "/dev/shm"}}, runner.VolumeMounts); diff != "" {
				t.Errorf("runner mounts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"/evalrun/bin/launcher", "--config", "/evalrun/view/launch.json"}, runner.Command); diff != "" {
				t.Errorf("runner command (-want +got):\n%s", diff)
			}
			wantEnv := append(slices.Clone(run.Spec.Target.Env),
				corev1.EnvVar{Name: "EVAL_FILE", Value: "/evalrun/view/eval.yaml"},
				corev1.EnvVar{Name: "OUTPUT_FILE", Value: "/evalrun/out/results.jsonl"})
			if diff := cmp.Diff(wantEnv, runner.Env); diff != "" || len(runner.EnvFrom) > 0 {
				t.Errorf("runner env (-want +got):\n%s\nenvFrom %v", diff, runner.EnvFrom)
			}
			if cfg.RunnerEvalFile != "/evalrun/view/eval.yaml" || cfg.RunnerConfigFile != "/evalrun/view/launch.json" {
				t.Errorf("run.json's runner files %q, %q", cfg.RunnerEvalFile, cfg.RunnerConfigFile)
			}
			wantView := string(ptr.Deref(&run.Spec.Target.EvalFileView, ""))
			if wantView == "" {
				wantView = "Inputs"
			}
			if cfg.EvalFileView != wantView {
				t.Errorf("run.json's evalFileView %q, want %q", cfg.EvalFileView, wantView)
			}
			// The run's UID keys the LLM judges' Nonce answer delimiters: nothing the runner reads carries it
			// (its container, launch.json; the pod's own metadata it has no API or downward-API volume to read).
			for what, v := range map[string]any{"the runner container": runner, "launch.json": cfg.RunnerConfig(cfg.RunnerEvalFile)} {
				if data, err := json.Marshal(v); err != nil || strings.Contains(string(data), string(run.UID)) {
					t.Errorf("%s carries the run's UID %s (err %v)", what, run.UID, err)
				}
			}
			install := containerOf(job, "install")
			if !slices.ContainsFunc(install.VolumeMounts, func(m corev1.VolumeMount) bool { return cmp.Equal(m, viewRW) }) ||
				!slices.Contains(install.Command, "/evalrun-eval/run.json") {
				t.Errorf("install does not write the view: mounts %v, command %v", install.VolumeMounts, install.Command)
			}
		})
	}
}

// TestResumedTrialsCutTheirCases: a resumed run of 3 trials of one shard whose trials run different cases
// (WithTrialRuns) cuts each pod's cases out of the pinned file, as a sharded run's pods do: a source eval file and
// the shard volume; its run.json records the trials' pass rate, which the merge reads back (ConfigTrialRule), and
// its Job says its trials.
func TestResumedTrialsCutTheirCases(t *testing.T) {
	run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
		r.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](3), PassRate: ptr.To("0.6")}
		r.Spec.Resume = &evalsv1alpha1.Resume{From: "nightly"}
	})
	cfg := BuildRunConfig(run, testutil.CaseIDs(4), nil, JudgeLoad{}, options.Options{})
	if cfg.SourceEvalFile != "" || cfg.TrialsPassRate != "0.6" {
		t.Fatalf("run.json before its trial runs: source eval file %q, pass rate %q", cfg.SourceEvalFile, cfg.TrialsPassRate)
	}
	WithTrialRuns(&cfg, nil)
	if cfg.SourceEvalFile != "" || cfg.TrialRuns != nil {
		t.Errorf("no trial runs changed run.json: %q, %v", cfg.SourceEvalFile, cfg.TrialRuns)
	}
	WithTrialRuns(&cfg, [][]podwire.CaseSpan{{{0, 2}}, nil, {{1, 4}}})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.SourceEvalFile != EvalFilePath || cfg.EvalFile != ShardEvalFilePath {
		t.Errorf("each pod's eval file %q cut from %q", cfg.EvalFile, cfg.SourceEvalFile)
	}
	job := BuildJob(run, cfg, options.Options{})
	if !slices.ContainsFunc(job.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "shard" }) {
		t.Error("no shard volume for the pods' own eval files")
	}
	if job.Annotations[podwire.AnnotationTrials] != "3" || *job.Spec.Completions != 3 {
		t.Errorf("Job of %d completions says trials %q", *job.Spec.Completions, job.Annotations[podwire.AnnotationTrials])
	}
	rule, err := ConfigTrialRule(testutil.UnitRun(), cfg)
	if err != nil || rule.N() != 3 || rule.PassRate != 0.6 || rule.PassRateText != "0.6" {
		t.Errorf("run.json's rule %+v (%v), want 3 trials at 0.6 whatever the run's spec says", rule, err)
	}
	// A run.json pinned before it recorded the pass rate: the run's spec's.
	cfg.TrialsPassRate = ""
	if rule, err := ConfigTrialRule(run, cfg); err != nil || rule.N() != 3 || rule.PassRate != 0.6 {
		t.Errorf("an older run.json's rule %+v (%v), want 3 trials at the spec's 0.6", rule, err)
	}
	one := BuildRunConfig(testutil.UnitRun(), testutil.CaseIDs(4), nil, JudgeLoad{}, options.Options{})
	if one.TrialsPassRate != "" || BuildJob(testutil.UnitRun(), one, options.Options{}).Annotations[podwire.AnnotationTrials] != "" {
		t.Error("a run of one trial records a pass rate or trials")
	}
	three := BuildRunConfig(testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](3)} }),
		testutil.CaseIDs(4), nil, JudgeLoad{}, options.Options{})
	if three.TrialsPassRate != "1" {
		t.Errorf("3 trials without a pass rate record %q, want the default 1", three.TrialsPassRate)
	}
}

// TestCollectorRestartDropped: a Job as built keeps the collector's restartPolicy; one the API server stored
// without it (ContainerRestartRules off) is reported.
func TestCollectorRestartDropped(t *testing.T) {
	run := testutil.UnitRun()
	job := BuildJob(run, BuildRunConfig(run, []string{"a"}, nil, JudgeLoad{}, options.Options{}), options.Options{})
	if CollectorRestartDropped(job) {
		t.Fatal("a Job as built reported without the collector's restartPolicy")
	}
	containerOf(job, "collector").RestartPolicy = nil
	if !CollectorRestartDropped(job) {
		t.Error("a Job stored without the collector's restartPolicy not reported")
	}
}
