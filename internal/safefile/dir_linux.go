//go:build linux && !safefile_osroot

package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

const (
	// probeFlags open whatever is at the name without opening it for I/O: a FIFO does not wait for a writer, a
	// device's driver is not called, and a symbolic link in the last place is returned itself (openat2 documents
	// this for O_PATH|O_NOFOLLOW) so that it can be named in the error.
	probeFlags = unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC
	// readFlags open the file for reading once the probe found a regular file. O_NONBLOCK keeps the open from
	// waiting should the runner swap a FIFO in after the probe, O_NOCTTY keeps a terminal from becoming ours.
	readFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NOCTTY
	// resolveFlags keep the whole resolution beneath the directory, on its mount, and free of links of any kind.
	resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV
	// openAttempts bounds the retries of openat2's EAGAIN, which it returns with RESOLVE_* flags when a rename
	// elsewhere on the system races with the resolution.
	openAttempts = 8
)

// openat2Missing is set once the kernel has said it has no openat2 (before Linux 5.6), so that later opens go
// straight to the walk.
var openat2Missing atomic.Bool

// Dir is a directory, trusted itself, whose contents are not. It is safe for concurrent use.
type Dir struct {
	f  *os.File
	st unix.Stat_t // the directory's; the walk must not leave its device
	// walk makes Open resolve by walking even when openat2 is there (tests of the old-kernel path).
	walk bool
}

// OpenDir opens the directory path. The path itself is trusted (it is the mount point of the shared volume), but
// its last component must not be a symbolic link.
func OpenDir(path string) (*Dir, error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path), st: st}, nil
}

// Close closes the directory; Files opened from it stay open.
func (d *Dir) Close() error { return d.f.Close() }

// Open opens the regular file name (slash-separated, relative to d) for reading at most maxBytes bytes (<= 0: no
// bound). It refuses, with an *OpenError, a name that is or passes through a symbolic link, that leaves d or its
// mount, or that is not a regular file (FIFO, socket, device, directory); such files are never opened for reading.
// A file already larger than maxBytes is refused with a *TooLargeError. A missing file gives an error matching
// fs.ErrNotExist.
func (d *Dir) Open(name string, maxBytes int64) (*File, error) {
	clean, err := checkName(name)
	if err != nil {
		return nil, err
	}
	rc, err := d.f.SyscallConn()
	if err != nil {
		return nil, &OpenError{Name: name, Problem: "cannot be opened: " + err.Error(), Err: err}
	}
	var fd int
	var st unix.Stat_t
	// Control keeps the directory's descriptor from being closed and reused under us.
	if cerr := rc.Control(func(dirfd uintptr) {
		fd, st, err = d.open(int(dirfd), clean)
	}); cerr != nil {
		return nil, &OpenError{Name: name, Problem: "cannot be opened: " + cerr.Error(), Err: cerr}
	}
	if err != nil {
		return nil, openError(name, err)
	}
	return newFile(os.NewFile(uintptr(fd), name), name, st.Size, maxBytes)
}

// open finds what is at name without opening it, refuses anything but a regular file, then opens it for reading
// and checks again what it got, since the runner may have swapped the file between the two.
func (d *Dir) open(dirfd int, name string) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	probe, err := d.resolve(dirfd, name, probeFlags)
	if err != nil {
		return -1, st, err
	}
	err = fstat(probe, &st)
	_ = unix.Close(probe)
	if err != nil {
		return -1, st, err
	}
	if err := kindError(name, fileMode(st.Mode)); err != nil {
		return -1, st, err
	}
	fd, err := d.resolve(dirfd, name, readFlags)
	if err != nil {
		return -1, st, err
	}
	if err := fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return -1, st, err
	}
	if err := kindError(name, fileMode(st.Mode)); err != nil {
		_ = unix.Close(fd)
		return -1, st, err
	}
	// Back to blocking reads: os.File would otherwise treat the descriptor as pollable. Regular files never
	// return EAGAIN, so this changes nothing but how os.File handles it.
	if err := unix.SetNonblock(fd, false); err != nil {
		_ = unix.Close(fd)
		return -1, st, err
	}
	return fd, st, nil
}

// resolve opens name beneath dirfd with flags, never following a symbolic link nor leaving the mount.
func (d *Dir) resolve(dirfd int, name string, flags int) (int, error) {
	if !d.walk && !openat2Missing.Load() {
		fd, err := openat2(dirfd, name, flags)
		switch {
		case errors.Is(err, unix.ENOSYS):
			openat2Missing.Store(true)
		case errors.Is(err, unix.EPERM):
			// Seccomp profiles written before openat2 existed deny it with EPERM rather than ENOSYS. The walk is
			// as strict, so falling back is safe; a genuine EPERM comes back from the walk as well.
		default:
			return fd, err
		}
	}
	return d.walkOpen(dirfd, name, flags)
}

func openat2(dirfd int, name string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Resolve: resolveFlags}
	var err error
	for range openAttempts {
		var fd int
		fd, err = unix.Openat2(dirfd, name, &how)
		if err != unix.EAGAIN && err != unix.EINTR {
			return fd, err
		}
	}
	return -1, err
}

// walkOpen is the resolution for kernels without openat2: one openat per component, each with O_NOFOLLOW, so a
// symbolic link anywhere is opened as itself (O_PATH) or refused (ELOOP), never followed. Components must be
// directories on d's device; name has no ".." (checkName).
func (d *Dir) walkOpen(dirfd int, name string, flags int) (int, error) {
	parts := strings.Split(name, "/")
	cur := dirfd
	closeCur := func() {
		if cur != dirfd {
			_ = unix.Close(cur)
		}
	}
	defer func() { closeCur() }()
	for _, part := range parts[:len(parts)-1] {
		next, err := retryEINTR(func() (int, error) { return unix.Openat(cur, part, probeFlags, 0) })
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := fstat(next, &st); err != nil {
			_ = unix.Close(next)
			return -1, err
		}
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			err = unix.ELOOP
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			err = unix.ENOTDIR
		case st.Dev != d.st.Dev:
			err = unix.EXDEV
		}
		if err != nil {
			_ = unix.Close(next)
			return -1, err
		}
		closeCur()
		cur = next
	}
	fd, err := retryEINTR(func() (int, error) { return unix.Openat(cur, parts[len(parts)-1], flags, 0) })
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	if st.Dev != d.st.Dev {
		_ = unix.Close(fd)
		return -1, unix.EXDEV
	}
	return fd, nil
}

func retryEINTR(open func() (int, error)) (int, error) {
	for {
		fd, err := open()
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func fstat(fd int, st *unix.Stat_t) error {
	for {
		err := unix.Fstat(fd, st)
		if err != unix.EINTR {
			return err
		}
	}
}

// fileMode converts the type bits of st_mode.
func fileMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	}
	return fs.ModeIrregular
}

// openError turns a resolution error into an *OpenError that says what the runner did.
func openError(name string, err error) error {
	var oe *OpenError
	if errors.As(err, &oe) {
		return err
	}
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return &OpenError{Name: name, Problem: "cannot be opened: " + err.Error(), Err: err}
	}
	switch errno {
	case unix.ENOENT:
		return &OpenError{Name: name, Problem: "does not exist", Err: errno}
	case unix.ELOOP:
		return &OpenError{Name: name, Problem: symlinkProblem, Err: ErrSymlink}
	case unix.EXDEV:
		// ".." and absolute names were refused before resolution and symbolic links give ELOOP, so what is left
		// is a mount point on the way.
		return &OpenError{Name: name, Err: ErrOutside,
			Problem: "is on another mount than the output directory, which the collector does not cross"}
	case unix.ENOTDIR:
		return &OpenError{Name: name, Problem: notDirProblem, Err: errno}
	case unix.ENXIO:
		// Only a socket or a driverless device gives ENXIO, and the probe refuses both, so the runner swapped one in.
		return &OpenError{Name: name, Problem: "is not a regular file (it changed while being opened)", Err: ErrNotRegular}
	}
	return &OpenError{Name: name, Problem: fmt.Sprintf("cannot be opened: %v", errno), Err: errno}
}
