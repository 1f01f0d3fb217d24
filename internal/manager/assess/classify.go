// Package assess is the manager's pure assessment of a run: from what it observed (the EvalRun, its Job and pods,
// status.collection, the Kueue Workload) to what the run is (Classify: the state, the reason, the shards'
// verdicts, infrastructure retries, evictions, deadlines, budgets, the code judges' confinement) and to the status
// it should have (DesiredManagerStatus) and the events of the change (Transitions). No I/O and no client: the
// reconciler observes, this package decides, the reconciler acts.
package assess

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// State is where a run is in its life.
type State string

// States of a run. Pending, Queued, Running and Collecting are in progress; Succeeded and Failed are terminal.
const (
	StatePending    State = "Pending"
	StateQueued     State = "Queued"
	StateRunning    State = "Running"
	StateCollecting State = "Collecting"
	StateSucceeded  State = "Succeeded"
	StateFailed     State = "Failed"
)

// Terminal reports whether s is Succeeded or Failed.
func (s State) Terminal() bool { return s == StateSucceeded || s == StateFailed }

// Bounds of texts copied into status.
const (
	MaxConditionMessage = 1024
	maxRunnerMessage    = 2048
	maxRunnerReason     = 128
	// maxRunnerImageID bounds status.runner.imageID; a longer one is left out rather than cut (a cut digest would
	// name another image).
	maxRunnerImageID = 512
)

// Container waiting reasons the kubelet reports.
const (
	waitErrImagePull      = "ErrImagePull"
	waitImagePullBackOff  = "ImagePullBackOff"
	waitInvalidImageName  = "InvalidImageName"
	waitErrImageNeverPull = "ErrImageNeverPull"
	terminatedOOMKilled   = "OOMKilled"
)

// Observation is everything the classification reads: the run (spec and status, collection included), its Job
// (nil when none exists), the Job's pods and the time.
type Observation struct {
	Run  *evalsv1alpha1.EvalRun
	Job  *batchv1.Job
	Pods []corev1.Pod
	Now  time.Time
	// PodCreateFailures are the Job's FailedCreate events (read only while the Job has no pod), oldest first.
	PodCreateFailures []PodCreateFailure
	// Queue is Kueue's view of the Job (QueueView), for a run with spec.queueName.
	Queue *evalsv1alpha1.QueueStatus
}

// PodCreateFailure is one FailedCreate event of the Job: the API's reason for rejecting its pod.
type PodCreateFailure struct {
	// First is when the event was first seen; Message is the API server's message.
	First   time.Time
	Message string
}

// Assessment is the classification's verdict.
type Assessment struct {
	// State and Reason (one of the api/v1alpha1 Reason constants) say where the run is; Message explains it.
	State   State
	Reason  string
	Message string
	// Runner holds the runner container's facts, nil when no pod has reported any.
	Runner *evalsv1alpha1.RunnerStatus
	// JudgeImageID is the first judge container's imageID as the kubelet reported it ("" until it started).
	JudgeImageID string
	// StopJob asks for the Job to be stopped: the run failed while its pod may still be running or waiting.
	StopJob bool
	// RetryPod names a pod to evict: its runner container never started (an infrastructure failure), so the
	// Job replaces it without spending its backoffLimit (the eviction marks it DisruptionTarget).
	RetryPod string
	// RetryIndex is RetryPod's completion index, whose retries are counted.
	RetryIndex int
	// StopPods are pods of a sharded run to stop: their shard is decided (failed) while they still run or wait.
	StopPods []PodStop
	// ReleasePods are finished pods of a sharded run to delete: their shard succeeded and everything the manager
	// reads of it is recorded elsewhere (ReleasableShardPods).
	ReleasePods []PodRelease
	// RecheckAfter, when positive, is when the classification may change without any watched object changing
	// (a timeout or deadline expires).
	RecheckAfter time.Duration
}

// PodStop is a pod of a shard the manager decided failed, to be stopped without the Job replacing it: the
// pod gets the PodConditionShardStopped condition with the shard's reason and message, then is evicted, and the
// Job's pod failure policy fails its index.
type PodStop struct {
	Pod     string
	Index   int
	Reason  string
	Message string
}

// PodRelease is a succeeded shard's pod the manager deletes (by eviction, under the pod's UID): the Job counted it
// and the shard's collection is recorded, so nothing is read from it any more.
type PodRelease struct {
	Pod   string
	UID   types.UID
	Index int
}

// Classify decides the state and reason of a run that has a Job (Job must not be nil). It is a pure function of
// obs and the timeouts in opts.
func Classify(obs Observation, opts options.Options) Assessment {
	opts = opts.WithDefaults()
	job := obs.Job
	pod := newestPod(obs.Pods)
	a := classifyJob(obs, pod, opts)
	a.Runner = runnerFacts(pod)
	a.JudgeImageID = judgeImageID(pod)
	// A failed run's Job is stopped while its runner may still run or wait; once the runner container ended,
	// the pod finishes by itself (the collector and the judge wrap up), see StopFinishedRun.
	if job != nil && !JobFinished(job) && stopAtOnce(a, pod) {
		a.StopJob = true
	}
	a.Message = textbound.Head(a.Message, MaxConditionMessage)
	return a
}

func classifyJob(obs Observation, pod *corev1.Pod, opts options.Options) Assessment {
	job := obs.Job
	if a, ok := storageLimitExceeded(obs.Pods); ok {
		// Before the Job's own verdict: the Job fails (or retries) for it without saying why.
		return a
	}
	switch {
	case jobHasCondition(job, batchv1.JobFailed):
		return classifyFailedJob(obs, pod)
	case jobHasCondition(job, batchv1.JobComplete):
		return classifyCompleteJob(obs, pod)
	case ptr.Deref(job.Spec.Suspend, false):
		msg := "the Job is suspended by spec.suspend"
		if obs.Run.Spec.QueueName != "" {
			msg = KueueWaitMessage(obs.Run.Spec.QueueName, obs.Queue)
		}
		a := Assessment{State: StateQueued, Reason: evalsv1alpha1.ReasonQueued, Message: msg}
		if q := obs.Queue; q != nil && q.Position != nil {
			// The workloads ahead are admitted without this run's own objects changing: look again, later the
			// further back it waits.
			a.RecheckAfter = PositionRecheck(*q.Position)
		}
		return a
	case pod == nil:
		if a, ok := podRejected(obs, opts.PodRejectedTimeout); ok {
			return a
		}
		if job.Status.StartTime != nil {
			return Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, Message: "the Job started; waiting for its pod"}
		}
		return Assessment{State: StatePending, Reason: evalsv1alpha1.ReasonPending, Message: "waiting for the Job to start"}
	}
	return classifyActivePod(obs, pod, opts)
}

// classifyActivePod handles a Job that has neither finished nor been suspended.
func classifyActivePod(obs Observation, pod *corev1.Pod, opts options.Options) Assessment {
	if a, ok := disruptionLimitExceeded(obs.Pods); ok {
		return a
	}
	if a, ok := unschedulable(pod, obs.Now, opts.UnschedulableTimeout); ok {
		return a
	}
	if a, ok := stuckContainer(pod, obs.Now, opts.ImagePullTimeout); ok {
		return a
	}
	if a, ok := infrastructureFailure(obs, pod, opts.ContainerCreateTimeout); ok {
		return a
	}
	if disrupted(pod) {
		// Eviction, drain or preemption: the Job replaces the pod without spending its backoffLimit (its pod
		// failure policy ignores DisruptionTarget), at most MaxDisruptionRetries times (eviction.go); what this
		// pod's runner did is not the run's outcome.
		return Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning,
			Message: fmt.Sprintf("pod %s was disrupted (%s); the Job replaces it", pod.Name, disruptionReason(pod))}
	}
	if pod.DeletionTimestamp != nil {
		// Deleted by the Job controller (activeDeadlineSeconds) or by someone else: the Job's own verdict, or its
		// replacement pod, decides; what the runner did while being stopped is not the outcome.
		return Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning,
			Message: fmt.Sprintf("pod %s is being deleted; waiting for the Job", pod.Name), RecheckAfter: PodRejectedRecheck}
	}
	if c := obs.Run.Status.Collection; c != nil && !c.RunnerFinished && outcome.DecidedBeforeRunnerEnd(c.Outcome) {
		// The collector stopped waiting for a runner that outlived its own timeouts, or whose processes the
		// launcher could not kill: decided, and the Job stopped.
		if a, ok := FromCollection(c, pod); ok {
			return a
		}
	}
	if runner := ContainerStatus(pod, podwire.ContainerRunner); runner != nil && runner.State.Terminated != nil {
		// The runner container ended (the kubelet says so) and the collector recorded this pod's results: the
		// run is decided without waiting for the Job, unless a failed runner is to be retried.
		if a, ok := FromCollection(obs.Run.Status.Collection, pod); ok {
			if runner.State.Terminated.ExitCode == 0 || ptr.Deref(obs.Run.Spec.BackoffLimit, evalsv1alpha1.DefaultBackoffLimit) == 0 {
				return a
			}
			return Assessment{State: StateCollecting, Reason: evalsv1alpha1.ReasonCollecting, Message: "results are recorded; waiting for the Job to retry or fail"}
		}
		return awaitResults(obs, runner.State.Terminated.FinishedAt.Time, "the runner ended; waiting for the collector's results")
	}
	if pod.Status.Phase == corev1.PodRunning {
		return Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, Message: fmt.Sprintf("pod %s is running", pod.Name)}
	}
	if obs.Job.Status.StartTime != nil {
		return podStarting(pod)
	}
	return Assessment{State: StatePending, Reason: evalsv1alpha1.ReasonPending, Message: fmt.Sprintf("pod %s is pending", pod.Name)}
}

// podStarting is the assessment of a pod that has not run yet once its Job started; a pod whose sandbox is still
// being made gets the same (infrastructureFailure), so that its start writes no other status.
func podStarting(pod *corev1.Pod) Assessment {
	return Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning, Message: fmt.Sprintf("pod %s is starting", pod.Name)}
}

// disrupted reports a pod the cluster is taking away (eviction, drain, preemption, a node going): the API server
// or the controllers mark it DisruptionTarget.
func disrupted(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func disruptionReason(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return strings.TrimSpace(c.Reason + ": " + OneLine(c.Message))
		}
	}
	return ""
}

// podRejected reports a Job whose pod the API server keeps rejecting (Pod Security, ResourceQuota, a webhook, an
// unknown priority class): Pending with the API's message at once, PodRejected once timeout has passed since the
// first rejection.
func podRejected(obs Observation, timeout time.Duration) (Assessment, bool) {
	if len(obs.PodCreateFailures) == 0 {
		return Assessment{}, false
	}
	first, last := obs.PodCreateFailures[0], obs.PodCreateFailures[len(obs.PodCreateFailures)-1]
	msg := OneLine(last.Message)
	if left := first.First.Add(timeout).Sub(obs.Now); left > 0 {
		return Assessment{State: StatePending, Reason: evalsv1alpha1.ReasonPending,
			Message: "the Job cannot create its pod (retrying): " + msg, RecheckAfter: min(left, PodRejectedRecheck)}, true
	}
	return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonPodRejected,
		Message: fmt.Sprintf("the Job could not create its pod for %s: %s", timeout, msg)}, true
}

// PodRejectedRecheck is how often a Job without a pod is looked at again (its events are not watched).
const PodRejectedRecheck = 5 * time.Second

// awaitResults waits for results until the results deadline after since, then fails with ResultsNotReported.
func awaitResults(obs Observation, since time.Time, waiting string) Assessment {
	deadline := time.Duration(children.ResultsDeadlineSeconds(obs.Run)) * time.Second
	if obs.Job != nil {
		if s, err := strconv.Atoi(obs.Job.Annotations[podwire.AnnotationCollectionDeadline]); err == nil && s > 0 {
			deadline = time.Duration(s) * time.Second
		}
	}
	if since.IsZero() {
		since = obs.Now
	}
	if left := since.Add(deadline).Sub(obs.Now); left > 0 {
		return Assessment{State: StateCollecting, Reason: evalsv1alpha1.ReasonCollecting, Message: waiting, RecheckAfter: left}
	}
	return Assessment{
		State:   StateFailed,
		Reason:  evalsv1alpha1.ReasonResultsNotReported,
		Message: fmt.Sprintf("the runner ended but no results arrived within the results deadline of %s", deadline),
	}
}

func classifyCompleteJob(obs Observation, pod *corev1.Pod) Assessment {
	if a, ok := FromCollection(obs.Run.Status.Collection, pod); ok {
		return a
	}
	if a, ok := fromTerminationMessage(pod); ok {
		return a
	}
	since := time.Time{}
	if runner := ContainerStatus(pod, podwire.ContainerRunner); runner != nil && runner.State.Terminated != nil {
		since = runner.State.Terminated.FinishedAt.Time
	} else if t := obs.Job.Status.CompletionTime; t != nil {
		since = t.Time
	}
	return awaitResults(obs, since, "the Job completed; waiting for the collector's results")
}

func classifyFailedJob(obs Observation, pod *corev1.Pod) Assessment {
	cond := jobCondition(obs.Job, batchv1.JobFailed)
	if cond.Reason == batchv1.JobReasonDeadlineExceeded {
		return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonDeadlineExceeded, Message: deadlineMessage(obs.Run, obs.Job)}
	}
	if a, ok := FromCollection(obs.Run.Status.Collection, pod); ok && a.State == StateFailed {
		return a
	}
	if a, ok := fromTerminationMessage(pod); ok && a.State == StateFailed {
		return a
	}
	if what, ok := startFailure(pod); ok {
		// Before the runner's exit code: runc's 128 is the runtime's failure, not the runner's.
		return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonInfrastructureFailed,
			Message: what + "; the pod failed with it, so the Job failed; the results collected before are kept"}
	}
	switch k := kubeletFacts(pod); {
	case k.OOMKilled:
		return oomKilled()
	case k.Terminated && k.ExitCode != 0:
		return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonRunnerFailed,
			Message: fmt.Sprintf("the runner container exited with code %d (the launcher failed): %s", k.ExitCode, OneLine(RunnerTerminated(pod).Message))}
	}
	if collector := ContainerStatus(pod, podwire.ContainerCollector); collector != nil {
		if t := terminatedState(collector); t != nil && t.ExitCode != 0 {
			return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonCollectorFailed,
				Message: fmt.Sprintf("the collector exited with code %d: %s", t.ExitCode, OneLine(t.Message))}
		}
	}
	return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonRunnerFailed,
		Message: fmt.Sprintf("the Job failed (%s): %s", cond.Reason, OneLine(cond.Message))}
}

// FromCollection maps the collector's recorded outcome to an assessment, combined with how the kubelet says the
// runner container ended. A collection recorded for another pod (an earlier attempt) is not this pod's outcome;
// without any pod left (the Job and its pods were deleted after collection) the collection stands.
func FromCollection(c *evalsv1alpha1.CollectionStatus, pod *corev1.Pod) (Assessment, bool) {
	if c == nil || c.Outcome == "" {
		return Assessment{}, false
	}
	if pod != nil && c.PodName != pod.Name {
		return Assessment{}, false
	}
	tail := ""
	if l := c.Launcher; l != nil {
		tail = l.StderrTail
	}
	return fromOutcome(c.Outcome, c.Message, tail, pod), true
}

func fromTerminationMessage(pod *corev1.Pod) (Assessment, bool) {
	collector := ContainerStatus(pod, podwire.ContainerCollector)
	if collector == nil {
		return Assessment{}, false
	}
	t := terminatedState(collector)
	if t == nil || t.Message == "" {
		return Assessment{}, false
	}
	var summary podwire.TerminationMessage
	if err := json.Unmarshal([]byte(t.Message), &summary); err != nil || summary.Outcome == "" {
		return Assessment{}, false
	}
	a := fromOutcome(evalsv1alpha1.CollectionOutcome(summary.Outcome), summary.Message, "", pod)
	a.Message = "from the collector's termination message (its status write did not land): " + a.Message
	return a, true
}

func fromOutcome(o evalsv1alpha1.CollectionOutcome, message, stderrTail string, pod *corev1.Pod) Assessment {
	msg := OneLine(message)
	end := outcome.Run(o, kubeletFacts(pod))
	state := StateFailed
	if end.Succeeded {
		state = StateSucceeded
	}
	switch end.Override {
	case outcome.OverrideOOMKilled:
		return oomKilled()
	case outcome.OverrideExitCode:
		t := RunnerTerminated(pod)
		m := fmt.Sprintf("the runner container exited with code %d (kubelet)", t.ExitCode)
		if tm := OneLine(t.Message); tm != "" {
			m += ": " + textbound.Tail(tm, 512)
		}
		return Assessment{State: state, Reason: end.Reason, Message: m + "; collected: " + msg}
	case outcome.OverrideUnknownOutcome:
		return Assessment{State: state, Reason: end.Reason,
			Message: fmt.Sprintf("the collector reported an unknown outcome %q: %s", textbound.Head(string(o), 64), msg)}
	}
	switch o {
	case evalsv1alpha1.OutcomeCompleted:
		if msg == "" {
			msg = "every result was collected"
		}
	case evalsv1alpha1.OutcomeRunnerFailed:
		if tail := OneLine(stderrTail); tail != "" {
			msg = strings.TrimSpace(msg + "; stderr: " + textbound.Tail(tail, 512))
		}
	}
	return Assessment{State: state, Reason: end.Reason, Message: msg}
}

// kubeletFacts are the kubelet's facts about the runner container of pod (none for a nil pod or a running runner).
func kubeletFacts(pod *corev1.Pod) outcome.Kubelet {
	t := RunnerTerminated(pod)
	if t == nil {
		return outcome.Kubelet{}
	}
	return outcome.Kubelet{Terminated: true, ExitCode: t.ExitCode, OOMKilled: t.Reason == terminatedOOMKilled}
}

func oomKilled() Assessment {
	return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonRunnerOOMKilled,
		Message: "the runner container ran out of memory (OOMKilled); raise target.resources.limits.memory"}
}

// RunnerTerminated is the runner container's terminated state as the kubelet reported it, nil while it runs.
func RunnerTerminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	runner := ContainerStatus(pod, podwire.ContainerRunner)
	if runner == nil {
		return nil
	}
	return terminatedState(runner)
}

// unschedulable fails a pod the scheduler has rejected for longer than timeout.
func unschedulable(pod *corev1.Pod, now time.Time, timeout time.Duration) (Assessment, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable {
			continue
		}
		if left := c.LastTransitionTime.Add(timeout).Sub(now); left > 0 {
			return Assessment{State: StatePending, Reason: evalsv1alpha1.ReasonPending,
				Message: fmt.Sprintf("pod %s is unschedulable: %s", pod.Name, OneLine(c.Message)), RecheckAfter: left}, true
		}
		return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonUnschedulable,
			Message: fmt.Sprintf("pod %s stayed unschedulable for %s: %s", pod.Name, timeout, OneLine(c.Message))}, true
	}
	return Assessment{}, false
}

// stuckContainer fails a pod whose image cannot be pulled for longer than timeout (an invalid image name fails at
// once). Containers that cannot be created are infrastructureFailure's.
func stuckContainer(pod *corev1.Pod, now time.Time, timeout time.Duration) (Assessment, bool) {
	since := pod.CreationTimestamp.Time
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			since = c.LastTransitionTime.Time
		}
	}
	for _, name := range children.PodContainers {
		s := ContainerStatus(pod, name)
		if s == nil || s.State.Waiting == nil {
			continue
		}
		w := s.State.Waiting
		switch w.Reason {
		case waitInvalidImageName, waitErrImageNeverPull:
			return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonImagePullFailed,
				Message: fmt.Sprintf("container %s cannot pull image %s: %s: %s", name, s.Image, w.Reason, OneLine(w.Message))}, true
		case waitErrImagePull, waitImagePullBackOff:
		default:
			continue
		}
		if left := since.Add(timeout).Sub(now); left > 0 {
			return Assessment{State: StatePending, Reason: evalsv1alpha1.ReasonPending,
				Message: fmt.Sprintf("container %s is waiting: %s: %s", name, w.Reason, OneLine(w.Message)), RecheckAfter: left}, true
		}
		return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonImagePullFailed,
			Message: fmt.Sprintf("container %s could not start within %s: %s: %s", name, timeout, w.Reason, OneLine(w.Message))}, true
	}
	return Assessment{}, false
}

// judgeImageID is the image the pod's first judge container ran, as the kubelet reported it; "" before it
// started, or over the bound (left out rather than cut).
func judgeImageID(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	if s := ContainerStatus(pod, podwire.JudgeContainer(0)); s != nil && len(s.ImageID) <= maxRunnerImageID {
		return s.ImageID
	}
	return ""
}

// runnerFacts returns the runner container's facts as the kubelet reported them; nothing the runner can write
// (its output, the launcher's report) goes into them.
func runnerFacts(pod *corev1.Pod) *evalsv1alpha1.RunnerStatus {
	if pod == nil {
		return nil
	}
	r := evalsv1alpha1.RunnerStatus{PodName: pod.Name}
	if s := ContainerStatus(pod, podwire.ContainerRunner); s != nil {
		if s.ImageID != "" && len(s.ImageID) <= maxRunnerImageID {
			r.ImageID = ptr.To(s.ImageID)
		}
		if t := terminatedState(s); t != nil {
			r.ExitCode = ptr.To(t.ExitCode)
			r.Reason = t.Reason
			r.Message = t.Message
		} else if w := s.State.Waiting; w != nil {
			r.Reason = w.Reason
			r.Message = w.Message
		}
	}
	r.Reason = textbound.PrintableHead(r.Reason, maxRunnerReason)
	// The message is the runner container's (a termination message it may write itself): escaped, its final line
	// break dropped.
	r.Message = textbound.PrintableTail(strings.TrimRight(r.Message, "\r\n"), maxRunnerMessage)
	return &r
}

// jobStopGrace is how long a decided run's unfinished Job may keep running (its collector and judge wrapping
// up) before the manager stops it, so that nothing of a decided run is left running.
const jobStopGrace = 2 * time.Minute

// StopFinishedRun decides, for a run already decided at decidedAt, whether its Job (not finished, not being
// deleted) is to be stopped now: at once while the runner still runs for a failed run, otherwise once
// jobStopGrace has passed. It returns when to look again otherwise.
func StopFinishedRun(a Assessment, pods []corev1.Pod, decidedAt, now time.Time) (bool, time.Duration) {
	if stopAtOnce(a, newestPod(pods)) {
		return true, 0
	}
	if left := decidedAt.Add(jobStopGrace).Sub(now); left > 0 {
		return false, left
	}
	return true, 0
}

// stopAtOnce reports whether a failed run's Job is stopped without waiting: its runner may still run or wait, or
// its collector gave no results in time (nothing the pod still does can change the outcome).
func stopAtOnce(a Assessment, pod *corev1.Pod) bool {
	return a.State == StateFailed && (RunnerTerminated(pod) == nil || a.Reason == evalsv1alpha1.ReasonResultsNotReported ||
		a.Reason == evalsv1alpha1.ReasonInfrastructureFailed || a.Reason == evalsv1alpha1.ReasonDisruptionLimitExceeded)
}

// ClassifyWithoutJob decides a one-pod run whose Job (and pod) is gone, from what its status recorded: the
// collection, weighed against the kubelet's facts recorded in status.runner; without a collection the run was
// cancelled. It never succeeds without the kubelet's exit code of the runner (WithoutRunnerExit).
func ClassifyWithoutJob(run *evalsv1alpha1.EvalRun) Assessment {
	pod := recordedPod(run)
	a, ok := FromCollection(run.Status.Collection, pod)
	switch {
	case !ok:
		a = Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonCancelled,
			Message: fmt.Sprintf("Job %s was deleted before the run finished", run.Status.JobName)}
	case RunnerTerminated(pod) == nil:
		a = WithoutRunnerExit(a, run.Status.JobName)
	}
	a.Runner = run.Status.Runner
	a.Message = textbound.Head(a.Message, MaxConditionMessage)
	return a
}

// WithoutRunnerExit is a collection's assessment for a run whose pod is gone when the kubelet's exit code of its
// runner container was never seen (the Job was deleted first): a collection can still make the run fail, but
// never succeed, because only the kubelet's exit code says that the runner container ended cleanly (the
// runner's output and the launcher's report are in its reach; its exit code is not).
func WithoutRunnerExit(a Assessment, jobName string) Assessment {
	if a.State != StateSucceeded {
		return a
	}
	return Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonCancelled, Runner: a.Runner,
		Message: fmt.Sprintf("Job %s was deleted before the kubelet reported how the runner container ended; its results are kept, "+
			"but without the runner's exit code the run cannot count as completed (collected: %s)", jobName, a.Message)}
}

// recordedPod rebuilds, from the kubelet facts recorded in status.runner, the runner's pod when it is gone, so a
// collection is still weighed against how the runner container ended; nil without such facts.
func recordedPod(run *evalsv1alpha1.EvalRun) *corev1.Pod {
	r := run.Status.Runner
	if r == nil || r.PodName == "" {
		return nil
	}
	pod := &corev1.Pod{}
	pod.Name = r.PodName
	if r.ExitCode != nil {
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: podwire.ContainerRunner, ImageID: ptr.Deref(r.ImageID, ""), State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: *r.ExitCode, Reason: r.Reason, Message: r.Message}}}}
	}
	return pod
}

// newestPod returns the most recently created pod (a Job retry replaces older ones), nil for none.
func newestPod(pods []corev1.Pod) *corev1.Pod {
	var newest *corev1.Pod
	for i := range pods {
		if p := &pods[i]; newest == nil || NewerFirst(*p, *newest) < 0 {
			newest = p
		}
	}
	return newest
}

// NewerFirst orders pods newest first: by creation time, then (created in the same second) by name, the
// greater first.
func NewerFirst(a, b corev1.Pod) int {
	if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
		return c
	}
	return strings.Compare(b.Name, a.Name)
}

// ContainerStatus returns the status of the named container, init containers included.
func ContainerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	if pod == nil {
		return nil
	}
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// terminatedState returns the container's current terminated state, else its last one.
func terminatedState(s *corev1.ContainerStatus) *corev1.ContainerStateTerminated {
	if s.State.Terminated != nil {
		return s.State.Terminated
	}
	return s.LastTerminationState.Terminated
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if c := &job.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

func jobHasCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	return jobCondition(job, t) != nil
}

// JobFinished reports whether the Job completed or failed.
func JobFinished(job *batchv1.Job) bool {
	return jobHasCondition(job, batchv1.JobComplete) || jobHasCondition(job, batchv1.JobFailed)
}

// OneLine collapses whitespace runs (newlines included) into single spaces.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
