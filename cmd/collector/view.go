package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// viewMain is `collector view EVAL_FILE [-o FILE]`: it writes the runner view of an eval file, exactly what a
// run's runner gets at {EVAL_FILE} by default (spec.target.evalFileView Inputs), so runner authors can test
// against it. The view goes to stdout, or atomically to FILE. It returns the exit code: 0, 1 when the file does
// not read or validate, 2 for a usage error.
func viewMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("collector view", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the view to this file instead of stdout")
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "usage: collector view EVAL_FILE [-o FILE]\n\n"+
			"Writes the runner view of EVAL_FILE: per case only its id, conversation_id and input_messages, and\n"+
			"expected_outcome %q; what a runner reads at {EVAL_FILE}\n"+
			"unless the EvalRun sets spec.target.evalFileView: Full.\n\n", evalfile.ViewExpectedOutcome)
		fs.PrintDefaults()
	}
	// Flags may follow the file name.
	var file string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			return exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		if file != "" {
			return usageError(fs, stderr, "one EVAL_FILE only")
		}
		file, args = fs.Arg(0), fs.Args()[1:]
	}
	if file == "" {
		return usageError(fs, stderr, "EVAL_FILE is required")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		podwire.Logf(stderr, "collector view: %v\n", err)
		return exitInfra
	}
	write := func(w io.Writer) error {
		_, err := evalfile.WriteView(w, data, evalfile.WithOwnedData())
		return err
	}
	if *out == "" {
		err = write(stdout)
	} else {
		err = podwire.WriteFileAtomic(*out, 0o644, write)
	}
	if err != nil {
		podwire.Logf(stderr, "collector view: %s: %v\n", file, err)
		return exitInfra
	}
	return exitOK
}
