package plugin

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestConvert runs kubectl evalrun convert on a v2 file in a repository: the notes on stderr with the file, the
// key and its line; nothing written and exit 1 when the suite would judge differently; the suite with --force, and
// at once when nothing differs.
func TestConvert(t *testing.T) {
	repo := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, p), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".git/HEAD", "ref")
	write("prompts/judge.md", "Grade {{candidate_answer}}\n")
	write("evals/same.yaml", "evalcases:\n  - id: a\n    expected_outcome: o\n    input_messages: [{role: user, content: q}]\n"+
		"    evaluators: [{name: lat, type: latency, threshold: 5}]\n")
	write("evals/differs.yaml", "evalcases:\n  - id: a\n    input_messages: [{role: user, content: q}]\n"+
		"    evaluators: [{name: j, type: llm_judge, prompt: ../prompts/judge.md}]\n")
	run := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		root := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		root.SetArgs(append([]string{"convert"}, args...))
		err := root.Execute()
		return out.String(), errOut.String(), err
	}

	stdout, stderr, err := run(filepath.Join(repo, "evals/same.yaml"))
	if err != nil || stderr != "" {
		t.Fatalf("same.yaml: %v, stderr %q", err, stderr)
	}
	want := "tests:\n  - id: a\n    criteria: o\n    input: q\n    assertions: [{name: lat, type: latency, threshold: 5}]\n"
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("same.yaml's suite (-want +got):\n%s", diff)
	}

	out := filepath.Join(repo, "evals/differs.eval.yaml")
	_, stderr, err = run(filepath.Join(repo, "evals/differs.yaml"), "-o", out)
	if !errors.Is(err, ErrJudgesDifferently) || ExitCode(err) != 1 {
		t.Fatalf("differs.yaml: %v, want ErrJudgesDifferently", err)
	}
	wantErr := filepath.Join(repo, "evals/differs.yaml") + ":4: evalcases[0].evaluators[0]: note: an llm_judge becomes an llm-grader: " +
		"AgentV 4.42 asks with its own prompts and reply schema, and the grader passes at 0.8 (the test at its threshold)\n" +
		filepath.Join(repo, "prompts/judge.md") + ":1: evalcases[0].evaluators[0].prompt: differs: {{candidate_answer}} is " +
		"AgentV v2's variable; AgentV 4.42 fills {{output}} with the same part of the case: rename it in the file\n"
	if diff := cmp.Diff(wantErr, stderr); diff != "" {
		t.Errorf("differs.yaml's notes (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s was written without --force: %v", out, err)
	}
	if _, _, err := run(filepath.Join(repo, "evals/differs.yaml"), "-o", out, "--force"); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if data, err := os.ReadFile(out); err != nil || !strings.Contains(string(data), "file://../prompts/judge.md") {
		t.Errorf("--force wrote %q (%v)", data, err)
	}

	if _, _, err := run(filepath.Join(repo, "evals/same.yaml"), "--bundle", filepath.Join(repo, "prompts")); err == nil ||
		!strings.Contains(err.Error(), "not inside --bundle") || ExitCode(err) != 2 {
		t.Errorf("a file outside --bundle: %v", err)
	}
	write("evals/bad.yaml", "evalcases:\n  - id: a\n")
	if _, _, err := run(filepath.Join(repo, "evals/bad.yaml")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("an invalid v2 file: %v", err)
	}
}
