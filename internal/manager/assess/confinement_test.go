package assess

import (
	"time"

	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

func TestConfinementCondition(t *testing.T) {
	if c := ConfinementCondition(nil); c != nil {
		t.Errorf("no code judge ran, condition %+v", c)
	}
	for abi, want := range map[int32]struct {
		status metav1.ConditionStatus
		reason string
	}{
		0: {metav1.ConditionFalse, evalsv1alpha1.ReasonLandlockUnavailable},
		3: {metav1.ConditionFalse, evalsv1alpha1.ReasonLandlockPartial},
		5: {metav1.ConditionFalse, evalsv1alpha1.ReasonLandlockPartial},
		6: {metav1.ConditionTrue, evalsv1alpha1.ReasonLandlockConfined},
		7: {metav1.ConditionTrue, evalsv1alpha1.ReasonLandlockConfined},
	} {
		c := ConfinementCondition(ptr.To(abi))
		if c == nil || c.Type != evalsv1alpha1.ConditionCodeJudgesConfined || c.Status != want.status || c.Reason != want.reason || c.Message == "" {
			t.Errorf("ABI %d: %+v, want %s %s", abi, c, want.status, want.reason)
		}
	}
	// The lowest of the shards decides: one unconfined shard makes the run's condition False.
	sections := map[int]*results.Section{
		0: {Collection: &evalsv1alpha1.CollectionStatus{CodeJudgeLandlockABI: ptr.To[int32](7)}},
		1: {Collection: &evalsv1alpha1.CollectionStatus{CodeJudgeLandlockABI: ptr.To[int32](0)}},
		2: {Collection: &evalsv1alpha1.CollectionStatus{}},
		3: nil,
	}
	if got := LowestLandlockABI(sections); got == nil || *got != 0 {
		t.Errorf("lowest %v, want 0", got)
	}
}

// An unconfined run gets its condition and one Warning event; a confined one no event.
func TestConfinementEvent(t *testing.T) {
	run := testutil.UnitRun()
	run.Status.Collection = &evalsv1alpha1.CollectionStatus{CodeJudgeLandlockABI: ptr.To[int32](0)}
	a := Assessment{State: StateSucceeded, Reason: evalsv1alpha1.ReasonCompleted}
	desired := DesiredManagerStatus(run, a, StatusFacts{}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	var warned bool
	for _, e := range Transitions(run, &desired) {
		if e.Reason == evalsv1alpha1.ReasonLandlockUnavailable {
			warned = e.Type == "Warning"
		}
	}
	if !warned {
		t.Errorf("no Warning event LandlockUnavailable in %+v", Transitions(run, &desired))
	}
	run.Status.Collection.CodeJudgeLandlockABI = ptr.To[int32](7)
	desired = DesiredManagerStatus(run, a, StatusFacts{}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	for _, e := range Transitions(run, &desired) {
		if e.Reason == evalsv1alpha1.ReasonLandlockConfined {
			t.Errorf("an event for a confined run: %+v", e)
		}
	}
}
