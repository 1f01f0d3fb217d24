package evaluate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// A case that names the same 1 MiB bundle file over and over (input and expected messages alike) would make its
// judge's prompt as large as the references multiply it: its judge inputs are refused past MaxCaseFileBytes,
// saying why, and a case naming it a few times reads as before.
func TestRepeatedFileReferencesAreBounded(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "big.md"), []byte(strings.Repeat("b", MaxBundleFileBytes-16)), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := func(n int, where string) *evalfile.Case {
		var segs strings.Builder
		for i := range n {
			if i > 0 {
				segs.WriteString(", ")
			}
			segs.WriteString("{type: file, value: ./big.md}")
		}
		doc := "evalcases:\n  - id: c1\n    input_messages: [{role: user, content: q}]\n    expected_messages: [{role: assistant, content: a}]\n"
		doc = strings.Replace(doc, "{role: "+where+", content: "+map[string]string{"user": "q", "assistant": "a"}[where]+"}",
			"{role: "+where+", content: ["+segs.String()+"]}", 1)
		f, err := evalfile.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return f.CaseAt(0)
	}
	b := bundle.Dir{Root: root, EvalFile: "eval.yaml"}
	for _, where := range []string{"user", "assistant"} {
		if _, err := buildJudgeInputs(b, inputs(4, where), false); err != nil {
			t.Errorf("%s messages naming the file 4 times: %v", where, err)
		}
		_, err := buildJudgeInputs(b, inputs(MaxCaseFileBytes/MaxBundleFileBytes+1, where), false)
		if err == nil || !strings.Contains(err.Error(), "read more than 16 MiB in all") {
			t.Errorf("%s messages naming the file %d times: err = %v, want the case's bound", where, MaxCaseFileBytes/MaxBundleFileBytes+1, err)
		}
	}
}
