// Package plugin is `kubectl evalrun`: the commands that read an EvalRun's full stored results (internal/stored)
// and render them (internal/report: tables, exports, the HTML report written to a file or served on loopback),
// show its pods' logs, compare it with a baseline (internal/compare) and create a re-judge of it (rejudge.go).
// I/O: the API server through the usual kubectl flags (cli-runtime), the bucket through the run's credentials
// Secret, a loopback listener (report --serve).
package plugin

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// ErrRegressed is returned by compare when the run regressed against the bounds given; main exits 1 on it and 2
// on any other error (ExitCode).
var ErrRegressed = errors.New("regressed against baseline")

// Exit codes of kubectl evalrun, as kubectl diff has them: 0 success (no regression), 1 a regression, above 1 an
// error.
const (
	ExitRegressed = 1
	ExitError     = 2
)

// ExitCode is the exit status for what the command returned: 0 for nil, ExitRegressed for ErrRegressed (compare:
// the run regressed) and ErrJudgesDifferently (convert: the suite would judge differently), ExitError for every
// other error.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrRegressed), errors.Is(err, ErrJudgesDifferently):
		return ExitRegressed
	default:
		return ExitError
	}
}

// Output formats of -o.
const (
	outputTable = "table"
	outputText  = "text"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// env is what every command reads through: the clients and the namespace the kubectl flags select.
type env struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
}

// NewCommand returns `kubectl evalrun` with its subcommands, writing to streams.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	e := &env{flags: genericclioptions.NewConfigFlags(true), streams: streams}
	cmd := &cobra.Command{
		Use:   "evalrun",
		Short: "Read EvalRun results, export them for CI, show logs, compare with a baseline and write an HTML report",
		Long: `kubectl evalrun reads an EvalRun's full per-case results, wherever the run stored them (its result
ConfigMaps, or its bucket with the credentials Secret the run names), not only what fit in its status.

Install it on your PATH as kubectl-evalrun and kubectl runs it as "kubectl evalrun".`,
		Example: `  # The per-case table of a run, failing cases first
  kubectl evalrun results screening-nightly

  # Every result as JUnit XML for a CI test reporter
  kubectl evalrun export screening-nightly -o junit --output-file report.xml

  # Fail a CI job when a run regressed against another (exit 1; above 1 when it could not compare)
  kubectl evalrun compare screening-pr screening-nightly --max-new-failures 0

  # One self-contained HTML page of a run, to open or share
  kubectl evalrun report screening-nightly -o screening-nightly.html

  # Judge a finished run's kept records again with other judging, without running its agent
  kubectl evalrun rejudge screening-nightly --judging judging.yaml

  # Move an agentv-eval-v2 file forward to an AgentV 4.42 suite
  kubectl evalrun convert evals/dataset.yaml -o evals/dataset.eval.yaml`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: true},
		// kubectl runs the binary kubectl-evalrun as "kubectl evalrun": the help says so.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl evalrun"},
	}
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	e.flags.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(newResultsCommand(e), newExportCommand(e), newLogsCommand(e), newCompareCommand(e), newReportCommand(e),
		newBundleCommand(e), newRejudgeCommand(e), newConvertCommand())
	return cmd
}

// client is a controller-runtime client with the EvalRun API.
func (e *env) client() (client.Client, error) {
	cfg, err := e.flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme()})
}

// clientset is the typed clientset (for pod logs).
func (e *env) clientset() (kubernetes.Interface, error) {
	cfg, err := e.flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// namespace is the namespace of -n, else the kubeconfig context's.
func (e *env) namespace() (string, error) {
	ns, _, err := e.flags.ToRawKubeConfigLoader().Namespace()
	return ns, err
}

// clientAndRun returns a client and the EvalRun called name in the selected namespace.
func (e *env) clientAndRun(ctx context.Context, name string) (client.Client, *evalsv1alpha1.EvalRun, error) {
	c, err := e.client()
	if err != nil {
		return nil, nil, err
	}
	run, err := e.getRun(ctx, c, name)
	return c, run, err
}

// storedRun returns the EvalRun called name and every result line it stored.
func (e *env) storedRun(ctx context.Context, name string) (*evalsv1alpha1.EvalRun, []*results.Line, error) {
	c, run, err := e.clientAndRun(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	lines, err := storedLines(ctx, c, run)
	return run, lines, err
}

// getRun reads an EvalRun in the selected namespace.
func (e *env) getRun(ctx context.Context, c client.Client, name string) (*evalsv1alpha1.EvalRun, error) {
	ns, err := e.namespace()
	if err != nil {
		return nil, err
	}
	run := &evalsv1alpha1.EvalRun{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
		return nil, fmt.Errorf("reading EvalRun %s/%s: %w", ns, name, err)
	}
	return run, nil
}

// scheme has the Kubernetes types and the EvalRun API.
func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(evalsv1alpha1.AddToScheme(s))
	return s
}
