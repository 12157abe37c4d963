//go:build unix && !linux

package runtime

import (
	"errors"
	"syscall"
)

// sysProcAttr puts the child in its own process group. Pdeathsig and
// cgroups are Linux-only.
func sysProcAttr(int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

type cgroup struct{ fd int }

func newCgroup(string) (*cgroup, error) {
	return nil, errors.New("cgroups are only supported on Linux")
}

func (c *cgroup) closeFD()       {}
func (c *cgroup) kill() error    { return nil }
func (c *cgroup) destroy() error { return nil }
