// Package safefile reads files that an untrusted process wrote into a directory the caller trusts.
//
// The runner container runs code the operator does not trust, and the collector reads what it left in the shared
// output directory. A plain os.Open of "results.jsonl" there would follow a symbolic link the runner planted (to the
// collector's service-account token, to /proc/self/environ), block forever on a FIFO, or hand a device node to its
// driver. Dir.Open refuses all of that: it resolves names beneath the directory without following any symbolic link
// or crossing a mount, looks at what it found before opening it, and opens only regular files, with a bound on how
// many bytes the caller will read.
//
// On Linux names are resolved with openat2(2) (RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS,
// RESOLVE_NO_XDEV), or, on kernels without it, by a walk of openat(2) calls with O_NOFOLLOW on every component.
// Elsewhere os.Root is used with the same refusals, except that crossing a mount is not detected.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrRefused is matched (errors.Is) by every error of a file that exists but that the package will not read: one
// that is or passes through a symbolic link, one that is not a regular file, a name that leads outside the
// directory, and a file larger than the bound. A caller can report these as a fault of whoever wrote the directory
// rather than as an I/O failure.
var ErrRefused = errors.New("refused")

// Finer sentinels; each matches ErrRefused too.
var (
	ErrSymlink    = fmt.Errorf("%w: symbolic link", ErrRefused)
	ErrNotRegular = fmt.Errorf("%w: not a regular file", ErrRefused)
	ErrOutside    = fmt.Errorf("%w: outside the directory", ErrRefused)
	ErrTooLarge   = fmt.Errorf("%w: too large", ErrRefused)
)

const (
	symlinkProblem = "is or passes through a symbolic link, which the collector does not follow"
	notDirProblem  = "passes through something that is not a directory"
)

// OpenError is the error of Dir.Open for a name it could not or would not open. Err is what errors.Is matches: one
// of the sentinels above, fs.ErrInvalid for a malformed name, or the system's error (a missing file matches
// fs.ErrNotExist).
type OpenError struct {
	// Name is the name as passed to Open.
	Name string
	// Problem completes the sentence that starts with the name, e.g. "is a FIFO, not a regular file".
	Problem string
	Err     error
}

func (e *OpenError) Error() string { return fmt.Sprintf("output file %q %s", e.Name, e.Problem) }

func (e *OpenError) Unwrap() error { return e.Err }

// TooLargeError says that a file holds more than the bound its reader was given. It matches ErrTooLarge and
// ErrRefused.
type TooLargeError struct {
	Name string
	// Limit is the bound in bytes.
	Limit int64
	// Size is the file's size when it was opened, or 0 when it grew past the bound while being read.
	Size int64
}

func (e *TooLargeError) Error() string {
	if e.Size > 0 {
		return fmt.Sprintf("output file %q is %d bytes, larger than the limit of %d bytes", e.Name, e.Size, e.Limit)
	}
	return fmt.Sprintf("output file %q is larger than the limit of %d bytes", e.Name, e.Limit)
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// checkName validates a name given to Open and returns it cleaned, with slashes. Names come from the caller, not
// from the untrusted writer, but they are built from outside data (case ids), so ".." and absolute names are
// refused here rather than left to the resolver: the walk then never has to reason about "..".
func checkName(name string) (string, error) {
	switch {
	case name == "":
		return "", &OpenError{Name: name, Problem: "is not a valid name: it is empty", Err: fs.ErrInvalid}
	case strings.IndexByte(name, 0) >= 0:
		return "", &OpenError{Name: name, Problem: "is not a valid name: it contains a NUL byte", Err: fs.ErrInvalid}
	case filepath.IsAbs(name) || strings.HasPrefix(filepath.ToSlash(name), "/"):
		return "", &OpenError{Name: name, Problem: "is an absolute name; only names beneath the output directory are read",
			Err: ErrOutside}
	}
	slashed := filepath.ToSlash(name)
	for part := range strings.SplitSeq(slashed, "/") {
		if part == ".." {
			return "", &OpenError{Name: name, Problem: `leaves the output directory through ".."`, Err: ErrOutside}
		}
	}
	return path.Clean(slashed), nil
}

// kindError says why a file of the given type is refused; nil for a regular file.
func kindError(name string, mode fs.FileMode) error {
	var kind string
	switch mode.Type() {
	case 0:
		return nil
	case fs.ModeSymlink:
		return &OpenError{Name: name, Problem: symlinkProblem, Err: ErrSymlink}
	case fs.ModeDir:
		kind = "a directory"
	case fs.ModeNamedPipe:
		kind = "a FIFO"
	case fs.ModeSocket:
		kind = "a socket"
	case fs.ModeDevice:
		kind = "a block device"
	case fs.ModeDevice | fs.ModeCharDevice:
		kind = "a character device"
	default:
		kind = fmt.Sprintf("of type %v", mode.Type())
	}
	return &OpenError{Name: name, Problem: "is " + kind + ", not a regular file", Err: ErrNotRegular}
}

// File is a regular file opened by Dir.Open. Reads fail with a *TooLargeError once they would go past the bound.
// A File is not safe for concurrent use.
type File struct {
	f     *os.File
	name  string
	size  int64
	limit int64 // <= 0: none
	n     int64 // bytes returned so far
	err   error // sticky *TooLargeError
}

// newFile wraps an opened regular file; it closes f and fails when the file is already over the bound, so that a
// caller streaming records does not act on part of a file that is refused anyway.
func newFile(f *os.File, name string, size, limit int64) (*File, error) {
	if limit > 0 && size > limit {
		_ = f.Close() // read-only: nothing to lose
		return nil, &TooLargeError{Name: name, Limit: limit, Size: size}
	}
	return &File{f: f, name: name, size: size, limit: limit}, nil
}

// Read reads as os.File does, but returns a *TooLargeError (with the bytes up to the bound) once the file turns out
// to hold more than the bound, which happens when it grew after Open; the error repeats on later reads.
func (f *File) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.limit <= 0 {
		return f.f.Read(p)
	}
	// One byte past the bound tells a file that ends exactly at the bound from one that goes on.
	if room := f.limit - f.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := f.f.Read(p)
	f.n += int64(n)
	if f.n > f.limit {
		n -= int(f.n - f.limit)
		f.n = f.limit
		f.err = &TooLargeError{Name: f.name, Limit: f.limit}
		return n, f.err
	}
	return n, err
}

// Size is the file's size when it was opened.
func (f *File) Size() int64 { return f.size }

// Stat describes the opened file as it is now (os.SameFile tells whether two opens found the same file).
func (f *File) Stat() (fs.FileInfo, error) { return f.f.Stat() }

// Name is the name the file was opened with.
func (f *File) Name() string { return f.name }

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// ReadFile reads the whole of the regular file name beneath d, refusing it as Open does; maxBytes <= 0 means no
// bound.
func (d *Dir) ReadFile(name string, maxBytes int64) ([]byte, error) {
	f, err := d.Open(name, maxBytes)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	size := f.Size()
	if maxBytes > 0 {
		size = min(size, maxBytes)
	}
	// One spare byte lets the final read see EOF without growing the buffer.
	buf := make([]byte, 0, int(min(size, math.MaxInt32-1))+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
