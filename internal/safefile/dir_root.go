//go:build !linux || safefile_osroot

// This is the implementation for systems without openat2, on os.Root. The tag safefile_osroot selects it on Linux
// too, so that its tests run where the collector is developed:
//
//	go test -tags safefile_osroot ./internal/safefile/
//
// os.Root keeps resolution beneath the directory but follows symbolic links that stay inside it, so every component
// is looked at with Lstat first and the opened result compared with what Lstat saw: a link swapped in between is
// caught as a different file. Crossing a mount is not detected here.

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// Dir is a directory, trusted itself, whose contents are not. It is safe for concurrent use.
type Dir struct {
	root *os.Root
}

// OpenDir opens the directory path. The path itself is trusted (it is the mount point of the shared volume), but
// its last component must not be a symbolic link.
func OpenDir(path string) (*Dir, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("not a directory (or a symbolic link)")}
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	if st, err := root.Stat("."); err != nil || !os.SameFile(fi, st) {
		_ = root.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("the directory changed while being opened")}
	}
	return &Dir{root: root}, nil
}

// Close closes the directory; Files opened from it stay open.
func (d *Dir) Close() error { return d.root.Close() }

// Open opens the regular file name (slash-separated, relative to d) for reading at most maxBytes bytes (<= 0: no
// bound). It refuses, with an *OpenError, a name that is or passes through a symbolic link, that leaves d, or that
// is not a regular file (FIFO, socket, device, directory); such files are never opened for reading. A file already
// larger than maxBytes is refused with a *TooLargeError. A missing file gives an error matching fs.ErrNotExist.
func (d *Dir) Open(name string, maxBytes int64) (*File, error) {
	clean, err := checkName(name)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(clean, "/")
	cur := d.root
	defer func() {
		if cur != d.root {
			_ = cur.Close()
		}
	}()
	for _, part := range parts[:len(parts)-1] {
		fi, err := cur.Lstat(part)
		if err != nil {
			return nil, rootError(name, err)
		}
		switch {
		case fi.Mode().Type() == fs.ModeSymlink:
			return nil, &OpenError{Name: name, Problem: symlinkProblem, Err: ErrSymlink}
		case !fi.IsDir():
			return nil, &OpenError{Name: name, Problem: notDirProblem, Err: syscall.ENOTDIR}
		}
		next, err := cur.OpenRoot(part)
		if err != nil {
			return nil, rootError(name, err)
		}
		if st, err := next.Stat("."); err != nil || !os.SameFile(fi, st) {
			_ = next.Close()
			return nil, &OpenError{Name: name, Problem: symlinkProblem, Err: ErrSymlink}
		}
		if cur != d.root {
			_ = cur.Close()
		}
		cur = next
	}
	last := parts[len(parts)-1]
	fi, err := cur.Lstat(last)
	if err != nil {
		return nil, rootError(name, err)
	}
	if err := kindError(name, fi.Mode()); err != nil {
		return nil, err
	}
	// O_NONBLOCK keeps the open from waiting should a FIFO be swapped in after Lstat.
	f, err := cur.OpenFile(last, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, rootError(name, err)
	}
	st, err := f.Stat()
	if err == nil {
		err = kindError(name, st.Mode())
	}
	if err == nil && !os.SameFile(fi, st) {
		err = &OpenError{Name: name, Problem: symlinkProblem, Err: ErrSymlink}
	}
	if err != nil {
		_ = f.Close()
		return nil, rootError(name, err)
	}
	return newFile(f, name, st.Size(), maxBytes)
}

// rootError turns an error of os.Root into an *OpenError.
func rootError(name string, err error) error {
	var oe *OpenError
	switch {
	case errors.As(err, &oe):
		return err
	case errors.Is(err, fs.ErrNotExist):
		return &OpenError{Name: name, Problem: "does not exist", Err: err}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &OpenError{Name: name, Problem: "cannot be opened: " + err.Error(), Err: err}
}
