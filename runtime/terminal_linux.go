package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"
)

// sysProcAttr puts the child in its own process group, kills it if the
// agent's thread that started it dies (Pdeathsig; it is not inherited by
// grandchildren, and it fires when the starting OS thread exits, which
// the Go runtime only does for goroutines that exit while locked with
// LockOSThread), and, with cgroupFD >= 0, starts it in that cgroup.
func sysProcAttr(cgroupFD int) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if cgroupFD >= 0 {
		a.UseCgroupFD = true
		a.CgroupFD = cgroupFD
	}
	return a
}

var cgroupSeq atomic.Uint64

// cgroup is a per-process cgroup v2 directory.
type cgroup struct {
	dir string
	fd  int
}

func newCgroup(parent string) (*cgroup, error) {
	dir := filepath.Join(parent, fmt.Sprintf("acp-agent-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cgroup: %w", err)
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("open cgroup %s: %w", dir, err)
	}
	return &cgroup{dir: dir, fd: fd}, nil
}

func (c *cgroup) closeFD() {
	if c.fd >= 0 {
		_ = syscall.Close(c.fd)
		c.fd = -1
	}
}

// kill SIGKILLs every process in the cgroup, whatever its process group
// or session.
func (c *cgroup) kill() error {
	err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("kill cgroup: %w", err)
	}
	return nil
}

// destroy kills the cgroup's members and removes it, waiting briefly for
// the kernel to empty it (rmdir fails with EBUSY until then).
func (c *cgroup) destroy() error {
	c.closeFD()
	if err := c.kill(); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := syscall.Rmdir(c.dir)
		switch {
		case err == nil, errors.Is(err, syscall.ENOENT):
			return nil
		case errors.Is(err, syscall.EBUSY) && time.Now().Before(deadline):
			time.Sleep(5 * time.Millisecond)
		default:
			return fmt.Errorf("remove cgroup %s: %w", c.dir, err)
		}
	}
}
