package judgerunner

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// Options configure Judge.
type Options struct {
	Config *podwire.RunConfig
	// Pod is the pod's directory layout: the snapshot (read-only here), the bin volume with the judge-end FIFOs
	// and this container's own writable directory (Verdicts).
	Pod podwire.Pod
	// Index is this judge container's index (0 for "judge"): it judges podwire.Partition's share Index of
	// Config.JudgeContainers and reports through Pod.JudgeEnd(Index).
	Index int
	// Shell runs the code_judge scripts (default DefaultShell).
	Shell string
	// Log receives the judge's progress lines.
	Log io.Writer
	// Scratch are the directories the scripts may write (the container's own volume, its /dev/shm): each is
	// emptied after every case, so nothing a case's scripts left there reaches the next case's.
	Scratch []string
	// Confine, when set, confines every script with Landlock (a ruleset per case, started through the shim);
	// nil on a kernel without Landlock: the end frame then reports ABI 0 and the run says so.
	Confine *Confinement
	// Judging, when set, becomes true before the first code_judge script starts: signals received from then on
	// may come from scripts, so the caller ignores them (pod modes: judgeSignals).
	Judging *atomic.Bool
}

// Judge is a judge container. It waits for the collector's snapshot of the runner's final output, runs the
// code_judge scripts of its share of the cases on it, one case at a time, reports their verdicts to the collector
// through its judge-end FIFO, and ends. It runs as its container's PID 1,
// non-dumpable, under the judge's uid, so neither the runner nor a script can reach it; every process a script
// leaves behind is killed and reaped before anything else happens (runCodeJudges). It never reads the runner's
// output directory. ctx ends when the container is asked to stop; it is not consulted while scripts may run. A pod
// without code judges has no judge container.
func Judge(ctx context.Context, o Options) error {
	if !o.Config.CodeJudges {
		return fmt.Errorf("the run has no code judges: its pod has no judge container")
	}
	podwire.Logf(o.Log, "Waiting for the collector's snapshot of the runner's output\n")
	return judge(ctx, o)
}

// judge connects to the collector through the judge-end FIFO (before any script exists), waits for the snapshot
// and judges this container's share of the cases.
func judge(ctx context.Context, o Options) error {
	// The collector opens the FIFOs only once the runner ended, and marks the snapshot ready only after every
	// judge connected; a ready snapshot before this judge connected means the collector gave up on it (or the
	// runner's output is not final): nothing this judge reports would be read.
	readyBefore := func() bool { _, err := os.Stat(o.Pod.SnapshotReady()); return err == nil }
	w, err := podwire.OpenJudgeEnd(ctx, o.Pod.JudgeEnd(o.Index), readyBefore)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before the runner ended: nothing to judge
		}
		return err
	}
	if w == nil {
		podwire.Logf(o.Log, "The collector did not wait for this judge; not judging\n")
		return nil
	}
	if err := podwire.WaitForFile(ctx, o.Pod.SnapshotReady(), 0); err != nil {
		_ = w.Close()
		return nil
	}
	if o.Judging != nil {
		// For good: a signal a script sent may still be on its way once judging ended. The container then ends
		// once it has reported, or with the kubelet's SIGKILL after the grace period.
		o.Judging.Store(true)
	}
	// Scripts may exist from here on: ctx (the container's stop signal) could be theirs to send, so it is not
	// consulted; the collector's deadline and the scripts' timeouts bound judging.
	end := runCodeJudges(context.WithoutCancel(ctx), o, w)
	if err := w.Send(end); err != nil {
		podwire.Logf(o.Log, "Cannot report the end of judging error=%q\n", err.Error())
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("close the judge-end FIFO: %w", err)
	}
	return nil
}
