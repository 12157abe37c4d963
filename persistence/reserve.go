package persistence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// Reservation is a session id held before its file exists: a session the
// agent started but has not saved yet (it saves a session at its first
// prompt, so sessions nobody used leave no file). It holds the session's
// lock, so no other process takes the id, and RemoveStale in another
// process leaves the session's directory alone. Create turns it into the
// File; Release gives the id up. It is safe for concurrent use.
type Reservation struct {
	s  *Store
	id string

	mu   sync.Mutex
	lock *fileLock // nil once created or released
}

// Reserve takes the lock of a new session id. An id that has a file
// already is an error wrapping fs.ErrExist; one in use, ErrLocked.
func (s *Store) Reserve(id string) (*Reservation, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	lock, err := s.lock(id)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(s.dataPath(id)); !errors.Is(err, fs.ErrNotExist) {
		s.unlock(id, lock, false)
		if err == nil {
			err = fs.ErrExist
		}
		return nil, fmt.Errorf("persistence: reserve session %q: %w", id, err)
	}
	return &Reservation{s: s, id: id, lock: lock}, nil
}

// ID is the reserved session id.
func (r *Reservation) ID() string { return r.id }

// Create makes the session's file holding only h (h.ID must be the
// reserved id), as Store.Create does, and returns it open; the File holds
// the lock from then on. On error the reservation still holds it.
func (r *Reservation) Create(h Header) (*File, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lock == nil {
		return nil, fmt.Errorf("persistence: create session %q: reservation %w", r.id, ErrClosed)
	}
	if h.ID != r.id {
		return nil, fmt.Errorf("persistence: create session %q with a reservation of %q", h.ID, r.id)
	}
	line, err := h.encode()
	if err != nil {
		return nil, err
	}
	f, err := r.s.create(r.lock, h, line, nil)
	if err != nil {
		return nil, err
	}
	r.lock = nil
	return f, nil
}

// Release gives the id up (after Create it does nothing): the lock file
// goes too, unless the session has a file after all.
func (r *Reservation) Release() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lock == nil {
		return nil
	}
	_, err := os.Lstat(r.s.dataPath(r.id))
	lerr := r.s.unlock(r.id, r.lock, errors.Is(err, fs.ErrNotExist))
	r.lock = nil
	return lerr
}
