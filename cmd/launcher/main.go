// Command launcher is the runner container's init process (PID 1): install copies it into the pod's bin volume and
// the runner container runs
//
//	/evalrun/bin/launcher --config /evalrun/view/launch.json
//
// It renders the command template, runs the runner, kills and reaps every process left behind, frames its report
// into the runner-end FIFO and exits with the runner's code (internal/launcher). It is its own small binary so that
// the runner's bin volume holds only what the runner's PID 1 needs: no judging, object-store or API client code
// (those are the collector's, cmd/collector).
package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/evalrun-operator/evalrun-operator/internal/pod/launcher"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/reaper"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"

	// The AgentV 4.42 suite reader registers itself with evalfile: this binary reads 4.42 suites (test/architecture).
	_ "github.com/evalrun-operator/evalrun-operator/internal/evalfile/suite42"
)

// exitUsage is the exit code of a usage error.
const exitUsage = 2

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses the flags, loads the runner's configuration, hardens this process (non-dumpable, the signals a PID 1
// must handle, child subreaper) and launches the runner. It returns the exit code: the runner's, 2 for a usage
// error, launcher.ExitLaunchFailed when the launch could not start.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("launcher", flag.ContinueOnError)
	fs.SetOutput(stderr)
	shell := fs.String("shell", launcher.DefaultShell, "shell that runs the command templates")
	termLog := fs.String("termination-log", "/dev/termination-log", "file for the termination message (\"\" to skip)")
	config := fs.String("config", "", "the runner's configuration (launch.json in the view volume) (required)")
	pod := podwire.DefaultPod()
	fs.StringVar(&pod.Bin, "bin", pod.Bin, "the bin volume (the runner-end FIFO)")
	fs.StringVar(&pod.Out, "out", pod.Out, "the runner's output volume")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		podwire.Logf(stderr, "launcher: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	if *config == "" {
		podwire.Logf(stderr, "launcher: --config is required\n")
		fs.Usage()
		return exitUsage
	}
	cfg, err := podwire.LoadRunnerConfig(*config)
	if err != nil {
		podwire.Logf(stderr, "launcher: %v\n", err)
		return launcher.ExitLaunchFailed
	}
	if err := reaper.Harden(); err != nil {
		podwire.Logf(stderr, "launcher: %v\n", err)
		return launcher.ExitLaunchFailed
	}
	launcher.ShieldSignals()
	if err := reaper.BecomeSubreaper(); err != nil {
		podwire.Logf(stderr, "launcher: %v (processes the runner leaves behind may outlive it)\n", err)
	}
	return launcher.Launch(ctx, launcher.Options{Config: cfg, Pod: pod, Shell: *shell, Stdout: stdout, Stderr: stderr,
		Log: stderr, TerminationLog: *termLog})
}
