//go:build unix

package runtime

import (
	"errors"
	"os/exec"
	"syscall"
)

func prepareGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

func exitedCleanly(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return !ok || !ws.Signaled() || ws.Signal() == syscall.SIGTERM
}
