package controller

import (
	"maps"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
)

// Pod settings of the run's pod.
const (
	// podUser is the uid and gid of the pod (and so of the runner, unless it overrides runAsUser): the
	// distroless "nonroot" user. fsGroup gives every container write access to the work volume.
	podUser int64 = 65532
	// terminationGracePeriodSeconds leaves the collector time for a final collection after SIGTERM.
	terminationGracePeriodSeconds int64 = 60
	// tokenExpirationSeconds is the lifetime of the collector's projected token (the kubelet refreshes it).
	tokenExpirationSeconds int64 = 3607
	// startupProbeFailureThreshold x 1 s bounds how long the collector may take to start watching.
	startupProbeFailureThreshold int32 = 120
	// ComponentPod is the component label of the run's pod.
	ComponentPod = "pod"
)

// rootCAConfigMap is the ConfigMap every namespace gets with the cluster's CA bundle.
const rootCAConfigMap = "kube-root-ca.crt"

// BuildJob returns the Job that runs the evaluation described by run and its run.json cfg. The pod runs as the
// collector's ServiceAccount without an automounted token; only the collector container mounts a projected token.
func BuildJob(run *evalsv1alpha1.EvalRun, cfg layout.RunConfig, opts Options) *batchv1.Job {
	opts = opts.withDefaults()
	names := NamesFor(run.Name)
	meta := childMeta(run, names.Job, ComponentJob)
	suspend := ptr.Deref(run.Spec.Suspend, false)
	if run.Spec.QueueName != "" {
		// Kueue admits the Job by unsuspending it; from here on only Kueue touches spec.suspend.
		meta.Labels[layout.LabelKueueQueue] = run.Spec.QueueName
		suspend = true
	}
	return &batchv1.Job{
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			Parallelism:             ptr.To[int32](1),
			Completions:             ptr.To[int32](1),
			BackoffLimit:            ptr.To(ptr.Deref(run.Spec.BackoffLimit, 0)),
			ActiveDeadlineSeconds:   run.Spec.ActiveDeadlineSeconds,
			TTLSecondsAfterFinished: run.Spec.TTLSecondsAfterFinished,
			Suspend:                 ptr.To(suspend),
			// A pod disrupted by preemption, eviction or node drain is replaced without spending the retry budget.
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
			}}},
			// A replacement pod starts only once the old one is gone, so two collectors never write at once.
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			Template:             buildPodTemplate(run, cfg, opts),
		},
	}
}

func buildPodTemplate(run *evalsv1alpha1.EvalRun, cfg layout.RunConfig, opts Options) corev1.PodTemplateSpec {
	names := NamesFor(run.Name)
	o := run.Spec.PodTemplate
	if o == nil {
		o = &evalsv1alpha1.PodOverrides{}
	}
	labels := maps.Clone(o.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[layout.LabelRun] = names.RunLabel
	labels[layout.LabelComponent] = ComponentPod

	spec := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		ServiceAccountName:            names.ServiceAccount,
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To(terminationGracePeriodSeconds),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To(podUser),
			RunAsGroup:     ptr.To(podUser),
			FSGroup:        ptr.To(podUser),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Volumes:           buildVolumes(run),
		InitContainers:    []corev1.Container{buildInstallContainer(opts), buildCollectorContainer(run, opts)},
		Containers:        []corev1.Container{buildRunnerContainer(run, cfg)},
		NodeSelector:      maps.Clone(o.NodeSelector),
		Tolerations:       slices.Clone(o.Tolerations),
		Affinity:          o.Affinity.DeepCopy(),
		ImagePullSecrets:  slices.Clone(o.ImagePullSecrets),
		PriorityClassName: o.PriorityClassName,
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: maps.Clone(o.Annotations)},
		Spec:       spec,
	}
}

func buildVolumes(run *evalsv1alpha1.EvalRun) []corev1.Volume {
	return []corev1.Volume{
		{Name: layout.VolumeWork, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: layout.VolumeEval, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: NamesFor(run.Name).EvalConfigMap},
			DefaultMode:          ptr.To[int32](0o444),
		}}},
		{Name: layout.VolumeToken, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr.To[int32](0o444),
			Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To(tokenExpirationSeconds)}},
				{ConfigMap: &corev1.ConfigMapProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: rootCAConfigMap},
					Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
				}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
					Path:     "namespace",
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
				}}}},
			},
		}}},
	}
}

func workMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: layout.VolumeWork, MountPath: layout.WorkDir}
}

func evalMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: layout.VolumeEval, MountPath: layout.EvalDir, ReadOnly: true}
}

// restrictedContainerSecurity is the security context of the operator's own containers: the Pod Security
// "restricted" profile plus a read-only root filesystem.
func restrictedContainerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

func collectorResources(memoryLimit string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("10m"),
			corev1.ResourceMemory: resource.MustParse("32Mi"),
		},
		Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memoryLimit)},
	}
}

func buildInstallContainer(opts Options) corev1.Container {
	return corev1.Container{
		Name:                     layout.ContainerInstall,
		Image:                    opts.CollectorImage,
		ImagePullPolicy:          corev1.PullIfNotPresent,
		Command:                  []string{layout.CollectorImageBinary, "install", "--dest", layout.In(layout.WorkDir).Binary()},
		VolumeMounts:             []corev1.VolumeMount{workMount()},
		Resources:                collectorResources("64Mi"),
		SecurityContext:          restrictedContainerSecurity(),
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

func buildCollectorContainer(run *evalsv1alpha1.EvalRun, opts Options) corev1.Container {
	work := layout.In(layout.WorkDir)
	return corev1.Container{
		Name:            layout.ContainerCollector,
		Image:           opts.CollectorImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		// A native sidecar: it starts before the runner, runs alongside it and is stopped after it.
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Command:       []string{layout.CollectorImageBinary, "collect", "--config", RunConfigPath, "--work", layout.WorkDir},
		Env: []corev1.EnvVar{
			{Name: layout.EnvRunName, Value: run.Name},
			{Name: layout.EnvRunNamespace, Value: run.Namespace},
			{Name: layout.EnvRunUID, Value: string(run.UID)},
			{Name: layout.EnvPodName, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
		},
		VolumeMounts: []corev1.VolumeMount{
			workMount(),
			evalMount(),
			{Name: layout.VolumeToken, MountPath: layout.ServiceAccountTokenDir, ReadOnly: true},
		},
		// The runner starts only once the collector is watching the work volume.
		StartupProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
				Command: []string{layout.CollectorImageBinary, "probe", "--ready-file", work.CollectorReady()},
			}},
			PeriodSeconds:    1,
			TimeoutSeconds:   1,
			SuccessThreshold: 1,
			FailureThreshold: startupProbeFailureThreshold,
		},
		Resources:                collectorResources("256Mi"),
		SecurityContext:          restrictedContainerSecurity(),
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

func buildRunnerContainer(run *evalsv1alpha1.EvalRun, cfg layout.RunConfig) corev1.Container {
	t := run.Spec.Target
	work := layout.In(layout.WorkDir)
	output := work.BatchOutput()
	if cfg.Batching == string(evalsv1alpha1.BatchingPerCase) {
		// launch exports each invocation's own file; the container-level value names their directory.
		output = work.CaseOutputDir()
	}
	env := make([]corev1.EnvVar, 0, len(t.Env)+2)
	for _, e := range t.Env {
		if e.Name == layout.EnvEvalFile || e.Name == layout.EnvOutputFile {
			continue // the operator's values always win
		}
		env = append(env, *e.DeepCopy())
	}
	env = append(env,
		corev1.EnvVar{Name: layout.EnvEvalFile, Value: EvalFilePath},
		corev1.EnvVar{Name: layout.EnvOutputFile, Value: output},
	)
	var envFrom []corev1.EnvFromSource
	if len(t.EnvFrom) > 0 {
		envFrom = make([]corev1.EnvFromSource, len(t.EnvFrom))
		for i := range t.EnvFrom {
			t.EnvFrom[i].DeepCopyInto(&envFrom[i])
		}
	}
	var res corev1.ResourceRequirements
	if t.Resources != nil {
		res = *t.Resources.DeepCopy()
	}
	return corev1.Container{
		Name:                     layout.ContainerRunner,
		Image:                    t.Image,
		ImagePullPolicy:          t.ImagePullPolicy,
		Command:                  []string{work.Binary(), "launch", "--config", RunConfigPath, "--work", layout.WorkDir},
		WorkingDir:               t.WorkingDir,
		Env:                      env,
		EnvFrom:                  envFrom,
		Resources:                res,
		VolumeMounts:             []corev1.VolumeMount{workMount(), evalMount()},
		SecurityContext:          RunnerSecurityContext(t.SecurityContext),
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// RunnerSecurityContext returns the runner's security context: the user's override, held within the Pod
// Security "restricted" profile. Whatever the override says, the runner runs as non-root, cannot escalate
// privileges, drops every capability (NET_BIND_SERVICE may be added back), is not privileged and uses the default
// /proc mount; its seccomp profile is the pod's RuntimeDefault unless it names RuntimeDefault or Localhost.
func RunnerSecurityContext(user *corev1.SecurityContext) *corev1.SecurityContext {
	sc := user.DeepCopy()
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	sc.Privileged = nil
	sc.RunAsNonRoot = ptr.To(true)
	if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		sc.RunAsUser = nil
	}
	sc.AllowPrivilegeEscalation = ptr.To(false)
	var add []corev1.Capability
	if sc.Capabilities != nil {
		for _, c := range sc.Capabilities.Add {
			if c == "NET_BIND_SERVICE" {
				add = append(add, c)
			}
		}
	}
	sc.Capabilities = &corev1.Capabilities{Add: add, Drop: []corev1.Capability{"ALL"}}
	if sc.SeccompProfile != nil && sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault &&
		sc.SeccompProfile.Type != corev1.SeccompProfileTypeLocalhost {
		sc.SeccompProfile = nil
	}
	if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
		sc.ProcMount = nil
	}
	if sc.AppArmorProfile != nil && sc.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined {
		sc.AppArmorProfile = nil
	}
	if sc.WindowsOptions != nil {
		sc.WindowsOptions.HostProcess = nil
	}
	return sc
}
