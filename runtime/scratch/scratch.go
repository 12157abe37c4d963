package scratch

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// prefix starts the final name of a process's directory.
	prefix = "acp-agent-run-"
	// stagingPrefix starts the name a directory is made under, before it
	// is locked and renamed.
	stagingPrefix = ".acp-agent-new-"
	// stagingAge is how old a staging directory must be before
	// RemoveStale takes it for one whose maker died: making one takes
	// microseconds.
	stagingAge = time.Minute
)

// Bounds of one RemoveStale call.
const (
	// MaxListed is how many entries of the temporary directory one call
	// reads at most.
	MaxListed = 100_000
	// MaxRemoved is how many stale directories one call removes at most;
	// the next start removes more.
	MaxRemoved = 64
)

// proc is this process's directory, made on first use.
var proc struct {
	sync.Mutex
	dir  string
	lock *os.File // the directory, held locked (nil on Windows)
}

// MkdirTemp makes a new directory in this process's scratch directory, as
// os.MkdirTemp does with pattern, making (and locking) the process's
// directory first if needed. The caller removes it when done.
func MkdirTemp(pattern string) (string, error) {
	proc.Lock()
	defer proc.Unlock()
	if proc.dir == "" {
		if err := makeProcDir(); err != nil {
			return "", err
		}
	}
	return os.MkdirTemp(proc.dir, pattern)
}

// makeProcDir makes, locks and publishes this process's directory; the
// caller holds proc's mutex.
func makeProcDir() error {
	tmp := os.TempDir()
	staging, err := os.MkdirTemp(tmp, stagingPrefix)
	if err != nil {
		return fmt.Errorf("scratch directory: %w", err)
	}
	d, err := lockDir(staging)
	if err != nil {
		os.Remove(staging)
		return fmt.Errorf("scratch directory: lock %s: %w", staging, err)
	}
	var b [8]byte
	rand.Read(b[:])
	final := filepath.Join(tmp, prefix+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(b[:]))
	if err := os.Rename(staging, final); err != nil {
		unlock(d)
		os.Remove(staging)
		return fmt.Errorf("scratch directory: %w", err)
	}
	proc.dir, proc.lock = final, d
	return nil
}

// Dir is this process's scratch directory, "" before the first MkdirTemp
// (and after a Release that removed it).
func Dir() string {
	proc.Lock()
	defer proc.Unlock()
	return proc.dir
}

// Release removes this process's directory if nothing is left in it, and
// drops its lock; otherwise (a workspace still has its directory there) it
// keeps both. A later MkdirTemp makes a new one.
func Release() error {
	proc.Lock()
	defer proc.Unlock()
	if proc.dir == "" {
		return nil
	}
	// Remove fails on a directory that is not empty: then it stays, held.
	if err := os.Remove(proc.dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		} else if isNotEmpty(proc.dir) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("scratch directory: %w", err)
		}
	}
	unlock(proc.lock)
	proc.dir, proc.lock = "", nil
	return nil
}

// isNotEmpty says whether dir has an entry.
func isNotEmpty(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return err == nil
}

// RemoveStale removes from the temporary directory the scratch directories
// of agents that are gone (their lock is free), at most MaxRemoved of them
// after reading at most MaxListed entries, and returns their paths. It
// never removes this process's directory or another live agent's (both
// are held locked) and never follows a symlink.
func RemoveStale() (removed []string, err error) {
	if !canLock {
		return nil, nil
	}
	tmp := os.TempDir()
	f, err := os.Open(tmp)
	if err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	defer f.Close()
	var errs []error
	for listed := 0; listed < MaxListed && len(removed) < MaxRemoved; {
		names, rerr := f.Readdirnames(1024)
		listed += len(names)
		for _, name := range names {
			if len(removed) >= MaxRemoved {
				break
			}
			staging := strings.HasPrefix(name, stagingPrefix)
			if !staging && !strings.HasPrefix(name, prefix) {
				continue
			}
			path := filepath.Join(tmp, name)
			ok, err := removeIfStale(path, staging)
			if err != nil {
				errs = append(errs, err)
			}
			if ok {
				removed = append(removed, path)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			errs = append(errs, fmt.Errorf("scratch: list %s: %w", tmp, rerr))
			break
		}
	}
	return removed, errors.Join(errs...)
}

// removeIfStale removes path if it is a directory of this user whose lock
// is free (and, for a staging one, that is old enough), holding the lock
// while it removes it.
func removeIfStale(path string, staging bool) (bool, error) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() || !ownedByMe(fi) {
		return false, nil // a link, a file, another user's: not ours
	}
	if staging && time.Since(fi.ModTime()) < stagingAge {
		return false, nil
	}
	d, err := tryLockDir(path)
	if err != nil || d == nil {
		return false, nil // held: a live agent's (or gone meanwhile)
	}
	defer unlock(d)
	// The directory locked must be the one listed: a rename in between
	// could have put another in its place.
	if di, err := d.Stat(); err != nil || !os.SameFile(fi, di) {
		return false, nil
	}
	if err := RemoveAll(path); err != nil {
		return false, fmt.Errorf("scratch: remove stale %s: %w", path, err)
	}
	return true, nil
}
