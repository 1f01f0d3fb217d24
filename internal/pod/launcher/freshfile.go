package launcher

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// writeFresh writes data as dir/name, in a directory the runner can write: it never opens a file the runner made.
// dir is opened without following a symlink in its last component (and must be a directory, which opening never
// blocks on); the data goes into a new file created with O_EXCL|O_NOFOLLOW (a name that exists, whatever its type,
// is refused, not opened) under a random name, which is then renamed over name. So a FIFO, a symlink or a device
// the runner planted at name is replaced, and a directory there fails the write instead of blocking it.
func writeFresh(dir, name string, data []byte) error {
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the directory %s: %w", dir, err)
	}
	defer func() { _ = unix.Close(dfd) }()
	var tmp string
	fd := -1
	for range 8 {
		var rnd [8]byte
		_, _ = rand.Read(rnd[:])
		tmp = ".launcher-" + hex.EncodeToString(rnd[:]) + ".tmp"
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("create a file in %s: %w", dir, err)
	}
	werr := writeAll(fd, data)
	if cerr := unix.Close(fd); werr == nil && cerr != nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(dfd, tmp, dfd, name)
	}
	if werr != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("write %s in %s: %w", name, dir, werr)
	}
	return nil
}

func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}
