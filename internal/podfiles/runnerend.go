package podfiles

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// The runner-end FIFO tells the collector, without trusting anything the runner can write, that every process of
// the runner container is gone. The launcher is the runner container's init process: it opens the FIFO's write
// end before it starts anything, and closes it only after it has killed and reaped every other process of the
// container. The kernel kills every process of a PID namespace when its init exits, so end-of-file on the read
// end means the container's processes are gone, whichever way the launcher ended. The FIFO lives in a volume the
// runner mounts read-only, so the runner cannot replace it; a runner process that opens the write end itself
// only delays end-of-file until it dies.

// RunnerEndMode lets any uid open the write end (the runner's uid is the user's choice) and only the collector
// (the owner) read it.
const RunnerEndMode = 0o622

// CreateRunnerEnd makes the FIFO (install runs it, as the collector's user).
func CreateRunnerEnd(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	if err := unix.Mkfifo(path, RunnerEndMode); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("create the runner-end FIFO %s: %w", path, err)
	}
	// Mkfifo applies the umask.
	if err := os.Chmod(path, RunnerEndMode); err != nil {
		return fmt.Errorf("chmod the runner-end FIFO %s: %w", path, err)
	}
	return nil
}

// HoldRunnerEnd opens the FIFO's write end once the collector has opened its read end (opening a FIFO for writing
// without blocking fails with ENXIO until a reader exists), waiting at most timeout. The returned descriptor is
// raw, so no finalizer closes it early; it is close-on-exec, so the runner's processes do not inherit it.
func HoldRunnerEnd(ctx context.Context, path string, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == nil {
			return fd, nil
		}
		if !errors.Is(err, unix.ENXIO) && !errors.Is(err, unix.EINTR) {
			return -1, fmt.Errorf("open the runner-end FIFO %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("the collector did not open the runner-end FIFO within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WatchRunnerEnd opens the FIFO's read end and returns a channel closed once every writer has closed it, and one
// closed once the launcher has opened its write end. Opening blocks until the launcher opens the write end, so
// the goroutine may outlive its caller; it holds only a descriptor.
//
// A restarted collector cannot wait for a writer that already came and went: with resume (the launcher is known
// to have opened the FIFO before), it opens without blocking, and a read that finds no writer means the end.
func WatchRunnerEnd(path string, resume bool) (started, ended <-chan struct{}, failed <-chan error) {
	startedc, endedc, failedc := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		flags := unix.O_RDONLY | unix.O_CLOEXEC
		if resume {
			flags |= unix.O_NONBLOCK
		}
		fd, err := unix.Open(path, flags, 0)
		for errors.Is(err, unix.EINTR) {
			fd, err = unix.Open(path, flags, 0)
		}
		if err != nil {
			failedc <- fmt.Errorf("open the runner-end FIFO %s: %w", path, err)
			return
		}
		defer func() { _ = unix.Close(fd) }()
		close(startedc)
		var buf [512]byte
		for {
			// Whatever a runner process writes into the FIFO is discarded: only end-of-file means anything.
			n, err := unix.Read(fd, buf[:])
			if errors.Is(err, unix.EAGAIN) {
				time.Sleep(50 * time.Millisecond) // resumed: a writer is still there
				continue
			}
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				failedc <- fmt.Errorf("read the runner-end FIFO: %w", err)
				return
			}
			if n == 0 {
				close(endedc)
				return
			}
		}
	}()
	return startedc, endedc, failedc
}
