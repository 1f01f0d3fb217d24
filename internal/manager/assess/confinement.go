package assess

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// Landlock ABIs from which the judge runner's ruleset confines TCP and then signals and abstract unix sockets.
const (
	landlockNetABI   = 4
	landlockScopeABI = 6
)

// ConfinementCondition is the CodeJudgesConfined condition for the lowest Landlock ABI the run's judge containers
// confined their scripts with; nil when no code judge reported one (none ran). Pure.
func ConfinementCondition(abi *int32) *metav1.Condition {
	if abi == nil {
		return nil
	}
	c := &metav1.Condition{Type: evalsv1alpha1.ConditionCodeJudgesConfined}
	switch v := *abi; {
	case v <= 0:
		c.Status, c.Reason = metav1.ConditionFalse, evalsv1alpha1.ReasonLandlockUnavailable
		c.Message = "a node's kernel has no Landlock: code_judge scripts (and the answers they ran) ran unconfined, " +
			"with the judge container's mounts (every case's answer key) and the pod's network"
	case v < landlockNetABI:
		c.Status, c.Reason = metav1.ConditionFalse, evalsv1alpha1.ReasonLandlockPartial
		c.Message = fmt.Sprintf("Landlock ABI %d: code_judge scripts could read only their own case's files, but could open TCP "+
			"connections and signal processes outside (ABI %d and %d confine those)", v, landlockNetABI, landlockScopeABI)
	case v < landlockScopeABI:
		c.Status, c.Reason = metav1.ConditionFalse, evalsv1alpha1.ReasonLandlockPartial
		c.Message = fmt.Sprintf("Landlock ABI %d: code_judge scripts could read only their own case's files and open no TCP "+
			"connection, but could signal processes and reach abstract unix sockets outside (ABI %d confines those)", v, landlockScopeABI)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, evalsv1alpha1.ReasonLandlockConfined
		c.Message = fmt.Sprintf("code_judge scripts ran under Landlock ABI %d: their own case's files, no TCP, no signal outside", v)
	}
	return c
}

// LowestLandlockABI is the lowest Landlock ABI the shards' collections report; nil when none does.
func LowestLandlockABI(sections map[int]*results.Section) *int32 {
	var out *int32
	for _, s := range sections {
		if s == nil || s.Collection == nil || s.Collection.CodeJudgeLandlockABI == nil {
			continue
		}
		if v := *s.Collection.CodeJudgeLandlockABI; out == nil || v < *out {
			out = ptr.To(v)
		}
	}
	return out
}
