//go:build unix

package scratch

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// canLock: flock(2) works on directories here.
const canLock = true

// lockDir opens dir (refusing a symlink) and takes an exclusive flock on
// it; it fails if another holds it.
func lockDir(dir string) (*os.File, error) {
	d, err := tryLockDir(dir)
	if err == nil && d == nil {
		err = errors.New("locked by another process")
	}
	return d, err
}

// tryLockDir is lockDir, returning nil and no error when another holds
// the lock.
func tryLockDir(dir string) (*os.File, error) {
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	if err := flock(d, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		d.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, err
	}
	return d, nil
}

// unlock drops the lock explicitly (a process forked by another goroutine
// holds the descriptor until its exec closes it) and closes d.
func unlock(d *os.File) {
	if d != nil {
		flock(d, syscall.LOCK_UN)
		d.Close()
	}
}

func flock(d *os.File, how int) error {
	rc, err := d.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if ferr = syscall.Flock(int(fd), how); ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// ownedByMe says whether fi is owned by this process's user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
