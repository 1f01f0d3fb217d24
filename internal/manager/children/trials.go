package children

import (
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// RunTrials are a run's trials as the manager runs them (EffectiveTrials).
type RunTrials struct {
	// Count is the number of trials of every case, at least 1.
	Count int
	// PassRate is the least share of its trials a case must pass, spelled as spec.trials.passRate is.
	PassRate string
	// Source is where Count and PassRate came from: Spec or EvalFile; "" for a run that sets no trials and whose
	// eval file has none (one trial), and for a re-judge (its trials are its source run's).
	Source evalsv1alpha1.TrialsSource
}

// EffectiveTrials decides a run's trials, the one place that does (docs/design/trials.md): spec.trials when set
// (its count and passRate, each with its default), else the eval file's own (file: an AgentV 4.42 suite's
// execution.trials, nil when it has none), else one trial. A re-judge's trials are its source run's, which the
// re-judge's plan puts into the run its run.json is built from (collect.RejudgeConfigRun): for a re-judge only
// spec.trials counts, never its eval file's, and the source is "".
//
// The decision is made when the run's eval file is pinned; a later reconcile makes it again from what the run
// recorded of its eval file's trials (JobTrials, PinnedTrials), the spec being immutable while the run is in
// progress.
func EffectiveTrials(run *evalsv1alpha1.EvalRun, file *evalfile.FileTrials) RunTrials {
	out := RunTrials{Count: int(evalsv1alpha1.DefaultTrials), PassRate: evalsv1alpha1.DefaultTrialsPassRate}
	switch t := run.Spec.Trials; {
	case t != nil:
		out.Count = max(int(ptr.Deref(t.Count, evalsv1alpha1.DefaultTrials)), 1)
		out.PassRate = ptr.Deref(t.PassRate, evalsv1alpha1.DefaultTrialsPassRate)
		if run.Spec.Rejudge == nil {
			out.Source = evalsv1alpha1.TrialsSourceSpec
		}
	case FileTrialsCount(run) && file != nil && file.Count > 1:
		out.Count, out.PassRate, out.Source = file.Count, file.PassRate, evalsv1alpha1.TrialsSourceEvalFile
	}
	return out
}

// FileTrialsCount reports whether the eval file's own trials would be the run's (EffectiveTrials): its spec sets
// no trials and it is not a re-judge.
func FileTrialsCount(run *evalsv1alpha1.EvalRun) bool {
	return run.Spec.Trials == nil && run.Spec.Rejudge == nil
}

// RunWithTrials returns run as the manager runs it with trials t: when t are the eval file's, a shallow copy whose
// spec.trials says them (everything else shared with run, which is not changed); otherwise run itself. What reads
// a run's trials from its spec (Trials, TrialRule, ManagerMerges, and internal/manager/collect) is given this run.
func RunWithTrials(run *evalsv1alpha1.EvalRun, t RunTrials) *evalsv1alpha1.EvalRun {
	if t.Source != evalsv1alpha1.TrialsSourceEvalFile {
		return run
	}
	out := *run
	out.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To(int32(t.Count)), PassRate: ptr.To(t.PassRate)}
	return &out
}

// JobTrials is EffectiveTrials for a run whose Job is job (none: nil): the run's count the Job records
// (podwire.AnnotationTrials) is its eval file's when the eval file's trials count (FileTrialsCount), since neither
// its spec nor a re-judge's source gave it. An eval file's trials are always AgentV's pass_at_k (the reader refuses
// every other strategy), so their count is all the Job needs to record.
func JobTrials(run *evalsv1alpha1.EvalRun, job *batchv1.Job) RunTrials {
	var file *evalfile.FileTrials
	if job != nil {
		if n, err := strconv.Atoi(job.Annotations[podwire.AnnotationTrials]); err == nil && n > 1 && n <= evalfile.MaxTrials {
			file = evalfile.TrialsPassAtK(n)
		}
	}
	return EffectiveTrials(run, file)
}

// PinnedTrials is EffectiveTrials for a run whose pinned run.json is cfg: its eval file's trials are those run.json
// records (Trials with TrialsSource EvalFile).
func PinnedTrials(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig) RunTrials {
	var file *evalfile.FileTrials
	if cfg.TrialsSource == string(evalsv1alpha1.TrialsSourceEvalFile) {
		file = evalfile.TrialsPassAtK(int(cfg.Trials))
	}
	return EffectiveTrials(run, file)
}

// CheckFileTrials makes the check admission makes on spec.trials for a run whose trials t are its eval file's
// (file; "" for any other trials, which admission checked): spec.sharding.shards times the count at most the API's
// bound on a Job's pods (MaxPods), the shards being the spec's, as admission counts them, even when the run has
// fewer cases than shards. It says what is wrong, naming both numbers, or "".
func CheckFileTrials(run *evalsv1alpha1.EvalRun, t RunTrials, file *evalfile.FileTrials) string {
	if t.Source != evalsv1alpha1.TrialsSourceEvalFile {
		return ""
	}
	count := fmt.Sprintf("the eval file's execution.trials.count %d", t.Count)
	if file != nil && file.Line > 0 {
		count += fmt.Sprintf(" (line %d)", file.Line)
	}
	if shards := specShards(run); shards*t.Count > evalsv1alpha1.MaxPods {
		return fmt.Sprintf("spec.sharding.shards %d times %s is %d pods, above %d: each trial of each shard is a pod of "+
			"the run's Job; lower the shards, or set spec.trials (which wins over the eval file's trials)", shards, count,
			shards*t.Count, evalsv1alpha1.MaxPods)
	}
	return ""
}
