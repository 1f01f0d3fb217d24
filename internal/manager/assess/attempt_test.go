package assess

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// TestNewAttemptStatus: a new attempt's status holds the attempt, the finished one's record first in the
// history (bounded, the oldest dropped) and the conditions in progress; nothing of the finished attempt's results.
func TestNewAttemptStatus(t *testing.T) {
	started := metav1.NewTime(time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC))
	ended := metav1.NewTime(started.Add(time.Hour))
	now := metav1.NewTime(started.Add(2 * time.Hour))
	older := func(n int) []evalsv1alpha1.AttemptRecord {
		out := make([]evalsv1alpha1.AttemptRecord, n)
		for i := range out {
			out[i] = evalsv1alpha1.AttemptRecord{Number: int32(n - i), Trigger: evalsv1alpha1.AttemptSpecChanged}
		}
		return out
	}
	finished := func(history []evalsv1alpha1.AttemptRecord) *evalsv1alpha1.EvalRun {
		return testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
			r.Generation = 4
			r.Annotations = map[string]string{AnnotationRerun: "again"}
			r.Status = evalsv1alpha1.EvalRunStatus{
				Attempt:        &evalsv1alpha1.Attempt{Number: int32(len(history) + 1), Trigger: evalsv1alpha1.AttemptCreated, Rerun: ptr.To("once")},
				StartTime:      &started,
				CompletionTime: &ended,
				EvalFileSHA256: "abc",
				JobName:        "screen-evalrun",
				Summary:        &evalsv1alpha1.RunSummary{Total: 2, Passed: 1, Failed: 1},
				Conditions: []metav1.Condition{
					{Type: evalsv1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: evalsv1alpha1.ReasonCompleted},
					{Type: evalsv1alpha1.ConditionPassed, Status: metav1.ConditionFalse, Reason: "NotPassed"},
				},
				PreviousAttempts: history,
			}
		})
	}
	tests := []struct {
		name    string
		history []evalsv1alpha1.AttemptRecord
		// wantOlder are the records kept after the finished attempt's.
		wantOlder []evalsv1alpha1.AttemptRecord
	}{
		{name: "the first rerun", wantOlder: nil},
		{name: "a history to keep", history: older(3), wantOlder: older(3)},
		{name: "a full history: the oldest goes", history: older(evalsv1alpha1.MaxPreviousAttempts),
			wantOlder: older(evalsv1alpha1.MaxPreviousAttempts)[:evalsv1alpha1.MaxPreviousAttempts-1]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := finished(tc.history)
			n := run.Status.Attempt.Number
			got := NewAttemptStatus(run, evalsv1alpha1.AttemptRerun, now)
			record := evalsv1alpha1.AttemptRecord{Number: n, Trigger: evalsv1alpha1.AttemptCreated, Rerun: ptr.To("once"),
				StartTime: &started, EvalFileSHA256: ptr.To("abc"), RunOutcome: evalsv1alpha1.RunOutcome{
					CompletionTime: &ended, Succeeded: metav1.ConditionTrue, Reason: evalsv1alpha1.ReasonCompleted,
					Passed: ptr.To(metav1.ConditionFalse), Summary: &evalsv1alpha1.RunSummary{Total: 2, Passed: 1, Failed: 1}}}
			msg := fmt.Sprintf("attempt %d is starting", n+1)
			cond := func(typ string, status metav1.ConditionStatus) metav1.Condition {
				return metav1.Condition{Type: typ, Status: status, Reason: evalsv1alpha1.ReasonPending, Message: msg, ObservedGeneration: 4, LastTransitionTime: now}
			}
			want := evalsv1alpha1.EvalRunStatus{
				ObservedGeneration: 4,
				Attempt: &evalsv1alpha1.Attempt{Number: n + 1, Trigger: evalsv1alpha1.AttemptRerun, SpecSHA256: SpecSHA256(&run.Spec),
					Rerun: ptr.To("again"), Generation: 4},
				PreviousAttempts: append([]evalsv1alpha1.AttemptRecord{record}, tc.wantOlder...),
				Conditions: []metav1.Condition{cond(evalsv1alpha1.ConditionReconciling, metav1.ConditionTrue),
					cond(evalsv1alpha1.ConditionStalled, metav1.ConditionFalse), cond(evalsv1alpha1.ConditionSucceeded, metav1.ConditionUnknown)},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("NewAttemptStatus (-want +got):\n%s", diff)
			}
		})
	}
}
