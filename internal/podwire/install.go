package podwire

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Install copies the file at src to dest atomically: it writes a temporary file in dest's directory, makes it
// executable (0755), syncs it and renames it over dest, so a reader never sees a partial binary.
func Install(src, dest string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("open binary %s: %w", src, err)
	}
	// Read-only: a close error cannot lose data; the copy itself is checked by WriteFileAtomic.
	defer func() { _ = in.Close() }()
	dir := filepath.Dir(dest)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	return WriteFileAtomic(dest, 0o755, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// WriteFileAtomic writes a file through a temporary sibling and a rename. The write function fills it.
func WriteFileAtomic(path string, mode os.FileMode, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return nil
}

// WriteBytesAtomic writes data to path atomically with mode 0644.
func WriteBytesAtomic(path string, data []byte) error {
	return WriteFileAtomic(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
