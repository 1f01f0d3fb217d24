package children

import (
	"maps"
	"slices"
	"strconv"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// Pod settings of the run's pod.
const (
	// terminationGracePeriodSeconds leaves the collector time for a final collection after SIGTERM.
	terminationGracePeriodSeconds int64 = 60
	// tokenExpirationSeconds is the lifetime of the collector's projected token (the kubelet refreshes it).
	tokenExpirationSeconds int64 = 3607
	// collectionMarginSeconds is added to the collector's own deadlines for the manager's wait on its results.
	collectionMarginSeconds = 30
	// ComponentPod is the component label of the run's pod.
	ComponentPod = "pod"
)

// PodContainers are the names of every container a run's pod may have: install, collector, runner and up to
// podwire.MaxJudgeContainers judge containers.
var PodContainers = func() []string {
	names := make([]string, 0, 3+podwire.MaxJudgeContainers)
	names = append(names, podwire.ContainerInstall, podwire.ContainerCollector, podwire.ContainerRunner)
	for i := range podwire.MaxJudgeContainers {
		names = append(names, podwire.JudgeContainer(i))
	}
	return names
}()

// rootCAConfigMap is the ConfigMap every namespace gets with the cluster's CA bundle.
const rootCAConfigMap = "kube-root-ca.crt"

// BuildJob returns the Job that runs the evaluation described by run and its run.json cfg. The pod runs as the
// collector's ServiceAccount without an automounted token; only the collector container mounts a projected token,
// and with cfg.BucketOnly (spec.storage.statusFrom: Bucket) none does.
func BuildJob(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig, opts options.Options) *batchv1.Job {
	opts = opts.WithDefaults()
	names := NamesFor(run.Name)
	meta := Meta(run, names.Job, ComponentJob)
	// The run's own labels and annotations (propagate.go) first, the operator's over them.
	meta.Labels = mergeMeta(inheritedLabels(run.Labels), meta.Labels)
	meta.Annotations = mergeMeta(inheritedAnnotations(run.Annotations), map[string]string{
		podwire.AnnotationCollectionDeadline: strconv.Itoa(int(collectionDeadline(cfg))),
		podwire.AnnotationCases:              strconv.Itoa(len(cfg.CaseIDs)),
	})
	if cfg.Trials > 1 {
		meta.Annotations[podwire.AnnotationTrials] = strconv.Itoa(int(cfg.Trials))
	}
	suspend := ptr.Deref(run.Spec.Suspend, false)
	if run.Spec.QueueName != "" {
		// Kueue admits the Job by unsuspending it; from here on only Kueue touches spec.suspend.
		meta.Labels[podwire.LabelKueueQueue] = run.Spec.QueueName
		suspend = true
	}
	job := &batchv1.Job{
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			// Indexed, even with one pod: the Job controller then counts each index's failures on its pods
			// (job-index-failure-count, job-index-ignored-failure-count), which bound disruptions per index
			// (eviction.go), and backoffLimitPerIndex retries a failed pod of one shard on its own.
			CompletionMode:          ptr.To(batchv1.IndexedCompletion),
			Parallelism:             ptr.To[int32](1),
			Completions:             ptr.To[int32](1),
			BackoffLimitPerIndex:    ptr.To(ptr.Deref(run.Spec.BackoffLimit, evalsv1alpha1.DefaultBackoffLimit)),
			ActiveDeadlineSeconds:   ptr.To(RunDeadline(run, opts).Seconds),
			TTLSecondsAfterFinished: run.Spec.TTLSecondsAfterFinished,
			Suspend:                 ptr.To(suspend),
			// A pod disrupted by preemption, eviction or node drain is replaced without spending the retry budget
			// (at most MaxDisruptionRetries times per index, which the manager enforces: eviction.go).
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
			}}},
			// A replacement pod starts only once the old one is gone, so two collectors never write at once.
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			Template:             buildPodTemplate(run, cfg, opts),
		},
	}
	if pods := int32(cfg.Pods()); pods > 1 {
		// One pod per trial of each shard (completion index trial·shards + shard: podwire.ShardTrial); a pod's
		// runner failing does not stop the others, and infrastructure failures (disruptions aside, which are
		// ignored) are retried per index.
		job.Spec.Completions = ptr.To(pods)
		job.Spec.Parallelism = ptr.To(podsAtOnce(run, pods))
		// A shard the manager decided failed (its pods never ran, kept being taken away, or outlived their
		// timeouts) is stopped on its own: the manager marks its pod, then evicts it, and this first rule fails
		// that index instead of replacing the pod; the other shards go on.
		job.Spec.PodFailurePolicy.Rules = slices.Insert(job.Spec.PodFailurePolicy.Rules, 0, batchv1.PodFailurePolicyRule{
			Action:          batchv1.PodFailurePolicyActionFailIndex,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: podwire.PodConditionShardStopped, Status: corev1.ConditionTrue}},
		})
	}
	return job
}

// collectionDeadline is how long after the runner's end the collector may take: the code judges' deadline, the
// LLM judges' deadline, the results deadline for the API writes, and a margin for the kubelet's and the manager's
// own delays.
func collectionDeadline(cfg podwire.RunConfig) int32 {
	return clampSeconds(int64(cfg.JudgeDeadlineSeconds) + int64(cfg.LLMJudgeDeadlineSeconds) + int64(cfg.ResultsDeadlineSeconds) +
		collectionMarginSeconds)
}

func buildPodTemplate(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig, opts options.Options) corev1.PodTemplateSpec {
	names := NamesFor(run.Name)
	o := run.Spec.PodTemplate
	if o == nil {
		o = &evalsv1alpha1.PodOverrides{}
	}
	// The run's own labels and annotations (propagate.go), then spec.podTemplate's, then the operator's.
	labels := mergeMeta(inheritedLabels(run.Labels), o.Labels, map[string]string{
		podwire.LabelRun:       names.RunLabel,
		podwire.LabelComponent: ComponentPod,
	})
	annotations := mergeMeta(inheritedAnnotations(run.Annotations), o.Annotations)

	spec := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		ServiceAccountName:            names.ServiceAccount,
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To(terminationGracePeriodSeconds),
		// Each container keeps its own PID namespace: the runner sees none of the trusted processes.
		ShareProcessNamespace: ptr.To(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To(podwire.PodUser),
			RunAsGroup:     ptr.To(podwire.PodUser),
			FSGroup:        ptr.To(podwire.PodUser),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Volumes:           buildVolumes(run, cfg),
		InitContainers:    []corev1.Container{buildInstallContainer(cfg, opts)},
		Containers:        podContainers(run, cfg, opts),
		NodeSelector:      maps.Clone(o.NodeSelector),
		Tolerations:       slices.Clone(o.Tolerations),
		Affinity:          o.Affinity.DeepCopy(),
		ImagePullSecrets:  slices.Clone(o.ImagePullSecrets),
		PriorityClassName: o.PriorityClassName,
	}
	// Storage (storage.go): each container its own /dev/shm; the trusted side's volumes kept out of the runner's
	// share of a pod-level ephemeral-storage limit.
	withOwnShm(&spec)
	boundTrustedStorage(&spec)
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec:       spec,
	}
}

func buildVolumes(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig) []corev1.Volume {
	var shard []corev1.Volume
	if cfg.SourceEvalFile != "" {
		shard = append(shard, EmptyDirVolume(podwire.VolumeShard, shardSizeLimit))
	}
	secret := func(volume, name string) corev1.Volume {
		return corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: name, DefaultMode: ptr.To[int32](0o440),
		}}}
	}
	if st := run.Spec.Storage; st != nil {
		shard = append(shard, secret(podwire.VolumeBucketCredentials, st.S3.CredentialsSecret))
	}
	if o := run.Spec.EvalFile.S3; o != nil {
		shard = append(shard, secret(podwire.VolumeEvalCredentials, o.CredentialsSecret))
	}
	if b := run.Spec.EvalFile.Bundle; b != nil && b.S3 != nil {
		shard = append(shard, secret(podwire.VolumeEvalCredentials, b.S3.CredentialsSecret))
	}
	if b := cfg.Bundle; b != nil {
		// The whole bundle, for the judging containers; install writes it.
		shard = append(shard, EmptyDirVolume(podwire.VolumeBundle, bundleSizeLimit(b)))
		if b.SourceDir != "" {
			// The manager's pinned copy of a ConfigMap bundle: install's only.
			shard = append(shard, corev1.Volume{Name: podwire.VolumeBundleSource, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: NamesFor(run.Name).BundleConfigMap()},
				DefaultMode:          ptr.To[int32](0o440),
			}}})
		}
	}
	if j := run.Spec.Judging; cfg.LLM != nil && j != nil && j.LLM != nil && j.LLM.APIKeySecretRef != nil {
		// Only the selected key, as the file api-key. Optional: a missing Secret or key does not hold the pod
		// back; the collector then reports every LLM judge as an Error that names them.
		ref := j.LLM.APIKeySecretRef
		v := secret(podwire.VolumeLLMCredentials, ref.Name)
		v.Secret.Items = []corev1.KeyToPath{{Key: ref.Key, Path: podwire.LLMAPIKeyFile}}
		v.Secret.Optional = ptr.To(true)
		shard = append(shard, v)
	}
	shard = append(shard, []corev1.Volume{
		EmptyDirVolume(podwire.VolumeBin, binSizeLimit),
		EmptyDirVolume(podwire.VolumeView, viewVolumeSizeLimit(cfg)),
		EmptyDirVolume(podwire.VolumeOut, OutSizeLimit(run)),
		EmptyDirVolume(podwire.VolumeSnapshot, snapshotSizeLimit(run)),
	}...)
	if cfg.CodeJudges {
		// The judge runner for judge containers outside the collector image; the runner never mounts it.
		shard = append(shard, EmptyDirVolume(podwire.VolumeJudgeBin, judgeBinSizeLimit))
	}
	for i := range judgeContainers(cfg) {
		// Each judge container's own writable directory: no other container mounts it.
		shard = append(shard, EmptyDirVolume(podwire.JudgeVolume(i), VerdictsSizeLimit))
	}
	shard = append(shard, corev1.Volume{Name: podwire.VolumeEval, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: NamesFor(run.Name).EvalConfigMap},
		DefaultMode:          ptr.To[int32](0o444),
	}}})
	if cfg.BucketOnly {
		// The pod makes no API call: no container gets a token.
		return shard
	}
	return append(shard, corev1.Volume{Name: podwire.VolumeToken, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
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
	}}})
}

// mount mounts volume name at its mount point; only the volume's writer mounts it read-write.
func mount(name, dir string, readOnly bool) corev1.VolumeMount {
	return corev1.VolumeMount{Name: name, MountPath: dir, ReadOnly: readOnly}
}

func evalMount() corev1.VolumeMount { return mount(podwire.VolumeEval, podwire.EvalDir, true) }

// evalMounts are the judging containers' read-only view of the run: the eval ConfigMap, in a sharded run (or one
// whose eval file is in a bucket) the shard's eval file, and in a bundle run the whole bundle.
func evalMounts(cfg podwire.RunConfig) []corev1.VolumeMount {
	mounts := []corev1.VolumeMount{evalMount()}
	if cfg.SourceEvalFile != "" {
		mounts = append(mounts, mount(podwire.VolumeShard, podwire.ShardDir, true))
	}
	if cfg.Bundle != nil {
		mounts = append(mounts, mount(podwire.VolumeBundle, podwire.BundleDir, true))
	}
	return mounts
}

// restrictedContainerSecurity is the security context of the operator's own containers: the Pod Security
// "restricted" profile plus a read-only root filesystem.
func restrictedContainerSecurity(uid int64) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsUser:                ptr.To(uid),
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

// buildInstallContainer copies the launcher into the bin volume (with code judges, the collector binary, the judge
// runner, into the judge-bin volume), in a sharded run writes the shard's eval file into the shard volume, and
// writes the runner's eval file (the runner view, or the whole file with evalFileView Full) and its RunnerConfig
// into the view volume; it alone mounts these volumes read-write.
func buildInstallContainer(cfg podwire.RunConfig, opts options.Options) corev1.Container {
	command := []string{podwire.CollectorImageBinary, "install", "--bin", podwire.BinDir, "--config", RunConfigPath}
	if cfg.CodeJudges {
		// The judge-end FIFOs through which the judge containers report their verdicts.
		command = append(command, "--judges", strconv.Itoa(judgeContainers(cfg)))
	}
	mounts := []corev1.VolumeMount{
		mount(podwire.VolumeBin, podwire.BinDir, false),
		evalMount(),
		mount(podwire.VolumeView, podwire.ViewDir, false),
	}
	if cfg.CodeJudges {
		mounts = append(mounts, mount(podwire.VolumeJudgeBin, podwire.JudgeBinDir, false))
	}
	// 128Mi: the view of a 1 MiB pinned file needs a few MiB; a 19 MiB file (100,000 cases, only from a bucket)
	// peaks near 95 MiB (BenchmarkWriteView, a fresh collector view).
	memory := "128Mi"
	if cfg.SourceEvalFile != "" {
		mounts = append(mounts, mount(podwire.VolumeShard, podwire.ShardDir, false))
	}
	if cfg.EvalObject != nil {
		// It downloads the eval file (verifying its sha256) with the credentials only it mounts, and cuts the
		// pod's cases out of it.
		mounts = append(mounts, mount(podwire.VolumeEvalCredentials, podwire.EvalCredentialsDir, true))
		memory = "512Mi"
	}
	if b := cfg.Bundle; b != nil {
		// It materializes the bundle, every file verified against the pinned manifest, from the manager's
		// pinned copy or from the bucket (with the credentials only it mounts), and the runner's input files.
		mounts = append(mounts, mount(podwire.VolumeBundle, podwire.BundleDir, false))
		if b.SourceDir != "" {
			mounts = append(mounts, mount(podwire.VolumeBundleSource, podwire.BundleSourceDir, true))
		} else {
			mounts = append(mounts, mount(podwire.VolumeEvalCredentials, podwire.EvalCredentialsDir, true))
			memory = "512Mi"
		}
	}
	return corev1.Container{
		Name:                     podwire.ContainerInstall,
		Image:                    opts.CollectorImage,
		ImagePullPolicy:          corev1.PullIfNotPresent,
		Command:                  command,
		VolumeMounts:             mounts,
		Resources:                collectorResources(memory),
		SecurityContext:          restrictedContainerSecurity(podwire.CollectorUser),
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// podContainers are the pod's regular containers: the runner (none in a re-judge), the collector and, with code
// judges, the judge containers. The collector is one of them, so the pod cannot finish before it has persisted
// the results and ended: no other container has to hold the pod for it (docs/design/per-run-cost.md).
func podContainers(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig, opts options.Options) []corev1.Container {
	out := append(runnerContainers(run, cfg), buildCollectorContainer(run, cfg, opts))
	return append(out, buildJudgeContainers(run, cfg, opts)...)
}

// CollectorRestartDropped reports whether the API server stored job without its collector's container restart
// policy: it drops the field when Kubernetes' ContainerRestartRules feature is off (before 1.35, or turned off), and
// the kubelet then does not restart a collector that crashes.
func CollectorRestartDropped(job *batchv1.Job) bool {
	for _, c := range job.Spec.Template.Spec.Containers {
		if c.Name == podwire.ContainerCollector {
			return c.RestartPolicy == nil
		}
	}
	return false
}

// buildCollectorContainer is the only container with API access: a regular container that the kubelet restarts
// if it fails (its own restartPolicy OnFailure in the pod's Never, Kubernetes' ContainerRestartRules, on by
// default since 1.35; it resumes from its notes) and that ends once the results are persisted. It reads the
// runner's output volume read-only and writes its snapshot where the judge containers read it.
func buildCollectorContainer(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig, opts options.Options) corev1.Container {
	return corev1.Container{
		Name:            podwire.ContainerCollector,
		Image:           opts.CollectorImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		RestartPolicy:   ptr.To(corev1.ContainerRestartPolicyOnFailure),
		Command:         []string{podwire.CollectorImageBinary, "collect", "--config", RunConfigPath},
		Env: []corev1.EnvVar{
			{Name: podwire.EnvRunName, Value: run.Name},
			{Name: podwire.EnvRunNamespace, Value: run.Namespace},
			{Name: podwire.EnvRunUID, Value: string(run.UID)},
			{Name: podwire.EnvPodName, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
		},
		VolumeMounts: collectorMounts(cfg),
		// 512Mi: an output of 16 MiB lines (the parser's limit) peaks near 300 MiB of live heap while one line is
		// parsed, judged and encoded (BenchmarkGatherLongLines); the request stays small.
		Resources:                collectorResources("512Mi"),
		SecurityContext:          restrictedContainerSecurity(podwire.CollectorUser),
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// collectorMounts are the collector's volumes: the runner's output read-only, its own snapshot, the eval file,
// its token (none with bucketOnly) and, with a bucket, the bucket's credentials and, with an LLM judges' key, that key (nobody else's).
// It mounts no judge container's volume: verdicts reach it only through the judge-end FIFOs in the bin volume.
func collectorMounts(cfg podwire.RunConfig) []corev1.VolumeMount {
	mounts := append([]corev1.VolumeMount{
		mount(podwire.VolumeBin, podwire.BinDir, true),
		mount(podwire.VolumeOut, podwire.OutDir, true),
		mount(podwire.VolumeSnapshot, podwire.SnapshotDir, false),
	}, evalMounts(cfg)...)
	if !cfg.BucketOnly {
		mounts = append(mounts, corev1.VolumeMount{Name: podwire.VolumeToken, MountPath: podwire.ServiceAccountTokenDir, ReadOnly: true})
	}
	if cfg.Bucket != nil {
		mounts = append(mounts, mount(podwire.VolumeBucketCredentials, podwire.BucketCredentialsDir, true))
	}
	if cfg.LLM != nil && cfg.LLM.APIKeyFile != "" {
		mounts = append(mounts, mount(podwire.VolumeLLMCredentials, podwire.LLMCredentialsDir, true))
	}
	return mounts
}

// judgeContainers is how many judge containers the pod has: run.json's judgeContainers with code judges, none
// without.
func judgeContainers(cfg podwire.RunConfig) int {
	if !cfg.CodeJudges {
		return 0
	}
	return max(int(cfg.JudgeContainers), 1)
}

// buildJudgeContainers returns the judge containers: none without code judges; with them cfg.JudgeContainers,
// "judge", "judge-1", ..., each its own PID namespace with its
// judge runner as PID 1, judging its share of the cases one at a time (podwire.Partition) with its own
// writable volume. Parallelism is across containers, never inside one: a script can then reach no other case's
// judge. Each gets the judge's resources (judging.resources), so the pod requests them once per container.
func buildJudgeContainers(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig, opts options.Options) []corev1.Container {
	n := judgeContainers(cfg)
	out := make([]corev1.Container, n)
	for i := range n {
		out[i] = buildJudgeContainer(run, cfg, opts, i)
	}
	return out
}

// codeJudgeImageOf is the image the run's code_judge scripts run in, when it has some (codeJudges), and where it
// came from: spec.judging.image (source Target when it names spec.target.image, the runner's own image, else
// Spec), or else the manager's judge image (Default), never the runner's image by default. "" without code judges
// (the pod then has no judge container).
func codeJudgeImageOf(run *evalsv1alpha1.EvalRun, codeJudges bool, opts options.Options) (string, string) {
	if !codeJudges {
		return "", ""
	}
	if j := run.Spec.Judging; j != nil && j.Image != "" {
		if j.Image == run.Spec.Target.Image {
			return j.Image, string(evalsv1alpha1.JudgeImageSourceTarget)
		}
		return j.Image, string(evalsv1alpha1.JudgeImageSourceSpec)
	}
	return opts.WithDefaults().JudgeImage, string(evalsv1alpha1.JudgeImageSourceDefault)
}

// buildJudgeContainer is judge container i: it runs the code_judge scripts of its share under the judge's own
// uid, on the collector's snapshot (it never mounts the runner's output volume), in run.json's judge image
// (judging.image, else the manager's judge image). It ends once the collector has persisted the results.
func buildJudgeContainer(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig, opts options.Options, i int) corev1.Container {
	// run.json's image (codeJudgeImageOf); the runner's pull policy and working directory only when it is the
	// runner's image (another image need not have that directory).
	pull, workingDir := corev1.PullIfNotPresent, ""
	if cfg.CodeJudgeImageSource == string(evalsv1alpha1.JudgeImageSourceTarget) {
		pull, workingDir = run.Spec.Target.ImagePullPolicy, run.Spec.Target.WorkingDir
	}
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("10m"),
		corev1.ResourceMemory: resource.MustParse("64Mi"),
	}}
	if j := run.Spec.Judging; j != nil && j.Resources != nil {
		res = *j.Resources.DeepCopy()
	}
	mounts := append([]corev1.VolumeMount{
		mount(podwire.VolumeBin, podwire.BinDir, true),
		mount(podwire.VolumeSnapshot, podwire.SnapshotDir, true),
		mount(podwire.JudgeVolume(i), podwire.VerdictsDir, false),
		mount(podwire.VolumeJudgeBin, podwire.JudgeBinDir, true),
	}, evalMounts(cfg)...)
	return corev1.Container{
		Name:                     podwire.JudgeContainer(i),
		Image:                    cfg.CodeJudgeImage,
		ImagePullPolicy:          pull,
		Command:                  []string{podwire.DefaultPod().JudgeRunner(), "judge", "--config", RunConfigPath, "--index", strconv.Itoa(i)},
		WorkingDir:               workingDir,
		VolumeMounts:             mounts,
		Resources:                opts.JudgeLimits.Apply(res),
		SecurityContext:          restrictedContainerSecurity(podwire.JudgeUser),
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// runnerContainers is the runner container, or none in a re-judge (spec.rejudge): its collector judges an earlier
// run's kept records, and no runner code runs in its pod.
func runnerContainers(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig) []corev1.Container {
	if cfg.Rejudge != nil {
		return nil
	}
	return []corev1.Container{buildRunnerContainer(run, cfg)}
}

// buildRunnerContainer runs the launcher as the container's init process; the runner's reach is its output
// volume (read-write), the view volume (its eval file and RunnerConfig) and the binary volume (read-only): never
// the eval ConfigMap (run.json, the pinned file), the shard volume or any credentials.
func buildRunnerContainer(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig) corev1.Container {
	t := run.Spec.Target
	out := podwire.DefaultPod().Output()
	output := out.BatchOutput()
	if cfg.Batching == string(evalsv1alpha1.BatchingPerCase) {
		// launch exports each invocation's own file; the container-level value names their directory.
		output = out.CaseOutputDir()
	}
	env := make([]corev1.EnvVar, 0, len(t.Env)+2)
	for _, e := range t.Env {
		if e.Name == podwire.EnvEvalFile || e.Name == podwire.EnvOutputFile {
			continue // the operator's values always win
		}
		env = append(env, *e.DeepCopy())
	}
	env = append(env,
		corev1.EnvVar{Name: podwire.EnvEvalFile, Value: cfg.RunnerEvalFile},
		corev1.EnvVar{Name: podwire.EnvOutputFile, Value: output},
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
		Name:            podwire.ContainerRunner,
		Image:           t.Image,
		ImagePullPolicy: t.ImagePullPolicy,
		Command:         []string{podwire.DefaultPod().Launcher(), "--config", RunnerConfigPath},
		WorkingDir:      t.WorkingDir,
		Env:             env,
		EnvFrom:         envFrom,
		Resources:       res,
		VolumeMounts: []corev1.VolumeMount{
			mount(podwire.VolumeBin, podwire.BinDir, true),
			mount(podwire.VolumeOut, podwire.OutDir, false),
			mount(podwire.VolumeView, podwire.ViewDir, true),
		},
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
	if sc.RunAsUser != nil && (*sc.RunAsUser == 0 || *sc.RunAsUser == podwire.CollectorUser || *sc.RunAsUser == podwire.JudgeUser) {
		sc.RunAsUser = nil // admission rejects these; the pod's user applies
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
