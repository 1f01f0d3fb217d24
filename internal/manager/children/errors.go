package children

import (
	"fmt"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// Error is a failure to create or pin a child that retrying cannot heal: it ends the run with Reason.
type Error struct {
	Reason string
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// NotControlled is the Error of a child's name taken by an object run does not control: the run ends
// ChildConflict (every child's name carries -evalrun, so this is a clash, never a user's object by chance).
func NotControlled(kind, name string, run *evalsv1alpha1.EvalRun) error {
	return &Error{Reason: evalsv1alpha1.ReasonChildConflict,
		Err: fmt.Errorf("%s %s exists and is not controlled by EvalRun %s (uid %s); delete it or rename the run", kind, name, run.Name, run.UID)}
}
