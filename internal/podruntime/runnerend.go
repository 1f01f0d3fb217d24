package podruntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// runnerEndMode lets any uid open the write end (the runner's uid is the user's choice) and only the collector
// (the owner) read it.
const runnerEndMode = 0o622

// CreateRunnerEnd makes the FIFO (install runs it, as the collector's user).
func CreateRunnerEnd(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	if err := unix.Mkfifo(path, runnerEndMode); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("create the runner-end FIFO %s: %w", path, err)
	}
	// Mkfifo applies the umask.
	if err := os.Chmod(path, runnerEndMode); err != nil {
		return fmt.Errorf("chmod the runner-end FIFO %s: %w", path, err)
	}
	return nil
}

// holdRunnerEnd opens the FIFO's write end once the collector has opened its read end (opening a FIFO for writing
// without blocking fails with ENXIO until a reader exists), waiting at most timeout. The returned descriptor is
// raw, so no finalizer closes it early; it is close-on-exec, so the runner's processes do not inherit it.
func holdRunnerEnd(ctx context.Context, path string, timeout time.Duration) (int, error) {
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

// watchRunnerEnd opens the FIFO's read end and returns a channel closed once every writer has closed it, and one
// closed once the launcher has opened its write end. Opening blocks until the launcher opens the write end, so
// the goroutine may outlive its caller; it holds only a descriptor.
//
// A restarted collector cannot wait for a writer that already came and went: with resume (the launcher is known
// to have opened the FIFO before), it opens without blocking, and a read that finds no writer means the end.
func watchRunnerEnd(path string, resume bool) (started, ended <-chan struct{}, failed <-chan error) {
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

// killLeftovers kills every process the runner left behind and reaps them, waiting at most timeout; it returns
// how many it killed. As the container's init (PID 1), kill(-1) reaches every other process of the container's
// PID namespace, whatever session or process group they moved to. Outside a container (tests, or a pod sharing
// its PID namespace) it kills the orphans re-parented to this subreaper instead, repeatedly, as their own
// children are re-parented in turn.
func killLeftovers(timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	killed := map[int]bool{}
	// A process may be between fork and re-parenting when a scan runs: the scan repeats until it has come back
	// empty a few times in a row.
	for empty := 0; empty < 3 && time.Now().Before(deadline); {
		pids := leftovers()
		if len(pids) == 0 {
			empty++
		} else {
			empty = 0
			for _, pid := range pids {
				killed[pid] = true
			}
			signalLeftovers(pids)
		}
		reapAll()
		time.Sleep(5 * time.Millisecond)
	}
	for time.Now().Before(deadline) {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.ECHILD) || (pid == 0 && len(leftovers()) == 0) {
			break
		}
		if pid <= 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return len(killed)
}

// leftovers lists the processes to kill: as PID 1, every other live process of the PID namespace; otherwise the
// live children of this (subreaper) process.
func leftovers() []int {
	if os.Getpid() == 1 {
		return childrenOf(-1)
	}
	return childrenOf(os.Getpid())
}

// signalLeftovers sends SIGKILL to the leftover processes.
func signalLeftovers(pids []int) {
	if os.Getpid() == 1 {
		_ = unix.Kill(-1, unix.SIGKILL)
		return
	}
	for _, pid := range pids {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}

// childrenOf lists the live (not zombie) processes whose parent is ppid; ppid -1 lists every process but this
// one.
func childrenOf(ppid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// stat is "pid (comm) state ppid ..."; comm may hold spaces and parentheses, so cut at the last ')'.
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		parent, err := strconv.Atoi(fields[1])
		if err != nil || (ppid >= 0 && parent != ppid) {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// reapAll collects every exited child without blocking.
func reapAll() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// hardenLauncher makes the launcher non-dumpable: no process of the runner (same uid, no capabilities) can then
// ptrace it, read its memory or open its descriptors through /proc, so none can make it close the runner-end
// FIFO early or change what it reports.
func hardenLauncher() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the launcher non-dumpable: %w", err)
	}
	return nil
}
