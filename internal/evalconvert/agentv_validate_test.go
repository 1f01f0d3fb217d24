package evalconvert

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/testutil/v2files"
)

// validateRecord is AgentV 4.42.4's `agentv validate` output on every converted v2 file of the repository
// (TestAgentV442ValidatesConverted), the scratch directory written /CONVERTED.
const validateRecord = "testdata/agentv442-validate.txt"

// TestAgentV442ValidatesConverted is the oracle's word on the converter: AgentV 4.42.4 itself (bin/agentv/4.42.4,
// as hack/agentv442-oracle.sh installs it from npm; run with node, offline) validates every converted v2 file of
// the repository, each written beside its v2 file in a copy of its bundle (a scratch repository), and its output is
// the kept record. Without AgentV or node the test skips; TestValidateRecord still holds the record to the files.
// EVALCONVERT_UPDATE_RECORD=1 writes the record again.
func TestAgentV442ValidatesConverted(t *testing.T) {
	cli, err := filepath.Abs(filepath.Join("..", "..", "bin", "agentv", "4.42.4", "node_modules", "agentv", "dist", "cli.js"))
	if err != nil {
		t.Fatal(err)
	}
	node, nodeErr := exec.LookPath("node")
	if _, err := os.Stat(cli); err != nil || nodeErr != nil {
		t.Skipf("AgentV 4.42.4 (hack/agentv442-oracle.sh installs it) and node are needed: %v %v", err, nodeErr)
	}
	scratch := t.TempDir()
	var paths []string
	for _, vf := range v2files.All(t) {
		res, err := Convert(vf.Data, Options{Bundle: vf.Bundle})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(scratch, filepath.FromSlash(vf.Name))
		evalFile := vf.Bundle.EvalFile
		if vf.Bundle.Root != "" {
			if err := os.CopyFS(dir, os.DirFS(vf.Bundle.Root)); err != nil {
				t.Fatal(err)
			}
		} else {
			evalFile = "eval.yaml"
		}
		p := filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(evalFile, filepath.Ext(evalFile))+".converted.eval.yaml"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, res.Suite, 0o600); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(scratch, p)
		paths = append(paths, rel)
	}
	for _, d := range []string{".git", "home", "tmp"} {
		if err := os.Mkdir(filepath.Join(scratch, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(node, append([]string{cli, "validate"}, paths...)...) //nolint:gosec // the test's own paths
	cmd.Dir = scratch
	cmd.Env = []string{"PATH=" + filepath.Dir(node) + ":/usr/bin:/bin", "HOME=" + filepath.Join(scratch, "home"),
		"TMPDIR=" + filepath.Join(scratch, "tmp"), "AGENTV_NO_UPDATE_CHECK=1", "NO_COLOR=1"}
	// Its exit status says whether every file is valid: the record says which, and TestValidateRecord why not.
	out, _ := cmd.CombinedOutput()
	got := strings.ReplaceAll(string(out), scratch, "/CONVERTED")
	if os.Getenv("EVALCONVERT_UPDATE_RECORD") != "" {
		if err := os.WriteFile(validateRecord, []byte(got), 0o644); err != nil { //nolint:gosec // test data
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(validateRecord)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("agentv validate (-record +now):\n%s", diff)
	}
}

// TestValidateRecord holds the kept record of AgentV 4.42.4's validation to the repository's v2 files: every
// converted file is in it, valid unless its conversion says it differs (a tool message in input, for example).
func TestValidateRecord(t *testing.T) {
	data, err := os.ReadFile(validateRecord)
	if err != nil {
		t.Fatal(err)
	}
	record := string(data)
	valid := 0
	files := v2files.All(t)
	for _, vf := range files {
		res, err := Convert(vf.Data, Options{Bundle: vf.Bundle})
		if err != nil {
			t.Fatal(err)
		}
		evalFile := vf.Bundle.EvalFile
		if vf.Bundle.Root == "" {
			evalFile = "eval.yaml"
		}
		name := " /CONVERTED/" + vf.Name + "/" + strings.TrimSuffix(evalFile, filepath.Ext(evalFile)) + ".converted.eval.yaml\n"
		switch {
		case strings.Contains(record, "✓"+name):
			valid++
		case strings.Contains(record, "✗"+name) && res.Differs():
		case strings.Contains(record, "✗"+name):
			t.Errorf("AgentV refuses %s, and no note of its conversion says it differs", vf.Name)
		default:
			t.Errorf("the record has no %s", name)
		}
	}
	for _, want := range []string{"Total files: " + strconv.Itoa(len(files)) + "\n", "Valid: " + strconv.Itoa(valid) + "\n"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the record lacks %q:\n%s", want, record)
		}
	}
	t.Logf("AgentV 4.42.4 validates %d of %d converted files", valid, len(files))
}
