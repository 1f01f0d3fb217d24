package plugin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalconvert"
)

// ErrJudgesDifferently is returned by convert when the converted suite would judge the file's cases differently
// and --force was not given: nothing is written, and main exits 1 (as compare does on a regression).
var ErrJudgesDifferently = errors.New("the converted suite would judge differently (see the notes above): nothing written; " +
	"fix what they say, or pass --force to write it anyway")

// maxConvertBytes bounds the eval file convert reads.
const maxConvertBytes = 64 << 20

type convertOptions struct {
	output, bundleDir string
	force             bool
}

func newConvertCommand() *cobra.Command {
	o := &convertOptions{}
	cmd := &cobra.Command{
		Use:   "convert FILE [-o OUT] [--bundle DIR] [--force]",
		Short: "Write an agentv-eval-v2 file as an AgentV 4.42 suite, and say what it cannot carry",
		Long: `Write FILE, an agentv-eval-v2 eval file (evalcases, input_messages, execution.evaluators), as an AgentV 4.42
suite (tests, input, expected_output, criteria, assertions), to standard output or to OUT.

Every key the operator reads from the v2 file becomes the 4.42 key it reads into the same case or evaluator. Standard
error lists, with the v2 key and its line, everything the suite cannot carry: "note:" for what was renamed, dropped
without effect, or is judged the 4.42 way by design (LLM graders ask with AgentV 4.42's prompts); "differs:" for what
would be judged differently (a code_judge script reads v2's stdin, a prompt file uses v2's template variables, an
input file AgentV's config makes a guideline, ...). The suite is read back with the operator's 4.42 reader first.

When a note says "differs:", nothing is written and the exit code is 1: fix what it says (in the v2 file, or in the
suite and the files it names once written), or pass --force to write the suite anyway. Exit code 0 when written, 2 on
an error (an invalid v2 file lists its problems with their lines).

Prompt files and .agentv/config.yaml are read from the eval bundle: --bundle DIR, else FILE's repository root (the
nearest directory above it with .git), else FILE's directory. The suite's references stay relative to FILE's
directory: write OUT beside FILE.`,
		Example: `  # See what a conversion says, without writing anything when it would judge differently
  kubectl evalrun convert evals/dataset.yaml -o evals/dataset.eval.yaml

  # Write it anyway, then fix the code judges to read AgentV 4.42's stdin
  kubectl evalrun convert evals/dataset.yaml -o evals/dataset.eval.yaml --force`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "Write the suite to this file instead of standard output.")
	f.StringVar(&o.bundleDir, "bundle", "", "The eval bundle's root directory, which holds FILE (default: FILE's repository root, else its directory).")
	f.BoolVar(&o.force, "force", false, "Write the suite even when it would judge differently (exit 0).")
	return cmd
}

func (o *convertOptions) run(cmd *cobra.Command, file string) error {
	data, err := readBounded(file, maxConvertBytes)
	if err != nil {
		return err
	}
	b, err := o.bundle(file)
	if err != nil {
		return err
	}
	res, err := evalconvert.Convert(data, evalconvert.Options{Bundle: b})
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	stderr := cmd.ErrOrStderr()
	for _, n := range res.Notes {
		where := file
		if n.File != "" {
			where = n.File
			if n.File != evalconvert.SuiteFile {
				where = filepath.Join(b.Root, filepath.FromSlash(n.File))
			}
		}
		n.File = where
		if _, err := fmt.Fprintln(stderr, n.String()); err != nil {
			return err
		}
	}
	if res.Differs() && !o.force {
		return ErrJudgesDifferently
	}
	if o.output == "" {
		_, err := cmd.OutOrStdout().Write(res.Suite)
		return err
	}
	if err := os.WriteFile(o.output, res.Suite, 0o644); err != nil { //nolint:gosec // a suite people read and commit
		return err
	}
	_, err = fmt.Fprintf(stderr, "%s: %d tests written\n", o.output, res.Cases)
	return err
}

// bundle is the eval bundle convert reads FILE's other files from.
func (o *convertOptions) bundle(file string) (bundle.Dir, error) {
	if o.bundleDir == "" {
		return bundle.ForEvalFile(file)
	}
	root, err := filepath.Abs(o.bundleDir)
	if err != nil {
		return bundle.Dir{}, err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return bundle.Dir{}, err
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return bundle.Dir{}, fmt.Errorf("%s is not inside --bundle %s", file, o.bundleDir)
	}
	return bundle.Dir{Root: root, EvalFile: filepath.ToSlash(rel)}, nil
}

// readBounded reads a local file of at most limit bytes.
func readBounded(file string, limit int64) ([]byte, error) {
	f, err := os.Open(file) //nolint:gosec // the user names the file to convert
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, limit)
	}
	return data, nil
}
