package assess

import (
	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Event actions.
const (
	actionProgress = "Progress"
	actionFinish   = "Finish"
	actionJudge    = "Judge"
	actionCompare  = "Compare"
	actionRun      = "Run"
)

// eventEvalFileViewFull is the reason of the Warning event of a run whose runner reads the whole eval file.
const eventEvalFileViewFull = "EvalFileViewFull"

// eventJudgeImageIsTarget is the reason of the Warning event of a run whose code judges run in the runner's own
// image (spec.judging.image set to spec.target.image).
const eventJudgeImageIsTarget = "JudgeImageIsTarget"

// Event is one event to emit for a status transition.
type Event struct {
	Type, Reason, Action, Note string
}

// Transitions returns the events for the change from the run's current status to desired: one when the
// Succeeded condition's reason or status changes, one when the Passed condition's status changes, one when the
// comparison with the baseline is decided, and a Warning when the status first records that the runner reads the
// whole eval file (spec.target.evalFileView Full) or that the code judges run in the runner's image (status.judgeImage
// source Target).
func Transitions(run *evalsv1alpha1.EvalRun, desired *evalsv1alpha1.EvalRunStatus) []Event {
	var out []Event
	if ptr.Deref(desired.EvalFileView, "") == evalsv1alpha1.EvalFileViewFull && ptr.Deref(run.Status.EvalFileView, "") != evalsv1alpha1.EvalFileViewFull {
		out = append(out, Event{Type: corev1.EventTypeWarning, Reason: eventEvalFileViewFull, Action: actionRun,
			Note: "spec.target.evalFileView is Full: the runner reads the whole eval file, expected answers, rubrics " +
				"and judge scripts included, so its verdicts do not show it could not see them"})
	}
	if j := desired.JudgeImage; j != nil && j.Source == evalsv1alpha1.JudgeImageSourceTarget &&
		(run.Status.JudgeImage == nil || run.Status.JudgeImage.Source != evalsv1alpha1.JudgeImageSourceTarget) {
		out = append(out, Event{Type: corev1.EventTypeWarning, Reason: eventJudgeImageIsTarget, Action: actionRun,
			Note: "spec.judging.image is the runner's image " + j.Image + ": the code_judge scripts run in the image the " +
				"evaluated team controls, whose python3, sh and tools can print any verdict; unset judging.image to judge " +
				"in the manager's judge image"})
	}
	before := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionSucceeded)
	after := meta.FindStatusCondition(desired.Conditions, evalsv1alpha1.ConditionSucceeded)
	if after != nil && (before == nil || before.Reason != after.Reason || before.Status != after.Status) {
		e := Event{Type: corev1.EventTypeNormal, Reason: after.Reason, Action: actionProgress, Note: after.Message}
		switch after.Status {
		case metav1.ConditionTrue:
			e.Action = actionFinish
		case metav1.ConditionFalse:
			e.Type, e.Action = corev1.EventTypeWarning, actionFinish
		}
		out = append(out, e)
	}
	beforeP := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionPassed)
	afterP := meta.FindStatusCondition(desired.Conditions, evalsv1alpha1.ConditionPassed)
	if afterP != nil && (beforeP == nil || beforeP.Status != afterP.Status) {
		e := Event{Type: corev1.EventTypeNormal, Reason: afterP.Reason, Action: actionJudge, Note: afterP.Message}
		if afterP.Status != metav1.ConditionTrue {
			e.Type = corev1.EventTypeWarning
		}
		out = append(out, e)
	}
	beforeC := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionCodeJudgesConfined)
	afterC := meta.FindStatusCondition(desired.Conditions, evalsv1alpha1.ConditionCodeJudgesConfined)
	if afterC != nil && afterC.Status == metav1.ConditionFalse && (beforeC == nil || beforeC.Reason != afterC.Reason) {
		// Scripts ran with more reach than the judge runner's ruleset gives: say so, once.
		out = append(out, Event{Type: corev1.EventTypeWarning, Reason: afterC.Reason, Action: actionJudge, Note: afterC.Message})
	}
	beforeR := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionRegressed)
	afterR := meta.FindStatusCondition(desired.Conditions, evalsv1alpha1.ConditionRegressed)
	if afterR != nil && afterR.Reason != evalsv1alpha1.ReasonBaselinePending && (beforeR == nil || beforeR.Reason != afterR.Reason) {
		e := Event{Type: corev1.EventTypeNormal, Reason: afterR.Reason, Action: actionCompare, Note: afterR.Message}
		if afterR.Status != metav1.ConditionFalse {
			e.Type = corev1.EventTypeWarning
		}
		out = append(out, e)
	}
	return out
}
