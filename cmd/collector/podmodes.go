package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/evalrun-operator/evalrun-operator/internal/memlimit"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/collector"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/confine"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/install"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/judgerunner"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/launcher"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/reaper"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Exit codes of the pod modes.
const (
	exitOK    = 0
	exitInfra = 1
	exitUsage = 2
)

// podMain runs one pod mode (install, collect, judge) with its command-line arguments and returns the process exit
// code: 0 on success, 1 for an infrastructure failure, 2 for a usage error.
func podMain(ctx context.Context, mode string, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("collector "+mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	switch mode {
	case "install":
		return installMain(ctx, fs, args, stderr)
	case "judge":
		shell := fs.String("shell", launcher.DefaultShell, "shell that runs the code_judge scripts")
		index := fs.Int("index", 0, "this judge container's index (its share of the cases and its judge-end FIFO)")
		cfg, pod, code := podModeFlags(fs, args, stderr, exitInfra)
		if cfg == nil {
			return code
		}
		if cfg.CodeJudges && (*index < 0 || *index >= int(cfg.JudgeContainers)) {
			return usageError(fs, stderr, fmt.Sprintf("--index %d is not one of the %d judge containers", *index, cfg.JudgeContainers))
		}
		if err := reaper.Harden(); err != nil {
			podwire.Logf(stderr, "collector judge: %v\n", err)
			return exitInfra
		}
		if err := reaper.BecomeSubreaper(); err != nil {
			podwire.Logf(stderr, "collector judge: %v (processes the scripts leave behind may outlive them)\n", err)
		}
		confinement, err := judgeConfinement()
		if err != nil {
			podwire.Logf(stderr, "collector judge: %v\n", err)
			return exitInfra
		}
		if confinement == nil {
			podwire.Logf(stderr, "collector judge: the kernel has no Landlock: code_judge scripts run unconfined\n")
		}
		judging := &atomic.Bool{}
		jctx, stop := judgeSignals(judging)
		defer stop()
		if err := judgerunner.Judge(jctx, judgerunner.Options{Config: cfg, Pod: *pod, Index: *index, Shell: *shell, Log: stderr, Judging: judging,
			Scratch: []string{pod.Verdicts, "/dev/shm"}, Confine: confinement}); err != nil {
			podwire.Logf(stderr, "collector judge: %v\n", err)
			return exitInfra
		}
		return exitOK
	case "collect":
		// The collector's heap peaks while it reads the eval file and the runner's output: a soft limit below the
		// container's makes the garbage collector work harder near it instead of the pod being OOM-killed.
		memlimit.Apply(memlimit.CgroupFiles)
		termLog := fs.String("termination-log", "/dev/termination-log", "file for the termination message (\"\" to skip)")
		cfg, pod, code := podModeFlags(fs, args, stderr, exitInfra)
		if cfg == nil {
			return code
		}
		var c client.Client
		if !cfg.BucketOnly {
			// With bucketOnly the pod has no token and makes no API call: no client at all.
			var err error
			if c, err = collector.NewClient(); err != nil {
				// Still collect: the termination message is the manager's fallback.
				podwire.Logf(stderr, "collector collect: %v\n", err)
			}
		}
		o := collector.Options{
			Config: cfg, Pod: *pod, Client: c, TerminationLog: *termLog, Log: stderr,
			Namespace: envOr(podwire.EnvRunNamespace, cfg.Namespace),
			Name:      envOr(podwire.EnvRunName, cfg.RunName),
			UID:       envOr(podwire.EnvRunUID, cfg.UID),
			PodName:   os.Getenv(podwire.EnvPodName),
		}
		if err := collector.Collect(ctx, o); err != nil {
			// The termination message carries the reason to the manager; the container itself ends cleanly so
			// that the pod's outcome stays the runner's.
			podwire.Logf(stderr, "collector collect: %v\n", err)
		}
		return exitOK
	}
	podwire.Logf(stderr, "collector: unknown pod mode %q\n", mode)
	return exitUsage
}

// judgeConfinement is how the judge runner confines scripts on this kernel: nil without Landlock; else this binary
// as the shim, the image's own top-level directories (never the pod's /evalrun* mounts) and /proc read-only.
func judgeConfinement() (*judgerunner.Confinement, error) {
	if confine.ABI() < 1 {
		return nil, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("the shim (this binary): %w", err)
	}
	image, err := confine.ImageRoots("/")
	if err != nil {
		return nil, err
	}
	return &judgerunner.Confinement{Shim: self, Image: image, ReadOnly: []string{"/proc"}}, nil
}

// judgeSignals is the judge runner's stop signal. As its container's PID 1 it receives, from processes of its own
// container, only the signals it handles; it handles every one (the Go runtime would otherwise die of some, such
// as SIGQUIT, SIGABRT or SIGILL), and once code_judge scripts may exist (judging) it ignores them all, since
// they may be the scripts'. Before, SIGTERM and SIGINT (the kubelet's) end the returned context. main's own
// SIGTERM/SIGINT context is not used in this mode.
func judgeSignals(judging *atomic.Bool) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs)
	go func() {
		for sig := range sigs {
			if (sig == syscall.SIGTERM || sig == syscall.SIGINT) && !judging.Load() {
				cancel()
			}
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel() }
}

// podModeFlags registers --config and the pod layout's flags on fs (after the mode's own), parses args and
// loads run.json. On failure it returns a nil configuration and the exit code: a usage error, or failCode when
// run.json cannot be read.
func podModeFlags(fs *flag.FlagSet, args []string, stderr io.Writer, failCode int) (*podwire.RunConfig, *podwire.Pod, int) {
	config := fs.String("config", "", "run configuration file (run.json) (required)")
	pod := podFlags(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return nil, nil, code
	}
	if *config == "" {
		return nil, nil, usageError(fs, stderr, "--config is required")
	}
	cfg, err := loadShardConfig(*config)
	if err != nil {
		podwire.Logf(stderr, "%s: %v\n", fs.Name(), err)
		return nil, nil, failCode
	}
	return cfg, pod, 0
}

// loadShardConfig loads run.json narrowed to this pod's shard (its Job completion index).
func loadShardConfig(path string) (*podwire.RunConfig, error) {
	cfg, err := podwire.LoadRunConfig(path)
	if err != nil {
		return nil, err
	}
	if err := cfg.LoadShard(os.Getenv(podwire.EnvShardIndex)); err != nil {
		return nil, fmt.Errorf("run configuration %s: %w", path, err)
	}
	return cfg, nil
}

// podFlags registers the directories of the pod layout, defaulting to the pod's mount points.
func podFlags(fs *flag.FlagSet) *podwire.Pod {
	p := podwire.DefaultPod()
	fs.StringVar(&p.Bin, "bin", p.Bin, "the bin volume (runner-end and judge-end FIFOs)")
	fs.StringVar(&p.Out, "out", p.Out, "the runner's output volume")
	fs.StringVar(&p.Snapshot, "snapshot", p.Snapshot, "the collector's snapshot volume")
	fs.StringVar(&p.Verdicts, "verdicts", p.Verdicts, "the judge container's own writable volume")
	return &p
}

func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		podwire.Logf(fs.Output(), "%s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return exitUsage, false
	}
	return 0, true
}

func usageError(fs *flag.FlagSet, stderr io.Writer, msg string) int {
	podwire.Logf(stderr, "%s: %s\n", fs.Name(), msg)
	fs.Usage()
	return exitUsage
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// installMain is the install init container (internal/install): the pod's eval file and the runner's view, the
// launcher in the bin volume, in a run with code judges this binary (the judge runner) in the judge-bin volume, and
// the FIFOs.
func installMain(ctx context.Context, fs *flag.FlagSet, args []string, stderr io.Writer) int {
	// Writing the runner's view reads the whole eval file: as the collector, keep the heap under the limit.
	memlimit.Apply(memlimit.CgroupFiles)
	bin := fs.String("bin", podwire.BinDir, "the bin volume: where to copy the launcher and make the FIFOs")
	judgeBin := fs.String("judge-bin", podwire.JudgeBinDir, "the judge-bin volume: where to copy the judge runner (with --judges)")
	launcherSrc := fs.String("launcher", podwire.LauncherImageBinary, "the launcher binary to copy into the bin volume")
	judgeSrc := fs.String("judge-runner", "", "the judge runner to copy into the judge-bin volume (default: this executable)")
	config := fs.String("config", "", "run configuration file (run.json): write this pod's shard of the eval file "+
		"(when it names a source eval file) and the runner's eval file and configuration into the view volume")
	judges := fs.Int("judges", 0, "the number of judge containers that run code judges: copy the judge runner and make their judge-end FIFOs")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	o := install.Options{
		EvalCredentialsDir: podwire.EvalCredentialsDir,
		Pod:                podwire.Pod{Bin: *bin, JudgeBin: *judgeBin},
		Launcher:           *launcherSrc,
		JudgeRunner:        *judgeSrc,
		Judges:             *judges,
	}
	if *config != "" {
		cfg, err := loadShardConfig(*config)
		if err != nil {
			podwire.Logf(stderr, "collector install: %v\n", err)
			return exitInfra
		}
		o.Config = cfg
	}
	if o.JudgeRunner == "" && o.Judges > 0 {
		exe, err := os.Executable()
		if err != nil {
			podwire.Logf(stderr, "collector install: cannot find this executable: %v\n", err)
			return exitInfra
		}
		o.JudgeRunner = exe
	}
	if err := install.Run(ctx, o); err != nil {
		podwire.Logf(stderr, "collector install: %v\n", err)
		return exitInfra
	}
	return exitOK
}
