package children

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// TestNotControlled: a child's name taken by another object ends the run ChildConflict, naming the object, the
// run and what to do.
func TestNotControlled(t *testing.T) {
	run := &evalsv1alpha1.EvalRun{}
	run.Name, run.UID = "screen", types.UID("uid-1")
	err := NotControlled("ConfigMap", "screen-evalrun-eval", run)
	var ce *Error
	if !errors.As(err, &ce) || ce.Reason != evalsv1alpha1.ReasonChildConflict {
		t.Fatalf("NotControlled = %#v, want an Error with reason ChildConflict", err)
	}
	want := "ConfigMap screen-evalrun-eval exists and is not controlled by EvalRun screen (uid uid-1); delete it or rename the run"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}
