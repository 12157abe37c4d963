package persistence

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// held is the in-process registry of session lock files this process
// holds, keyed by the lock file's absolute path. flock(2) locks belong to
// an open file description, so a second open in this process would already
// conflict with the first; the registry is checked first anyway so that
// case fails without touching the file system and says "in this process",
// and so that it does not depend on the lock file's inode surviving (a
// lock file unlinked behind our back would let a second flock succeed on a
// new inode).
var held = struct {
	sync.Mutex
	paths map[string]string // lock path → session id
}{paths: make(map[string]string)}

// errLockHeld is what lockFile returns when another open file holds the
// lock.
var errLockHeld = errors.New("lock held")

// fileLock is an exclusive lock on a session's sidecar lock file: flock(2)
// on Unix, LockFileEx on Windows (lock_unix.go, lock_windows.go).
type fileLock struct {
	path string
	f    *os.File
}

// acquireLock takes the exclusive lock on path for session id without
// blocking. It fails with ErrLocked when this process or another one holds
// it.
func acquireLock(path, id string) (*fileLock, error) {
	held.Lock()
	if _, ok := held.paths[path]; ok {
		held.Unlock()
		return nil, fmt.Errorf("%w: session %q is already open in this process (lock file %s)", ErrLocked, id, path)
	}
	held.paths[path] = id
	held.Unlock()

	l, err := flockPath(path, id)
	if err != nil {
		unregister(path)
		return nil, err
	}
	return l, nil
}

func unregister(path string) {
	held.Lock()
	delete(held.paths, path)
	held.Unlock()
}

// flockPath opens (creating if needed) and flocks path. A process that
// deletes a session unlinks its lock file while holding the lock; an opener
// that raced with it may then hold a lock on an unlinked inode, so after
// locking we check that path still names the inode we locked and retry if
// not.
func flockPath(path, id string) (*fileLock, error) {
	for attempt := 0; ; attempt++ {
		f, err := openNoFollow(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("persistence: open lock file %s: %w", path, err)
		}
		if err := lockFile(f); err != nil {
			f.Close()
			if errors.Is(err, errLockHeld) {
				return nil, fmt.Errorf("%w: session %q is open in another process (lock file %s)", ErrLocked, id, path)
			}
			return nil, fmt.Errorf("persistence: lock %s: %w", path, err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("persistence: stat lock file %s: %w", path, err)
		}
		pi, err := os.Lstat(path)
		if err == nil && os.SameFile(fi, pi) {
			return &fileLock{path: path, f: f}, nil
		}
		f.Close()
		if attempt >= 100 {
			return nil, fmt.Errorf("persistence: lock file %s keeps being replaced", path)
		}
	}
}

// release drops the lock. With remove, the lock file is unlinked first,
// while still locked, so no other opener can be left holding a lock on a
// name that no longer exists (see flockPath).
//
// The explicit LOCK_UN matters: the lock belongs to the open file
// description, and a process forked by any goroutine of ours (a terminal
// command, say) holds a reference to it until its exec closes it. A bare
// close would leave the lock held for that moment, and an immediate
// reopen would fail with ErrLocked.
func (l *fileLock) release(remove bool) error {
	var err error
	if remove {
		if rerr := os.Remove(l.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = fmt.Errorf("persistence: remove lock file %s: %w", l.path, rerr)
		}
	}
	if uerr := unlockFile(l.f); uerr != nil && err == nil {
		err = fmt.Errorf("persistence: unlock %s: %w", l.path, uerr)
	}
	if cerr := l.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("persistence: close lock file %s: %w", l.path, cerr)
	}
	unregister(l.path)
	return err
}
