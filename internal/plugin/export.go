package plugin

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/report"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

type exportOptions struct {
	format, file string
}

func newExportCommand(e *env) *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export RUN --format jsonl|junit [-f FILE]",
		Short: "Export every per-case result of an EvalRun as JSONL or JUnit XML",
		Long: `Export every per-case result of an EvalRun, read from where the run stored them.

--format jsonl writes one JSON object per case, as the collector stored it (id, verdict, score, evaluators
with their hits and misses, answer, token usage, cost, duration).

--format junit writes JUnit XML that CI test reporters render (GitLab, Jenkins, GitHub Actions): one testcase per
eval case with the run's name as classname; a failure for Fail with the evaluators' messages, an error for Error
and for each requested case without a result, skipped for Skipped.`,
		Example: `  # JUnit XML for a CI test report
  kubectl evalrun export screening-nightly --format junit -f report.xml

  # Every result as JSONL, piped to jq
  kubectl evalrun export screening-nightly --format jsonl | jq -r 'select(.verdict=="Fail") | .id'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, e, args[0]) },
	}
	cmd.Flags().StringVar(&o.format, "format", "jsonl", "Export format: jsonl or junit.")
	cmd.Flags().StringVarP(&o.file, "file", "f", "", "Write to this file instead of standard output.")
	return cmd
}

func (o *exportOptions) run(cmd *cobra.Command, e *env, name string) (err error) {
	if o.format != "jsonl" && o.format != "junit" {
		return fmt.Errorf("--format %q is not one of jsonl, junit", o.format)
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
	jr := report.JUnitRun{Name: run.Name, Namespace: run.Namespace}
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
	return report.WriteJUnit(w, jr, lines)
}
