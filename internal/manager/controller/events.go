package controller

import (
	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// emitTransitions records the events of a status write that succeeded.
func (r *EvalRunReconciler) emitTransitions(run *evalsv1alpha1.EvalRun, desired *evalsv1alpha1.EvalRunStatus) {
	for _, e := range assess.Transitions(run, desired) {
		r.recorder.Eventf(run, nil, e.Type, e.Reason, e.Action, "%s", textbound.PrintableHead(e.Note, assess.MaxConditionMessage))
	}
}
