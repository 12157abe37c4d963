//go:build unix

package runtime

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts cmd in a group of its own and kills the whole
// group when its context ends: a login shell's start-up files may start
// programs that outlive it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
