//go:build !linux

package safefile

import (
	"io"
	"os"
)

// CopyTo writes the file's bytes into dst, an empty file (holes are written out in full on this system), refusing
// a file over the bound as Read does. It returns the bytes written.
func (f *File) CopyTo(dst *os.File) (int64, error) {
	return io.Copy(dst, f)
}
