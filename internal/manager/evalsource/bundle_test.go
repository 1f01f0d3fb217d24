package evalsource

import (
	"fmt"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// TestBundleInputs checks the pin-time rule: every input file resolves in the bundle and is not the eval file.
func TestBundleInputs(t *testing.T) {
	const evalYAML = `evalcases:
  - id: a
    expected_outcome: x
    input_messages:
      - role: user
        content:
          - {type: text, value: "Read it"}
          - {type: file, value: %s}
`
	files := []bundle.File{
		{Path: "suites/eval.yaml", SHA256: sha("e")}, {Path: "suites/data/in.txt", SHA256: sha("i")}, {Path: "prompts/judge.md", SHA256: sha("p")},
	}
	m, err := bundle.NewManifest("suites/eval.yaml", files)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ref, want string
	}{
		{"data/in.txt", ""},
		{"./data/in.txt", ""},
		{"/suites/data/in.txt", ""},
		{"data/missing.txt", `file "data/missing.txt" is not in the eval bundle`},
		{"../../etc/passwd", "leads outside the eval bundle"},
		{"eval.yaml", "is the eval file itself"},
	} {
		f, err := evalfile.Parse([]byte(fmt.Sprintf(evalYAML, tc.ref)))
		if err != nil {
			t.Fatal(err)
		}
		got := bundleInputs(m, f)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("input file %q: %q, want %q", tc.ref, got, tc.want)
		}
	}
}

func sha(s string) string { return children.EvalSHA256([]byte(s)) }
