package judges

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
)

// TestSampleBundleKeys: every file of the sample's bundle ConfigMap (examples/screening/kustomization.yaml) is under
// the key the bundle's rule escapes its path to, and every code_judge script the eval file names is one of them: a
// key spelt otherwise fails the sample run with InvalidEvalFile.
func TestSampleBundleKeys(t *testing.T) {
	dir := filepath.Join("..")
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		ConfigMapGenerator []struct {
			Name  string   `json:"name"`
			Files []string `json:"files"`
		} `json:"configMapGenerator"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, g := range k.ConfigMapGenerator {
		if g.Name != "screening-bundle" {
			continue
		}
		for _, f := range g.Files {
			key, path, ok := strings.Cut(f, "=")
			if !ok {
				key, path = f, f
			}
			want, err := bundle.KeyFor(path)
			if err != nil || key != want {
				t.Errorf("file %s is under key %q, want %q (%v)", path, key, want, err)
			}
			if _, err := os.Stat(filepath.Join(dir, path)); err != nil {
				t.Errorf("bundle file %s: %v", path, err)
			}
			paths[path] = true
		}
	}
	if !paths["eval.yaml"] {
		t.Fatalf("the bundle %v has no eval.yaml", paths)
	}
	eval, err := os.ReadFile(filepath.Join(dir, "eval.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(eval), "\n") {
		script, ok := strings.CutPrefix(strings.TrimSpace(line), "script: python3 ")
		if !ok {
			continue
		}
		n++
		if !paths[script] {
			t.Errorf("the eval file runs %s, which is not in the bundle %v", script, paths)
		}
	}
	if n == 0 {
		t.Error("the eval file names no python3 code judge")
	}
}
