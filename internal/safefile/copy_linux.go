//go:build linux

package safefile

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// CopyTo writes the file's bytes into dst, an empty file, keeping its holes as holes: only the ranges that hold
// data (lseek SEEK_DATA, SEEK_HOLE) are read and written, and dst is then given the file's size. A sparse file
// whose apparent size is far above what it stores (truncate -s 1G) costs dst, and the disk under it, what it
// stores, not its size. A file that holds more than the bound, or whose size passes it, is refused as Read
// refuses it (*TooLargeError), with dst holding part of it. It returns the size dst was given.
func (f *File) CopyTo(dst *os.File) (int64, error) {
	fd := int(f.f.Fd())
	var off int64
	for {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) { // no data at or past off
			break
		}
		if err != nil {
			return 0, &os.PathError{Op: "seek data", Path: f.name, Err: err}
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			return 0, &os.PathError{Op: "seek hole", Path: f.name, Err: err}
		}
		if f.limit > 0 && hole > f.limit {
			return 0, &TooLargeError{Name: f.name, Limit: f.limit}
		}
		if _, err := io.Copy(io.NewOffsetWriter(dst, data), io.NewSectionReader(f.f, data, hole-data)); err != nil {
			return 0, err
		}
		off = hole
	}
	st, err := f.f.Stat()
	if err != nil {
		return 0, err
	}
	size := max(st.Size(), off)
	if f.limit > 0 && size > f.limit {
		return 0, &TooLargeError{Name: f.name, Limit: f.limit, Size: size}
	}
	return size, dst.Truncate(size)
}
