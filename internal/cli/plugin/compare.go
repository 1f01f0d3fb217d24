package plugin

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/cli/report"
	"github.com/evalrun-operator/evalrun-operator/internal/compare"
)

type compareOptions struct {
	maxNewFailures int32
	maxScoreDrop   string
	test           string
	alpha          string
	minEffect      string
	output         string
}

func newCompareCommand(e *env) *cobra.Command {
	o := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare RUN BASELINE",
		Short: "Compare an EvalRun's results with a baseline run's; exit 1 when it regressed, above 1 on an error",
		Long: `Compare an EvalRun's full stored results with a baseline EvalRun's, as the manager does for
spec.baseline: cases newly failing (passed in the baseline, not in the run) and newly passing, cases missing in
either run, and the mean score over the cases both scored.

Whether the run regressed is decided by a test (spec.baseline.test, docs/statistics.md). Count: more cases newly
fail than --max-new-failures allows, or the mean score fell by more than --max-score-drop. Paired: the cases are
paired by id and their pass rates compared by McNemar's exact test (one trial per case) or the sign-flip test
(more trials); the run regressed when its pass rate fell by at least --min-effect and the one-sided p-value is
below --alpha. The result, the effect with its 95% interval and the p-value are the manager's for the same two
runs (the same seed). A flag not given takes RUN's own spec.baseline value when RUN has one, else the default.

As kubectl diff, the command exits 0 when the run did not regress, 1 when it regressed, and above 1 (2) on an
error (a run or its results not found, a bad flag), so a CI job can tell a regression from a comparison that
could not be made.`,
		Example: `  # Allow no newly failing case and a mean score drop of at most 0.05
  kubectl evalrun compare screening-pr screening-nightly --max-new-failures 0 --max-score-drop 0.05

  # A paired test: regressed when the pass rate fell by at least 5 points and p < 0.05
  kubectl evalrun compare screening-pr screening-nightly --test Paired --alpha 0.05 --min-effect 0.05

  # The comparison as JSON, every id listed
  kubectl evalrun compare screening-pr screening-nightly -o json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, e, args[0], args[1]) },
	}
	cmd.Flags().Int32Var(&o.maxNewFailures, "max-new-failures", 0, "Count: how many newly failing cases are allowed.")
	cmd.Flags().StringVar(&o.maxScoreDrop, "max-score-drop", "", "Count: how far the mean score may fall, a decimal in [0, 1] (unset: any).")
	cmd.Flags().StringVar(&o.test, "test", "", "The test that decides: Count or Paired (default: RUN's spec.baseline.test, else Count).")
	cmd.Flags().StringVar(&o.alpha, "alpha", "",
		"Paired: the significance level, a decimal strictly between 0 and 1 (default: RUN's spec.baseline.alpha, else 0.05).")
	cmd.Flags().StringVar(&o.minEffect, "min-effect", "",
		"Paired: the smallest pass-rate drop that counts, a decimal in [0, 1] (default: RUN's spec.baseline.minEffect, else 0).")
	cmd.Flags().StringVarP(&o.output, "output", "o", outputText, "Output format: text, json or yaml.")
	return cmd
}

// spec is spec.baseline as the flags and RUN's own spec.baseline give it: a flag given (changed) wins, then RUN's
// value, then the default.
func (o *compareOptions) spec(changed func(flag string) bool, run *evalsv1alpha1.EvalRun, baseline string) *evalsv1alpha1.Baseline {
	spec := &evalsv1alpha1.Baseline{}
	if run.Spec.Baseline != nil {
		spec = run.Spec.Baseline.DeepCopy()
	}
	spec.RunName = &baseline
	if changed("max-new-failures") || spec.MaxNewFailures == nil {
		spec.MaxNewFailures = &o.maxNewFailures
	}
	for _, f := range []struct {
		flag  string
		value string
		field **string
	}{{"max-score-drop", o.maxScoreDrop, &spec.MaxScoreDrop}, {"alpha", o.alpha, &spec.Alpha}, {"min-effect", o.minEffect, &spec.MinEffect}} {
		if changed(f.flag) {
			v := f.value
			*f.field = &v
		}
	}
	if changed("test") {
		t := evalsv1alpha1.BaselineTest(o.test)
		spec.Test = &t
	}
	return spec
}

// compareFlags are the flags behind spec.baseline's fields.
var compareFlags = map[string]string{
	"test": "--test", "maxNewFailures": "--max-new-failures", "maxScoreDrop": "--max-score-drop",
	"alpha": "--alpha", "minEffect": "--min-effect",
}

// flagError says an invalid field as the flag that set it.
func flagError(err error) error {
	var fe *compare.FieldError
	if errors.As(err, &fe) {
		if flag, ok := compareFlags[fe.Field]; ok {
			return fmt.Errorf("%s %q is not %s", flag, fe.Value, fe.Want)
		}
	}
	return err
}

func (o *compareOptions) run(cmd *cobra.Command, e *env, name, baseline string) error {
	if o.output != outputText && o.output != outputJSON && o.output != outputYAML {
		return fmt.Errorf("--output %q is not one of text, json, yaml", o.output)
	}
	if o.maxNewFailures < 0 {
		return fmt.Errorf("--max-new-failures %d is negative", o.maxNewFailures)
	}
	// The flags alone first, so that a bad flag is an error before any API call.
	changed := cmd.Flags().Changed
	if _, err := compare.BoundsOf(o.spec(changed, &evalsv1alpha1.EvalRun{}, baseline)); err != nil {
		return flagError(err)
	}
	ctx := cmd.Context()
	c, run, err := e.clientAndRun(ctx, name)
	if err != nil {
		return err
	}
	bounds, err := compare.BoundsOf(o.spec(changed, run, baseline))
	if err != nil {
		return fmt.Errorf("EvalRun %s's spec.baseline: %w", run.Name, err)
	}
	base, err := e.getRun(ctx, c, baseline)
	if err != nil {
		return err
	}
	bounds.Seed = compare.Seed(base, run)
	b := compare.NewBuilder(0)
	// A run with trials has a line per trial of a case: its cases are decided over them, as the manager does.
	b.Trials(compare.TrialRuleOf(base), compare.TrialRuleOf(run))
	// Every baseline line first, then the run's (compare.Builder's contract).
	if err := eachLine(ctx, c, base, b.AddBaseline); err != nil {
		return err
	}
	if err := eachLine(ctx, c, run, b.AddRun); err != nil {
		return err
	}
	cmp := b.Finish()
	d, err := cmp.Decide(bounds)
	if err != nil {
		return err
	}
	doc := report.Comparison{BaselineComparison: cmp.Status()}
	d.Record(&doc.BaselineComparison)
	doc.RunName, doc.RunUID, doc.EvalFile = base.Name, string(base.UID), evalsv1alpha1.EvalFileSame
	doc.JudgeImage, doc.BaselineJudgeImage = run.Status.JudgeImage.DeepCopy(), base.Status.JudgeImage.DeepCopy()
	if base.Status.EvalFileSHA256 != run.Status.EvalFileSHA256 {
		doc.EvalFile = evalsv1alpha1.EvalFileDifferent
	}
	doc.Regressed, doc.Why = d.Regressed, d.Why
	out := cmd.OutOrStdout()
	switch o.output {
	case outputJSON:
		err = report.WriteJSON(out, doc)
	case outputYAML:
		err = report.WriteYAML(out, doc)
	default:
		err = report.WriteComparison(out, run.Name, &doc)
	}
	if err != nil {
		return err
	}
	if doc.Regressed {
		return fmt.Errorf("EvalRun %s %w %s", run.Name, ErrRegressed, base.Name)
	}
	return nil
}
