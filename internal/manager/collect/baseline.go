package collect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/compare"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// BaselineIndex is the field index holding the name of an EvalRun's spec.baseline run, so that a baseline that
// finishes wakes the runs waiting to be compared with it.
const BaselineIndex = ".spec.baseline.runName"

// baselineRecheck is how often a run waiting for its baseline to finish looks again, besides the baseline's own
// watch events.
const baselineRecheck = time.Minute

// Comparison is what comparing a finished run with its baseline found: the Regressed condition and the comparison
// (each nil until it is known), and how soon to look again (0: no need).
type Comparison struct {
	Regressed    *metav1.Condition
	Baseline     *evalsv1alpha1.BaselineComparison
	RecheckAfter time.Duration
}

// CompareWithBaseline compares a finished run's stored results with its baseline's and returns the comparison
// and the Regressed condition. A baseline still in progress leaves Regressed pending (rechecked); one that cannot
// be compared (gone, no stored results, unreadable) makes it Unknown with BaselineUnavailable, for good. An error
// is returned only for what a retry may fix (the API server or the bucket failing), with what was found before it.
func (r *Collections) CompareWithBaseline(ctx context.Context, run *evalsv1alpha1.EvalRun) (Comparison, error) {
	var out Comparison
	err := r.compareWithBaseline(ctx, run, &out)
	return out, err
}

// compareWithBaseline is CompareWithBaseline, recording what it finds in obs.
func (r *Collections) compareWithBaseline(ctx context.Context, run *evalsv1alpha1.EvalRun, obs *Comparison) error {
	name := assess.BaselineName(run)
	set := func(status metav1.ConditionStatus, reason, format string, args ...any) {
		obs.Regressed = &metav1.Condition{Type: evalsv1alpha1.ConditionRegressed, Status: status, Reason: reason,
			Message: textbound.Head(assess.OneLine(fmt.Sprintf(format, args...)), assess.MaxConditionMessage)}
	}
	unavailable := func(format string, args ...any) error {
		set(metav1.ConditionUnknown, evalsv1alpha1.ReasonBaselineUnavailable, format, args...)
		return nil
	}
	if name == run.Name {
		return unavailable("spec.baseline.runName names this run itself")
	}
	base := &evalsv1alpha1.EvalRun{}
	if err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, base); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return unavailable("baseline EvalRun %s does not exist in namespace %s", name, run.Namespace)
		}
		return fmt.Errorf("reading baseline EvalRun %s: %w", name, err)
	}
	if _, done := assess.TerminalAssessment(base); !done {
		set(metav1.ConditionUnknown, evalsv1alpha1.ReasonBaselinePending, "waiting for baseline EvalRun %s to finish", name)
		obs.RecheckAfter = minRecheck(obs.RecheckAfter, baselineRecheck)
		return nil
	}
	// The run's own stored results, as the API server has them: a merge may have recorded them in this reconcile.
	live := &evalsv1alpha1.EvalRun{}
	if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(run), live); err != nil {
		return fmt.Errorf("reading EvalRun %s: %w", run.Name, err)
	}
	if !stored.HasResults(base) {
		return unavailable("baseline EvalRun %s has no stored results", name)
	}
	if !stored.HasResults(live) {
		return unavailable("this run has no stored results to compare with baseline EvalRun %s", name)
	}
	bounds, err := compare.BoundsOf(run.Spec.Baseline)
	if err != nil {
		return unavailable("%v", err)
	}
	bounds.Seed = compare.Seed(base, live)
	b := compare.NewBuilder(evalsv1alpha1.MaxComparisonIDs)
	// A run with trials stores a line per trial of a case: each run's cases are decided over their trials by its
	// own rule (status.trials), so Count compares case verdicts and Paired each case's passed trials of its trials.
	b.Trials(compare.TrialRuleOf(base), compare.TrialRuleOf(live))
	quarantine, msg, err := r.quarantined(ctx, run)
	if err != nil {
		return err
	}
	if msg != "" {
		return unavailable("spec.baseline.quarantine: %s", msg)
	}
	b.Quarantine(quarantine)
	if msg, err := r.eachStoredLine(ctx, run, base, func(l *results.Line) error { b.AddBaseline(l); return nil }); msg != "" || err != nil {
		return errors.Join(err, unavailableIf(msg, unavailable, "baseline EvalRun "+name))
	}
	if msg, err := r.eachStoredLine(ctx, run, live, func(l *results.Line) error { b.AddRun(l); return nil }); msg != "" || err != nil {
		return errors.Join(err, unavailableIf(msg, unavailable, "this run"))
	}
	c := b.Finish()
	st := c.Status()
	st.RunName, st.RunUID, st.EvalFile = name, string(base.UID), evalsv1alpha1.EvalFileSame
	st.BaselineJudgeImage = base.Status.JudgeImage.DeepCopy()
	d, err := c.Decide(bounds)
	if err != nil {
		return unavailable("%v", err)
	}
	d.Record(&st)
	regressed, why := d.Regressed, d.Why
	scope := fmt.Sprintf("compared with baseline EvalRun %s over %d shared cases", name, c.Shared)
	if base.Status.EvalFileSHA256 != live.Status.EvalFileSHA256 {
		st.EvalFile = evalsv1alpha1.EvalFileDifferent
		scope = fmt.Sprintf("compared with baseline EvalRun %s over the %d case ids both have only (its eval file has sha256 %q, this run's %q)",
			name, c.Shared, base.Status.EvalFileSHA256, live.Status.EvalFileSHA256)
	}
	if c.QuarantinedCount > 0 {
		scope += fmt.Sprintf(" (%d flaky cases quarantined)", c.QuarantinedCount)
	}
	obs.Baseline = &st
	if regressed {
		set(metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed, "%s: %s", scope, why)
	} else {
		set(metav1.ConditionFalse, evalsv1alpha1.ReasonNotRegressed, "%s: %s", scope, why)
	}
	return nil
}

// unavailableIf records an unavailable comparison when msg says what about whose results is wrong.
func unavailableIf(msg string, unavailable func(string, ...any) error, whose string) error {
	if msg == "" {
		return nil
	}
	return unavailable("the results of %s: %s", whose, msg)
}

// minRecheck is the sooner of two recheck delays, 0 meaning none.
func minRecheck(a, b time.Duration) time.Duration {
	if a <= 0 {
		return b
	}
	return min(a, b)
}
