package evaluate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// TestInputFilesInTheQuestion: spec.judging.inputFiles decides how the question shows input files, in both
// formats and both of AgentV's question layouts (one message; role markers): Reference as AgentV shows them to a CLI
// target (v2.0.1: the path as written; 4.42: the absolute bundle path), Embed with their text (its LM target);
// unset is the format's own (v2: Embed, 4.42: Reference). The CLI-target recordings of AgentV v2.0.1 hold the v2
// references to AgentV's bytes (TestAgentVExamples/recordings-cli).
func TestInputFilesInTheQuestion(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "evals"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "evals", "spec.md"), []byte("  the spec  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := bundle.Dir{Root: root, EvalFile: "evals/eval.yaml"}
	v2 := func(input string) *evalfile.Case {
		f, err := evalfile.Parse([]byte("evalcases:\n  - id: a\n    expected_outcome: o\n    input_messages: " + input + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		return f.CaseAt(0)
	}
	one := "[{role: user, content: [{type: file, value: ./spec.md}, {type: text, value: review it}]}]"
	turns := "[{role: system, content: be brief}, {role: user, content: [{type: file, value: ./spec.md}, {type: text, value: review it}]}]"
	for _, tc := range []struct {
		name, input string
		mode        InputFiles
		v2          string
	}{
		{"one message, the format's own", one, InputFilesFormat, "<file path=\"./spec.md\">\nthe spec\n</file>\n\nreview it"},
		{"one message, Reference", one, InputFilesReference, "<file: path=\"./spec.md\">\n\nreview it"},
		{"one message, Embed", one, InputFilesEmbed, "<file path=\"./spec.md\">\nthe spec\n</file>\n\nreview it"},
		{"role markers, Reference", turns, InputFilesReference, "@[System]:\nbe brief\n\n@[User]:\n<file: path=\"./spec.md\">\nreview it"},
		{"role markers, Embed", turns, InputFilesEmbed,
			"@[System]:\nbe brief\n\n@[User]:\n<file path=\"./spec.md\">\nthe spec\n</file>\nreview it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := buildJudgeInputs(b, v2(tc.input), tc.mode == InputFilesReference)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.v2, in.question); diff != "" {
				t.Errorf("agentv-eval-v2 question (-want +got):\n%s", diff)
			}
		})
	}
}
