//go:build !linux

package runtime

import "errors"

// cgroup is Linux-only; elsewhere CgroupParent makes Start fail.
type cgroup struct{ fd int }

func newCgroup(string) (*cgroup, error) {
	return nil, errors.New("cgroups are only supported on Linux")
}

func (c *cgroup) closeFD()       {}
func (c *cgroup) kill() error    { return nil }
func (c *cgroup) destroy() error { return nil }
