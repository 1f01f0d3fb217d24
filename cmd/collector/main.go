// Command collector is the one static binary that runs inside an EvalRun's pod and on users' machines:
//
//	collector install  --bin DIR            copy this binary into the bin volume, make the runner-end FIFO (init)
//	collector launch   --config FILE ...    the runner container's init: run the command template, kill leftovers
//	collector collect  --config FILE ...    the collector container: wait for the runner's end, judge, persist
//	collector judge    --config FILE ...    the judge container: run code_judge scripts on the collector's snapshot
//	collector check    ...                  offline check of a runner's output (and judging with --eval)
//	collector view     EVAL_FILE [-o FILE]  the runner view of an eval file: what a runner reads at {EVAL_FILE}
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/evalrun-operator/evalrun-operator/internal/check"
)

const usage = `usage: collector <install|launch|collect|judge|check|view> [flags]
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
	case "view":
		code = viewMain(args, os.Stdout, os.Stderr)
	case "install", "launch", "collect", "judge":
		code = podMain(ctx, mode, args, os.Stdout, os.Stderr)
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
