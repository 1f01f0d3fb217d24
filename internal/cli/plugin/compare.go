package plugin

import (
	"fmt"
	"math/big"

	"github.com/spf13/cobra"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/cli/report"
	"github.com/evalrun-operator/evalrun-operator/internal/compare"
)

type compareOptions struct {
	maxNewFailures int32
	maxScoreDrop   string
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

The run regressed when more cases newly fail than --max-new-failures allows, or its mean score fell by more than
--max-score-drop. As kubectl diff, the command exits 0 when the run did not regress, 1 when it regressed, and
above 1 (2) on an error (a run or its results not found, a bad flag), so a CI job can tell a regression from a
comparison that could not be made.`,
		Example: `  # Allow no newly failing case and a mean score drop of at most 0.05
  kubectl evalrun compare screening-pr screening-nightly --max-new-failures 0 --max-score-drop 0.05

  # The comparison as JSON, every id listed
  kubectl evalrun compare screening-pr screening-nightly -o json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, e, args[0], args[1]) },
	}
	cmd.Flags().Int32Var(&o.maxNewFailures, "max-new-failures", 0, "How many newly failing cases are allowed.")
	cmd.Flags().StringVar(&o.maxScoreDrop, "max-score-drop", "", "How far the mean score may fall, a decimal in [0, 1] (unset: any).")
	cmd.Flags().StringVarP(&o.output, "output", "o", outputText, "Output format: text, json or yaml.")
	return cmd
}

func (o *compareOptions) run(cmd *cobra.Command, e *env, name, baseline string) error {
	if o.output != outputText && o.output != outputJSON && o.output != outputYAML {
		return fmt.Errorf("--output %q is not one of text, json, yaml", o.output)
	}
	if o.maxNewFailures < 0 {
		return fmt.Errorf("--max-new-failures %d is negative", o.maxNewFailures)
	}
	spec := &evalsv1alpha1.Baseline{RunName: &baseline, MaxNewFailures: &o.maxNewFailures}
	if o.maxScoreDrop != "" {
		if d, ok := new(big.Rat).SetString(o.maxScoreDrop); !ok || d.Sign() < 0 || d.Cmp(big.NewRat(1, 1)) > 0 {
			return fmt.Errorf("--max-score-drop %q is not a decimal in [0, 1]", o.maxScoreDrop)
		}
		spec.MaxScoreDrop = &o.maxScoreDrop
	}
	bounds, err := compare.BoundsOf(spec)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	c, run, err := e.clientAndRun(ctx, name)
	if err != nil {
		return err
	}
	base, err := e.getRun(ctx, c, baseline)
	if err != nil {
		return err
	}
	b := compare.NewBuilder(0)
	// Every baseline line first, then the run's (compare.Builder's contract).
	if err := eachLine(ctx, c, base, b.AddBaseline); err != nil {
		return err
	}
	if err := eachLine(ctx, c, run, b.AddRun); err != nil {
		return err
	}
	cmp := b.Finish()
	doc := report.Comparison{BaselineComparison: cmp.Status()}
	doc.RunName, doc.RunUID, doc.EvalFile = base.Name, string(base.UID), evalsv1alpha1.EvalFileSame
	doc.JudgeImage, doc.BaselineJudgeImage = run.Status.JudgeImage.DeepCopy(), base.Status.JudgeImage.DeepCopy()
	if base.Status.EvalFileSHA256 != run.Status.EvalFileSHA256 {
		doc.EvalFile = evalsv1alpha1.EvalFileDifferent
	}
	doc.Regressed, doc.Why = cmp.Regressed(bounds)
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
