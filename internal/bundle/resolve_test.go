package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIsFileRef(t *testing.T) {
	refs := []string{"prompts/judge", "../prompts/judge.hbs", "./judge prompt.md", "judge.MD", "judge.md",
		"/prompts/judge.txt", `prompts\judge`, "  ./a  ", "reference.jinja2", "a/b/c"}
	texts := []string{"", "Is the answer correct and/or complete?", "Score it 0/1.", "Rate 1.5",
		"Grade the answer.\nSee prompts/judge.md", "Be strict", "e.g. this", "ends with a dot.",
		"{{question}} vs {{candidate_answer}}", string(make([]byte, MaxRefLength+1))}
	for _, v := range refs {
		if !IsFileRef(v) {
			t.Errorf("IsFileRef(%q) = false, want true", v)
		}
	}
	for _, v := range texts {
		if IsFileRef(v) {
			t.Errorf("IsFileRef(%q) = true, want false", v)
		}
	}
}

func TestCandidates(t *testing.T) {
	d := Dir{EvalFile: "suites/math/eval.yaml"}
	for _, tc := range []struct {
		ref     string
		want    []string
		outside bool
	}{
		{ref: "prompts/judge.md", want: []string{"suites/math/prompts/judge.md", "suites/prompts/judge.md", "prompts/judge.md"}},
		{ref: "./judge.md", want: []string{"suites/math/judge.md", "suites/judge.md", "judge.md"}},
		{ref: "../shared/ref.txt", want: []string{"suites/shared/ref.txt", "shared/ref.txt"}},
		{ref: "/prompts/judge.md", want: []string{"prompts/judge.md"}},
		{ref: `prompts\judge.md`, want: []string{"suites/math/prompts/judge.md", "suites/prompts/judge.md", "prompts/judge.md"}},
		{ref: "../../../etc/passwd", outside: true},
		{ref: "/../etc/passwd", outside: true},
	} {
		got, err := d.Candidates(tc.ref)
		if tc.outside {
			if !errors.Is(err, ErrOutsideBundle) {
				t.Errorf("Candidates(%q) = %v, %v; want ErrOutsideBundle", tc.ref, got, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Candidates(%q): %v", tc.ref, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Candidates(%q) (-want +got):\n%s", tc.ref, diff)
		}
	}
}

// write creates the files under root.
func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResolveAndRead(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, map[string]string{"secret.md": "expected answers"})
	root := t.TempDir()
	write(t, root, map[string]string{
		"suites/math/eval.yaml":        "",
		"suites/math/prompts/judge.md": "nearest",
		"prompts/judge.md":             "root",
		"prompts/only-root.md":         "only at the root",
		"big.txt":                      "0123456789",
	})
	// A ConfigMap volume's layout: the key is a link into ..data, which links to a timestamped directory.
	if err := os.MkdirAll(filepath.Join(root, "..2026_11_27", "cm"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, root, map[string]string{"..2026_11_27/cm/ref.txt": "via links"})
	mustLink(t, "..2026_11_27", filepath.Join(root, "..data"))
	mustLink(t, "../..data/cm/ref.txt", filepath.Join(root, "suites", "ref.txt"))
	// Links that leave the root must never be read.
	mustLink(t, filepath.Join(outside, "secret.md"), filepath.Join(root, "suites/math/abs.md"))
	mustLink(t, "../../../"+filepath.Base(outside)+"/secret.md", filepath.Join(root, "suites/math/rel.md"))

	d := Dir{Root: root, EvalFile: "suites/math/eval.yaml"}
	for ref, want := range map[string]string{
		"prompts/judge.md":     "nearest",
		"/prompts/judge.md":    "root",
		"prompts/only-root.md": "only at the root",
		"ref.txt":              "via links",
	} {
		data, _, err := d.ReadFile(ref, 1<<20)
		if err != nil || string(data) != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", ref, data, err, want)
		}
	}
	for _, ref := range []string{"abs.md", "rel.md", "missing.md", "prompts"} {
		_, _, err := d.ReadFile(ref, 1<<20)
		var nf *NotFoundError
		if !errors.As(err, &nf) {
			t.Errorf("ReadFile(%q) = %v, want a NotFoundError", ref, err)
		}
	}
	if _, _, err := d.ReadFile("/big.txt", 9); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile of a 10-byte file with limit 9 = %v, want ErrTooLarge", err)
	}
	if _, err := d.Resolve("../../../x.md"); !errors.Is(err, ErrOutsideBundle) {
		t.Errorf("Resolve out of the root = %v, want ErrOutsideBundle", err)
	}
	var nf *NotFoundError
	if _, err := d.Resolve("nope.md"); !errors.As(err, &nf) || len(nf.Searched) != 3 {
		t.Errorf("Resolve(nope.md) = %v, want a NotFoundError listing 3 paths", err)
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestHostileReferences: what a hostile eval author can name as a prompt, input or reference file. Nothing outside
// the root is ever read, nothing that is not a regular file is opened for reading, and no reference makes the reader
// wait or read without bound.
func TestHostileReferences(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, map[string]string{"secret.md": "expected answers"})
	root := t.TempDir()
	write(t, root, map[string]string{"suites/eval.yaml": "", "huge.md": strings.Repeat("x", 4096)})
	mustLink(t, filepath.Join(outside, "secret.md"), filepath.Join(root, "suites/abs.md"))
	mustLink(t, "../../"+filepath.Base(outside)+"/secret.md", filepath.Join(root, "suites/rel.md"))
	mustLink(t, outside, filepath.Join(root, "suites/outdir"))
	mustLink(t, "/dev/zero", filepath.Join(root, "suites/zero.md"))
	if err := syscall.Mkfifo(filepath.Join(root, "suites/fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	device := false
	if os.Getuid() == 0 { // a character device (1, 5: /dev/zero's numbers) inside the bundle needs root to make
		device = syscall.Mknod(filepath.Join(root, "suites/dev.md"), syscall.S_IFCHR|0o644, 1<<8|5) == nil
	}
	d := Dir{Root: root, EvalFile: "suites/eval.yaml"}
	for _, tc := range []struct {
		ref     string
		outside bool // ErrOutsideBundle; otherwise a NotFoundError
		skip    bool
	}{
		{ref: "../../etc/passwd", outside: true},
		{ref: "../../../../../../etc/passwd", outside: true},
		{ref: "/../x", outside: true},
		{ref: "/../../etc/passwd", outside: true},
		{ref: `..\..\etc\passwd`, outside: true},
		{ref: `\..\x`, outside: true},
		{ref: "./../../" + filepath.Base(outside) + "/secret.md", outside: true},
		{ref: "abs.md"},                  // an absolute link out of the root
		{ref: "rel.md"},                  // a relative link out of the root
		{ref: "outdir/secret.md"},        // a link to a directory out of the root
		{ref: "zero.md"},                 // a link to a device out of the root
		{ref: "fifo.md"},                 // a FIFO: never opened (an open would wait for a writer)
		{ref: "dev.md", skip: !device},   // a device inside the root
		{ref: "suites"},                  // a directory
		{ref: "/etc/passwd"},             // "/" is the bundle's root, not the file system's
		{ref: "suites/../../etc/passwd"}, // cleaned inside the root first: root/etc/passwd, absent
	} {
		if tc.skip {
			continue
		}
		done := make(chan error, 1)
		go func() { _, _, err := d.ReadFile(tc.ref, 1<<20); done <- err }()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadFile(%q) still waits after 10s", tc.ref)
		}
		var nf *NotFoundError
		switch {
		case tc.outside && !errors.Is(err, ErrOutsideBundle):
			t.Errorf("ReadFile(%q) = %v, want ErrOutsideBundle", tc.ref, err)
		case !tc.outside && !errors.As(err, &nf):
			t.Errorf("ReadFile(%q) = %v, want a NotFoundError", tc.ref, err)
		}
	}
	if _, _, err := d.ReadFile("/huge.md", 4095); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile of a file over the limit = %v, want ErrTooLarge", err)
	}
}

// TestOpenRegularRefusesWhatWasSwapped: a FIFO or a device put where Resolve found a regular file (a race between
// the check and the open) is refused by the open itself, at once.
func TestOpenRegularRefusesWhatWasSwapped(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"ok.md": "text"})
	if err := syscall.Mkfifo(filepath.Join(root, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	names := []string{"fifo.md"}
	if os.Getuid() == 0 && syscall.Mknod(filepath.Join(root, "dev.md"), syscall.S_IFCHR|0o644, 1<<8|5) == nil {
		names = append(names, "dev.md")
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	for _, name := range names {
		done := make(chan error, 1)
		go func() {
			f, err := openRegular(r, name)
			if err == nil {
				_ = f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("openRegular(%s) = %v, want ErrNotRegular", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("openRegular(%s) still waits after 10s", name)
		}
	}
	f, err := openRegular(r, "ok.md")
	if err != nil {
		t.Fatalf("openRegular of a regular file: %v", err)
	}
	_ = f.Close()
}
