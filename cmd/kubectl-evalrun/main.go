// kubectl-evalrun is the `kubectl evalrun` plugin: results, export, logs and compare for EvalRuns. Put it on
// PATH (go install ./cmd/kubectl-evalrun, or make plugin and copy bin/kubectl-evalrun) and run kubectl evalrun.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/evalrun-operator/evalrun-operator/internal/cli/plugin"

	// The AgentV 4.42 suite reader registers itself with evalfile: this binary reads 4.42 suites (test/architecture).
	_ "github.com/evalrun-operator/evalrun-operator/internal/evalfile/suite42"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := plugin.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}).ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
	}
	// 0, 1 when compare found a regression, 2 on an error (kubectl diff's convention).
	os.Exit(plugin.ExitCode(err))
}
