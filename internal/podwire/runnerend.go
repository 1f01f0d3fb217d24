package podwire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The runner-end FIFO tells the collector, without trusting anything the runner can write, that every process of
// the runner container is gone. The launcher is the runner container's init process: it opens the FIFO's write
// end before it starts anything, and closes it only after it has killed and reaped every other process of the
// container. The kernel kills every process of a PID namespace when its init exits, so end-of-file on the read
// end means the container's processes are gone, whichever way the launcher ended. The FIFO lives in a volume the
// runner mounts read-only, so the runner cannot replace it; a runner process that opens the write end itself
// only delays end-of-file until it dies. The launcher's report is the frame that ends the stream (reportframe.go).

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
	fd := -1
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		var err error
		fd, err = openWriteEnd(path)
		if err != nil {
			return false, fmt.Errorf("open the runner-end FIFO %s: %w", path, err)
		}
		return fd >= 0, nil
	})
	switch {
	case err == nil:
		return fd, nil
	case !wait.Interrupted(err):
		return -1, err
	case ctx.Err() != nil:
		return -1, ctx.Err()
	}
	return -1, fmt.Errorf("the collector did not open the runner-end FIFO within %s", timeout)
}

// openWriteEnd opens a FIFO's write end without blocking (close-on-exec): -1 and no error while no reader has
// it open (ENXIO) or the open was interrupted.
func openWriteEnd(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENXIO) || errors.Is(err, unix.EINTR) {
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	return fd, nil
}

// WriteRunnerEnd writes a frame (EncodeFrame) into the runner-end FIFO through the launcher's descriptor (opened
// without blocking), waiting at most timeout for the collector to drain what runner processes wrote before it.
func WriteRunnerEnd(fd int, frame []byte, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for len(frame) > 0 {
		n, err := unix.Write(fd, frame)
		if n > 0 {
			frame = frame[n:]
		}
		switch {
		case err == nil || errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EAGAIN):
			return fmt.Errorf("write the launcher's report into the runner-end FIFO: %w", err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("the collector did not read the launcher's report within %s", timeout)
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if _, err := unix.Poll(fds, int(min(left, time.Second)/time.Millisecond)+1); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("wait for the runner-end FIFO: %w", err)
		}
	}
	return nil
}

// RunnerEndWatch is the collector's side of the runner-end FIFO: Started is closed once the launcher opened its
// write end, Ended once every writer closed it (Final then tells what ended the stream), Stuck delivers the
// launcher's report once the stream ends with a FrameStuck (processes of the runner survive; the FIFO stays
// open), Failed the error that stopped the watch.
type RunnerEndWatch struct {
	Started, Ended <-chan struct{}
	Stuck          <-chan []byte
	Failed         <-chan error
	tail           []byte
}

// Final is the frame that ends the stream (ErrNoFrame when the stream does not end with one). Only after Ended.
func (w *RunnerEndWatch) Final() (kind string, payload []byte, err error) { return DecodeFrame(w.tail) }

// WatchRunnerEnd opens the FIFO's read end and watches it (see RunnerEndWatch). Opening blocks until the launcher
// opens the write end, so the goroutine may outlive its caller; it holds only a descriptor and the stream's last
// MaxFrameBytes.
//
// A restarted collector cannot wait for a writer that already came and went: with resume (the launcher is known
// to have opened the FIFO before), it opens without blocking, and a read that finds no writer means the end.
func WatchRunnerEnd(path string, resume bool) *RunnerEndWatch {
	startedc, endedc, failedc, stuckc := make(chan struct{}), make(chan struct{}), make(chan error, 1), make(chan []byte, 1)
	w := &RunnerEndWatch{Started: startedc, Ended: endedc, Failed: failedc, Stuck: stuckc}
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
		buf := make([]byte, 64<<10)
		var tail []byte
		stuckSent := false
		for {
			// Runner processes may write anything into the FIFO: only its end is read, as the launcher's frame.
			n, err := unix.Read(fd, buf)
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
				w.tail = tail
				close(endedc)
				return
			}
			tail = append(tail, buf[:n]...)
			if len(tail) > 2*MaxFrameBytes {
				tail = append(tail[:0], tail[len(tail)-MaxFrameBytes:]...)
			}
			if !stuckSent && endsWithFrameOf(tail, FrameStuck) {
				if kind, payload, err := DecodeFrame(keepLast(tail, MaxFrameBytes)); err == nil && kind == FrameStuck {
					// Anyone may write a stuck frame; acting on one can only make the outcome worse.
					stuckSent = true
					stuckc <- bytes.Clone(payload)
				}
			}
		}
	}()
	return w
}

func keepLast(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
