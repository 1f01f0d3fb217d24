package judgerunner

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/confine"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// hostileEval: c1's script is an answer gone hostile: it tries to read the eval file (every case's key), to
// connect to a TCP listener on loopback (the runner's port in a pod), and to signal the judge runner; it scores 1
// only if every attempt succeeded, and lists what it managed in hits.
const hostileEval = `$schema: agentv-eval-v2
evalcases:
  - id: c1
    input_messages: [{role: user, content: one}]
    expected_messages: [{role: assistant, content: "c1 secret answer"}]
    execution:
      evaluators:
        - name: run-answer
          type: code_judge
          script: |
            payload=$(cat)
            hits=""
            case "$payload" in *"c1 secret answer"*) hits="$hits\"own key on stdin\",";; esac
            cat "$EVAL" >/dev/null 2>&1 && hits="$hits\"read the eval file\","
            (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && hits="$hits\"TCP connect\","
            kill -0 "$JUDGE_PID" 2>/dev/null && hits="$hits\"signal the judge runner\","
            echo "{\"score\": 0, \"hits\": [${hits%,}]}"
  - id: c2
    input_messages: [{role: user, content: two}]
    expected_messages: [{role: assistant, content: "c2 secret answer"}]
`

// Under Landlock the script gets its own case's key on stdin and nothing else: no eval file, no TCP to loopback,
// no signal to the judge runner; the end frame reports the ABI applied.
func TestJudgeConfinesScripts(t *testing.T) {
	abi := confine.ABI()
	if abi < 6 {
		t.Skipf("Landlock ABI %d: needs 6", abi)
	}
	f := testutil.NewPodFixture(t, ": {OUTPUT_FILE}")
	withEval(t, f, hostileEval, "c1")
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lis.Close() }()
	_, port, _ := net.SplitHostPort(lis.Addr().String())
	t.Setenv("EVAL", f.Config.EvalFile)
	t.Setenv("PORT", port)
	t.Setenv("JUDGE_PID", "1")
	// bash for /dev/tcp: the script's shell.
	f.Write(t, f.Pod.SnapshotOutput().BatchOutput(), `{"id":"c1","text":"a"}`+"\n")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got := runJudgeWith(t, f, 0, Options{Shell: "/bin/bash", Confine: &Confinement{
		Shim: self, Image: []string{"/usr", "/lib", "/lib64", "/bin", "/etc"}, ReadOnly: []string{"/proc"}}})
	if len(got.frames) != 2 || got.frames[1].End == nil {
		t.Fatalf("frames %+v, want c1's and the end", got.frames)
	}
	r := got.frames[0].Results
	if len(r) != 1 || r[0].Result.Verdict != "" {
		t.Fatalf("c1's results %+v, want one script result", r)
	}
	if d := cmp.Diff([]string{"own key on stdin"}, r[0].Result.Hits); d != "" {
		t.Errorf("what the confined script reached (-want +got):\n%s", d)
	}
	if end := got.frames[1].End; end.LandlockABI != abi {
		t.Errorf("end frame's Landlock ABI %d, want %d", end.LandlockABI, abi)
	}
}

// In a bundle run, a case's scripts read the bundle's files that are no case's key and their own case's
// reference files; never the eval file or another case's reference file.
func TestCasePoliciesKeepOtherCasesKeys(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "bundle")
	files := map[string]string{
		"suite/eval.yaml": `$schema: agentv-eval-v2
evalcases:
  - id: c1
    input_messages: [{role: user, content: [{type: file, value: ./inputs/c1.txt}]}]
    expected_messages: [{role: assistant, content: [{type: file, value: ./refs/c1.md}]}]
  - id: c2
    input_messages: [{role: user, content: two}]
    expected_messages: [{role: assistant, content: [{type: file, value: refs/c2.md}]}]
`,
		"suite/inputs/c1.txt":    "input",
		"suite/refs/c1.md":       "c1's reference",
		"suite/refs/c2.md":       "c2's reference",
		"suite/judges/check.py":  "print(1)",
		"suite/prompts/judge.md": "prompt",
	}
	var m bundle.Manifest
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, bundle.File{Path: p})
	}
	manifest, _ := json.Marshal(m)
	mpath := filepath.Join(root, "bundle.json")
	if err := os.WriteFile(mpath, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := evalfile.Parse([]byte(files["suite/eval.yaml"]))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &podwire.RunConfig{Bundle: &podwire.Bundle{Dir: dir, EvalFile: "suite/eval.yaml", ManifestFile: mpath}}
	p, err := newCasePolicies(&Confinement{Image: []string{"/usr"}}, cfg, file, []string{"/scratch"})
	if err != nil {
		t.Fatal(err)
	}
	rel := func(paths []string) []string {
		var out []string
		for _, path := range paths {
			r, _ := filepath.Rel(dir, path)
			out = append(out, filepath.ToSlash(r))
		}
		slices.Sort(out)
		return out
	}
	for id, want := range map[string][]string{
		"c1": {"suite/inputs/c1.txt", "suite/judges/check.py", "suite/prompts/judge.md", "suite/refs/c1.md"},
		"c2": {"suite/inputs/c1.txt", "suite/judges/check.py", "suite/prompts/judge.md", "suite/refs/c2.md"},
	} {
		pol := p.forCase(file.Case(id))
		if d := cmp.Diff(want, rel(pol.Files)); d != "" {
			t.Errorf("%s's readable bundle files (-want +got):\n%s", id, d)
		}
		if !slices.Equal(pol.ListDirs, []string{dir}) || !slices.Equal(pol.Scratch, []string{"/scratch"}) ||
			!slices.Equal(pol.Image, []string{"/usr"}) || strings.Contains(strings.Join(pol.Files, ","), "eval.yaml") {
			t.Errorf("%s's policy %+v", id, pol)
		}
	}
}
