package children

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// Storage bounds of the run's pod. Every emptyDir has a sizeLimit: the kubelet evicts a pod whose emptyDir
// grows past it (the run then fails with StorageLimitExceeded, not retried), so nothing a container writes can
// fill the node's disk and buy a fresh pod through node-pressure eviction.
var (
	// DefaultOutSizeLimit bounds the runner's output volume when target.resources.limits["ephemeral-storage"] is
	// unset: twice the Batched output the collector reads (1 GiB), for PerCase outputs, prompts and the
	// launcher's report.
	DefaultOutSizeLimit = resource.MustParse("2Gi")
	// snapshotMargin is what the snapshot volume holds beyond its copy of the runner's output: the collector's
	// notes and the launcher's report.
	snapshotMargin = resource.MustParse("16Mi")
	// binSizeLimit bounds the bin volume: the launcher binary (about 10 MiB) and the FIFOs.
	binSizeLimit = resource.MustParse("256Mi")
	// judgeBinSizeLimit bounds the judge-bin volume (a run with code judges): the collector binary (about 32 MiB).
	judgeBinSizeLimit = resource.MustParse("256Mi")
	// VerdictsSizeLimit bounds a judge container's verdicts volume (verdict lines of code judges).
	VerdictsSizeLimit = resource.MustParse("256Mi")
	// shardSizeLimit bounds a shard's eval file volume: the bucket-backed source (at most 512 MiB) and the cut.
	shardSizeLimit = resource.MustParse("1Gi")
	// viewSizeLimit bounds the runner's view volume: the runner's eval file (the view, or the whole shard's file
	// with evalFileView Full: at most the eval ConfigMap's 1 MiB) and launch.json (the pod's case ids); with an
	// eval file in a bucket (at most 512 MiB) it is shardSizeLimit.
	viewSizeLimit = resource.MustParse("64Mi")
	// bundleMargin is added to a bundle's bytes (and 4 KiB a file) for the bundle volume's bound.
	bundleMargin = resource.MustParse("16Mi")
	// ShmSizeLimit bounds each container's own /dev/shm (memory-backed; the size the container runtime gives a
	// pod's shared /dev/shm by default). Its pages count against the writing container's memory limit.
	ShmSizeLimit = resource.MustParse("64Mi")
	// trustedStorageMargin is added to the sum of the trusted side's volumes for the collector's
	// ephemeral-storage limit: the containers' logs, writable layers and the eval ConfigMap's files.
	trustedStorageMargin = resource.MustParse("128Mi")
)

// shmDir is where each container gets its own memory-backed volume.
const shmDir = "/dev/shm"

// OutSizeLimit is the sizeLimit of the runner's output volume: the runner container's ephemeral-storage limit
// when it has one, else DefaultOutSizeLimit.
func OutSizeLimit(run *evalsv1alpha1.EvalRun) resource.Quantity {
	if r := run.Spec.Target.Resources; r != nil {
		if q, ok := r.Limits[corev1.ResourceEphemeralStorage]; ok && q.Sign() > 0 {
			return q.DeepCopy()
		}
	}
	return DefaultOutSizeLimit.DeepCopy()
}

// snapshotSizeLimit holds a full copy of the runner's output volume and the collector's notes.
func snapshotSizeLimit(run *evalsv1alpha1.EvalRun) resource.Quantity {
	q := OutSizeLimit(run)
	q.Add(snapshotMargin)
	return q
}

// viewVolumeSizeLimit is the runner's view volume's bound: larger for an eval file read from a bucket.
func viewVolumeSizeLimit(cfg podwire.RunConfig) resource.Quantity {
	q := viewSizeLimit.DeepCopy()
	if cfg.EvalFileInBucket() {
		q = shardSizeLimit.DeepCopy()
	}
	if b := cfg.Bundle; b != nil {
		// The runner's input files, at most the whole bundle.
		q.Add(*resource.NewQuantity(b.Bytes, resource.BinarySI))
	}
	return q
}

// bundleSizeLimit bounds the bundle volume: the pinned bundle's bytes and a margin for the file system's own.
func bundleSizeLimit(b *podwire.Bundle) resource.Quantity {
	q := *resource.NewQuantity(b.Bytes+int64(b.Files)*4096, resource.BinarySI)
	q.Add(bundleMargin)
	return q
}

// EmptyDirVolume returns an emptyDir volume on the node's disk bounded by limit. Every emptyDir of the run's pod
// is built here (TestEveryEmptyDirIsBounded).
func EmptyDirVolume(name string, limit resource.Quantity) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
		SizeLimit: ptrQuantity(limit),
	}}}
}

// ShmVolumeName is the name of container's own /dev/shm volume.
func ShmVolumeName(container string) string { return "shm-" + container }

// ShmVolume returns container's own /dev/shm: a memory-backed emptyDir bounded by ShmSizeLimit, and its mount.
// Without it the containers of a pod share the sandbox's /dev/shm, through which the runner could plant or read
// files that the judge, the collector or a code judge's script see (POSIX shared memory and semaphores live there).
func ShmVolume(container string) (corev1.Volume, corev1.VolumeMount) {
	name := ShmVolumeName(container)
	v := corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
		Medium: corev1.StorageMediumMemory, SizeLimit: ptrQuantity(ShmSizeLimit),
	}}}
	return v, corev1.VolumeMount{Name: name, MountPath: shmDir}
}

// withOwnShm gives every container of spec (init containers included) its own /dev/shm.
func withOwnShm(spec *corev1.PodSpec) {
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			v, m := ShmVolume(list[i].Name)
			spec.Volumes = append(spec.Volumes, v)
			list[i].VolumeMounts = append(list[i].VolumeMounts, m)
		}
	}
}

// boundTrustedStorage keeps the pod-level ephemeral-storage limit from counting the trusted side's volumes
// against the runner's. The kubelet evicts a pod whose ephemeral storage (every container's writable layer and
// logs, and every disk emptyDir and ConfigMap volume) exceeds the sum of its containers' ephemeral-storage limits,
// and that sum exists as soon as one container has such a limit (the runner's target.resources, a code judge's
// judging.resources). So once one does, the collector gets a limit covering the volumes the runner does
// not write (bin, snapshot, verdicts, shard, ...), with no request: nothing more is reserved at scheduling.
func boundTrustedStorage(spec *corev1.PodSpec) {
	limited := false
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			if q, ok := list[i].Resources.Limits[corev1.ResourceEphemeralStorage]; ok && q.Sign() > 0 {
				limited = true
			}
		}
	}
	if !limited {
		return
	}
	runnerWrites := map[string]bool{}
	for i := range spec.Containers {
		if spec.Containers[i].Name != podwire.ContainerRunner {
			continue
		}
		for _, m := range spec.Containers[i].VolumeMounts {
			if !m.ReadOnly {
				runnerWrites[m.Name] = true
			}
		}
	}
	total := trustedStorageMargin.DeepCopy()
	for _, v := range spec.Volumes {
		if e := v.EmptyDir; e != nil && e.Medium != corev1.StorageMediumMemory && e.SizeLimit != nil && !runnerWrites[v.Name] {
			total.Add(*e.SizeLimit)
		}
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if c.Name != podwire.ContainerCollector {
			continue
		}
		if c.Resources.Limits == nil {
			c.Resources.Limits = corev1.ResourceList{}
		}
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		c.Resources.Limits[corev1.ResourceEphemeralStorage] = total
		c.Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("0")
	}
}

func ptrQuantity(q resource.Quantity) *resource.Quantity {
	c := q.DeepCopy()
	return &c
}
