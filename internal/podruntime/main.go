// Package podruntime is the in-pod side of an EvalRun: `collector install` copies the binary into the work
// volume, `collector launch` renders and runs the command template in the runner container, runs the code_judge
// evaluators and waits for the collector's acknowledgement, `collector collect` (the native sidecar) parses,
// judges and persists the results, and `collector probe` is the sidecar's startup probe.
package podruntime

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"

	"github.com/evalrun-operator/evalrun-operator/internal/layout"
)

// Exit codes of the pod modes.
const (
	exitOK    = 0
	exitInfra = 1
	exitUsage = 2
)

// Main runs one pod mode with its command-line arguments and returns the process exit code: 0 on success, 1 for
// an infrastructure failure, 2 for a usage error.
func Main(ctx context.Context, mode string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("collector "+mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	switch mode {
	case "install":
		dest := fs.String("dest", "", "where to copy this binary (required)")
		src := fs.String("src", "", "binary to copy (default: this executable)")
		if code, ok := parseFlags(fs, args); !ok {
			return code
		}
		if *dest == "" {
			return usageError(fs, stderr, "--dest is required")
		}
		from := *src
		if from == "" {
			exe, err := os.Executable()
			if err != nil {
				logf(stderr, "collector install: cannot find this executable: %v\n", err)
				return exitInfra
			}
			from = exe
		}
		if err := Install(from, *dest); err != nil {
			logf(stderr, "collector install: %v\n", err)
			return exitInfra
		}
		return exitOK
	case "probe":
		ready := fs.String("ready-file", "", "file whose existence means the collector is ready (required)")
		if code, ok := parseFlags(fs, args); !ok {
			return code
		}
		if *ready == "" {
			return usageError(fs, stderr, "--ready-file is required")
		}
		if err := Probe(*ready); err != nil {
			logf(stderr, "collector probe: %v\n", err)
			return exitInfra
		}
		return exitOK
	case "launch":
		config := fs.String("config", "", "run configuration file (run.json) (required)")
		work := fs.String("work", layout.WorkDir, "work volume directory")
		shell := fs.String("shell", DefaultShell, "shell that runs the command templates")
		if code, ok := parseFlags(fs, args); !ok {
			return code
		}
		if *config == "" {
			return usageError(fs, stderr, "--config is required")
		}
		cfg, err := LoadRunConfig(*config)
		if err != nil {
			logf(stderr, "collector launch: %v\n", err)
			return exitInfra
		}
		if err := BecomeSubreaper(); err != nil {
			logf(stderr, "collector launch: %v (processes the runner leaves behind may outlive it)\n", err)
		}
		err = Launch(ctx, LaunchOptions{Config: cfg, Paths: layout.In(*work), Shell: *shell, Stdout: stdout, Stderr: stderr, Log: stderr})
		if err != nil {
			logf(stderr, "collector launch: %v\n", err)
			return exitInfra
		}
		return exitOK
	case "collect":
		// The sidecar's heap peaks while it reads the eval file and the runner's output: a soft limit below the
		// container's makes the garbage collector work harder near it instead of the pod being OOM-killed.
		applyContainerMemoryLimit(cgroupMemoryFiles)
		config := fs.String("config", "", "run configuration file (run.json) (required)")
		work := fs.String("work", layout.WorkDir, "work volume directory")
		termLog := fs.String("termination-log", "/dev/termination-log", "file for the termination message (\"\" to skip)")
		if code, ok := parseFlags(fs, args); !ok {
			return code
		}
		if *config == "" {
			return usageError(fs, stderr, "--config is required")
		}
		cfg, err := LoadRunConfig(*config)
		if err != nil {
			logf(stderr, "collector collect: %v\n", err)
			return exitInfra
		}
		c, err := NewClient()
		if err != nil {
			// Still collect: the termination message is the manager's fallback.
			logf(stderr, "collector collect: %v\n", err)
		}
		o := CollectOptions{
			Config: cfg, Paths: layout.In(*work), Client: c, TerminationLog: *termLog, Log: stderr,
			Namespace: envOr(layout.EnvRunNamespace, cfg.Namespace),
			Name:      envOr(layout.EnvRunName, cfg.RunName),
			UID:       envOr(layout.EnvRunUID, cfg.UID),
			PodName:   os.Getenv(layout.EnvPodName),
		}
		if err := Collect(ctx, o); err != nil {
			// The launcher got the reason in its acknowledgement and fails the pod; the sidecar itself ends
			// cleanly.
			logf(stderr, "collector collect: %v\n", err)
		}
		return exitOK
	}
	logf(stderr, "collector: unknown pod mode %q\n", mode)
	return exitUsage
}

func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		logf(fs.Output(), "%s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return exitUsage, false
	}
	return 0, true
}

func usageError(fs *flag.FlagSet, stderr io.Writer, msg string) int {
	logf(stderr, "%s: %s\n", fs.Name(), msg)
	fs.Usage()
	return exitUsage
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
