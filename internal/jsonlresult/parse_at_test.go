//go:build linux || darwin

package jsonlresult

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/evalrun-operator/evalrun-operator/internal/safefile"
)

// hostileOutput is what a runner may leave at an output name instead of a file; each setup makes it at name
// beneath out, with outside standing for the collector's own files.
var hostileOutput = []struct {
	name    string
	setup   func(t *testing.T, out, outside, name string)
	wantErr string // after `output file "<name>" `
}{
	{
		name: "symlink to the collector's token",
		setup: func(t *testing.T, out, outside, name string) {
			mustWrite(t, filepath.Join(outside, "token"), "SECRET")
			if err := os.Symlink(filepath.Join(outside, "token"), filepath.Join(out, name)); err != nil {
				t.Fatal(err)
			}
		},
		wantErr: "is or passes through a symbolic link, which the collector does not follow",
	},
	{
		name: "FIFO",
		setup: func(t *testing.T, out, _, name string) {
			if err := unix.Mkfifo(filepath.Join(out, name), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		wantErr: "is a FIFO, not a regular file",
	},
	{
		name: "directory",
		setup: func(t *testing.T, out, _, name string) {
			if err := os.Mkdir(filepath.Join(out, name), 0o700); err != nil {
				t.Fatal(err)
			}
		},
		wantErr: "is a directory, not a regular file",
	},
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func openOut(t *testing.T, out string) *safefile.Dir {
	t.Helper()
	d, err := safefile.OpenDir(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func TestParseBatchAt(t *testing.T) {
	const content = `{"id":"a","text":"A"}` + "\n"
	sum := sha256.Sum256([]byte(content))
	type result struct {
		Texts []string
		SHA   string
		Err   string
	}
	type testCase struct {
		name     string
		setup    func(t *testing.T, out, outside, name string)
		maxBytes int64
		want     result
		wantIs   []error
	}
	tests := []testCase{
		{
			name:  "regular file",
			setup: func(t *testing.T, out, _, name string) { mustWrite(t, filepath.Join(out, name), content) },
			want:  result{Texts: []string{"A"}, SHA: hex.EncodeToString(sum[:])},
		},
		{
			name:     "regular file at the bound",
			setup:    func(t *testing.T, out, _, name string) { mustWrite(t, filepath.Join(out, name), content) },
			maxBytes: int64(len(content)),
			want:     result{Texts: []string{"A"}, SHA: hex.EncodeToString(sum[:])},
		},
		{
			name:     "regular file over the bound",
			setup:    func(t *testing.T, out, _, name string) { mustWrite(t, filepath.Join(out, name), content) },
			maxBytes: int64(len(content)) - 1,
			want:     result{Err: `output file "results.jsonl" is 22 bytes, larger than the limit of 21 bytes`},
			wantIs:   []error{safefile.ErrRefused, safefile.ErrTooLarge},
		},
		{
			name:   "missing file",
			setup:  func(*testing.T, string, string, string) {},
			want:   result{Err: `the runner wrote no output file: output file "results.jsonl" does not exist`},
			wantIs: []error{ErrNoOutputFile, fs.ErrNotExist},
		},
	}
	for _, h := range hostileOutput {
		tests = append(tests, testCase{name: h.name, setup: h.setup, wantIs: []error{safefile.ErrRefused},
			want: result{Err: `output file "results.jsonl" ` + h.wantErr}})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, outside := t.TempDir(), t.TempDir()
			d := openOut(t, out)
			tc.setup(t, out, outside, "results.jsonl")
			var got result
			res, err := ParseBatchAt(d, "results.jsonl", tc.maxBytes, []string{"a"}, Options{}, func(r *Response) error {
				got.Texts = append(got.Texts, r.Text)
				return nil
			})
			if err != nil {
				got.Err = err.Error()
			} else {
				got.SHA = res.OutputSHA256
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseBatchAt mismatch (-want +got):\n%s", diff)
			}
			for _, target := range tc.wantIs {
				if !errors.Is(err, target) {
					t.Errorf("ParseBatchAt error %v does not match %v", err, target)
				}
			}
			if err != nil && !errors.Is(err, fs.ErrNotExist) && errors.Is(err, ErrNoOutputFile) {
				t.Errorf("ParseBatchAt error %v matches ErrNoOutputFile, but the runner did leave something", err)
			}
		})
	}
}

func TestParseSingleAt(t *testing.T) {
	type result struct {
		Resp *Response
		Err  string
	}
	type testCase struct {
		name     string
		setup    func(t *testing.T, out, outside, name string)
		maxBytes int64
		want     result
		wantIs   []error
	}
	tests := []testCase{
		{
			name:  "regular file, default bound",
			setup: func(t *testing.T, out, _, name string) { mustWrite(t, filepath.Join(out, name), `{"text":"fine"}`) },
			want:  result{Resp: &Response{ID: "c", Text: "fine"}},
		},
		{
			name:     "plain text at the bound",
			setup:    func(t *testing.T, out, _, name string) { mustWrite(t, filepath.Join(out, name), "0123456789") },
			maxBytes: 10,
			want:     result{Resp: &Response{ID: "c", Text: "0123456789"}},
		},
		{
			name:     "over the bound",
			setup:    func(t *testing.T, out, _, name string) { mustWrite(t, filepath.Join(out, name), "0123456789X") },
			maxBytes: 10,
			want:     result{Err: `case "c": output file "cases/c.out" is 11 bytes, larger than the limit of 10 bytes`},
			wantIs:   []error{safefile.ErrTooLarge},
		},
		{
			name:   "missing file",
			setup:  func(*testing.T, string, string, string) {},
			want:   result{Err: `case "c": the runner wrote no output file: output file "cases/c.out" does not exist`},
			wantIs: []error{ErrNoOutputFile, fs.ErrNotExist},
		},
		{
			name: "cases directory is a symlink outside",
			setup: func(t *testing.T, out, outside, _ string) {
				mustWrite(t, filepath.Join(outside, "c.out"), "SECRET")
				if err := os.Remove(filepath.Join(out, "cases")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, filepath.Join(out, "cases")); err != nil {
					t.Fatal(err)
				}
			},
			want: result{Err: `case "c": output file "cases/c.out" is or passes through a symbolic link, ` +
				`which the collector does not follow`},
			wantIs: []error{safefile.ErrSymlink},
		},
	}
	for _, h := range hostileOutput {
		tests = append(tests, testCase{name: h.name, setup: h.setup, wantIs: []error{safefile.ErrRefused},
			want: result{Err: `case "c": output file "cases/c.out" ` + h.wantErr}})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, outside := t.TempDir(), t.TempDir()
			if err := os.Mkdir(filepath.Join(out, "cases"), 0o700); err != nil {
				t.Fatal(err)
			}
			d := openOut(t, out)
			tc.setup(t, out, outside, "cases/c.out")
			resp, err := ParseSingleAt("c", d, "cases/c.out", tc.maxBytes)
			got := result{Resp: resp}
			if err != nil {
				got.Err = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseSingleAt mismatch (-want +got):\n%s", diff)
			}
			for _, target := range tc.wantIs {
				if !errors.Is(err, target) {
					t.Errorf("ParseSingleAt error %v does not match %v", err, target)
				}
			}
		})
	}
}
