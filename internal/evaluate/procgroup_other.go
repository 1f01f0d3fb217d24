//go:build !unix

package evaluate

import "os/exec"

// ownProcessGroup is a no-op where process groups are not available.
func ownProcessGroup(*exec.Cmd) {}

// killGroup kills the command's process (its children are not reached here).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

// terminatingSignal is never known here.
func terminatingSignal(*exec.ExitError) string { return "" }
