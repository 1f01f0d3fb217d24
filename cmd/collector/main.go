// Command collector is the trusted side of an EvalRun's pod, and the users' offline check, in one static binary:
//
//	collector install  --config FILE ...    the install init container: the pod's eval file and the runner's view,
//	                                        the launcher (cmd/launcher) into the bin volume, with code judges this
//	                                        binary into the judge-bin volume, the FIFOs
//	collector collect  --config FILE ...    the collector: wait for the runner's end, judge, persist
//	collector judge    --config FILE ...    a judge container's init: run its code_judge scripts on the snapshot
//	collector check    ...                  offline check of a runner's output (and judging with --eval)
//	collector view     EVAL_FILE [-o FILE]  the runner view of an eval file: what a runner reads at {EVAL_FILE}
//
// The runner container's init is not here: it is the launcher (cmd/launcher), a separate small binary, so the
// runner's bin volume holds no judging code.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/evalrun-operator/evalrun-operator/internal/cli/check"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/confine"

	// The AgentV 4.42 suite reader registers itself with evalfile: this binary reads 4.42 suites (test/architecture).
	_ "github.com/evalrun-operator/evalrun-operator/internal/evalfile/suite42"
)

const usage = `usage: collector <install|collect|judge|check|view> [flags]
run "collector <mode> -h" for the flags of a mode`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	mode, args := os.Args[1], os.Args[2:]
	if mode == confine.ShimMode {
		// A code_judge script's shim (internal/confine): nothing else of this binary runs.
		os.Exit(confine.Shim(args, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	var code int
	switch mode {
	case "check":
		code = check.Main(ctx, args, os.Stdout, os.Stderr)
	case "view":
		code = viewMain(args, os.Stdout, os.Stderr)
	case "install", "collect", "judge":
		code = podMain(ctx, mode, args, os.Stderr)
	case "-h", "--help", "help":
		if _, err := fmt.Fprintln(os.Stdout, usage); err != nil {
			code = 1
		}
	default:
		fmt.Fprintf(os.Stderr, "collector: unknown mode %q\n%s\n", mode, usage)
		code = 2
	}
	stop()
	os.Exit(code)
}
