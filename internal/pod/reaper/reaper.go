// Package reaper is what an init process (PID 1 of its container) does about the processes it leaves behind:
// it kills and reaps every other process of its PID namespace, and it makes itself non-dumpable so that they
// cannot reach it. The runner container's launcher and the judge container's judge runner both use it.
package reaper

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// KillLeftovers kills every process the runner (or a judge script) left behind and reaps them, waiting at most
// timeout; it returns how many it killed and how many were still alive at the timeout (survivors: SIGKILL does not
// end a process in uninterruptible sleep until it wakes). As the container's init (PID 1), kill(-1) reaches every
// other process of the container's PID namespace, whatever session or process group they moved to. Outside a
// container (tests, or a pod sharing its PID namespace) it kills the orphans re-parented to this subreaper
// instead, repeatedly, as their own children are re-parented in turn.
func KillLeftovers(timeout time.Duration) (killed, survived int) {
	deadline := time.Now().Add(timeout)
	seen := map[int]bool{}
	// A process may be between fork and re-parenting when a scan runs: the scan repeats until it has come back
	// empty a few times in a row.
	for empty := 0; empty < 3 && time.Now().Before(deadline); {
		pids := leftovers()
		if len(pids) == 0 {
			empty++
		} else {
			empty = 0
			for _, pid := range pids {
				seen[pid] = true
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
	return len(seen), len(leftovers())
}

// leftovers lists the processes to kill: as PID 1, every other live process of the PID namespace; otherwise the
// live children of this (subreaper) process.
func leftovers() []int {
	if os.Getpid() == 1 {
		return ChildrenOf(-1)
	}
	return ChildrenOf(os.Getpid())
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

// ChildrenOf lists the live (not zombie) processes whose parent is ppid; ppid -1 lists every process but this
// one.
func ChildrenOf(ppid int) []int {
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

// Remaining lists the processes KillLeftovers would still kill: after it, the ones it could not (a process in
// uninterruptible sleep dies only when it leaves it).
func Remaining() []int { return leftovers() }

// Harden makes this process (the launcher, the judge runner) non-dumpable: no process it starts (same uid, no
// capabilities) can then ptrace it, read its memory or open its descriptors through /proc, so none can make it
// close its FIFO early or change what it reports.
func Harden() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make this process non-dumpable: %w", err)
	}
	return nil
}

// BecomeSubreaper makes this process the reaper of its orphaned descendants (as PID 1 is in a container), so
// processes left behind are re-parented here and KillLeftovers finds them outside a container too.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become child subreaper: %w", err)
	}
	return nil
}
