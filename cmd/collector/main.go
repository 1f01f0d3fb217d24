// Command collector is the one static binary that runs inside an EvalRun's pod and on users' machines:
//
//	collector install  --dest PATH          copy this binary into the shared work volume (init container)
//	collector launch   --config FILE ...    render and run the command template in the runner container
//	collector collect  --config FILE ...    the native sidecar: parse, judge, persist results
//	collector probe    --ready-file FILE    the collector's startup probe
//	collector check    ...                  offline check of a runner's output (and judging with --eval)
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/evalrun-operator/evalrun-operator/internal/check"
	"github.com/evalrun-operator/evalrun-operator/internal/podruntime"
)

const usage = `usage: collector <install|launch|collect|probe|check> [flags]
run "collector <mode> -h" for the flags of a mode`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	mode, args := os.Args[1], os.Args[2:]
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	var code int
	switch mode {
	case "check":
		code = check.Main(ctx, args, os.Stdout, os.Stderr)
	case "install", "launch", "collect", "probe":
		code = podruntime.Main(ctx, mode, args, os.Stdout, os.Stderr)
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
