package persistence

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// RunningDir is the directory of the store (".running") where every Store
// that puts anything of a session on disk keeps an entry: a file it holds
// locked (as a session's lock file) from before its first session lock
// until Close. An entry whose lock is free belongs to an agent that
// stopped without Close saying it left nothing behind (a crash, kill -9,
// a power cut): RemoveStaleAtStart then lists the whole directory.
const RunningDir = ".running"

// register makes this Store's entry in RunningDir, once, before the first
// session lock it takes: whatever the Store leaves if its process dies
// from now on is found by the next start (RemoveStaleAtStart).
func (s *Store) register() error {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	if s.reg != nil {
		return nil
	}
	dir := filepath.Join(s.dir, RunningDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("persistence: create %s: %w", dir, err)
	}
	var b [12]byte
	rand.Read(b[:])
	name := fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
	l, err := acquireLock(filepath.Join(dir, name), RunningDir+"/"+name)
	if err != nil {
		return err
	}
	// The entry must be durable once anything it stands for is (a power
	// cut that kept a session's leftovers and lost the entry would leave
	// them for no start to remove). Those become durable with the next
	// fsync of the store directory (a session's first save), which syncs
	// RunningDir first (syncDir): the first session/new waits for no
	// fsync, and the first save's costs one more, after the commit that
	// made the entry.
	s.runningUnsynced.Store(true)
	s.reg = l
	// A Store dropped without Close releases its entry (kept: the next
	// start lists the directory); the lock dies with the process anyway.
	s.regCleanup = runtime.AddCleanup(s, func(l *fileLock) { l.release(false) }, l)
	return nil
}

// Close ends this Store's use of the directory: if nothing of its
// sessions can be left for RemoveStale (it holds no session lock, every
// id it locked either has its file or left neither lock file nor
// directory, and no removal failed), its entry in RunningDir goes, so the
// next start need not list the directory; otherwise the entry stays,
// unlocked, and the next start does. Call it once the Store's Files and
// Reservations are closed. The Store stays usable (it registers again).
func (s *Store) Close() error {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	if s.reg == nil {
		return nil
	}
	clean := !s.dirty.Load()
	s.mu.Lock()
	if len(s.holding) > 0 {
		clean = false
	}
	touched := s.touched
	s.touched = nil
	s.mu.Unlock()
	for id := range touched {
		if !clean {
			break
		}
		if _, err := os.Lstat(s.dataPath(id)); err == nil {
			continue
		}
		for _, p := range []string{s.lockPath(id), filepath.Join(s.dir, id)} {
			if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
				clean = false
			}
		}
	}
	s.regCleanup.Stop()
	err := s.reg.release(clean)
	s.reg = nil
	return err
}

// leftBehind records that a removal failed, so that something of a
// session may be left for RemoveStale: Close keeps the entry.
func (s *Store) leftBehind() { s.dirty.Store(true) }

// removeOrMark removes path, recording a failure (leftBehind).
func (s *Store) removeOrMark(path string) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.leftBehind()
	}
}

// RemoveStaleAtStart is the clean-up an agent runs when it starts: in
// .reserved/ as RemoveStale, and RemoveStale's full pass over the store
// directory only if an agent may have left something there, which
// otherwise (the agents before exited with Close, or are running) costs
// a listing of the whole directory, which grows with every session. An
// agent may have left something when RunningDir has an entry whose lock
// is free (its Store did not Close cleanly: crashed, killed, or a removal
// failed), or when there is no RunningDir (no agent of this version has
// used the directory). The free entries are held during the pass and
// removed once it succeeded, so a concurrent start sees them held and
// does not pass again, and one that fails leaves them for the next start.
// full says whether the full pass ran.
func (s *Store) RemoveStaleAtStart() (removed []string, full bool, err error) {
	dir := filepath.Join(s.dir, RunningDir)
	ents, err := os.ReadDir(dir)
	full = err != nil // none yet (or unreadable): look everywhere
	var dead []*fileLock
	for _, e := range ents {
		l, err := acquireLock(filepath.Join(dir, e.Name()), RunningDir+"/"+e.Name())
		if errors.Is(err, ErrLocked) {
			continue // a running agent, this one included
		}
		full = true
		if err == nil {
			dead = append(dead, l)
		}
	}
	if full {
		removed, err = s.RemoveStale()
		if err == nil {
			// From now on every agent that leaves something has an
			// entry here first.
			if merr := os.Mkdir(dir, 0o700); merr != nil && !errors.Is(merr, fs.ErrExist) {
				err = fmt.Errorf("persistence: create %s: %w", dir, merr)
			}
		}
	} else {
		removed, err = s.removeStaleReservations(time.Now())
		if len(removed) > 0 {
			err = errors.Join(err, s.syncDir())
		}
	}
	for _, l := range dead {
		err = errors.Join(err, l.release(err == nil))
	}
	return removed, full, err
}
