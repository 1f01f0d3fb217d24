package plugin

import (
	"fmt"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/evalrun-operator/evalrun-operator/internal/cli/report"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

type resultsOptions struct {
	verdicts, evaluator, id, output string
}

func newResultsCommand(e *env) *cobra.Command {
	o := &resultsOptions{}
	cmd := &cobra.Command{
		Use:   "results RUN",
		Short: "Show the per-case results of an EvalRun, failing cases first",
		Long: `Show the per-case results of an EvalRun: every case the run stored (its result ConfigMaps, or the objects
of its bucket read with the credentials Secret the run names), not only the cases that fit in its status.

Cases are listed Fail, Error, Missing, Skipped, then Pass, in the run's order within a verdict. Missing is a
requested case the runner produced no record for; as in the EvalRun's status (summary.errored counts
summary.missing), it is a kind of Error: --verdict Error selects it too, --verdict Missing only it. The MESSAGE
column says why a case did not pass: its error, or what its evaluators missed.`,
		Example: `  # Every case of a run
  kubectl evalrun results screening-nightly

  # Only failing and erroring cases whose id starts with "kyc-"
  kubectl evalrun results screening-nightly --verdict Fail,Error --id '^kyc-'

  # The cases a code_judge evaluator named "policy" judged, as JSON
  kubectl evalrun results screening-nightly --evaluator policy -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, e, args[0]) },
	}
	cmd.Flags().StringVar(&o.verdicts, "verdict", "",
		"Only cases with one of these verdicts (comma-separated: Pass, Fail, Error, Skipped, Missing; Error includes Missing).")
	cmd.Flags().StringVar(&o.evaluator, "evaluator", "", "Only cases judged by an evaluator of this name or type.")
	cmd.Flags().StringVar(&o.id, "id", "", "Only cases whose id matches this regular expression.")
	cmd.Flags().StringVarP(&o.output, "output", "o", outputTable, "Output format: table, json or yaml.")
	return cmd
}

func (o *resultsOptions) run(cmd *cobra.Command, e *env, name string) error {
	var f report.Filter
	var err error
	if f.Verdicts, err = report.ParseVerdicts(o.verdicts); err != nil {
		return err
	}
	if o.id != "" {
		if f.ID, err = regexp.Compile(o.id); err != nil {
			return fmt.Errorf("--id: %w", err)
		}
	}
	f.Evaluator = o.evaluator
	if o.output != outputTable && o.output != outputJSON && o.output != outputYAML {
		return fmt.Errorf("--output %q is not one of table, json, yaml", o.output)
	}
	ctx := cmd.Context()
	run, lines, err := e.storedRun(ctx, name)
	if err != nil {
		return err
	}
	var kept []*results.Line
	for _, l := range lines {
		if f.Match(l) {
			kept = append(kept, l)
		}
	}
	report.SortFailingFirst(kept)
	out := cmd.OutOrStdout()
	switch o.output {
	case outputJSON, outputYAML:
		doc := report.Cases{Run: run.Name, Namespace: run.Namespace, Stored: len(lines), Selected: len(kept), Cases: kept}
		if doc.Cases == nil {
			doc.Cases = []*results.Line{}
		}
		if o.output == outputJSON {
			return report.WriteJSON(out, doc)
		}
		return report.WriteYAML(out, doc)
	}
	if len(kept) == 0 {
		_, err := fmt.Fprintf(cmd.ErrOrStderr(), "No cases of %d stored match.\n", len(lines))
		return err
	}
	if err := report.WriteTable(out, kept); err != nil {
		return err
	}
	// What the run spent goes to stderr, as the note above does: stdout stays the table.
	notes := report.CostLines(run.Status.Cost)
	if line := report.UnjudgedLine(run); line != "" {
		notes = append(notes, "Budget: "+line+".")
	}
	for _, line := range notes {
		if _, err := fmt.Fprintln(cmd.ErrOrStderr(), line); err != nil {
			return err
		}
	}
	return nil
}
