package grade42

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
)

// TestInputFilesInTheQuestion42: spec.judging.inputFiles decides how a 4.42 test's question shows its input files,
// in both of AgentV's question layouts (one message; role markers): Reference as AgentV 4.42 shows them to a CLI
// target (the absolute bundle path), Embed with their text (its LM target); unset is the format's own (Reference).
// evaluate's TestInputFilesInTheQuestion checks agentv-eval-v2's.
func TestInputFilesInTheQuestion42(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "evals"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "evals", "spec.md"), []byte("  the spec  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := bundle.Dir{Root: root, EvalFile: "evals/eval.yaml"}
	suite := func(input string) *evalfile.Case {
		f, err := evalfile.Parse([]byte("tests:\n  - id: a\n    criteria: o\n    input: "+input+"\n"), evalfile.WithFiles(os.DirFS(root), b.EvalFile))
		if err != nil {
			t.Fatal(err)
		}
		return f.CaseAt(0)
	}
	one := "[{role: user, content: [{type: file, value: ./spec.md}, {type: text, value: review it}]}]"
	turns := "[{role: system, content: be brief}, {role: user, content: [{type: file, value: ./spec.md}, {type: text, value: review it}]}]"
	abs := filepath.ToSlash(filepath.Join(root, "evals", "spec.md"))
	for _, tc := range []struct {
		name, input string
		mode        evaluate.InputFiles
		suite       string
	}{
		{"one message, the format's own", one, evaluate.InputFilesFormat, "<file: path=\"" + abs + "\">\n\nreview it"},
		{"one message, Reference", one, evaluate.InputFilesReference, "<file: path=\"" + abs + "\">\n\nreview it"},
		{"one message, Embed", one, evaluate.InputFilesEmbed, "<file path=\"./spec.md\">\nthe spec\n</file>\n\nreview it"},
		{"role markers, Reference", turns, evaluate.InputFilesReference, "@[System]:\nbe brief\n\n@[User]:\n<file: path=\"" + abs + "\">\nreview it"},
		{"role markers, Embed", turns, evaluate.InputFilesEmbed,
			"@[System]:\nbe brief\n\n@[User]:\n<file path=\"./spec.md\">\nthe spec\n</file>\nreview it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in42, err := buildInputs42(b, suite(tc.input), tc.mode == evaluate.InputFilesEmbed)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.suite, in42.question); diff != "" {
				t.Errorf("4.42 question (-want +got):\n%s", diff)
			}
		})
	}
}
