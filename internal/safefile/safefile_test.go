//go:build linux || darwin

package safefile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// secret is what the collector must never read: it stands for its service-account token.
const secret = "SECRET-TOKEN"

// env is a runner's output directory and, beside it, a directory of the collector's that the runner targets.
type env struct {
	out, outside string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{out: t.TempDir(), outside: t.TempDir()}
	if err := os.WriteFile(filepath.Join(e.outside, "token"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) write(t *testing.T, name, content string) {
	t.Helper()
	p := filepath.Join(e.out, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (e *env) symlink(t *testing.T, target, name string) {
	t.Helper()
	p := filepath.Join(e.out, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// mknod makes a special file, skipping the test where the system does not let us (devices need CAP_MKNOD).
func (e *env) mknod(t *testing.T, name string, mode uint32, dev uint64) {
	t.Helper()
	if err := unix.Mknod(filepath.Join(e.out, name), mode|0o600, int(dev)); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("cannot make %s here: %v", name, err)
		}
		t.Fatal(err)
	}
}

// promptly runs fn on another goroutine and fails the test if fn is still blocked shortly before the test binary's
// deadline (-timeout), so that a hang is reported as this test's failure rather than as a panic of the binary. It
// is a guard against blocking forever, not a measure of speed.
func promptly[T any](t *testing.T, fn func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	ctx := t.Context()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(deadline)*9/10)
		defer cancel()
	}
	select {
	case v := <-done:
		return v
	case <-ctx.Done():
		t.Fatalf("blocked until the test deadline")
		panic("unreachable")
	}
}

// outcome is what the collector got from one Open and read.
type outcome struct {
	Content string
	Size    int64
	Err     string
}

func openAndRead(d *Dir, name string, maxBytes int64) (outcome, error) {
	f, err := d.Open(name, maxBytes)
	if err != nil {
		return outcome{Err: err.Error()}, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(f)
	if err != nil {
		return outcome{Content: string(b), Size: f.Size(), Err: err.Error()}, err
	}
	return outcome{Content: string(b), Size: f.Size()}, nil
}

const jsonl = `{"id":"a","text":"A"}` + "\n"

func TestOpen(t *testing.T) {
	symlinkErr := func(name string) outcome {
		return outcome{Err: `output file "` + name + `" is or passes through a symbolic link, ` +
			`which the collector does not follow`}
	}
	notRegular := func(name, kind string) outcome {
		return outcome{Err: `output file "` + name + `" is ` + kind + `, not a regular file`}
	}
	tests := []struct {
		name string
		// setup plays the runner, after the collector opened the directory; it returns the name the collector opens.
		setup    func(t *testing.T, e *env) string
		maxBytes int64
		want     outcome
		wantIs   []error
	}{
		{
			name:  "regular file",
			setup: func(t *testing.T, e *env) string { e.write(t, "results.jsonl", jsonl); return "results.jsonl" },
			want:  outcome{Content: jsonl, Size: int64(len(jsonl))},
		},
		{
			name:  "empty file",
			setup: func(t *testing.T, e *env) string { e.write(t, "results.jsonl", ""); return "results.jsonl" },
			want:  outcome{},
		},
		{
			name:     "file exactly at the bound",
			setup:    func(t *testing.T, e *env) string { e.write(t, "results.jsonl", "0123456789"); return "results.jsonl" },
			maxBytes: 10,
			want:     outcome{Content: "0123456789", Size: 10},
		},
		{
			name:     "file one byte over the bound",
			setup:    func(t *testing.T, e *env) string { e.write(t, "results.jsonl", "0123456789X"); return "results.jsonl" },
			maxBytes: 10,
			want:     outcome{Err: `output file "results.jsonl" is 11 bytes, larger than the limit of 10 bytes`},
			wantIs:   []error{ErrTooLarge, ErrRefused},
		},
		{
			name:  "file in a subdirectory, name not clean",
			setup: func(t *testing.T, e *env) string { e.write(t, "cases/c.out", "C"); return "./cases//c.out" },
			want:  outcome{Content: "C", Size: 1},
		},
		{
			name: "symlink to the collector's token",
			setup: func(t *testing.T, e *env) string {
				e.symlink(t, filepath.Join(e.outside, "token"), "results.jsonl")
				return "results.jsonl"
			},
			want:   symlinkErr("results.jsonl"),
			wantIs: []error{ErrSymlink, ErrRefused},
		},
		{
			name: "symlink to /proc/self/environ",
			setup: func(t *testing.T, e *env) string {
				e.symlink(t, "/proc/self/environ", "results.jsonl")
				return "results.jsonl"
			},
			want:   symlinkErr("results.jsonl"),
			wantIs: []error{ErrSymlink},
		},
		{
			name: "relative symlink out through ..",
			setup: func(t *testing.T, e *env) string {
				rel, err := filepath.Rel(e.out, filepath.Join(e.outside, "token"))
				if err != nil {
					t.Fatal(err)
				}
				e.symlink(t, rel, "results.jsonl")
				return "results.jsonl"
			},
			want:   symlinkErr("results.jsonl"),
			wantIs: []error{ErrSymlink},
		},
		{
			name: "symlink to a file inside the directory is refused too",
			setup: func(t *testing.T, e *env) string {
				e.write(t, "real.jsonl", jsonl)
				e.symlink(t, "real.jsonl", "results.jsonl")
				return "results.jsonl"
			},
			want:   symlinkErr("results.jsonl"),
			wantIs: []error{ErrSymlink},
		},
		{
			name:   "dangling symlink",
			setup:  func(t *testing.T, e *env) string { e.symlink(t, "nowhere", "results.jsonl"); return "results.jsonl" },
			want:   symlinkErr("results.jsonl"),
			wantIs: []error{ErrSymlink},
		},
		{
			name: "symlink loop",
			setup: func(t *testing.T, e *env) string {
				e.symlink(t, "results.jsonl", "results.jsonl")
				return "results.jsonl"
			},
			want:   symlinkErr("results.jsonl"),
			wantIs: []error{ErrSymlink},
		},
		{
			name: "intermediate directory is a symlink to outside",
			setup: func(t *testing.T, e *env) string {
				if err := os.WriteFile(filepath.Join(e.outside, "c.out"), []byte(secret), 0o600); err != nil {
					t.Fatal(err)
				}
				e.symlink(t, e.outside, "cases")
				return "cases/c.out"
			},
			want:   symlinkErr("cases/c.out"),
			wantIs: []error{ErrSymlink},
		},
		{
			name:   "intermediate directory is a symlink to /proc/self",
			setup:  func(t *testing.T, e *env) string { e.symlink(t, "/proc/self", "cases"); return "cases/environ" },
			want:   symlinkErr("cases/environ"),
			wantIs: []error{ErrSymlink},
		},
		{
			name: "intermediate symlink to a directory inside",
			setup: func(t *testing.T, e *env) string {
				e.write(t, "real/c.out", "C")
				e.symlink(t, "real", "cases")
				return "cases/c.out"
			},
			want:   symlinkErr("cases/c.out"),
			wantIs: []error{ErrSymlink},
		},
		{
			name:   "absolute name",
			setup:  func(t *testing.T, e *env) string { return filepath.Join(e.outside, "token") },
			want:   outcome{Err: `output file %q is an absolute name; only names beneath the output directory are read`},
			wantIs: []error{ErrOutside, ErrRefused},
		},
		{
			name:   "name leaving through ..",
			setup:  func(t *testing.T, e *env) string { return "../" + filepath.Base(e.outside) + "/token" },
			want:   outcome{Err: `output file %q leaves the output directory through ".."`},
			wantIs: []error{ErrOutside},
		},
		{
			name:   "name leaving through .. after a directory",
			setup:  func(t *testing.T, e *env) string { e.write(t, "cases/c.out", "C"); return "cases/../../x" },
			want:   outcome{Err: `output file "cases/../../x" leaves the output directory through ".."`},
			wantIs: []error{ErrOutside},
		},
		{
			name:   "empty name",
			setup:  func(*testing.T, *env) string { return "" },
			want:   outcome{Err: `output file "" is not a valid name: it is empty`},
			wantIs: []error{fs.ErrInvalid},
		},
		{
			name:   "name with a NUL byte",
			setup:  func(*testing.T, *env) string { return "results.jsonl\x00.txt" },
			want:   outcome{Err: `output file "results.jsonl\x00.txt" is not a valid name: it contains a NUL byte`},
			wantIs: []error{fs.ErrInvalid},
		},
		{
			name: "FIFO without a writer",
			setup: func(t *testing.T, e *env) string {
				if err := unix.Mkfifo(filepath.Join(e.out, "results.jsonl"), 0o600); err != nil {
					t.Fatal(err)
				}
				return "results.jsonl"
			},
			want:   notRegular("results.jsonl", "a FIFO"),
			wantIs: []error{ErrNotRegular, ErrRefused},
		},
		{
			name: "unix socket",
			setup: func(t *testing.T, e *env) string {
				e.mknod(t, "results.jsonl", unix.S_IFSOCK, 0)
				return "results.jsonl"
			},
			want:   notRegular("results.jsonl", "a socket"),
			wantIs: []error{ErrNotRegular},
		},
		{
			name: "character device (a copy of /dev/null)",
			setup: func(t *testing.T, e *env) string {
				e.mknod(t, "results.jsonl", unix.S_IFCHR, unix.Mkdev(1, 3))
				return "results.jsonl"
			},
			want:   notRegular("results.jsonl", "a character device"),
			wantIs: []error{ErrNotRegular},
		},
		{
			name: "block device",
			setup: func(t *testing.T, e *env) string {
				e.mknod(t, "results.jsonl", unix.S_IFBLK, unix.Mkdev(7, 0))
				return "results.jsonl"
			},
			want:   notRegular("results.jsonl", "a block device"),
			wantIs: []error{ErrNotRegular},
		},
		{
			name: "directory",
			setup: func(t *testing.T, e *env) string {
				if err := os.Mkdir(filepath.Join(e.out, "results.jsonl"), 0o700); err != nil {
					t.Fatal(err)
				}
				return "results.jsonl"
			},
			want:   notRegular("results.jsonl", "a directory"),
			wantIs: []error{ErrNotRegular},
		},
		{
			name:   "the directory itself",
			setup:  func(*testing.T, *env) string { return "." },
			want:   notRegular(".", "a directory"),
			wantIs: []error{ErrNotRegular},
		},
		{
			name:   "missing file",
			setup:  func(*testing.T, *env) string { return "results.jsonl" },
			want:   outcome{Err: `output file "results.jsonl" does not exist`},
			wantIs: []error{fs.ErrNotExist},
		},
		{
			name:   "missing directory",
			setup:  func(*testing.T, *env) string { return "cases/c.out" },
			want:   outcome{Err: `output file "cases/c.out" does not exist`},
			wantIs: []error{fs.ErrNotExist},
		},
		{
			name:  "a file where a directory should be",
			setup: func(t *testing.T, e *env) string { e.write(t, "cases", "not a dir"); return "cases/c.out" },
			want:  outcome{Err: `output file "cases/c.out" passes through something that is not a directory`},
		},
	}
	for resolver, configure := range resolvers() {
		for _, tc := range tests {
			t.Run(resolver+"/"+tc.name, func(t *testing.T) {
				e := newEnv(t)
				d, err := OpenDir(e.out)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = d.Close() }()
				configure(d)
				name := tc.setup(t, e)
				type result struct {
					o   outcome
					err error
				}
				r := promptly(t, func() result {
					o, err := openAndRead(d, name, tc.maxBytes)
					return result{o, err}
				})
				want := tc.want
				if strings.Contains(want.Err, "%q") {
					// The name embeds a temporary directory.
					want.Err = fmt.Sprintf(want.Err, name)
				}
				if diff := cmp.Diff(want, r.o); diff != "" {
					t.Errorf("Open(%q) mismatch (-want +got):\n%s", name, diff)
				}
				for _, target := range tc.wantIs {
					if !errors.Is(r.err, target) {
						t.Errorf("Open(%q) = %v, want an error matching %v", name, r.err, target)
					}
				}
				if r.err != nil && strings.Contains(r.o.Content, secret) {
					t.Errorf("Open(%q) read the secret", name)
				}
			})
		}
	}
}

func TestOpenAfterSwap(t *testing.T) {
	for resolver, configure := range resolvers() {
		t.Run(resolver, func(t *testing.T) {
			e := newEnv(t)
			e.write(t, "results.jsonl", jsonl)
			d, err := OpenDir(e.out)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = d.Close() }()
			configure(d)
			before, err := d.Open("results.jsonl", 0)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = before.Close() }()

			// The runner replaces its output with a link to the token, and its directory with a link outside.
			p := filepath.Join(e.out, "results.jsonl")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			e.symlink(t, filepath.Join(e.outside, "token"), "results.jsonl")
			_, err = d.Open("results.jsonl", 0)
			if !errors.Is(err, ErrSymlink) {
				t.Errorf("Open after the swap = %v, want a symbolic link error", err)
			}
			if _, err := d.ReadFile("results.jsonl", 0); !errors.Is(err, ErrSymlink) {
				t.Errorf("ReadFile after the swap = %v, want a symbolic link error", err)
			}

			// What was opened before the swap is still the runner's file.
			got, err := io.ReadAll(before)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(jsonl, string(got)); diff != "" {
				t.Errorf("file opened before the swap (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadPastBoundAfterGrowth(t *testing.T) {
	e := newEnv(t)
	e.write(t, "results.jsonl", "0123456789")
	d, err := OpenDir(e.out)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	f, err := d.Open("results.jsonl", 10)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	// The runner keeps writing after the collector opened the file.
	g, err := os.OpenFile(filepath.Join(e.out, "results.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteString("more"); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) {
		t.Fatalf("ReadAll = %q, %v; want a *TooLargeError", got, err)
	}
	want := outcome{Content: "0123456789", Size: 10,
		Err: `output file "results.jsonl" is larger than the limit of 10 bytes`}
	if diff := cmp.Diff(want, outcome{Content: string(got), Size: f.Size(), Err: err.Error()}); diff != "" {
		t.Errorf("read past the bound (-want +got):\n%s", diff)
	}
	if n, err := f.Read(make([]byte, 8)); n != 0 || !errors.Is(err, ErrTooLarge) {
		t.Errorf("Read after the error = %d, %v; want 0 and the same error", n, err)
	}
}

func TestReadFile(t *testing.T) {
	e := newEnv(t)
	e.write(t, "a", "0123456789")
	e.write(t, "empty", "")
	d, err := OpenDir(e.out)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	tests := []struct {
		name     string
		maxBytes int64
		want     outcome
	}{
		{name: "a", maxBytes: 0, want: outcome{Content: "0123456789"}},
		{name: "a", maxBytes: 10, want: outcome{Content: "0123456789"}},
		{name: "a", maxBytes: 9, want: outcome{Err: `output file "a" is 10 bytes, larger than the limit of 9 bytes`}},
		{name: "empty", maxBytes: 1, want: outcome{}},
		{name: "missing", maxBytes: 1, want: outcome{Err: `output file "missing" does not exist`}},
	}
	for _, tc := range tests {
		b, err := d.ReadFile(tc.name, tc.maxBytes)
		got := outcome{Content: string(b)}
		if err != nil {
			got.Err = err.Error()
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ReadFile(%q, %d) mismatch (-want +got):\n%s", tc.name, tc.maxBytes, diff)
		}
	}
}

func TestOpenDir(t *testing.T) {
	e := newEnv(t)
	e.write(t, "file", "x")
	e.symlink(t, e.outside, "link")
	tests := []struct {
		path    string
		wantErr bool
	}{
		{path: e.out},
		{path: filepath.Join(e.out, "file"), wantErr: true},
		{path: filepath.Join(e.out, "link"), wantErr: true},
		{path: filepath.Join(e.out, "missing"), wantErr: true},
	}
	for _, tc := range tests {
		d, err := OpenDir(tc.path)
		if (err != nil) != tc.wantErr {
			t.Errorf("OpenDir(%q) error = %v, want error %t", tc.path, err, tc.wantErr)
		}
		if d != nil {
			_ = d.Close()
		}
	}
	d, err := OpenDir(e.out)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Open("file", 0); err == nil {
		t.Errorf("Open on a closed Dir succeeded")
	}
}

// FuzzOpen checks, for any name, that Open never panics, never blocks, and never opens anything but one of the
// regular files that lie beneath the directory without a symbolic link on the way.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{
		"results.jsonl", "cases/c.out", "./cases/c.out", "cases//c.out/", "link", "linkdir/token", "proc/environ",
		"fifo", "cases", ".", "..", "../outside/token", "cases/../results.jsonl", "/etc/passwd", "", "a\x00b",
		"cases/c.out/..", strings.Repeat("a/", 300) + "b",
	} {
		f.Add(s)
	}
	base := f.TempDir()
	e := &env{out: filepath.Join(base, "out"), outside: filepath.Join(base, "outside")}
	for _, dir := range []string{e.out, e.outside, filepath.Join(e.out, "cases")} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			f.Fatal(err)
		}
	}
	files := map[string]string{"outside/token": secret, "out/results.jsonl": jsonl, "out/cases/c.out": "C"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(base, name), []byte(content), 0o600); err != nil {
			f.Fatal(err)
		}
	}
	for target, link := range map[string]string{
		"../outside/token": "out/link", "../outside": "out/linkdir", "/proc/self": "out/proc", "c.out": "out/cases/c.link",
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			f.Fatal(err)
		}
	}
	if err := unix.Mkfifo(filepath.Join(e.out, "fifo"), 0o600); err != nil {
		f.Fatal(err)
	}
	var allowed []os.FileInfo
	for _, name := range []string{"out/results.jsonl", "out/cases/c.out"} {
		fi, err := os.Stat(filepath.Join(base, name))
		if err != nil {
			f.Fatal(err)
		}
		allowed = append(allowed, fi)
	}
	d, err := OpenDir(e.out)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = d.Close() })

	f.Fuzz(func(t *testing.T, name string) {
		for resolver, configure := range resolvers() {
			configure(d)
			file := promptly(t, func() *File {
				file, err := d.Open(name, 1<<20)
				if err != nil {
					var oe *OpenError
					var tl *TooLargeError
					if !errors.As(err, &oe) && !errors.As(err, &tl) {
						t.Errorf("%s: Open(%q) = %T %v, want an *OpenError", resolver, name, err, err)
					}
					return nil
				}
				return file
			})
			if file == nil {
				continue
			}
			st, err := file.f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			ok := false
			for _, fi := range allowed {
				ok = ok || os.SameFile(fi, st)
			}
			if !ok {
				t.Errorf("%s: Open(%q) opened %v, which is not one of the runner's regular files", resolver, name, st)
			}
			_ = file.Close()
		}
	})
}
