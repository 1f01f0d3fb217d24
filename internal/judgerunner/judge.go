package judgerunner

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/evalrun-operator/evalrun-operator/internal/layout"
	"github.com/evalrun-operator/evalrun-operator/internal/podfiles"
)

// Options configure Judge.
type Options struct {
	Config *layout.RunConfig
	// Pod is the pod's directory layout: the snapshot (read-only here) and the verdicts directory.
	Pod layout.Pod
	// Shell runs the code_judge scripts (default DefaultShell).
	Shell string
	// Log receives the judge's progress lines.
	Log io.Writer
}

// Judge is the judge container. It waits for the collector's snapshot of the runner's final output, runs the
// code_judge scripts on it (when some case has one) and writes their verdicts where the collector reads them,
// then waits for the collector to note that the results are persisted: as a regular container it keeps the pod
// from finishing before that. It runs under its own uid in its own container, so the runner can neither see its
// processes nor reach its files; it never reads the runner's output directory. When asked to stop, it ends.
func Judge(ctx context.Context, o Options) error {
	podfiles.Logf(o.Log, "Waiting for the collector's snapshot of the runner's output\n")
	if err := podfiles.WaitForFile(ctx, o.Pod.SnapshotReady(), 0); err != nil {
		return nil // stopped before the runner ended: nothing to judge
	}
	if o.Config.CodeJudges {
		if _, err := os.Stat(o.Pod.JudgesDone()); err != nil {
			if err := finishJudging(o, judge(ctx, o)); err != nil {
				return err
			}
		}
	}
	podfiles.Logf(o.Log, "Waiting for the collector to persist the results\n")
	_ = podfiles.WaitForFile(ctx, o.Pod.Collected(), 0)
	return nil
}

func judge(ctx context.Context, o Options) error {
	var m layout.SnapshotMarker
	if err := podfiles.ReadJSON(o.Pod.SnapshotReady(), &m); err != nil {
		return fmt.Errorf("unreadable snapshot marker: %w", err)
	}
	if !m.Final {
		return fmt.Errorf("the runner's output was not final (%s)", m.Reason)
	}
	file, err := podfiles.LoadEvalFile(o.Config)
	if err != nil {
		return err
	}
	ids := o.Config.CaseIDs
	if len(ids) == 0 {
		ids = file.CaseIDs()
	}
	return runCodeJudges(ctx, o.Config, file, ids, o.Pod.SnapshotOutput(), o.Pod.JudgeResults(), o.Shell, o.Log)
}

// finishJudging writes the done marker, carrying err's message when judging failed.
func finishJudging(o Options, err error) error {
	var m layout.JudgesMarker
	if err != nil {
		m.Error = err.Error()
		podfiles.Logf(o.Log, "Code judges did not run error=%q\n", m.Error)
	}
	if werr := podfiles.WriteJSONAtomic(o.Pod.JudgesDone(), m); werr != nil {
		return fmt.Errorf("write the judges' done marker: %w", werr)
	}
	return nil
}
