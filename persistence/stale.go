package persistence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// RemoveStale removes what agents that stopped abruptly (kill -9, a crash,
// a power cut) left in the store directory for sessions that have no file
// (<id>.jsonl): sessions started but never saved, or killed while their
// file was being created, or deleted half-way. For each such id whose lock
// it can take, it removes the id's temporary files
// (<id>.jsonl.tmp<digits>), its lock file and its directory (<id>/,
// offloaded results and checkpoints), and returns the names it removed.
//
// A session that has its file is left alone, temporary files included:
// the next holder of its lock removes those (Open, Create), so RemoveStale
// never holds the lock of a session someone may be loading. It touches
// only names of exactly those shapes, for valid ids, and only ids whose
// lock is free: a session being created elsewhere is left alone. Nothing
// is followed through a symlink: a symlink with one of these names is
// removed itself (never what it points to), and a directory is removed
// without following the links inside it (os.RemoveAll). A directory named
// like a temporary file is left alone.
//
// In .reserved/ (Reservation.Keep) it removes the records of sessions
// that have a file (the record outlived its removal), and, for ids whose
// lock it can take, records last written more than ReservationTTL ago
// and temporary files; it returns those as ".reserved/<name>".
//
// It is safe to call while the store is in use, also from another
// process. It lists the whole directory, which grows with every session:
// an agent's start calls RemoveStaleAtStart, which calls it only when an
// agent may have left something.
func (s *Store) RemoveStale() ([]string, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("persistence: read directory %s: %w", s.dir, err)
	}
	names := make(map[string]bool, len(ents))
	for _, e := range ents {
		names[e.Name()] = true
	}
	candidates := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		var id string
		if i := strings.LastIndex(name, tempInfix); i >= 0 && allDigits(name[i+len(tempInfix):]) && !e.IsDir() {
			id = name[:i]
		} else if strings.HasSuffix(name, lockSuffix) {
			id = strings.TrimSuffix(name, lockSuffix)
		} else if (e.IsDir() || e.Type()&fs.ModeSymlink != 0) && !strings.HasSuffix(name, dataSuffix) &&
			!strings.HasSuffix(name, brokenSuffix) && !strings.Contains(name, tempInfix) {
			id = name // a session directory without its session
		} else {
			continue
		}
		if ValidateID(id) == nil && !names[id+dataSuffix] {
			candidates[id] = true // the session has no file
		}
	}
	ids := make([]string, 0, len(candidates))
	for id := range candidates {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var removed []string
	var errs []error
	for _, id := range ids {
		r, err := s.removeStale(id, ents)
		removed = append(removed, r...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if names[ReservedDir] {
		// The listing above says whether there is one: a directory
		// without reservations is listed once.
		r, err := s.removeStaleReservations(time.Now())
		removed = append(removed, r...)
		errs = append(errs, err)
	}
	if len(removed) > 0 {
		errs = append(errs, s.syncDir())
	}
	return removed, errors.Join(errs...)
}

// removeStaleReservations is RemoveStale's part in .reserved/.
func (s *Store) removeStaleReservations(now time.Time) ([]string, error) {
	dir := filepath.Join(s.dir, ReservedDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("persistence: read directory %s: %w", dir, err)
	}
	var removed []string
	var errs []error
	remove := func(name string) {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("persistence: remove stale %s/%s: %w", ReservedDir, name, err))
			return
		}
		removed = append(removed, ReservedDir+"/"+name)
	}
	for _, e := range ents {
		name := e.Name()
		id, temp := name, false
		if i := strings.LastIndex(name, tempInfix); i >= 0 && allDigits(name[i+len(tempInfix):]) {
			id, temp = name[:i], true
		}
		if ValidateID(id) != nil || e.IsDir() {
			continue
		}
		if s.Exists(id) {
			// Saved: the record is dead (nothing keeps it after Create).
			remove(name)
			continue
		}
		fi, err := e.Info()
		if err != nil || (!temp && now.Sub(fi.ModTime()) <= ReservationTTL) {
			continue
		}
		lock, err := s.lock(id)
		if errors.Is(err, ErrLocked) {
			continue // in use: its holder writes the record
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		saved := s.Exists(id)
		remove(name)
		// The lock file goes with an id that has no file (as removeStale).
		errs = append(errs, s.unlock(id, lock, !saved))
	}
	return removed, errors.Join(errs...)
}

// removeStale cleans up after session id, if its lock is free and it has
// no file; ents is the directory's listing.
func (s *Store) removeStale(id string, ents []fs.DirEntry) ([]string, error) {
	_, err := os.Lstat(s.lockPath(id))
	hadLock := err == nil
	lock, err := s.lock(id)
	if errors.Is(err, ErrLocked) {
		return nil, nil // in use: not stale
	}
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(s.dataPath(id)); !errors.Is(err, fs.ErrNotExist) {
		// Saved meanwhile (or unreadable): not ours to clean.
		return nil, s.unlock(id, lock, false)
	}
	var removed []string
	var errs []error
	remove := func(name string) {
		if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("persistence: remove stale %s: %w", name, err))
			return
		}
		removed = append(removed, name)
	}
	prefix := id + tempInfix
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if ok && allDigits(rest) && !e.IsDir() {
			remove(e.Name())
		}
	}
	dir := filepath.Join(s.dir, id)
	switch fi, err := os.Lstat(dir); {
	case err != nil:
	case fi.IsDir():
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("persistence: remove stale %s: %w", id, err))
		} else {
			removed = append(removed, id+"/")
		}
	default:
		remove(id) // a symlink (or file) where the directory would be
	}
	if hadLock {
		removed = append(removed, id+lockSuffix)
	}
	errs = append(errs, s.unlock(id, lock, true))
	return removed, errors.Join(errs...)
}
