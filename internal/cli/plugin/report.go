package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/cli/report"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
)

// reportRefresh is how often a served report of a run in progress reloads itself.
const reportRefresh = 10 * time.Second

type reportOptions struct {
	output, schedule, address string
	serve                     bool
	maxTextBytes              int
}

func newReportCommand(e *env) *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report [RUN] [-o FILE] [--schedule NAME] [--serve [--address 127.0.0.1:PORT]]",
		Short: "Write an EvalRun's results as one self-contained HTML page, or serve it on localhost",
		Long: `Write an EvalRun's results as one HTML file that opens in any browser without network access (its script
and style sheet are inline, and its Content-Security-Policy forbids every fetch): share it as a CI artifact.

The page has the run's summary (pass rate, mean score, counts by verdict, its reason and message, duration,
eval file and runner image digests, judge token usage), its shards, parse errors and missing ids, and every
stored case in a table that filters by verdict, evaluator and text and sorts, failing cases first. A case opens
to its input and expected answer (from the run's pinned eval file), the runner's answer, each evaluator's score,
hits, misses and reasoning, and the run a resumed run carried it from. With spec.baseline, newly failing and
newly passing cases are marked with the score's change. For a run an EvalSchedule created, or with --schedule,
the pass rate and mean score of the schedule's kept runs are charted over time; --schedule without RUN reports
the schedule's newest kept run that stored results.

Reports of 100,000 cases and more stay responsive: the table shows a page of rows at a time, and long texts are
cut to a size budget (--max-text-bytes), each cut marked with its full length.

--serve serves the same page on a loopback address instead (only 127.0.0.1, ::1 or localhost), rebuilt when the
run changes; while the run is in progress the page reloads itself every 10 s.`,
		Example: `  # Write the report of a run and open it
  kubectl evalrun report screening-nightly -o screening-nightly.html

  # A schedule's chart with its newest run
  kubectl evalrun report --schedule screening -o screening.html

  # Watch a run in progress in the browser
  kubectl evalrun report screening-nightly --serve --address 127.0.0.1:8080`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return o.run(cmd, e, name)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "", `The HTML file to write ("-": standard output; default RUN.html, or SCHEDULE.html).`)
	cmd.Flags().StringVar(&o.schedule, "schedule", "", "Chart this EvalSchedule's kept runs (and, without RUN, report its newest run).")
	cmd.Flags().BoolVar(&o.serve, "serve", false, "Serve the report on a loopback address instead of writing a file.")
	cmd.Flags().StringVar(&o.address, "address", "127.0.0.1:8080", "The loopback address --serve listens on (port 0: any free port).")
	cmd.Flags().IntVar(&o.maxTextBytes, "max-text-bytes", report.DefaultMaxTextBytes,
		"The budget of the texts the page embeds (answers, inputs, reasonings), over every case.")
	return cmd
}

func (o *reportOptions) run(cmd *cobra.Command, e *env, name string) error {
	if name == "" && o.schedule == "" {
		return errors.New("name a run, or a schedule with --schedule")
	}
	if o.maxTextBytes <= 0 {
		return fmt.Errorf("--max-text-bytes %d is not positive", o.maxTextBytes)
	}
	if o.serve {
		if o.output != "" {
			return errors.New("--serve writes no file: drop -o")
		}
		return o.serveReport(cmd, e, name)
	}
	ctx := cmd.Context()
	c, err := e.client()
	if err != nil {
		return err
	}
	in, err := o.gather(ctx, cmd.ErrOrStderr(), e, c, name)
	if err != nil {
		return err
	}
	if o.output == "-" {
		return report.WriteHTML(cmd.OutOrStdout(), in)
	}
	path := o.output
	if path == "" {
		path = reportName(in) + ".html"
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, in); err != nil {
		return err
	}
	if err := writeFileAtomic(path, page.Bytes()); err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.ErrOrStderr(), "Wrote the report of %s (%s, %d bytes) to %s\n", reportName(in), casesText(in), page.Len(), path)
	return err
}

// casesText says how many cases the report holds: "10 cases", or with trials "10 cases, 30 trial results".
func casesText(in report.HTMLInput) string {
	if in.Run == nil || report.TrialRuleOf(in.Run).N() <= 1 {
		return fmt.Sprintf("%d cases", len(in.Lines))
	}
	ids := make(map[string]struct{}, len(in.Lines))
	for _, l := range in.Lines {
		ids[l.ID] = struct{}{}
	}
	return fmt.Sprintf("%d cases, %d trial results", len(ids), len(in.Lines))
}

// reportName is the run's name, or the schedule's.
func reportName(in report.HTMLInput) string {
	if in.Run != nil {
		return in.Run.Name
	}
	return in.Schedule.Name
}

// gather reads what the report shows: the run, its stored results, its eval file's texts, its baseline and its
// schedule's kept runs. What cannot be read and is not the run's own (the eval file, the baseline's results) is
// left out with a warning on warn.
func (o *reportOptions) gather(ctx context.Context, warn io.Writer, e *env, c client.Client, name string) (report.HTMLInput, error) {
	in := report.HTMLInput{Generated: time.Now(), MaxTextBytes: o.maxTextBytes}
	ns, err := e.namespace()
	if err != nil {
		return in, err
	}
	scheduleName := o.schedule
	if name != "" {
		if in.Run, err = e.getRun(ctx, c, name); err != nil {
			return in, err
		}
		if scheduleName == "" {
			scheduleName = ownerSchedule(in.Run)
		}
	}
	if scheduleName != "" {
		s := &evalsv1alpha1.EvalSchedule{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: scheduleName}, s); err != nil {
			return in, fmt.Errorf("reading EvalSchedule %s/%s: %w", ns, scheduleName, err)
		}
		in.Schedule = s
		if in.History, err = keptRuns(ctx, c, s); err != nil {
			return in, err
		}
		if in.Run == nil {
			in.Run = newestStored(in.History)
		}
	}
	if in.Run == nil {
		return in, nil
	}
	if err := o.gatherRun(ctx, warn, c, &in); err != nil {
		return in, err
	}
	return in, nil
}

// gatherRun reads the run's stored results, its eval file's texts and its baseline.
func (o *reportOptions) gatherRun(ctx context.Context, warn io.Writer, c client.Client, in *report.HTMLInput) error {
	run := in.Run
	if !stored.HasResults(run) {
		in.LinesNote = "EvalRun " + run.Name + " has not stored results yet"
		if cond := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionSucceeded); cond != nil {
			in.LinesNote += fmt.Sprintf(" (Succeeded=%s, %s)", cond.Status, cond.Reason)
		}
		in.LinesNote += "."
	} else {
		lines, err := storedLines(ctx, c, run)
		if err != nil {
			return err
		}
		in.Lines = lines
	}
	texts, err := caseTexts(ctx, c, run)
	if err != nil {
		warnf(warn, "the report shows no inputs or expected answers: %v", err)
	}
	in.Cases = texts
	if b := run.Spec.Baseline; b != nil && b.RunName != nil && len(in.Lines) > 0 {
		base := &evalsv1alpha1.EvalRun{}
		err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: *b.RunName}, base)
		switch {
		case err != nil:
			warnf(warn, "the baseline EvalRun %s: %v; the report marks the cases status.baseline names", *b.RunName, err)
		case stored.HasResults(base):
			lines, err := storedLines(ctx, c, base)
			if err != nil {
				warnf(warn, "%v; the report marks the cases status.baseline names", err)
				break
			}
			in.Baseline = &report.Baseline{Run: base, Lines: lines}
		}
	}
	return nil
}

// warnf writes a warning line.
func warnf(w io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(w, "Warning: "+format+"\n", args...)
}

// ownerSchedule is the name of the EvalSchedule controlling run, or "".
func ownerSchedule(run *evalsv1alpha1.EvalRun) string {
	if ref := metav1.GetControllerOf(run); ref != nil && ref.Kind == "EvalSchedule" &&
		ref.APIVersion == evalsv1alpha1.GroupVersion.String() {
		return ref.Name
	}
	return ""
}

// keptRuns lists the runs the schedule controls (those it keeps: it deletes the others) with their scheduled
// times.
func keptRuns(ctx context.Context, c client.Client, s *evalsv1alpha1.EvalSchedule) ([]report.KeptRun, error) {
	var list evalsv1alpha1.EvalRunList
	if err := c.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingLabels{evalsv1alpha1.LabelSchedule: s.Name}); err != nil {
		return nil, fmt.Errorf("listing the runs of EvalSchedule %s: %w", s.Name, err)
	}
	var out []report.KeptRun
	for i := range list.Items {
		r := &list.Items[i]
		if !metav1.IsControlledBy(r, s) {
			continue
		}
		k := report.KeptRun{Run: r}
		if t, err := time.Parse(time.RFC3339, r.Annotations[evalsv1alpha1.AnnotationScheduledTime]); err == nil {
			k.ScheduledTime = t
		}
		out = append(out, k)
	}
	return out, nil
}

// newestStored is the newest kept run that stored results, or nil.
func newestStored(history []report.KeptRun) *evalsv1alpha1.EvalRun {
	var newest *report.KeptRun
	for i := range history {
		k := &history[i]
		if !stored.HasResults(k.Run) {
			continue
		}
		if newest == nil || k.When().After(newest.When()) {
			newest = k
		}
	}
	if newest == nil {
		return nil
	}
	return newest.Run
}

// caseTexts reads the run's pinned eval file (its eval ConfigMap) and returns each case's input and expected
// answer.
func caseTexts(ctx context.Context, c client.Reader, run *evalsv1alpha1.EvalRun) (map[string]report.CaseText, error) {
	name := run.Status.EvalConfigMapName
	if name == "" {
		return nil, errors.New("the run names no eval ConfigMap yet")
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the eval ConfigMap %s is gone", name)
		}
		return nil, fmt.Errorf("reading the eval ConfigMap %s: %w", name, err)
	}
	data, ok := cm.Data[podwire.EvalFileKey]
	if !ok {
		return nil, fmt.Errorf("the eval ConfigMap %s holds no %s (the eval file is in a bucket)", name, podwire.EvalFileKey)
	}
	f, err := evalfile.Parse([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("reading the eval file of ConfigMap %s: %w", name, err)
	}
	out := make(map[string]report.CaseText, f.NumCases())
	for i := range f.NumCases() {
		cs := f.CaseAt(i)
		out[cs.ID] = report.CaseText{Input: cs.Question(), Expected: cs.ReferenceAnswer()}
	}
	return out, nil
}

// writeFileAtomic writes data to path through a temporary file in its folder, renamed into place.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// finished reports a run whose Succeeded condition is True or False.
func finished(run *evalsv1alpha1.EvalRun) bool {
	c := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionSucceeded)
	return c != nil && c.Status != metav1.ConditionUnknown
}

// inProgress reports whether the page should reload itself: its run has not finished, or its schedule has an
// active run.
func inProgress(in report.HTMLInput) bool {
	if in.Run != nil && !finished(in.Run) {
		return true
	}
	return in.Schedule != nil && len(in.Schedule.Status.Active) > 0
}
