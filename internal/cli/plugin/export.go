package plugin

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/cli/report"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

type exportOptions struct {
	format, file string
}

func newExportCommand(e *env) *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export RUN [-o jsonl|junit] [--output-file FILE]",
		Short: "Export every per-case result of an EvalRun as JSONL or JUnit XML",
		Long: `Export every per-case result of an EvalRun, read from where the run stored them.

-o jsonl (the default) writes one JSON object per case, as the collector stored it (id, verdict, score, evaluators
with their hits and misses, answer, token usage, cost, duration).

-o junit writes JUnit XML that CI test reporters render (GitLab, Jenkins, GitHub Actions): one testcase per
eval case with the run's name as classname; a failure for Fail with the evaluators' messages, an error for Error
and for each requested case without a result, skipped for Skipped. A run with trials (spec.trials) still has one
testcase per case, with its verdict over its trials: the failure or error says how many trials passed, its body
lists every trial, system-out has every trial's answer (and says "flaky" when the trials disagree), and the
suite's properties carry the trials' figures (status.trials). The JSONL export has a line per trial of a case.

--output-file names the file to write instead of standard output (as kubectl, -f is an input elsewhere: the old
--format and -f/--file still work but are deprecated).`,
		Example: `  # JUnit XML for a CI test report
  kubectl evalrun export screening-nightly -o junit --output-file report.xml

  # Every result as JSONL, piped to jq
  kubectl evalrun export screening-nightly -o jsonl | jq -r 'select(.verdict=="Fail") | .id'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, e, args[0]) },
	}
	cmd.Flags().StringVarP(&o.format, "output", "o", "jsonl", "Export format: jsonl or junit.")
	cmd.Flags().StringVar(&o.file, "output-file", "", "Write to this file instead of standard output.")
	// The flags before kubectl's naming: --format is -o, -f/--file is --output-file.
	cmd.Flags().StringVar(&o.format, "format", "jsonl", "Export format: jsonl or junit.")
	cmd.Flags().StringVarP(&o.file, "file", "f", "", "Write to this file instead of standard output.")
	for _, name := range []string{"format", "file"} {
		if err := cmd.Flags().MarkHidden(name); err != nil {
			panic(err) // a flag defined above
		}
	}
	return cmd
}

// deprecatedExportFlags are the flags export had before it followed kubectl's naming, and what replaces them.
var deprecatedExportFlags = []struct{ name, use string }{
	{"format", "-o/--output"},
	{"file", "--output-file (kubectl's -f names an input)"},
}

func (o *exportOptions) run(cmd *cobra.Command, e *env, name string) (err error) {
	for _, d := range deprecatedExportFlags {
		if cmd.Flags().Changed(d.name) {
			_, _ = fmt.Fprintf(cmd.ErrOrStderr(), "Flag --%s has been deprecated, use %s\n", d.name, d.use)
		}
	}
	if o.format != "jsonl" && o.format != "junit" {
		return fmt.Errorf("--output %q is not one of jsonl, junit", o.format)
	}
	ctx := cmd.Context()
	run, lines, err := e.storedRun(ctx, name)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if o.file != "" {
		f, err := os.Create(o.file)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		out = f
	}
	if o.format == "jsonl" {
		return report.WriteJSONL(out, lines)
	}
	return writeJUnit(out, run, lines)
}

// writeJUnit writes the run's JUnit report: its lines, the requested ids the status lists as missing that have
// no line, and the run's timing and outcome as the suite's.
func writeJUnit(w io.Writer, run *evalsv1alpha1.EvalRun, lines []*results.Line) error {
	jr := report.JUnitRun{Name: run.Name, Namespace: run.Namespace, Trials: report.TrialRuleOf(run)}
	if st := run.Status.StartTime; st != nil {
		jr.Started = st.Time
		if ct := run.Status.CompletionTime; ct != nil {
			jr.Duration = ct.Sub(st.Time)
		}
	}
	have := make(map[string]bool, len(lines))
	for _, l := range lines {
		have[l.ID] = true
	}
	for _, id := range run.Status.MissingIDs {
		if !have[id] {
			jr.MissingIDs = append(jr.MissingIDs, id)
		}
	}
	for _, t := range []string{evalsv1alpha1.ConditionSucceeded, evalsv1alpha1.ConditionPassed} {
		if cond := meta.FindStatusCondition(run.Status.Conditions, t); cond != nil {
			jr.Properties = append(jr.Properties, [2]string{t, string(cond.Status) + " " + cond.Reason})
		}
	}
	if s := run.Status.Summary; s != nil {
		jr.Properties = append(jr.Properties, [2]string{"passRate", s.PassRate}, [2]string{"meanScore", s.MeanScore})
	}
	if t := run.Status.Trials; t != nil && t.Count > 1 {
		jr.Properties = append(jr.Properties, [2]string{"trials", fmt.Sprint(t.Count)}, [2]string{"trials.passRate", t.PassRate},
			[2]string{"trials.flakyCases", fmt.Sprint(t.FlakyCases)})
		for _, e := range []struct {
			name string
			est  *evalsv1alpha1.TrialsEstimate
		}{{"trials.runPassRate", t.RunPassRate}, {"trials.meanTrialPassRate", t.MeanTrialPassRate}, {"trials.meanScore", t.MeanScore}} {
			if e.est != nil {
				jr.Properties = append(jr.Properties, [2]string{e.name, report.EstimateText(e.est)})
			}
		}
	}
	return report.WriteJUnit(w, jr, lines)
}
