//go:build unix

package persistence

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// openNoFollow opens path with flag, refusing a final symlink
// (O_NOFOLLOW): a session file replaced by a link is never followed.
func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
}

// openNonblock is added to opens of files that must be regular: a FIFO
// (or device) opened with it does not wait for a writer, so the caller's
// fstat can refuse it.
const openNonblock = syscall.O_NONBLOCK

// lockFile takes an exclusive flock(2) on f without blocking; errLockHeld
// when another open file description holds it.
func lockFile(f *os.File) error {
	err := flockOp(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLockHeld
	}
	return err
}

// unlockFile drops the lock explicitly: the lock belongs to the open file
// description, and a process forked by any goroutine of ours holds a
// reference to it until its exec closes it.
func unlockFile(f *os.File) error { return flockOp(f, syscall.LOCK_UN) }

func flockOp(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// replaceFile renames oldpath over newpath atomically.
func replaceFile(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// syncDirectory makes creations, renames and removals in dir durable: on
// Linux a rename is only crash-safe once the directory itself is fsynced.
func syncDirectory(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("persistence: open directory %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("persistence: sync directory %s: %w", dir, err)
	}
	if f := dirSynced.Load(); f != nil {
		(*f)(dir)
	}
	return nil
}

// truncateFile cuts f to size.
func truncateFile(f *os.File, size int64) error { return f.Truncate(size) }

// closeBeforeReplace: a rewrite closes its old handle before renaming the
// new file over it (Unix renames over open files.)
const closeBeforeReplace = false

// reopenAfterRename: a file renamed while open is opened again under its
// new name before it is used (Unix does not need it: the descriptor is
// the file, whatever its name.)
const reopenAfterRename = false
