package assess

import (
	"fmt"
	"regexp"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// MaxDisruptionRetries bounds how many times a completion index (the one pod of a run, or a shard) is replaced
// without spending the Job's backoff limit: the Job's pod failure policy ignores a pod that was disrupted
// (DisruptionTarget: evicted, drained, preempted, lost with its node, evicted under node pressure, replaced by the
// manager after an infrastructure failure), and the Job controller counts those per index on each new pod
// (batch.kubernetes.io/job-index-ignored-failure-count). The fourth disruption of an index ends the run with
// DisruptionLimitExceeded.
const MaxDisruptionRetries = 3

// podReasonEvicted is the pod status reason the kubelet's eviction manager sets on every pod it evicts.
const podReasonEvicted = "Evicted"

// StorageLimit names what a pod wrote past.
type StorageLimit string

// Storage limits the kubelet enforces by evicting the pod.
const (
	// StorageLimitEmptyDir: an emptyDir volume over its sizeLimit.
	StorageLimitEmptyDir StorageLimit = "EmptyDir"
	// StorageLimitContainer: a container's writable layer and logs over its ephemeral-storage limit.
	StorageLimitContainer StorageLimit = "Container"
	// StorageLimitPod: the pod's ephemeral storage over the sum of its containers' ephemeral-storage limits.
	StorageLimitPod StorageLimit = "Pod"
)

// StorageEviction is a pod the kubelet evicted for writing past a storage limit.
type StorageEviction struct {
	// Limit is which kind of limit; Name the volume (EmptyDir) or container (Container), "" for the pod.
	Limit StorageLimit
	Name  string
	// Quantity is the limit as the kubelet printed it.
	Quantity string
	// Pod is the evicted pod's name.
	Pod string
}

// The kubelet's eviction manager (pkg/kubelet/eviction, helpers.go: emptyDirMessageFmt,
// containerEphemeralStorageMessageFmt, podEphemeralStorageMessageFmt, unchanged since v1.10) gives a pod it evicts
// for local storage no typed cause: only status.reason Evicted, the phase Failed and one of these messages, and
// (unlike node-pressure evictions) no DisruptionTarget condition. They are read here, once, into a
// StorageEviction; nothing downstream reads the text.
var (
	emptyDirLimitMessage  = regexp.MustCompile(`^Usage of EmptyDir volume "([^"]*)" exceeds the limit "([^"]*)"\. `)
	containerLimitMessage = regexp.MustCompile(`^Container (\S+) exceeded its local ephemeral storage limit "([^"]*)"\. `)
	podLimitMessage       = regexp.MustCompile(`^Pod ephemeral local storage usage exceeds the total limit of containers (\S+)\. `)
)

// storageEviction reads whether the kubelet evicted pod for writing past a storage limit.
func storageEviction(pod *corev1.Pod) (StorageEviction, bool) {
	if pod.Status.Phase != corev1.PodFailed || pod.Status.Reason != podReasonEvicted {
		return StorageEviction{}, false
	}
	msg := pod.Status.Message
	if m := emptyDirLimitMessage.FindStringSubmatch(msg); m != nil {
		return StorageEviction{Limit: StorageLimitEmptyDir, Name: m[1], Quantity: m[2], Pod: pod.Name}, true
	}
	if m := containerLimitMessage.FindStringSubmatch(msg); m != nil {
		return StorageEviction{Limit: StorageLimitContainer, Name: m[1], Quantity: m[2], Pod: pod.Name}, true
	}
	if m := podLimitMessage.FindStringSubmatch(msg); m != nil {
		return StorageEviction{Limit: StorageLimitPod, Quantity: m[1], Pod: pod.Name}, true
	}
	return StorageEviction{}, false
}

// storageLimitExceeded fails the run (or the shard) whose pods include one the kubelet evicted for writing past
// a storage limit. Any such pod decides, the newest or not: with a backoff limit the Job may already have started
// a replacement, which is stopped (the classification's StopJob/StopPods), never weighed.
func storageLimitExceeded(pods []corev1.Pod) (Assessment, bool) {
	var found *StorageEviction
	for i := range pods {
		if e, ok := storageEviction(&pods[i]); ok && (found == nil || e.Pod < found.Pod) {
			found = &e
		}
	}
	if found == nil {
		return Assessment{}, false
	}
	return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonStorageLimitExceeded, Message: found.message()}, true
}

func (e StorageEviction) message() string {
	switch e.Limit {
	case StorageLimitEmptyDir:
		what, hint := fmt.Sprintf("volume %q", e.Name), ""
		if e.Name == podwire.VolumeOut {
			what = fmt.Sprintf("the runner's output volume %q", e.Name)
			hint = "; raise target.resources.limits.ephemeral-storage, which sizes it"
		}
		return fmt.Sprintf("the kubelet evicted pod %s: %s grew past its sizeLimit %s%s", e.Pod, what, e.Quantity, hint)
	case StorageLimitContainer:
		return fmt.Sprintf("the kubelet evicted pod %s: container %s wrote past its ephemeral-storage limit %s", e.Pod, e.Name, e.Quantity)
	}
	return fmt.Sprintf("the kubelet evicted pod %s: its ephemeral storage grew past the sum of its containers' limits %s", e.Pod, e.Quantity)
}

// indexDisruptions is how many times pods of one completion index were disrupted, as the Job controller counts
// them: each pod carries the count of its predecessors (job-index-ignored-failure-count; a pod that is gone is
// still counted on its replacement), plus one for a pod that is itself disrupted.
func indexDisruptions(pods []corev1.Pod) (int, string) {
	most, pod := 0, ""
	for i := range pods {
		p := &pods[i]
		n, err := strconv.Atoi(p.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation])
		if err != nil || n < 0 {
			n = 0
		}
		if disrupted(p) {
			n++
		}
		if n > most {
			most, pod = n, p.Name
		}
	}
	return most, pod
}

// disruptionLimitExceeded fails a run (or shard) whose pods were disrupted more than MaxDisruptionRetries times:
// the Job's pod failure policy would otherwise replace them for ever.
func disruptionLimitExceeded(pods []corev1.Pod) (Assessment, bool) {
	n, pod := indexDisruptions(pods)
	if n <= MaxDisruptionRetries {
		return Assessment{}, false
	}
	return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonDisruptionLimitExceeded,
		Message: fmt.Sprintf("pods were taken away %d times (evicted, drained, preempted, lost with their node, "+
			"or replaced after an infrastructure failure; the last: %s), more than the %d replacements allowed",
			n, pod, MaxDisruptionRetries)}, true
}
