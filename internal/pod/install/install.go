// Package install is the work of a run's install init container: a bundle run's eval bundle, every file verified
// against the pinned manifest, the pod's eval file when it is not the pinned one (its shard's cases, from the
// pinned file or from a bucket object downloaded and verified), the runner's eval file and configuration (and a
// bundle run's input files) in the view volume, the launcher in the bin volume, in a run with code judges the
// collector (the judge runner) in the judge-bin volume, and the runner-end and judge-end FIFOs.
package install

import (
	"context"
	"fmt"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// Options are one pod's install.
type Options struct {
	// Config is run.json narrowed to the pod's shard; nil writes neither the pod's eval file nor the runner's view.
	Config *podwire.RunConfig
	// EvalCredentialsDir is where a bucket eval file's credentials are mounted.
	EvalCredentialsDir string
	// Pod names the bin and judge-bin volumes.
	Pod podwire.Pod
	// Launcher is the launcher binary, copied to Pod.Launcher().
	Launcher string
	// JudgeRunner is the collector binary, copied to Pod.JudgeRunner() when Judges is not 0.
	JudgeRunner string
	// Judges is the number of judge containers that run code judges (0 without code judges): one judge-end FIFO
	// each.
	Judges int
}

// Run does the install: every step or an error that names the one that failed.
func Run(ctx context.Context, o Options) error {
	if o.Config != nil {
		var m *bundle.Manifest
		if o.Config.Bundle != nil {
			// First: a bundle in a bucket holds the eval file the pod's cases are cut from.
			var err error
			if m, err = WriteBundle(ctx, o.Config, o.EvalCredentialsDir); err != nil {
				return err
			}
		}
		if err := WriteShardEvalFile(ctx, o.Config, o.EvalCredentialsDir); err != nil {
			return err
		}
		// A re-judge's pod has no runner: nothing is written for one.
		if o.Config.Rejudge == nil {
			if _, err := WriteRunnerView(o.Config); err != nil {
				return err
			}
			if m != nil && !o.Config.NothingToRun {
				if _, err := WriteRunnerInputs(o.Config, m); err != nil {
					return err
				}
			}
		}
	}
	if err := podwire.Install(o.Launcher, o.Pod.Launcher()); err != nil {
		return fmt.Errorf("install the launcher: %w", err)
	}
	if o.Judges > 0 {
		if err := podwire.Install(o.JudgeRunner, o.Pod.JudgeRunner()); err != nil {
			return fmt.Errorf("install the judge runner: %w", err)
		}
	}
	if err := podwire.CreateRunnerEnd(o.Pod.RunnerEnd()); err != nil {
		return err
	}
	ends := make([]string, 0, max(o.Judges, 0))
	for i := range o.Judges {
		ends = append(ends, o.Pod.JudgeEnd(i))
	}
	return podwire.CreateJudgeEnds(ends)
}
