package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"golang.org/x/sys/unix"
)

// TailBytes bounds the stdout and stderr tails kept for each invocation.
const TailBytes = 4096

// DefaultShell runs rendered templates.
const DefaultShell = "/bin/sh"

// ioDrainDelay bounds how long a finished command's stdout/stderr copying may continue when a leftover process
// still holds the pipes open.
const ioDrainDelay = 2 * time.Second

// Command is one shell invocation run in its own process group.
type Command struct {
	// Script is the rendered command line, run as Shell -c Script.
	Script string
	// Shell defaults to DefaultShell.
	Shell string
	// Dir is the working directory ("" keeps the current one).
	Dir string
	// Env is the full environment of the command.
	Env []string
	// Timeout bounds the invocation; 0 means none.
	Timeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL of the process group.
	KillGrace time.Duration
	// Stdout and Stderr receive the output as it is written (besides the kept tails); nil discards it.
	Stdout, Stderr io.Writer
}

// Run runs c in a new process group and waits for it. When the timeout passes or ctx is cancelled (launch got
// SIGTERM), the whole group gets SIGTERM and, after KillGrace, SIGKILL. Processes the command left behind in its
// group are terminated the same way once it exits, so nothing outlives an invocation.
func Run(ctx context.Context, c Command) podwire.Outcome {
	shell := c.Shell
	if shell == "" {
		shell = DefaultShell
	}
	if err := checkShell(shell); err != nil {
		return podwire.Outcome{StartError: err.Error()}
	}
	stdoutTail, stderrTail := newTail(TailBytes), newTail(TailBytes)
	cmd := exec.Command(shell, "-c", c.Script)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	cmd.Stdout = teeWriter(c.Stdout, stdoutTail)
	cmd.Stderr = teeWriter(c.Stderr, stderrTail)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = ioDrainDelay

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return podwire.Outcome{StartError: fmt.Sprintf("could not start %s: %v", shell, err), DurationMs: time.Since(start).Milliseconds()}
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var timeout <-chan time.Time
	if c.Timeout > 0 {
		t := time.NewTimer(c.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var out podwire.Outcome
	var waitErr error
	select {
	case waitErr = <-done:
		// The leader exited; whatever it left in its group goes too. Without a leader to wait for,
		// terminateGroup has no wait error to return.
		_ = terminateGroup(pgid, c.KillGrace, nil)
	case <-timeout:
		out.TimedOut = true
		waitErr = terminateGroup(pgid, c.KillGrace, done)
	case <-ctx.Done():
		out.Terminated = true
		waitErr = terminateGroup(pgid, c.KillGrace, done)
	}
	out.DurationMs = time.Since(start).Milliseconds()
	out.StdoutTail = stdoutTail.String()
	out.StderrTail = stderrTail.String()
	if ps := cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			out.Signal = unix.SignalName(ws.Signal())
			if out.Signal == "" {
				out.Signal = fmt.Sprintf("signal %d", int(ws.Signal()))
			}
		} else {
			code := int32(ps.ExitCode())
			out.ExitCode = &code
		}
	} else if waitErr != nil {
		out.StartError = fmt.Sprintf("waiting for the command failed: %v", waitErr)
	}
	return out
}

// checkShell fails with a clear message when the image has no usable shell.
func checkShell(shell string) error {
	fi, err := os.Stat(shell)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("the runner image has no %s: command templates run with %s -c, so the image needs a POSIX shell", shell, shell)
	}
	if err != nil {
		return fmt.Errorf("cannot use %s to run the command template: %v", shell, err)
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s in the runner image is not an executable file: command templates run with %s -c", shell, shell)
	}
	return nil
}

// terminateGroup ends process group pgid: SIGTERM, then SIGKILL after grace for whatever is left. When leader is
// not nil, it is the leader's Wait result channel and terminateGroup returns its value. Orphans of the group that
// were re-parented to this process (PID 1 in the container, or a child subreaper) are reaped.
func terminateGroup(pgid int, grace time.Duration, leader <-chan error) error {
	var waitErr error
	leaderDone := leader == nil
	if err := unix.Kill(-pgid, unix.SIGTERM); err != nil && leaderDone {
		// ESRCH: the group is already empty.
		return nil
	}
	deadline := time.Now().Add(grace)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if !leaderDone {
			select {
			case waitErr = <-leader:
				leaderDone = true
			default:
			}
		}
		if leaderDone {
			reapGroup(pgid)
			if !groupAlive(pgid) {
				return waitErr
			}
		}
		<-tick.C
	}
	_ = unix.Kill(-pgid, unix.SIGKILL)
	if !leaderDone {
		waitErr = <-leader
	}
	for i := 0; i < 50 && groupAlive(pgid); i++ {
		reapGroup(pgid)
		<-tick.C
	}
	return waitErr
}

// groupAlive reports whether any process (zombies included) is left in the group.
func groupAlive(pgid int) bool {
	return unix.Kill(-pgid, 0) == nil
}

// reapGroup collects the exit status of group members that are children of this process. It must only be called
// after the group leader was waited for, so it never steals the leader's status from exec.Cmd.Wait.
func reapGroup(pgid int) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-pgid, &ws, unix.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

func teeWriter(pass io.Writer, tail *tail) io.Writer {
	if pass == nil {
		return tail
	}
	return io.MultiWriter(tail, passThrough{pass})
}

// passThrough never fails, so a closed container stdout cannot stop the runner's output from being kept.
type passThrough struct{ w io.Writer }

func (p passThrough) Write(b []byte) (int, error) {
	_, _ = p.w.Write(b)
	return len(b), nil
}

// tail keeps the end of what is written to it: its last max+1 bytes, one more than String returns, to tell that
// the output was cut.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, keep := len(b), t.max+1
	if len(b) >= keep {
		t.buf = append(t.buf[:0], b[len(b)-keep:]...)
		return n, nil
	}
	if over := len(t.buf) + len(b) - keep; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, b...)
	return n, nil
}

// String returns at most max bytes of the end of the output, as textbound.Tail cuts it: valid UTF-8, never from
// inside a rune, marked when cut.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return textbound.Tail(string(t.buf), t.max)
}
