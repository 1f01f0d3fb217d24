package plugin

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
)

// storedLines reads every stored result line of run (its ConfigMaps, then its bucket objects), the first line of
// a (case, trial) winning: a run with trials keeps a line per trial of a case, as the merge does. A run with no
// stored results yet, or whose stored results are gone, is an error saying so.
func storedLines(ctx context.Context, c client.Reader, run *evalsv1alpha1.EvalRun) ([]*results.Line, error) {
	type key struct {
		id    string
		trial int
	}
	var out []*results.Line
	seen := map[key]bool{}
	err := eachLine(ctx, c, run, func(l *results.Line) {
		k := key{l.ID, l.TrialNumber()}
		if !seen[k] {
			seen[k] = true
			out = append(out, l)
		}
	})
	return out, err
}

// eachLine calls f with every stored result line of run. A run with no stored results yet, or whose stored
// results are gone or unreadable, is an error saying so.
func eachLine(ctx context.Context, c client.Reader, run *evalsv1alpha1.EvalRun, f func(*results.Line)) error {
	if !stored.HasResults(run) {
		why := "it has not stored results yet"
		if cond := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionSucceeded); cond != nil {
			why += fmt.Sprintf(" (Succeeded=%s, %s: %s)", cond.Status, cond.Reason, cond.Message)
		}
		return fmt.Errorf("EvalRun %s/%s has no stored results: %s", run.Namespace, run.Name, why)
	}
	msg, err := stored.EachLine(ctx, c, run, func(l *results.Line) error { f(l); return nil })
	if msg != "" {
		return errors.New("the results of EvalRun " + run.Name + ": " + msg)
	}
	if err != nil {
		return fmt.Errorf("reading the results of EvalRun %s: %w", run.Name, err)
	}
	return nil
}
