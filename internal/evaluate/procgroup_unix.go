//go:build unix

package evaluate

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes the command the leader of a new process group, so that killGroup reaches its children.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the command's process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// terminatingSignal names the signal that ended the process, or "".
func terminatingSignal(err *exec.ExitError) string {
	if ws, ok := err.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
