package plugin

import (
	"fmt"
	"io"
	"regexp"

	"github.com/spf13/cobra"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/cli/report"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

type resultsOptions struct {
	verdicts, evaluator, id, output string
	flaky                           bool
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
column says why a case did not pass: its error, or what its evaluators missed.

A run with trials (spec.trials.count above 1) stored a result per trial of a case; each case is listed once, with
its verdict and mean score over its trials (the rule the run's status.trials names), TRIALS (passed of N, "flaky"
when its trials disagree), each evaluator's passed trials, and the message of the trial that stands for a case that
did not pass. Under the table, on stderr: the run's pass rate with its 95% interval, the mean trial pass rate and
the mean score with theirs, pass@N and pass^N, and the flaky cases. -o json and -o yaml carry the same: the run's
status.trials, and per case its counts and every trial's stored result.`,
		Example: `  # Every case of a run
  kubectl evalrun results screening-nightly

  # Only failing and erroring cases whose id starts with "kyc-"
  kubectl evalrun results screening-nightly --verdict Fail,Error --id '^kyc-'

  # The cases a code_judge evaluator named "policy" judged, as JSON
  kubectl evalrun results screening-nightly --evaluator policy -o json

  # The flaky cases of a run with trials: some trials passed, some did not
  kubectl evalrun results screening-nightly --flaky`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, e, args[0]) },
	}
	cmd.Flags().StringVar(&o.verdicts, "verdict", "",
		"Only cases with one of these verdicts (comma-separated: Pass, Fail, Error, Skipped, Missing; Error includes Missing).")
	cmd.Flags().StringVar(&o.evaluator, "evaluator", "", "Only cases judged by an evaluator of this name or type.")
	cmd.Flags().StringVar(&o.id, "id", "", "Only cases whose id matches this regular expression.")
	cmd.Flags().BoolVar(&o.flaky, "flaky", false, "Only flaky cases: some of their trials passed and some did not (spec.trials).")
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
	f.Evaluator, f.Flaky = o.evaluator, o.flaky
	if o.output != outputTable && o.output != outputJSON && o.output != outputYAML {
		return fmt.Errorf("--output %q is not one of table, json, yaml", o.output)
	}
	ctx := cmd.Context()
	run, lines, err := e.storedRun(ctx, name)
	if err != nil {
		return err
	}
	if rule := report.TrialRuleOf(run); rule.N() > 1 {
		return o.writeTrials(cmd, run, rule, lines, &f)
	}
	if f.Flaky {
		return fmt.Errorf("--flaky: EvalRun %s answered each case once (spec.trials): no case can be flaky", run.Name)
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
		doc := report.Cases{Run: run.Name, Namespace: run.Namespace, Stored: len(lines), Selected: len(kept), Cases: []report.CaseDoc{}}
		for _, l := range kept {
			doc.Cases = append(doc.Cases, report.CaseDoc{Line: l})
		}
		return o.writeDoc(out, doc)
	}
	if len(kept) == 0 {
		_, err := fmt.Fprintf(cmd.ErrOrStderr(), "No cases of %d stored match.\n", len(lines))
		return err
	}
	if err := report.WriteTable(out, kept); err != nil {
		return err
	}
	return notes(cmd.ErrOrStderr(), run, nil)
}

// maxFlakyNamed bounds the flaky cases the summary under the table names (--flaky lists them all).
const maxFlakyNamed = 10

// writeTrials writes the cases of a run with trials: each case once, decided over its trials.
func (o *resultsOptions) writeTrials(cmd *cobra.Command, run *evalsv1alpha1.EvalRun, rule results.TrialRule, lines []*results.Line, f *report.Filter) error {
	cases := report.GroupTrials(rule, lines)
	var kept []*report.TrialCase
	var flaky []string
	for _, c := range cases {
		if c.Flaky() {
			flaky = append(flaky, c.ID)
		}
		if f.MatchCase(c) {
			kept = append(kept, c)
		}
	}
	report.SortCasesFailingFirst(kept)
	out := cmd.OutOrStdout()
	switch o.output {
	case outputJSON, outputYAML:
		doc := report.Cases{Run: run.Name, Namespace: run.Namespace, Stored: len(lines), Selected: len(kept), Trials: run.Status.Trials,
			Cases: make([]report.CaseDoc, 0, len(kept))}
		for _, c := range kept {
			doc.Cases = append(doc.Cases, report.CaseDocOf(c))
		}
		return o.writeDoc(out, doc)
	}
	if len(kept) == 0 {
		_, err := fmt.Fprintf(cmd.ErrOrStderr(), "No cases of %d stored (%d results of %d trials each) match.\n", len(cases), len(lines), rule.N())
		return err
	}
	if err := report.WriteTrialsTable(out, kept); err != nil {
		return err
	}
	if run.Status.Trials == nil {
		const unmerged = "Trials: %d per case; %d of %d cases flaky; the run's figures are not in its status yet (its results are not merged)\n"
		if _, err := fmt.Fprintf(cmd.ErrOrStderr(), unmerged, rule.N(), len(flaky), len(cases)); err != nil {
			return err
		}
	}
	return notes(cmd.ErrOrStderr(), run, flaky)
}

func (o *resultsOptions) writeDoc(w io.Writer, doc report.Cases) error {
	if o.output == outputJSON {
		return report.WriteJSON(w, doc)
	}
	return report.WriteYAML(w, doc)
}

// notes writes what goes under the table, on stderr so that stdout stays the table: the trials' figures (flaky:
// the flaky cases the stored results show), what the run spent and what its budgets left unjudged.
func notes(w io.Writer, run *evalsv1alpha1.EvalRun, flaky []string) error {
	lines := report.TrialsLines(run.Status.Trials, flaky, maxFlakyNamed)
	if len(lines) > 0 && len(flaky) > maxFlakyNamed {
		lines[len(lines)-1] += " (--flaky lists them)"
	}
	lines = append(lines, report.CostLines(run.Status.Cost)...)
	if line := report.UnjudgedLine(run); line != "" {
		lines = append(lines, "Budget: "+line+".")
	}
	for _, line := range lines {
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
