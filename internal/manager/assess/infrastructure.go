package assess

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// Kubelet facts of containers that never ran, whoever's fault it is, it is not the runner's.
const (
	// terminatedStartError and terminatedContainerCannotRun: the runtime failed to start the container (runc's
	// exit code 128); with restartPolicy Never the kubelet does not try again.
	terminatedStartError         = "StartError"
	terminatedContainerCannotRun = "ContainerCannotRun"
	// waitCreateContainerError and waitRunContainerError: the runtime failed to create or start the container;
	// the kubelet keeps retrying with back-off, for ever.
	waitCreateContainerError = "CreateContainerError"
	waitRunContainerError    = "RunContainerError"
	// waitCreateContainerConfigError: the kubelet cannot build the container's configuration (a Secret,
	// ConfigMap or key named by env is missing, or the image would run as root); it retries for ever, and it
	// heals once the user creates what is missing.
	waitCreateContainerConfigError = "CreateContainerConfigError"
	// MaxInfrastructureRetries bounds how many pods of one completion index (the one pod of a run, or a shard)
	// the manager replaces after infrastructure failures.
	MaxInfrastructureRetries = 3
)

// podFault is what the kubelet reports of a pod whose containers could not be created or started, or whose
// sandbox is missing.
type podFault struct {
	// what names the container (or the sandbox) and carries the kubelet's reason and message.
	what string
	// since is when the kubelet's own retries began; the fault is decided once the container-create timeout has
	// passed since then. Zero for a fault the kubelet does not retry (decided at once).
	since time.Time
	// config marks CreateContainerConfigError: the user's to fix, so it ends the run (InvalidContainerConfig)
	// instead of replacing the pod, which would meet the same missing Secret.
	config bool
	// starting marks a sandbox not created yet: shown as a fault only once SandboxStartGrace has passed.
	starting bool
}

// SandboxStartGrace is how long a scheduled pod's sandbox may take to be created before the run shows it as a
// fault (Pending, "the kubelet cannot create the sandbox"): every pod goes through PodReadyToStartContainers=False
// while the kubelet makes its sandbox, which takes well under a second on an idle node and a few seconds on a
// busy one. The fault is still decided from the condition's start, at the container-create timeout.
const SandboxStartGrace = 30 * time.Second

// infrastructureFailure handles a pod whose containers cannot run through no fault of the runner (see
// findPodFault). Faults the kubelet keeps retrying are shown in Pending with the kubelet's message until
// timeout has passed since they began. Then the pod is replaced by eviction, up to MaxInfrastructureRetries
// times per completion index (counted on the Job), and the run (or that shard) fails with InfrastructureFailed; CreateContainerConfigError fails the
// run with InvalidContainerConfig instead. Such a pod would otherwise wait for ever: the kubelet retries, or
// (restartPolicy Never) gives up without ending the pod, and the collector waits for a runner that never
// opened the runner-end FIFO.
func infrastructureFailure(obs Observation, pod *corev1.Pod, timeout time.Duration) (Assessment, bool) {
	f, ok := findPodFault(obs, pod)
	if !ok {
		return Assessment{}, false
	}
	if pod.DeletionTimestamp != nil {
		return Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning,
			Message: fmt.Sprintf("pod %s is being replaced after an infrastructure failure", pod.Name)}, true
	}
	if !f.since.IsZero() {
		if f.starting && obs.Now.Sub(f.since) < SandboxStartGrace {
			// A pod whose sandbox is still being made, as every pod's is for a moment: it is starting, as the
			// assessment without a fault says, so that a normal start writes no Pending status and no event.
			a := podStarting(pod)
			a.RecheckAfter = f.since.Add(SandboxStartGrace).Sub(obs.Now)
			return a, true
		}
		if left := f.since.Add(timeout).Sub(obs.Now); left > 0 {
			return Assessment{State: StatePending, Reason: evalsv1alpha1.ReasonPending,
				Message: f.what + "; the kubelet retries", RecheckAfter: left}, true
		}
		f.what = fmt.Sprintf("%s, for %s", f.what, timeout)
	}
	if f.config {
		return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonInvalidContainerConfig, Message: f.what}, true
	}
	index := podIndex(pod)
	r := ParseIndexRetries(obs.Job.Annotations[podwire.AnnotationInfrastructureRetriesByIndex])[index]
	if r.Pod == pod.Name {
		// Counted already (the cache may not show the eviction yet, or it failed): evict again, count nothing.
		return Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, RetryPod: pod.Name, RetryIndex: index,
			Message: fmt.Sprintf("%s; replacing the pod (%d of %d)", f.what, r.Count, MaxInfrastructureRetries)}, true
	}
	if r.Count >= MaxInfrastructureRetries {
		return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonInfrastructureFailed,
			Message: fmt.Sprintf("%s, after %d replaced pods", f.what, r.Count)}, true
	}
	return Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, RetryPod: pod.Name, RetryIndex: index,
		Message: fmt.Sprintf("%s; replacing the pod (%d of %d)", f.what, r.Count+1, MaxInfrastructureRetries)}, true
}

// podIndex is the pod's completion index (its Job's Indexed pods carry it); 0 for a pod without a valid one.
func podIndex(pod *corev1.Pod) int {
	n, err := strconv.Atoi(pod.Annotations[podwire.AnnotationJobCompletionIndex])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// IndexRetry is one completion index's infrastructure retries: how many of its pods the manager replaced, and
// the last one.
type IndexRetry struct {
	Count int
	Pod   string
}

// ParseIndexRetries reads AnnotationInfrastructureRetriesByIndex ("<index>=<count>:<pod>,..."); entries it
// cannot read count as none.
func ParseIndexRetries(s string) map[int]IndexRetry {
	out := map[int]IndexRetry{}
	for entry := range strings.SplitSeq(s, ",") {
		index, rest, ok := strings.Cut(entry, "=")
		count, pod, ok2 := strings.Cut(rest, ":")
		i, err := strconv.Atoi(index)
		n, err2 := strconv.Atoi(count)
		if !ok || !ok2 || err != nil || err2 != nil || i < 0 || n < 0 {
			continue
		}
		out[i] = IndexRetry{Count: n, Pod: pod}
	}
	return out
}

// FormatIndexRetries writes AnnotationInfrastructureRetriesByIndex, in index order.
func FormatIndexRetries(m map[int]IndexRetry) string {
	indexes := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(indexes))
	for k, i := range indexes {
		parts[k] = fmt.Sprintf("%d=%d:%s", i, m[i].Count, m[i].Pod)
	}
	return strings.Join(parts, ",")
}

// findPodFault reads, from the pod alone, whether its containers cannot run through no fault of the runner:
//   - the runner container terminated with StartError or ContainerCannotRun (runc could not start it), and the
//     collector recorded nothing for this pod;
//   - a container (install, collector, runner, judge) waits with CreateContainerError or RunContainerError (or
//     CreateContainerConfigError, the user's fault);
//   - the pod's sandbox is missing (PodReadyToStartContainers=False on a scheduled pod that has not ended): never
//     created while no container has started, or gone while containers had started (a sandbox that died; with
//     restartPolicy Never the kubelet kills the containers and does not make a new one).
func findPodFault(obs Observation, pod *corev1.Pod) (podFault, bool) {
	if runner := ContainerStatus(pod, podwire.ContainerRunner); runner != nil && runner.State.Terminated != nil {
		t := runner.State.Terminated
		if (t.Reason == terminatedStartError || t.Reason == terminatedContainerCannotRun) && !collectedPod(obs.Run, pod) {
			return podFault{what: fmt.Sprintf("the runner container of pod %s could not start (%s: %s)", pod.Name, t.Reason, OneLine(t.Message))}, true
		}
	}
	if f, ok := sandboxFault(obs, pod); ok {
		return f, true
	}
	for _, name := range children.PodContainers {
		s := ContainerStatus(pod, name)
		if s == nil || s.State.Waiting == nil {
			continue
		}
		switch w := s.State.Waiting; w.Reason {
		case waitCreateContainerError, waitRunContainerError:
			return podFault{since: waitingSince(pod),
				what: fmt.Sprintf("container %s of pod %s cannot be started (%s: %s)", name, pod.Name, w.Reason, OneLine(w.Message))}, true
		case waitCreateContainerConfigError:
			return podFault{since: waitingSince(pod), config: true,
				what: fmt.Sprintf("container %s of pod %s cannot be configured (%s: %s)", name, pod.Name, w.Reason, OneLine(w.Message))}, true
		}
	}
	return podFault{}, false
}

// startFailure reports a container of pod (any of them: the runner, the collector, a judge, install) that the
// container runtime could not start (StartError or ContainerCannotRun: runc's exit code 128). With restartPolicy
// Never the kubelet does not try again, and once every container has ended the pod fails, and with it the Job's
// index: an infrastructure failure (or a judging.image without what the judge container runs), never the runner's.
func startFailure(pod *corev1.Pod) (string, bool) {
	for _, name := range children.PodContainers {
		s := ContainerStatus(pod, name)
		if s == nil {
			continue
		}
		if t := terminatedState(s); t != nil && (t.Reason == terminatedStartError || t.Reason == terminatedContainerCannotRun) {
			return fmt.Sprintf("container %s of pod %s could not start (%s: %s)", name, pod.Name, t.Reason, OneLine(t.Message)), true
		}
	}
	return "", false
}

// sandboxFault reports a scheduled pod, neither ended nor being deleted nor disrupted, whose sandbox is missing.
// The kubelet sets PodReadyToStartContainers=False until it has created the sandbox and again once the sandbox is
// gone; on a pod whose run ended normally it tears the sandbox down only after the pod's phase is final.
func sandboxFault(obs Observation, pod *corev1.Pod) (podFault, bool) {
	ready := podCondition(pod, corev1.PodReadyToStartContainers)
	if ready == nil || ready.Status != corev1.ConditionFalse || pod.DeletionTimestamp != nil || disrupted(pod) ||
		pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return podFault{}, false
	}
	sched := podCondition(pod, corev1.PodScheduled)
	if sched == nil || sched.Status != corev1.ConditionTrue {
		return podFault{}, false
	}
	node := pod.Spec.NodeName
	if node == "" {
		node = "its node"
	}
	if !anyContainerStarted(pod) {
		since := ready.LastTransitionTime.Time
		if sched.LastTransitionTime.After(since) {
			since = sched.LastTransitionTime.Time
		}
		return podFault{since: since, starting: true,
			what: fmt.Sprintf("the kubelet cannot create the sandbox of pod %s on %s (PodReadyToStartContainers=False)", pod.Name, node)}, true
	}
	// A runner that ended before the sandbox went away ended by itself: what the collector recorded of it decides.
	if t := RunnerTerminated(pod); t != nil && t.FinishedAt.Before(&ready.LastTransitionTime) && collectedPod(obs.Run, pod) {
		return podFault{}, false
	}
	// Every container exited 0: the pod ended normally and the kubelet tore its sandbox down before it reported
	// the final phase (seen under load, before the shard's collection reached the cache). A sandbox that dies
	// under running containers leaves them killed, not exited 0.
	if allContainersSucceeded(pod) {
		return podFault{}, false
	}
	return podFault{what: fmt.Sprintf("the sandbox of pod %s on %s went away while its containers ran (PodReadyToStartContainers=False)", pod.Name, node)}, true
}

// allContainersSucceeded reports whether the pod reports every one of its containers (init and regular),
// at least one, as terminated with exit code 0.
func allContainersSucceeded(pod *corev1.Pod) bool {
	n := 0
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			t := list[i].State.Terminated
			if t == nil || t.ExitCode != 0 {
				return false
			}
			n++
		}
	}
	return n > 0
}

// collectedPod reports whether the collector recorded a collection for pod.
func collectedPod(run *evalsv1alpha1.EvalRun, pod *corev1.Pod) bool {
	c := run.Status.Collection
	return c != nil && c.PodName == pod.Name
}

// anyContainerStarted reports whether any container of the pod has run (runs, or has terminated).
func anyContainerStarted(pod *corev1.Pod) bool {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			s := &list[i]
			if s.State.Running != nil || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil {
				return true
			}
		}
	}
	return false
}

// waitingSince is when a container of the pod may have begun waiting to be created: the latest of the pod's
// creation, its scheduling, its sandbox becoming ready, its init containers finishing, and its containers
// becoming not ready (the collector restarting).
func waitingSince(pod *corev1.Pod) time.Time {
	since := pod.CreationTimestamp.Time
	for _, c := range pod.Status.Conditions {
		switch {
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue,
			c.Type == corev1.PodReadyToStartContainers && c.Status == corev1.ConditionTrue,
			c.Type == corev1.PodInitialized && c.Status == corev1.ConditionTrue,
			c.Type == corev1.ContainersReady && c.Status == corev1.ConditionFalse:
			if c.LastTransitionTime.After(since) {
				since = c.LastTransitionTime.Time
			}
		}
	}
	return since
}

// podCondition returns the pod's condition of type t, nil when it has none.
func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
