package assess

import (
	"fmt"
	"math/big"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/statusapply"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// StatusFacts are the manager's observations that are not part of the classification.
type StatusFacts struct {
	JobName           string
	StartTime         *metav1.Time
	CompletionTime    *metav1.Time
	EvalFileSHA256    string
	EvalConfigMapName string
	// BundleSHA256 is the pinned eval bundle's digest, for a run whose eval file comes from a bundle.
	BundleSHA256 string
	// EvalFileView is what the runner reads at {EVAL_FILE} (run.json's, as the pod got it).
	EvalFileView evalsv1alpha1.EvalFileView
	Sharding     *evalsv1alpha1.ShardingStatus
	Shards       []evalsv1alpha1.ShardStatus
	Resume       *evalsv1alpha1.ResumeStatus
	// Baseline is the comparison with spec.baseline's run, and Regressed its condition (without its time), when
	// this reconcile decided them.
	Baseline  *evalsv1alpha1.BaselineComparison
	Regressed *metav1.Condition
	// ActiveDeadline is the Job's deadline and where it came from.
	ActiveDeadline *evalsv1alpha1.ActiveDeadline
	// Queue is Kueue's view of the run's Job (spec.queueName set).
	Queue *evalsv1alpha1.QueueStatus
	// JudgeImage is run.json's judge image and its source (JudgeImageFacts), with the imageID the status has.
	JudgeImage *evalsv1alpha1.JudgeImageStatus
	// CodeJudgeLandlockABI is the lowest Landlock ABI the shards' collections report (a sharded or resumed run);
	// a one-pod run's is status.collection's.
	CodeJudgeLandlockABI *int32
}

// JudgeImageFacts is status.judgeImage as run.json decides it (nil without code judges), keeping the imageID
// the status already has: the kubelet's report is added by DesiredManagerStatus.
func JudgeImageFacts(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig) *evalsv1alpha1.JudgeImageStatus {
	if !cfg.CodeJudges || cfg.CodeJudgeImage == "" {
		return nil
	}
	out := &evalsv1alpha1.JudgeImageStatus{Image: cfg.CodeJudgeImage, Source: evalsv1alpha1.JudgeImageSource(cfg.CodeJudgeImageSource)}
	if out.Source == "" {
		out.Source = evalsv1alpha1.JudgeImageSourceSpec // a run.json from before the judge image's source was recorded
	}
	if j := run.Status.JudgeImage; j != nil && j.Image == out.Image {
		out.ImageID = j.ImageID
	}
	return out
}

// TerminalAssessment returns the run's recorded terminal outcome, if its Succeeded condition is True or False.
// A finished run keeps its outcome: later observations never change it.
func TerminalAssessment(run *evalsv1alpha1.EvalRun) (Assessment, bool) {
	c := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionSucceeded)
	if c == nil || c.Status == metav1.ConditionUnknown {
		return Assessment{}, false
	}
	state := StateFailed
	if c.Status == metav1.ConditionTrue {
		state = StateSucceeded
	}
	return Assessment{State: state, Reason: c.Reason, Message: c.Message, Runner: run.Status.Runner.DeepCopy()}, true
}

// DesiredManagerStatus returns the manager's part of the status for the assessment a and facts f: only the fields
// the manager owns (statusapply.Manager) are set. Condition transition times are kept from the current status
// when a condition's status does not change; now is used otherwise.
func DesiredManagerStatus(run *evalsv1alpha1.EvalRun, a Assessment, f StatusFacts, now time.Time) evalsv1alpha1.EvalRunStatus {
	stamp := metav1.NewTime(now.UTC().Truncate(time.Second))
	out := evalsv1alpha1.EvalRunStatus{
		ObservedGeneration: run.Generation,
		JobName:            f.JobName,
		StartTime:          f.StartTime,
		EvalFileSHA256:     f.EvalFileSHA256,
		EvalConfigMapName:  f.EvalConfigMapName,
		Runner:             a.Runner,
		JudgeImage:         f.JudgeImage.DeepCopy(),
		Sharding:           f.Sharding,
		Shards:             f.Shards,
		Resume:             f.Resume,
		Baseline:           f.Baseline,
		Attempt:            DesiredAttempt(run),
		PreviousAttempts:   run.Status.PreviousAttempts,
		ActiveDeadline:     f.ActiveDeadline,
		Queue:              f.Queue,
	}
	if f.EvalFileView != "" {
		out.EvalFileView = ptr.To(f.EvalFileView)
	}
	if out.JudgeImage != nil && a.JudgeImageID != "" {
		out.JudgeImage.ImageID = ptr.To(a.JudgeImageID)
	}
	if f.BundleSHA256 != "" {
		out.BundleSHA256 = ptr.To(f.BundleSHA256)
	}
	// Only the manager's conditions: the others' stay out of the desired status.
	var conds []metav1.Condition
	for _, t := range statusapply.ManagerConditionTypes {
		if c := meta.FindStatusCondition(run.Status.Conditions, t); c != nil {
			conds = append(conds, *c)
		}
	}
	set := func(t string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&conds, metav1.Condition{
			Type: t, Status: status, Reason: reason, Message: textbound.PrintableHead(msg, MaxConditionMessage),
			ObservedGeneration: run.Generation, LastTransitionTime: stamp,
		})
	}
	queued := metav1.ConditionFalse
	if a.State == StateQueued {
		queued = metav1.ConditionTrue
	}
	set(evalsv1alpha1.ConditionQueued, queued, a.Reason, a.Message)
	switch a.State {
	case StateSucceeded, StateFailed:
		succeeded, stalled := metav1.ConditionTrue, metav1.ConditionFalse
		if a.State == StateFailed {
			succeeded, stalled = metav1.ConditionFalse, metav1.ConditionTrue
		}
		set(evalsv1alpha1.ConditionReconciling, metav1.ConditionFalse, a.Reason, a.Message)
		set(evalsv1alpha1.ConditionStalled, stalled, a.Reason, a.Message)
		set(evalsv1alpha1.ConditionSucceeded, succeeded, a.Reason, a.Message)
		if f.Regressed != nil {
			set(f.Regressed.Type, f.Regressed.Status, f.Regressed.Reason, f.Regressed.Message)
		} else if run.Spec.Baseline != nil && meta.FindStatusCondition(conds, evalsv1alpha1.ConditionRegressed) == nil {
			set(evalsv1alpha1.ConditionRegressed, metav1.ConditionUnknown, evalsv1alpha1.ReasonBaselinePending,
				"comparing with baseline EvalRun "+BaselineName(run))
		}
		passed := PassedCondition(run, meta.FindStatusCondition(conds, evalsv1alpha1.ConditionRegressed))
		set(passed.Type, passed.Status, passed.Reason, passed.Message)
		if b := BudgetCondition(run); b != nil {
			set(b.Type, b.Status, b.Reason, b.Message)
		}
		abi := f.CodeJudgeLandlockABI
		if abi == nil && run.Status.Collection != nil {
			abi = run.Status.Collection.CodeJudgeLandlockABI
		}
		if c := ConfinementCondition(abi); c != nil {
			set(c.Type, c.Status, c.Reason, c.Message)
		}
		out.CompletionTime = run.Status.CompletionTime
		if out.CompletionTime == nil {
			out.CompletionTime = f.CompletionTime
		}
		if out.CompletionTime == nil {
			out.CompletionTime = &stamp
		}
	default:
		set(evalsv1alpha1.ConditionReconciling, metav1.ConditionTrue, a.Reason, a.Message)
		set(evalsv1alpha1.ConditionStalled, metav1.ConditionFalse, a.Reason, a.Message)
		set(evalsv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, a.Reason, a.Message)
		meta.RemoveStatusCondition(&conds, evalsv1alpha1.ConditionPassed)
		meta.RemoveStatusCondition(&conds, evalsv1alpha1.ConditionRegressed)
		meta.RemoveStatusCondition(&conds, evalsv1alpha1.ConditionBudgetExceeded)
	}
	for _, t := range statusapply.ManagerConditionTypes {
		if c := meta.FindStatusCondition(conds, t); c != nil {
			out.Conditions = append(out.Conditions, *c)
		}
	}
	return out
}

// ProgressOnly reports whether desired differs from the run's status only in what shows a run's progress within
// one state: the conditions' messages (every manager condition keeps its status and reason), status.runner's
// pod, reason, message and image (never its exit code, the kubelet's word on how the runner ended),
// status.queue and the judge image's imageID. Such a change may wait (ProgressStatusWait); any other, a terminal
// state among them, is written at once.
func ProgressOnly(run *evalsv1alpha1.EvalRun, desired *evalsv1alpha1.EvalRunStatus) bool {
	if desired.Runner != nil && desired.Runner.ExitCode != nil &&
		(run.Status.Runner == nil || !ptr.Equal(run.Status.Runner.ExitCode, desired.Runner.ExitCode)) {
		return false
	}
	kept := desired.DeepCopy()
	kept.Runner = run.Status.Runner.DeepCopy()
	kept.Queue = run.Status.Queue.DeepCopy()
	if kept.JudgeImage != nil && run.Status.JudgeImage != nil && kept.JudgeImage.Image == run.Status.JudgeImage.Image {
		kept.JudgeImage.ImageID = run.Status.JudgeImage.ImageID
	}
	for i := range kept.Conditions {
		c := &kept.Conditions[i]
		if was := meta.FindStatusCondition(run.Status.Conditions, c.Type); was != nil && was.Status == c.Status && was.Reason == c.Reason {
			c.Message = was.Message
		}
	}
	return !StatusChanged(run, kept)
}

// ProgressStatusWait is how long a change of a run's progress waits before it is written, when the manager last
// wrote the run's status at last: nothing once interval has passed (or it never wrote it), else the rest of the
// interval. The reconcile that comes then writes the progress of that time, so the steps of a pod's start that
// follow each other within an interval (pending, starting, running) cost one write, not one each.
func ProgressStatusWait(last, now time.Time, interval time.Duration) time.Duration {
	if last.IsZero() {
		return 0
	}
	return max(0, last.Add(interval).Sub(now))
}

// StatusChanged reports whether desired differs from the manager-owned fields of the run's status: whether
// applying it would change them. Both are compared as the manager applies them (statusapply.Manager).
func StatusChanged(run *evalsv1alpha1.EvalRun, desired *evalsv1alpha1.EvalRunStatus) bool {
	return !equality.Semantic.DeepEqual(statusapply.Manager(&run.Status), statusapply.Manager(desired))
}

// PassedCondition evaluates spec.successPolicy against status.summary: the pass rate (passed / total, missing
// cases and the cases the LLM judging budget left unjudged counting as not passed) must reach minPassRate
// (default 1) and, when set, the mean score must reach minMeanScore, with each case the budget left unjudged
// scored 0 (a run whose budget left cases unjudged meets the policy only if those cases could not have changed
// the answer). With regression: Fail, the run must also not have regressed against its baseline (regressed is
// the Regressed condition, nil while not decided): Passed is Unknown while the comparison waits.
func PassedCondition(run *evalsv1alpha1.EvalRun, regressed *metav1.Condition) metav1.Condition {
	cond := policyCondition(run)
	p := run.Spec.SuccessPolicy
	if run.Spec.Baseline == nil || p == nil || p.Regression == nil || *p.Regression != evalsv1alpha1.RegressionFail {
		return cond
	}
	switch {
	case regressed == nil || regressed.Reason == evalsv1alpha1.ReasonBaselinePending:
		cond.Status, cond.Reason = metav1.ConditionUnknown, evalsv1alpha1.ReasonBaselinePending
		cond.Message += "; waiting for the comparison with baseline EvalRun " + BaselineName(run)
	case regressed.Status == metav1.ConditionTrue:
		cond.Status, cond.Reason = metav1.ConditionFalse, evalsv1alpha1.ReasonPolicyNotMet
		cond.Message += "; regressed against baseline EvalRun " + BaselineName(run) + ": " + regressed.Message
	case regressed.Status != metav1.ConditionFalse:
		cond.Status, cond.Reason = metav1.ConditionFalse, evalsv1alpha1.ReasonPolicyNotMet
		cond.Message += "; not compared with baseline EvalRun " + BaselineName(run) + ": " + regressed.Message
	}
	cond.Message = textbound.PrintableHead(cond.Message, MaxConditionMessage)
	return cond
}

// BaselineName is spec.baseline's run name.
func BaselineName(run *evalsv1alpha1.EvalRun) string {
	if run.Spec.Baseline == nil || run.Spec.Baseline.RunName == nil {
		return ""
	}
	return *run.Spec.Baseline.RunName
}

// policyCondition evaluates the pass rate and mean score bars of spec.successPolicy.
func policyCondition(run *evalsv1alpha1.EvalRun) metav1.Condition {
	cond := metav1.Condition{Type: evalsv1alpha1.ConditionPassed, Status: metav1.ConditionFalse}
	sum := run.Status.Summary
	if sum == nil || sum.Total <= 0 {
		cond.Reason, cond.Message = evalsv1alpha1.ReasonNoResults, "no judged results were recorded"
		return cond
	}
	minRate, minMean := evalsv1alpha1.DefaultMinPassRate, ""
	if p := run.Spec.SuccessPolicy; p != nil {
		if p.MinPassRate != "" {
			minRate = p.MinPassRate
		}
		minMean = p.MinMeanScore
	}
	rate := big.NewRat(int64(sum.Passed), int64(sum.Total))
	wantRate, ok := new(big.Rat).SetString(minRate)
	if !ok {
		cond.Reason, cond.Message = evalsv1alpha1.ReasonPolicyNotMet, fmt.Sprintf("successPolicy.minPassRate %q is not a decimal", minRate)
		return cond
	}
	cond.Message = fmt.Sprintf("%d of %d cases passed (pass rate %s, required %s)", sum.Passed, sum.Total, rate.FloatString(4), minRate)
	met := rate.Cmp(wantRate) >= 0
	if minMean != "" {
		wantMean, okWant := new(big.Rat).SetString(minMean)
		mean, okMean := new(big.Rat).SetString(sum.MeanScore)
		cond.Message += fmt.Sprintf("; mean score %s", orNone(sum.MeanScore))
		if unjudged, judged := int64(sum.UnjudgedByBudget()), int64(sum.Passed)+int64(sum.Failed); okMean && unjudged > 0 {
			// The mean covers the judged cases; the cases the budget left unjudged could have pulled it down:
			// the bar holds only if it holds with each of them scored 0.
			mean.Mul(mean, big.NewRat(judged, judged+unjudged))
			cond.Message += fmt.Sprintf(" (%s with the cases the budget left unjudged scored 0)", mean.FloatString(4))
		}
		cond.Message += ", required " + minMean
		met = met && okWant && okMean && mean.Cmp(wantMean) >= 0
	}
	if n := sum.UnjudgedByBudget(); n > 0 {
		// Their verdict is Error, so the pass rate already counts them as not passed.
		cond.Message += fmt.Sprintf("; %d cases were left unjudged by the LLM judging budget (spec.judging.llm) and count as not passed", n)
	}
	cond.Reason = evalsv1alpha1.ReasonPolicyNotMet
	if met {
		cond.Status, cond.Reason = metav1.ConditionTrue, evalsv1alpha1.ReasonPolicyMet
	}
	return cond
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// StatusFactsFrom returns the facts already recorded in the run's status.
func StatusFactsFrom(run *evalsv1alpha1.EvalRun) StatusFacts {
	s := run.Status
	return StatusFacts{JobName: s.JobName, StartTime: s.StartTime, CompletionTime: s.CompletionTime,
		EvalFileSHA256: s.EvalFileSHA256, EvalConfigMapName: s.EvalConfigMapName, EvalFileView: ptr.Deref(s.EvalFileView, ""),
		BundleSHA256: ptr.Deref(s.BundleSHA256, ""), Queue: s.Queue,
		Sharding: s.Sharding, Shards: s.Shards, Resume: s.Resume, Baseline: s.Baseline, ActiveDeadline: s.ActiveDeadline,
		JudgeImage: s.JudgeImage}
}
