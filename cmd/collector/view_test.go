package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/google/go-cmp/cmp"
)

// TestView: `collector view` writes exactly evalfile.WriteView's view, to stdout or a file.
func TestView(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "..", "examples", "screening", "eval.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := evalfile.WriteView(&want, data); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := viewMain([]string{src}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit code %d, stderr %q", code, stderr.String())
	}
	if diff := cmp.Diff(want.String(), stdout.String()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	out := filepath.Join(dir, "view.yaml")
	for _, args := range [][]string{{src, "-o", out}, {"-o", out, src}} {
		stdout.Reset()
		if code := viewMain(args, &stdout, &stderr); code != exitOK {
			t.Fatalf("%q: exit code %d, stderr %q", args, code, stderr.String())
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.String(), string(got)); diff != "" || stdout.Len() > 0 {
			t.Errorf("%q: file (-want +got):\n%s\nstdout %q", args, diff, stdout.String())
		}
	}
}

func TestViewErrors(t *testing.T) {
	dir := t.TempDir()
	invalid := filepath.Join(dir, "invalid.yaml")
	if err := os.WriteFile(invalid, []byte("evalcases:\n  - id: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.yaml")
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"no file", nil, exitUsage},
		{"two files", []string{invalid, invalid}, exitUsage},
		{"unknown flag", []string{"--full", invalid}, exitUsage},
		{"missing file", []string{filepath.Join(dir, "nope.yaml")}, exitInfra},
		{"invalid file", []string{invalid, "-o", out}, exitInfra},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := viewMain(tc.args, &bytes.Buffer{}, &stderr); got != tc.want {
				t.Errorf("exit code %d, want %d (stderr %q)", got, tc.want, stderr.String())
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("an invalid file left %s: %v", out, err)
	}
}

// TestInstallWritesTheRunnersView: install writes the runner's eval file (the view, or the whole file with Full)
// and its configuration, read-only, and the configuration holds nothing of the judging side.
func TestInstallWritesTheRunnersView(t *testing.T) {
	for _, view := range []evalsv1alpha1.EvalFileView{evalsv1alpha1.EvalFileViewInputs, evalsv1alpha1.EvalFileViewFull} {
		t.Run(string(view), func(t *testing.T) {
			f := testutil.NewPodFixture(t, "run {EVAL_FILE} {OUTPUT_FILE}")
			f.Config.EvalFileView = string(view)
			f.Config.DefaultEvaluators = []map[string]any{{"name": "CANARY-judging", "type": "latency", "threshold": 1}}
			runJSON := filepath.Join(f.Dir, "run.json")
			if err := podwire.WriteJSONAtomic(runJSON, f.Config); err != nil {
				t.Fatal(err)
			}
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			args := []string{"--launcher", exe, "--bin", f.Pod.Bin, "--config", runJSON}
			if code := podMain(context.Background(), "install", args, &stderr); code != exitOK {
				t.Fatalf("install exit code %d, stderr %q", code, stderr.String())
			}
			got, err := os.ReadFile(f.Config.RunnerEvalFile)
			if err != nil {
				t.Fatal(err)
			}
			want := []byte(testutil.PodTestEval)
			if view == evalsv1alpha1.EvalFileViewInputs {
				var buf bytes.Buffer
				if _, err := evalfile.WriteView(&buf, want); err != nil {
					t.Fatal(err)
				}
				want = buf.Bytes()
				if strings.Contains(string(got), "code_judge") || strings.Contains(string(got), "expected_messages") {
					t.Errorf("the runner's view holds judging data:\n%s", got)
				}
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("the runner's eval file (-want +got):\n%s", diff)
			}
			raw, err := os.ReadFile(f.Config.RunnerConfigFile)
			if err != nil {
				t.Fatal(err)
			}
			var keys map[string]json.RawMessage
			if err := json.Unmarshal(raw, &keys); err != nil {
				t.Fatal(err)
			}
			allowed := []string{"evalFile", "caseIds", "commandTemplate", "batching", "workers", "timeoutSeconds", "killGraceSeconds",
				"workingDir", "healthcheckTemplate", "healthcheckTimeoutSeconds", "collectorStartSeconds"}
			for k := range keys {
				if !slices.Contains(allowed, k) {
					t.Errorf("the runner's configuration has %q", k)
				}
			}
			if strings.Contains(string(raw), "CANARY") || strings.Contains(string(raw), "passThreshold") {
				t.Errorf("the runner's configuration holds judging settings: %s", raw)
			}
			rc, err := podwire.LoadRunnerConfig(f.Config.RunnerConfigFile)
			if err != nil {
				t.Fatal(err)
			}
			if rc.EvalFile != f.Config.RunnerEvalFile || !slices.Equal(rc.CaseIDs, f.Config.CaseIDs) || rc.CommandTemplate != f.Config.CommandTemplate {
				t.Errorf("runner configuration %+v", rc)
			}
			for _, p := range []string{f.Config.RunnerEvalFile, f.Config.RunnerConfigFile} {
				if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o444 {
					t.Errorf("%s: %v %v, want mode 0444", p, fi, err)
				}
			}
		})
	}
}
