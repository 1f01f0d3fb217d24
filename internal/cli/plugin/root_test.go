package plugin

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Every command's help follows kubectl's conventions: Use names the arguments, Short is one capitalised line
// without a final period, Long explains, and Example holds indented, commented command lines.
func TestHelpFollowsKubectlConventions(t *testing.T) {
	root := NewCommand(genericiooptions.NewTestIOStreamsDiscard())
	cmds := root.Commands()
	if len(cmds) != 8 {
		t.Fatalf("%d commands, want results, export, logs, compare, report, bundle, rejudge, convert", len(cmds))
	}
	for _, c := range append(cmds, root) {
		name := c.Name()
		if c.Short == "" || !unicode.IsUpper(rune(c.Short[0])) || strings.HasSuffix(c.Short, ".") || strings.Contains(c.Short, "\n") {
			t.Errorf("%s: Short %q", name, c.Short)
		}
		if c.Long == "" {
			t.Errorf("%s: no Long", name)
		}
		continued := false // the line before ended in a backslash: this one continues a command
		for _, l := range strings.Split(c.Example, "\n") {
			if l != "" && !continued && !strings.HasPrefix(l, "  # ") && !strings.HasPrefix(l, "  kubectl evalrun ") {
				t.Errorf("%s: Example line %q", name, l)
			}
			continued = strings.HasSuffix(l, `\`)
		}
		// Every command names its argument: a run, or the local directory (bundle) or file (convert) it reads.
		if arg := map[string]string{"bundle": "DIR", "convert": "FILE"}[name]; c != root && !strings.Contains(c.Use, cmp.Or(arg, "RUN")) {
			t.Errorf("%s: Use %q does not name %s", name, c.Use, arg)
		}
	}
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"compare", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kubectl evalrun compare RUN BASELINE [flags]", "--max-new-failures", "--kubeconfig", "-n, --namespace"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("compare --help lacks %q:\n%s", want, out.String())
		}
	}
}

// TestExitCode: kubectl diff's exit codes, 0 nothing to report, 1 a regression (however wrapped), above 1 an error.
func TestExitCode(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want int
	}{
		"success":            {nil, 0},
		"regressed":          {ErrRegressed, 1},
		"regressed wrapped":  {fmt.Errorf("EvalRun a %w b", ErrRegressed), 1},
		"judges differently": {ErrJudgesDifferently, 1},
		"an error":           {errors.New("reading EvalRun x: not found"), 2},
	} {
		t.Run(name, func(t *testing.T) {
			if got := ExitCode(tc.err); got != tc.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}
