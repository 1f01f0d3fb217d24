package assess

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// SplitContiguous names the split of a sharded run: in eval-file order, shard i holds cases [i*n/shards,
// (i+1)*n/shards) (podwire.ShardRange).
const SplitContiguous = "Contiguous"

// maxShardMessage bounds a shard's message in status.shards.
const maxShardMessage = 512

// ShardObservation is what the classification of a sharded or resumed run (or one with trials) reads beyond
// Observation: the number of its pods and cases, and each pod's recorded collection (its shard ConfigMap's
// section), by Job completion index. In a run with trials a pod is one trial of one shard (podwire.ShardTrial);
// otherwise a pod is a shard.
type ShardObservation struct {
	// Shards is the number of the Job's completion indexes: the run's shards times its trials.
	Shards int
	// Trials is the number of trials of every case (0 or 1: one).
	Trials   int
	Cases    int
	Sections map[int]*results.Section
}

// trials is the number of trials, at least 1.
func (so ShardObservation) trials() int { return max(so.Trials, 1) }

// CaseShards is the number of shards the cases were split into: the completion indexes over the trials.
func (so ShardObservation) CaseShards() int { return max(so.Shards/so.trials(), 1) }

// ShardTrial is the shard and the trial (from 1) of completion index i.
func (so ShardObservation) ShardTrial(i int) (shard, trial int) {
	return podwire.ShardTrial(i, so.CaseShards())
}

// PodName names completion index i for people: "shard 3", or in a run with trials "shard 3 trial 2".
func (so ShardObservation) PodName(i int) string {
	if so.trials() <= 1 {
		return fmt.Sprintf("shard %d", i)
	}
	shard, trial := so.ShardTrial(i)
	return fmt.Sprintf("shard %d trial %d", shard, trial)
}

// pods names the run's pods in a count: "shards", or "shard trials".
func (so ShardObservation) pods() string {
	if so.trials() <= 1 {
		return "shards"
	}
	return "shard trials"
}

// ShardVerdict is the classification of a sharded or resumed run: the run's assessment (what its shards add up
// to), each shard's own, and the shards' status entries.
type ShardVerdict struct {
	Assessment Assessment
	Shards     []Assessment
	Statuses   []evalsv1alpha1.ShardStatus
}

// ClassifyShards classifies each shard of a sharded or resumed run as Classify classifies a one-pod run (its own
// pods, its own view of the Job, its own collection), then adds them up. obs.Job must not be nil.
func ClassifyShards(obs Observation, so ShardObservation, opts options.Options) ShardVerdict {
	byIndex := PodsByShard(obs.Pods, so.Shards)
	stopped := ParseStoppedShards(obs.Job.Annotations[podwire.AnnotationStoppedShards])
	v := ShardVerdict{Shards: make([]Assessment, so.Shards)}
	var release []PodRelease
	for i := range so.Shards {
		if a, ok := stoppedShard(so, i, byIndex[i], stopped[i], obs.Run.Status.Shards); ok {
			// Pods that outlived an eviction that failed are stopped again.
			a.StopPods = stopsOf(i, byIndex[i], &a)
			v.Shards[i] = a
			continue
		}
		shardObs := obs
		shardObs.Run = runWithCollection(obs.Run, so.Sections[i])
		shardObs.Job = jobForShard(obs.Job, i, so.PodName(i))
		shardObs.Pods = byIndex[i]
		if len(byIndex[i]) > 0 {
			shardObs.PodCreateFailures = nil
		}
		v.Shards[i] = Classify(shardObs, opts)
		if a := &v.Shards[i]; a.State == StateFailed && a.StopJob && !outcome.RunFatal(a.Reason) {
			// Decided while its pods may still run or wait: stop them, and only them.
			a.StopPods = stopsOf(i, byIndex[i], a)
		}
		if v.Shards[i].State == StateSucceeded {
			release = append(release, ReleasableShardPods(i, byIndex[i], obs.Job)...)
		}
	}
	v.Assessment = combineShards(v.Shards, so)
	v.Assessment.ReleasePods = release
	v.Statuses = shardStatuses(v.Shards, so)
	return v
}

// KeptShardPods is the number of shards, from index 0, whose pods stay once they succeeded (as the Job leaves
// them, for their logs); the pods of a succeeded shard from this index on are deleted (ReleasableShardPods).
// Equal to the shards status.shards lists: the succeeded shards it lists are always among them (failed and
// in-progress shards are listed first, then succeeded ones in index order), so every listed shard's pod name and
// image digest are still read from its pod.
const KeptShardPods = evalsv1alpha1.MaxStatusShards

// ReleasableShardPods are the pods of shard index, decided succeeded, that the manager deletes: a node keeps
// every finished pod of an Indexed Job (its sandbox, its containers, its logs) until the pod is deleted, and the
// kubelet's and the manager's work per pod grows with them (docs/design/storage-and-budgets.md, "Releasing
// succeeded shards' pods"). Only a pod that has nothing left to tell is released: its shard's index is at or past
// KeptShardPods, it succeeded (every container exited 0, as the kubelet said), the Job counted its index as
// completed (which the Job does once it has taken its tracking finalizer off the pod, so that the shard's view of
// the Job stays Complete once the pod is gone) and it is not being deleted already. The shard's outcome then
// stands on its recorded collection and the Job's completed index (classifyCompleteJob with no pod). Once the run
// is decided succeeded, ReleasableOfSucceededRun releases the pods the Job counts after that.
func ReleasableShardPods(index int, pods []corev1.Pod, job *batchv1.Job) []PodRelease {
	if index < KeptShardPods {
		return nil
	}
	return releasable(index, pods, job)
}

// ReleasableOfOnePodRun is the pod of a run of one pod (no shards, no trials), decided succeeded, that the manager
// deletes with --release-succeeded-pods: the pod ReleasableShardPods would release were its index past
// KeptShardPods. Many one-case runs are to a node what many shards are: each finished pod stays on it until
// deleted, and the kubelet compares every pod it holds on each pod update (docs/design/per-run-cost.md).
func ReleasableOfOnePodRun(pods []corev1.Pod, job *batchv1.Job) []PodRelease {
	if job == nil || ptr.Deref(job.Spec.Completions, 1) != 1 {
		return nil
	}
	return releasable(0, pods, job)
}

// releasable are the pods of completion index that succeeded (every container exited 0, as the kubelet said) and
// are not being deleted, once the Job counted the index as completed.
func releasable(index int, pods []corev1.Pod, job *batchv1.Job) []PodRelease {
	if job == nil || !InIndexSet(job.Status.CompletedIndexes, index) {
		return nil
	}
	var out []PodRelease
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase != corev1.PodSucceeded || p.DeletionTimestamp != nil {
			continue
		}
		out = append(out, PodRelease{Pod: p.Name, UID: p.UID, Index: index})
	}
	return out
}

// ReleasableOfSucceededRun are the pods ReleasableShardPods releases in a sharded run already decided succeeded
// (every shard succeeded): a shard is decided on its collection and the kubelet's word once its runner ended,
// often before the Job counts its index, so the last shards' pods are released by the reconciles that follow the
// decision, as the Job counts them.
func ReleasableOfSucceededRun(pods []corev1.Pod, job *batchv1.Job) []PodRelease {
	if job == nil || job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		return nil
	}
	shards := int(ptr.Deref(job.Spec.Completions, 1))
	byIndex := PodsByShard(pods, shards)
	var out []PodRelease
	for i := KeptShardPods; i < shards; i++ {
		out = append(out, ReleasableShardPods(i, byIndex[i], job)...)
	}
	return out
}

// ShardsWithoutJob classifies the shards of a run whose Job is gone: a shard's recorded collection stands (weighed
// against nothing, its pod being gone), but succeeds only if the shard was already recorded as succeeded, that is
// decided while the kubelet's exit code of its runner was seen (recorded: status.shards); a shard without a
// collection was cancelled.
func ShardsWithoutJob(so ShardObservation, jobName string, recorded []evalsv1alpha1.ShardStatus) ShardVerdict {
	v := ShardVerdict{Shards: make([]Assessment, so.Shards)}
	for i := range so.Shards {
		var c *evalsv1alpha1.CollectionStatus
		if s := so.Sections[i]; s != nil {
			c = s.Collection
		}
		if a, ok := stoppedShard(so, i, nil, "", recorded); ok {
			v.Shards[i] = a
			continue
		}
		a, ok := FromCollection(c, nil)
		if ok && !recordedSucceeded(so, recorded, i) {
			a = WithoutRunnerExit(a, jobName)
		}
		if !ok {
			a = Assessment{State: StateFailed, Reason: evalsv1alpha1.ReasonCancelled,
				Message: fmt.Sprintf("Job %s was deleted before the shard finished", jobName)}
		}
		v.Shards[i] = a
	}
	v.Assessment = combineShards(v.Shards, so)
	v.Statuses = shardStatuses(v.Shards, so)
	return v
}

// recordedSucceeded reports whether the pod of completion index i is recorded as succeeded in status.shards.
func recordedSucceeded(so ShardObservation, recorded []evalsv1alpha1.ShardStatus, i int) bool {
	if st := recordedOf(so, recorded, i); st != nil {
		return State(st.State) == StateSucceeded
	}
	return false
}

// recordedOf is the status.shards entry of completion index i (its shard's, and in a run with trials its trial's),
// or nil.
func recordedOf(so ShardObservation, recorded []evalsv1alpha1.ShardStatus, i int) *evalsv1alpha1.ShardStatus {
	shard, trial := so.ShardTrial(i)
	for k := range recorded {
		st := &recorded[k]
		if int(st.Index) == shard && int(ptr.Deref(st.Trial, 1)) == trial {
			return st
		}
	}
	return nil
}

// runWithCollection is run with status.collection replaced by a shard's (nil when it recorded none): the view
// of the run the one-pod classification reads.
func runWithCollection(run *evalsv1alpha1.EvalRun, s *results.Section) *evalsv1alpha1.EvalRun {
	view := *run
	view.Status.Collection = nil
	view.Status.Runner = nil
	if s != nil {
		view.Status.Collection = s.Collection
	}
	return &view
}

// PodsByShard groups pods by their Job completion index; pods without a valid index are left out.
func PodsByShard(pods []corev1.Pod, shards int) map[int][]corev1.Pod {
	out := make(map[int][]corev1.Pod, shards)
	for _, p := range pods {
		i := 0
		if shards > 1 {
			n, err := strconv.Atoi(p.Annotations[podwire.AnnotationJobCompletionIndex])
			if err != nil || n < 0 || n >= shards {
				continue
			}
			i = n
		}
		out[i] = append(out[i], p)
	}
	return out
}

// jobForShard is the Job as one shard sees it: an Indexed Job is Complete for a shard whose index completed and
// Failed for one whose index failed; its deadline fails every shard that had not ended. A Job that is not
// Indexed (one shard) is itself.
func jobForShard(job *batchv1.Job, i int, name string) *batchv1.Job {
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		return job
	}
	view := *job
	view.Status.Conditions = nil
	switch failed := jobCondition(job, batchv1.JobFailed); {
	case InIndexSet(job.Status.CompletedIndexes, i):
		view.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	case InIndexSet(ptr.Deref(job.Status.FailedIndexes, ""), i):
		view.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
			Reason: batchv1.JobReasonFailedIndexes, Message: name + " failed"}}
	case failed != nil && failed.Reason == batchv1.JobReasonDeadlineExceeded:
		view.Status.Conditions = []batchv1.JobCondition{*failed}
	case failed != nil:
		// The Job failed for another reason (its global backoff limit): no pod of this shard runs any more.
		view.Status.Conditions = []batchv1.JobCondition{*failed}
	}
	return &view
}

// InIndexSet reports whether i is in an Indexed Job's index set ("1,3-5,7").
func InIndexSet(set string, i int) bool {
	for part := range strings.SplitSeq(set, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				continue
			}
		}
		if i >= a && i <= b {
			return true
		}
	}
	return false
}

// stopsOf are the pods of shard index, decided failed as a says, that are to be stopped: those that have neither
// ended nor are being deleted; without any pod listed, the pod a's runner facts name.
func stopsOf(index int, pods []corev1.Pod, a *Assessment) []PodStop {
	stop := func(name string) PodStop {
		return PodStop{Pod: name, Index: index, Reason: a.Reason, Message: textbound.PrintableHead(OneLine(a.Message), maxShardMessage)}
	}
	var out []PodStop
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
			continue
		}
		out = append(out, stop(p.Name))
	}
	if len(pods) == 0 && a.Runner != nil && a.Runner.PodName != "" {
		out = append(out, stop(a.Runner.PodName))
	}
	return out
}

// shardStopCondition is the pod's PodConditionShardStopped condition when it is set, or nil.
func shardStopCondition(pod *corev1.Pod) *corev1.PodCondition {
	c := podCondition(pod, podwire.PodConditionShardStopped)
	if c == nil || c.Status != corev1.ConditionTrue {
		return nil
	}
	return c
}

// stoppedShard is the verdict of shard index once the manager stopped it: failed with the reason (and message)
// of the stop condition on one of its pods; once its pods are gone, with the reason the Job records
// (AnnotationStoppedShards, stoppedReason) and the message status.shards recorded; without the Job, as
// status.shards recorded a shard failed for a reason only the manager decides (infrastructure, disruptions).
func stoppedShard(so ShardObservation, index int, pods []corev1.Pod, stoppedReason string, recorded []evalsv1alpha1.ShardStatus) (Assessment, bool) {
	for i := range pods {
		if c := shardStopCondition(&pods[i]); c != nil {
			return Assessment{State: StateFailed, Reason: c.Reason, Message: c.Message, Runner: runnerFacts(&pods[i])}, true
		}
	}
	rec := recordedOf(so, recorded, index)
	if rec != nil && State(rec.State) != StateFailed {
		rec = nil
	}
	switch {
	case stoppedReason != "" && rec != nil && rec.Reason == stoppedReason:
		return Assessment{State: StateFailed, Reason: rec.Reason, Message: rec.Message}, true
	case stoppedReason != "":
		return Assessment{State: StateFailed, Reason: stoppedReason,
			Message: fmt.Sprintf("the manager stopped %s (%s)", so.PodName(index), stoppedReason)}, true
	case pods == nil && rec != nil && managerDecided(rec.Reason):
		return Assessment{State: StateFailed, Reason: rec.Reason, Message: rec.Message}, true
	}
	return Assessment{}, false
}

// managerDecided reports a shard failure reason that no collection records: the manager decides it from the pods.
func managerDecided(reason string) bool {
	return reason == evalsv1alpha1.ReasonInfrastructureFailed || reason == evalsv1alpha1.ReasonDisruptionLimitExceeded
}

// ParseStoppedShards reads AnnotationStoppedShards ("<index>=<reason>,..."); entries it cannot read are left out.
func ParseStoppedShards(s string) map[int]string {
	out := map[int]string{}
	for entry := range strings.SplitSeq(s, ",") {
		index, reason, ok := strings.Cut(entry, "=")
		i, err := strconv.Atoi(index)
		if !ok || err != nil || i < 0 || reason == "" {
			continue
		}
		out[i] = reason
	}
	return out
}

// FormatStoppedShards writes AnnotationStoppedShards, in index order.
func FormatStoppedShards(m map[int]string) string {
	indexes := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(indexes))
	for k, i := range indexes {
		parts[k] = fmt.Sprintf("%d=%s", i, m[i])
	}
	return strings.Join(parts, ",")
}

// combineShards adds the shards' assessments up. A failure every shard would meet alike ends the run at once
// (its Job stopped). Otherwise the run is in progress until every shard has ended; then it succeeded if every
// shard did, and failed with the most fundamental of its shards' reasons otherwise.
func combineShards(shards []Assessment, so ShardObservation) Assessment {
	n := len(shards)
	var out Assessment
	done, failed := 0, 0
	var firstActive *Assessment
	var activeIndex int
	var recheck time.Duration
	for i := range shards {
		a := &shards[i]
		if a.State == StateFailed && outcome.RunFatal(a.Reason) && a.StopJob {
			return Assessment{State: StateFailed, Reason: a.Reason, StopJob: true,
				Message: textbound.Head(fmt.Sprintf("%s: %s", so.PodName(i), a.Message), MaxConditionMessage)}
		}
		if out.RetryPod == "" {
			out.RetryPod, out.RetryIndex = a.RetryPod, a.RetryIndex
		}
		if out.JudgeImageID == "" {
			out.JudgeImageID = a.JudgeImageID
		}
		// A shard decided while its pods still run or wait (a runner past its timeouts, results that never came,
		// pods that never ran or kept being taken away): stop those pods only.
		out.StopPods = append(out.StopPods, a.StopPods...)
		switch {
		case a.State.Terminal():
			done++
			if a.State == StateFailed {
				failed++
			}
		default:
			if firstActive == nil || stateRank(a.State) > stateRank(firstActive.State) {
				firstActive, activeIndex = a, i
			}
			if a.RecheckAfter > 0 && (recheck == 0 || a.RecheckAfter < recheck) {
				recheck = a.RecheckAfter
			}
		}
	}
	if firstActive != nil {
		out.State, out.Reason, out.RecheckAfter = firstActive.State, firstActive.Reason, recheck
		msg := fmt.Sprintf("%d of %d %s finished (%d failed); %s: %s", done, n, so.pods(), failed, so.PodName(activeIndex), firstActive.Message)
		out.Message = textbound.Head(msg, MaxConditionMessage)
		return out
	}
	if failed == 0 {
		out.State, out.Reason = StateSucceeded, evalsv1alpha1.ReasonCompleted
		out.Message = fmt.Sprintf("all %d %s completed", n, so.pods())
		if n == 1 {
			out.Message = shards[0].Message
		}
		return out
	}
	worst := -1
	for i := range shards {
		if shards[i].State == StateFailed && (worst < 0 || outcome.Worse(shards[i].Reason, shards[worst].Reason)) {
			worst = i
		}
	}
	out.State, out.Reason = StateFailed, shards[worst].Reason
	out.Message = textbound.Head(fmt.Sprintf("%d of %d %s failed; %s: %s", failed, n, so.pods(), so.PodName(worst), shards[worst].Message),
		MaxConditionMessage)
	return out
}

// stateRank orders the in-progress states by how far a shard got: the run shows its most advanced shard.
func stateRank(s State) int {
	switch s {
	case StateCollecting:
		return 3
	case StateRunning:
		return 2
	case StateQueued:
		return 1
	}
	return 0
}

// shardStatuses are the status entries of the shards: failed first, then in progress, then succeeded, each group
// in index order, at most evalsv1alpha1.MaxStatusShards (the caller counts the rest).
func shardStatuses(shards []Assessment, so ShardObservation) []evalsv1alpha1.ShardStatus {
	out := make([]evalsv1alpha1.ShardStatus, len(shards))
	for i, a := range shards {
		shard, trial := so.ShardTrial(i)
		lo, hi := podwire.ShardRange(so.Cases, so.CaseShards(), shard)
		st := evalsv1alpha1.ShardStatus{Index: int32(shard), Cases: int32(hi - lo), State: string(a.State), Reason: a.Reason,
			Message: textbound.PrintableHead(OneLine(a.Message), maxShardMessage)}
		if so.trials() > 1 {
			st.Trial = ptr.To(int32(trial))
		}
		if a.Runner != nil {
			st.PodName = a.Runner.PodName
			st.ImageID = a.Runner.ImageID
		}
		if s := so.Sections[i]; s != nil && s.Summary != nil {
			sum := s.Summary
			st.Cases = sum.Total
			st.Passed, st.Failed, st.Errored, st.Missing, st.ParseErrors = sum.Passed, sum.Failed, sum.Errored, sum.Missing, sum.ParseErrors
			st.MissingIDs = slices.Clone(s.MissingIDs[:min(len(s.MissingIDs), evalsv1alpha1.MaxShardMissingIDs)])
			st.Cost = s.Cost.DeepCopy()
			if st.PodName == "" && s.Collection != nil {
				st.PodName = s.Collection.PodName
			}
		}
		out[i] = st
	}
	group := func(st evalsv1alpha1.ShardStatus) int {
		switch State(st.State) {
		case StateFailed:
			return 0
		case StateSucceeded:
			return 2
		}
		return 1
	}
	slices.SortStableFunc(out, func(a, b evalsv1alpha1.ShardStatus) int { return group(a) - group(b) })
	return out
}

// ShardingStatus is status.sharding for the shards' entries (all of them: with trials, one per trial of each shard),
// and the bounded status.shards.
func ShardingStatus(all []evalsv1alpha1.ShardStatus) (*evalsv1alpha1.ShardingStatus, []evalsv1alpha1.ShardStatus) {
	s := &evalsv1alpha1.ShardingStatus{Split: SplitContiguous}
	for _, st := range all {
		if ptr.Deref(st.Trial, 1) == 1 {
			// One entry of each shard is its first trial (or the shard, without trials).
			s.Shards++
		}
		switch State(st.State) {
		case StateSucceeded:
			s.Succeeded++
		case StateFailed:
			s.Failed++
		}
	}
	listed := all
	if len(listed) > evalsv1alpha1.MaxStatusShards {
		listed = listed[:evalsv1alpha1.MaxStatusShards]
		s.OmittedShards = int32(len(all) - evalsv1alpha1.MaxStatusShards)
	}
	return s, slices.Clone(listed)
}

// ShardOf is the shard holding case index of n cases split into shards (podwire.ShardRange).
func ShardOf(index, n, shards int) int {
	if shards <= 1 || n <= 0 {
		return 0
	}
	k := min(index*shards/n, shards-1)
	for k+1 < shards && (k+1)*n/shards <= index {
		k++
	}
	for k > 0 && k*n/shards > index {
		k--
	}
	return k
}
