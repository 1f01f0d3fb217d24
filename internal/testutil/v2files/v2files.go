// Package v2files lists the agentv-eval-v2 files of this repository with their eval bundles, for the tests that
// convert every one of them to an AgentV 4.42 suite (internal/evalconvert, internal/cli/check). Test code only.
package v2files

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
)

// File is one agentv-eval-v2 file.
type File struct {
	// Name names it in test output; Data is its text; Bundle its eval bundle (Root "" for an inline file).
	Name   string
	Data   []byte
	Bundle bundle.Dir
}

// Examples are AgentV's example files of the v2.0.1 oracle (internal/cli/check/testdata/agentv/features).
var Examples = []string{"basic", "rubric", "composite", "weighted-evaluators", "local-cli", "cw-incident-triage"}

// All returns every agentv-eval-v2 file the repository has: AgentV's examples, the screening example and
// collector check's test data, evalfile's test data and the sample EvalRun's inline file.
func All(t testing.TB) []File {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("v2files: no caller")
	}
	repo := filepath.Join(filepath.Dir(self), "..", "..", "..")
	abs := func(p string) string {
		a, err := filepath.Abs(filepath.Join(repo, p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	var out []File
	add := func(name, root, evalFile string) {
		data, err := os.ReadFile(filepath.Join(root, evalFile))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, File{Name: name, Data: data, Bundle: bundle.Dir{Root: root, EvalFile: evalFile}})
	}
	features := abs("internal/cli/check/testdata/agentv/features")
	for _, ex := range Examples {
		add("agentv/"+ex, features, ex+"/evals/dataset.yaml")
	}
	add("examples/screening", abs("examples/screening"), "eval.yaml")
	add("check/screening", abs("internal/cli/check/testdata"), "screening.yaml")
	add("check/judging", abs("internal/cli/check/testdata/judging"), "eval.yaml")
	add("evalfile/full", abs("internal/evalfile/testdata"), "full.yaml")
	add("evalfile/screening", abs("internal/evalfile/testdata"), "screening.yaml")
	sample, err := os.ReadFile(abs("config/samples/evals_v1alpha1_evalrun.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Spec struct {
			EvalFile struct {
				Inline string `json:"inline"`
			} `json:"evalFile"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(sample, &run); err != nil {
		t.Fatal(err)
	}
	return append(out, File{Name: "samples/evalrun", Data: []byte(run.Spec.EvalFile.Inline)})
}
