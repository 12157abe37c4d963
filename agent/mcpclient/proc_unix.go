//go:build unix

package mcpclient

import (
	"errors"
	"os/exec"
	"syscall"
)

// setProcessGroup starts the child as the leader of a new process group, so
// that signals aimed at our terminal's foreground group do not reach it and
// killProcessGroup can clean up its descendants.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup SIGKILLs what is left of the group led by the (already
// reaped) child pid. A group that is already empty is not an error.
func killProcessGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// exitWasClean reports whether a stdio server's shutdown error is one Close
// need not report: the process exited by itself (with any status), or
// obeyed SIGTERM. Only being SIGKILLed, or not stopping at all, is not.
func exitWasClean(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return !ok || !ws.Signaled() || ws.Signal() == syscall.SIGTERM
}
