package runtime

import "syscall"

// sysProcAttr puts the child in its own process group. Pdeathsig and
// cgroups are Linux-only.
func sysProcAttr(int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
