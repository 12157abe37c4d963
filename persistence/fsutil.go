package persistence

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// Suffixes of the files a session owns in the store directory.
const (
	dataSuffix   = ".jsonl"
	brokenSuffix = ".jsonl.broken"
	lockSuffix   = ".lock"
	tempInfix    = ".jsonl.tmp" // followed by the random digits of os.CreateTemp
)

func (s *Store) dataPath(id string) string   { return filepath.Join(s.dir, id+dataSuffix) }
func (s *Store) brokenPath(id string) string { return filepath.Join(s.dir, id+brokenSuffix) }
func (s *Store) lockPath(id string) string   { return filepath.Join(s.dir, id+lockSuffix) }

// fsync flushes f to stable storage. Tests that build thousands of
// fixtures turn it off with unsafeNoSync; nothing else does.
func (s *Store) fsync(f *os.File) error {
	if s.unsafeNoSync {
		return nil
	}
	return f.Sync()
}

// dirSynced, when set (by tests only: ObserveDirSyncs), is called after
// each directory fsync with the directory: what a power cut keeps is
// what was in a directory when it was synced.
var dirSynced atomic.Pointer[func(dir string)]

// SyncDir makes the creations, renames and removals in dir durable (an
// fsync of the directory; nothing on Windows, whose NTFS journals them),
// as the store does for its own files: for the files other packages
// keep beside a session's (its offloaded tool results).
func SyncDir(dir string) error { return syncDirectory(dir) }

// ObserveDirSyncs has f called after every directory fsync of SyncDir
// and the store, with the directory, until the returned stop: tests check
// with it what a power cut would keep. One observer at a time: it fails
// while another observes.
func ObserveDirSyncs(f func(dir string)) (stop func(), err error) {
	if !dirSynced.CompareAndSwap(nil, &f) {
		return nil, errors.New("persistence: directory fsyncs are observed already")
	}
	return func() { dirSynced.CompareAndSwap(&f, nil) }, nil
}

// syncDir makes creations, renames and removals in the store directory
// durable: on Linux a rename is only crash-safe once the directory itself
// is fsynced. Call it after the change. Concurrent callers share fsyncs
// (group commit, as File.Sync does): an fsync that started after a
// caller's change covers it, so a caller that finds such an fsync done
// returns without one of its own, and 200 sessions created at once cost
// a few directory fsyncs rather than 200 in a row.
func (s *Store) syncDir() error {
	if s.unsafeNoSync {
		return nil
	}
	// Counted after the caller's change: an fsync whose count includes
	// this one started after the change.
	target := s.dirChanges.Add(1)
	s.dirMu.Lock()
	for s.dirSynced < target && s.dirSyncing != nil {
		// One is running, which may have started before the change:
		// wait for it without holding the lock (200 callers queued on a
		// mutex held across the fsync would be handed it one at a time,
		// a scheduling round each), then look again.
		running := s.dirSyncing
		s.dirMu.Unlock()
		<-running
		s.dirMu.Lock()
	}
	if s.dirSynced >= target {
		s.dirMu.Unlock()
		return nil
	}
	done := make(chan struct{})
	s.dirSyncing = done
	upto := s.dirChanges.Load()
	s.dirMu.Unlock()

	s.dirSyncs.Add(1)
	var err error
	if s.runningUnsynced.Load() {
		// The agent's entry in RunningDir, before what it stands for.
		if err = syncDirectory(filepath.Join(s.dir, RunningDir)); err == nil {
			s.runningUnsynced.Store(false)
		}
	}
	if err == nil {
		err = syncDirectory(s.dir)
	}
	s.dirMu.Lock()
	if err == nil {
		// A failed fsync covers nothing: the callers waiting on it try
		// again.
		s.dirSynced = max(s.dirSynced, upto)
	}
	s.dirSyncing = nil
	close(done)
	s.dirMu.Unlock()
	return err
}

// createTemp creates an empty temporary file for session id in the store
// directory (same file system, so the rename that publishes it is atomic).
func (s *Store) createTemp(id string) (*os.File, error) {
	f, err := os.CreateTemp(s.dir, id+tempInfix+"*")
	if err != nil {
		return nil, fmt.Errorf("persistence: create temporary file for session %q: %w", id, err)
	}
	return f, nil
}

// publish makes the fully written temporary file tmp durable and renames it
// to dst, then fsyncs the directory. tmp is closed in every case and
// removed unless the rename happened; renamed says whether it did. The
// caller holds the session lock, which is what makes checking for an
// existing dst and renaming over it safe between cooperating processes.
func (s *Store) publish(tmp *os.File, dst string) (renamed bool, err error) {
	return s.publishFile(tmp, dst, true)
}

// publishFile is publish; without closeFirst, tmp (opened with
// openNoFollow, so that it can be renamed while open) stays open after
// the rename, for the caller to keep or close.
func (s *Store) publishFile(tmp *os.File, dst string, closeFirst bool) (renamed bool, err error) {
	name := tmp.Name()
	if err := s.fsync(tmp); err != nil {
		tmp.Close()
		s.removeOrMark(name)
		return false, fmt.Errorf("persistence: sync %s: %w", name, err)
	}
	if closeFirst {
		if err := tmp.Close(); err != nil {
			s.removeOrMark(name)
			return false, fmt.Errorf("persistence: close %s: %w", name, err)
		}
	}
	if err := replaceFile(name, dst); err != nil {
		if !closeFirst {
			tmp.Close()
		}
		s.removeOrMark(name)
		return false, fmt.Errorf("persistence: rename %s to %s: %w", name, dst, err)
	}
	return true, s.syncDir()
}

// openData opens a session file for reading and appending. O_APPEND makes
// every write land at the end even if our idea of the size were wrong;
// O_NOFOLLOW refuses a session file that has been replaced by a symlink.
func openData(path string) (*os.File, error) {
	f, err := openNoFollow(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("persistence: open %s: %w", path, err)
	}
	return f, nil
}

// removeTemps deletes temporary files left for session id by a process
// that died between creating and renaming them. Only a lock holder creates
// them, so with the lock held every one that exists is stale.
func (s *Store) removeTemps(id string) error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("persistence: read directory %s: %w", s.dir, err)
	}
	prefix := id + tempInfix
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !allDigits(rest) {
			continue // another session's temp, e.g. for id "<id>.jsonl.tmp1.x"
		}
		if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("persistence: remove stale temporary file: %w", err)
		}
	}
	return nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// writeBroken saves data, the whole original file, as the session's
// .broken copy. It goes through a temporary file and a rename so that the
// copy is complete or absent, and it is durable before the caller
// truncates the original.
func (s *Store) writeBroken(id string, data []byte) error {
	tmp, err := s.createTemp(id)
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		s.removeOrMark(tmp.Name())
		return fmt.Errorf("persistence: write %s: %w", tmp.Name(), err)
	}
	_, err = s.publish(tmp, s.brokenPath(id))
	return err
}

// copyRange appends the bytes [off, off+n) of src to dst. io.CopyN hands an
// *os.File pair to copy_file_range, so the copy stays in the kernel.
func copyRange(dst, src *os.File, off, n int64) error {
	if n == 0 {
		return nil
	}
	if _, err := src.Seek(off, io.SeekStart); err != nil {
		return err
	}
	_, err := io.CopyN(dst, src, n)
	return err
}
