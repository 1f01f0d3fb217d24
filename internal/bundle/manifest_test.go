package bundle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hashed returns the File of content at p.
func hashed(t *testing.T, p, content string) File {
	t.Helper()
	f, err := Hash(p, strings.NewReader(content), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestManifest(t *testing.T) {
	files := []File{hashed(t, "suite/eval.yaml", "evalcases: []\n"), hashed(t, "prompts/judge.md", "Judge."), hashed(t, "suite/in.txt", "in")}
	m, err := NewManifest("suite/eval.yaml", files)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{m.Files[0].Path, m.Files[1].Path, m.Files[2].Path}; !cmp.Equal(got, []string{"prompts/judge.md", "suite/eval.yaml", "suite/in.txt"}) {
		t.Errorf("files not in path order: %v", got)
	}
	// The digest is of the content: the same files in another order, the same digest; one byte more, another.
	again, err := NewManifest("suite/eval.yaml", []File{files[2], files[0], files[1]})
	if err != nil || again.SHA256 != m.SHA256 {
		t.Errorf("same files, digest %s then %v %v", m.SHA256, again, err)
	}
	changed, err := NewManifest("suite/eval.yaml", []File{files[0], hashed(t, "prompts/judge.md", "Judge!"), files[2]})
	if err != nil || changed.SHA256 == m.SHA256 {
		t.Errorf("a changed file kept the digest %s (%v)", m.SHA256, err)
	}
	data, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		ref, want string
	}{
		{"in.txt", "suite/in.txt"},
		{"prompts/judge.md", "prompts/judge.md"},
		{"../prompts/judge.md", "prompts/judge.md"},
		{"/suite/in.txt", "suite/in.txt"},
	} {
		f, err := m.Resolve(tc.ref)
		if err != nil || f.Path != tc.want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", tc.ref, f.Path, err, tc.want)
		}
	}
	var nf *NotFoundError
	if _, err := m.Resolve("missing.md"); !errors.As(err, &nf) {
		t.Errorf("Resolve(missing.md) = %v, want a NotFoundError", err)
	}
	if _, err := m.Resolve("../../etc/passwd"); !errors.Is(err, ErrOutsideBundle) {
		t.Errorf("Resolve(../../etc/passwd) = %v, want ErrOutsideBundle", err)
	}
}

func TestManifestRefusals(t *testing.T) {
	good := hashed(t, "eval.yaml", "x")
	tampered := *good.clone()
	tampered.Size = 2
	for _, tc := range []struct {
		name string
		m    Manifest
		want string
	}{
		{"no files", Manifest{EvalFile: "eval.yaml"}, "no files"},
		{"eval file missing", Manifest{EvalFile: "other.yaml", Files: []File{good}, SHA256: Digest([]File{good})}, "not a file of the eval bundle"},
		{"wrong digest", Manifest{EvalFile: "eval.yaml", Files: []File{good}, SHA256: Digest([]File{tampered})}, "digest"},
		{"twice", Manifest{EvalFile: "eval.yaml", Files: []File{good, good}, SHA256: Digest([]File{good, good})}, "listed twice"},
		{"bad sha", Manifest{EvalFile: "eval.yaml", Files: []File{{Path: "eval.yaml", SHA256: "ABC"}}}, "hex digits"},
		{"file and directory", Manifest{EvalFile: "eval.yaml", Files: []File{good, {Path: "eval.yaml/x", SHA256: good.SHA256}},
			SHA256: Digest([]File{good, {Path: "eval.yaml/x", SHA256: good.SHA256}})}, "both a file"},
		{"bad path", Manifest{EvalFile: "eval.yaml", Files: []File{{Path: "../eval.yaml", SHA256: good.SHA256}}}, "not a bundle path"},
	} {
		err := tc.m.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want %q", tc.name, err, tc.want)
		}
	}
	many := make([]File, MaxFiles+1)
	for i := range many {
		many[i] = File{Path: fmt.Sprintf("f%04d", i), SHA256: good.SHA256}
	}
	if _, err := NewManifest("f0000", many); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("%d files: %v", len(many), err)
	}
}

func (f File) clone() *File { return &f }

func TestVerify(t *testing.T) {
	f := hashed(t, "prompts/judge.md", "Judge.")
	if err := f.Verify([]byte("Judge.")); err != nil {
		t.Errorf("Verify of the pinned content: %v", err)
	}
	for _, data := range []string{"Judge!", "Judge", ""} {
		if err := f.Verify([]byte(data)); !errors.Is(err, ErrMismatch) {
			t.Errorf("Verify(%q) = %v, want ErrMismatch", data, err)
		}
	}
	if _, err := Hash("big", strings.NewReader("12345"), 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Hash past the limit = %v, want ErrTooLarge", err)
	}
}

func TestCheckPath(t *testing.T) {
	for _, p := range []string{"a", "a/b.md", "prompts/judge prompt.md", "..hidden", "ä/b", "a-b_c.d"} {
		if err := CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", "/a", "a/", "a//b", "./a", "a/./b", "a/../b", "..", `a\b`, "a\nb", "\xff", strings.Repeat("a", MaxPathLen+1), strings.Repeat("a", 256)} {
		if err := CheckPath(p); err == nil {
			t.Errorf("CheckPath(%q) = nil, want an error", p)
		}
	}
}

func TestKeys(t *testing.T) {
	for _, tc := range []struct{ path, key string }{
		{"eval.yaml", "eval.yaml"},
		{"prompts/judge.md", "prompts_2Fjudge.md"},
		{"my_notes.txt", "my_5Fnotes.txt"},
		{"ä.md", "_C3_A4.md"},
		{".hidden/x", "_2Ehidden_2Fx"},
		{"judge prompt.md", "judge_20prompt.md"},
	} {
		key, err := KeyFor(tc.path)
		if err != nil || key != tc.key {
			t.Errorf("KeyFor(%q) = %q, %v; want %q", tc.path, key, err, tc.key)
			continue
		}
		back, err := PathOf(key)
		if err != nil || back != tc.path {
			t.Errorf("PathOf(%q) = %q, %v; want %q", key, back, err, tc.path)
		}
	}
	for _, key := range []string{"my_notes.txt", "a_2f", "a_2", "_2E_2E", "a_2F_2Fb", "_2Fa", "a_61", "..data", "a b"} {
		if p, err := PathOf(key); err == nil {
			t.Errorf("PathOf(%q) = %q, want an error", key, p)
		}
	}
	if _, err := KeyFor(strings.Repeat("é/", 50) + "x"); err == nil || !strings.Contains(err.Error(), "bucket") {
		t.Errorf("a path whose key is too long: %v", err)
	}
}

func FuzzPathOf(f *testing.F) {
	for _, s := range []string{"eval.yaml", "prompts_2Fjudge.md", "_C3_A4.md", "a_2", "..x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		p, err := PathOf(key)
		if err != nil {
			return
		}
		if err := CheckPath(p); err != nil {
			t.Fatalf("PathOf(%q) = %q, not a bundle path: %v", key, p, err)
		}
		if k, err := KeyFor(p); err != nil || k != key {
			t.Fatalf("KeyFor(PathOf(%q)) = %q, %v", key, k, err)
		}
	})
}

func TestScan(t *testing.T) {
	dir := t.TempDir()
	write := func(p, content string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("suite/eval.yaml", "evalcases: []\n")
	write("prompts/judge.md", "Judge.")
	write(".git/HEAD", "ref")
	write(".env", "secret")
	write(".agentv/config.yaml", "$schema: agentv-config-v2\n")
	write(".agentv/templates/t.yaml", "assertions: []\n")
	write(".agentv/.cache/x", "left out")
	write("suite/.agentv/config.yaml", "left out: only the root's .agentv is AgentV's bundle config")
	files, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	// AgentV's directory at the root is kept (its config, a 4.42 suite's templates); every other hidden entry is not.
	want := []File{hashed(t, ".agentv/config.yaml", "$schema: agentv-config-v2\n"),
		hashed(t, ".agentv/templates/t.yaml", "assertions: []\n"), hashed(t, "prompts/judge.md", "Judge."),
		hashed(t, "suite/eval.yaml", "evalcases: []\n")}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("Scan (-want +got):\n%s", diff)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "prompts", "link.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := Scan(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Scan with a symbolic link = %v, want a refusal", err)
	}
}
