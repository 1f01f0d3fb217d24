//go:build linux

package safefile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// allocated is the disk space a file takes (its blocks), not its apparent size.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Blocks * 512
}

// sparse writes a file of the given apparent size holding head at its start and tail at its end, the rest a hole.
func sparse(t *testing.T, path string, size int64, head, tail string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(tail), size-int64(len(tail))); err != nil {
		t.Fatal(err)
	}
}

// A hostile runner's sparse output (1 GiB apparent, a few bytes stored) is copied as it is stored: same bytes,
// same size, and the copy takes about the same disk, not a gigabyte of zeros.
func TestCopyToKeepsHoles(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	const size = 1 << 30
	sparse(t, filepath.Join(dir, "output.jsonl"), size, `{"id":"a","text":"x"}`+"\n", "\n"+`{"id":"b","text":"y"}`+"\n")
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	f, err := d.Open("output.jsonl", size)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	dst, err := os.Create(filepath.Join(out, "copy"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.CopyTo(dst)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil || n != size {
		t.Fatalf("CopyTo = %d, %v; want %d", n, err, size)
	}
	if got := allocated(t, dst.Name()); got > 1<<20 {
		t.Errorf("the copy of a 1 GiB sparse file takes %d bytes of disk, want what it stores", got)
	}
	st, _ := os.Stat(dst.Name())
	if st.Size() != size {
		t.Errorf("the copy's size is %d, want %d", st.Size(), size)
	}
	c, _ := os.Open(dst.Name())
	defer func() { _ = c.Close() }()
	head, tail := make([]byte, 22), make([]byte, 23)
	_, _ = c.ReadAt(head, 0)
	_, _ = c.ReadAt(tail, size-23)
	mid := make([]byte, 4096)
	_, _ = c.ReadAt(mid, size/2)
	if string(head) != `{"id":"a","text":"x"}`+"\n" || string(tail) != "\n"+`{"id":"b","text":"y"}`+"\n" || !bytes.Equal(mid, make([]byte, 4096)) {
		t.Errorf("the copy's bytes differ: head %q, tail %q", head, tail)
	}
}

// A file that grows past the bound after it was opened is refused by CopyTo as by Read.
func TestCopyToRefusesGrowthPastBound(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "o")
	if err := os.WriteFile(path, []byte("small"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	f, err := d.Open("o", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sparse(t, path, 10<<30, "small", "end") // the runner truncates it to 10 GiB after the open
	dst, err := os.Create(filepath.Join(out, "copy"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dst.Close() }()
	var tl *TooLargeError
	if _, err := f.CopyTo(dst); !errors.As(err, &tl) {
		t.Fatalf("CopyTo of a file grown to 10 GiB = %v, want a *TooLargeError", err)
	}
	if got := allocated(t, dst.Name()); got > 1<<20 {
		t.Errorf("refusing it wrote %d bytes", got)
	}
}
