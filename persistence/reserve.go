package persistence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ReservedDir is the directory of the store (".reserved") that holds the
// reservation records: one file per session started but never saved.
const ReservedDir = ".reserved"

// ReservationTTL is how long RemoveStale keeps a reservation record that
// was not turned into a session file: a session started and never
// prompted can be loaded or resumed this long.
const ReservationTTL = 7 * 24 * time.Hour

// maxReservedSize bounds a reservation record Reserved reads: a header
// and a few state records.
const maxReservedSize = 1 << 20

// Reservation is a session id held before its file exists: a session the
// agent started but has not saved yet (it saves a session at its first
// prompt, so sessions nobody used leave no file in the listing). It holds
// the session's lock, so no other process takes the id, and RemoveStale in
// another process leaves the session's directory alone. Keep writes its
// record (<dir>/.reserved/<id>: the header and the state records the file
// will start with), so that the session can be opened again (Reserved,
// then Reserve) after the process that started it ended. Create turns it
// into the File and removes the record; Release gives the id up and keeps
// the record. It is safe for concurrent use.
type Reservation struct {
	s  *Store
	id string

	// fresh: the id was new when reserved (ReserveNew).
	fresh bool

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

// ReserveNew is Reserve for an id nobody has used before (a new random
// one, for a session being started): as no earlier holder of its lock can
// have died while creating its file, Create does not look for the
// temporary files such a holder leaves, which costs a read of the whole
// store directory at every session's first prompt. Reserve an id that
// may have been used (a session opened again) with Reserve.
func (s *Store) ReserveNew(id string) (*Reservation, error) {
	r, err := s.Reserve(id)
	if err != nil {
		return nil, err
	}
	r.fresh = true
	return r, nil
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
	f, err := r.s.create(r.lock, h, line, r.fresh, nil)
	if err != nil {
		return nil, err
	}
	r.lock = nil
	// The file is the session now; a record left by a failed removal is
	// removed by RemoveStale (its session has a file).
	_ = os.Remove(r.s.reservedPath(r.id))
	return f, nil
}

// Keep writes the reservation's record: h (h.ID must be the reserved id)
// and records, the lines the session's file will start with, as JSONL in
// <dir>/.reserved/<id>, replacing the previous one by rename. It is not
// fsynced: a record lost in a crash costs a session nobody prompted.
func (r *Reservation) Keep(h Header, records []json.RawMessage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lock == nil {
		return fmt.Errorf("persistence: keep reservation of session %q: %w", r.id, ErrClosed)
	}
	if h.ID != r.id {
		return fmt.Errorf("persistence: keep a reservation of %q with the header of %q", r.id, h.ID)
	}
	line, err := h.encode()
	if err != nil {
		return err
	}
	dir := filepath.Join(r.s.dir, ReservedDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("persistence: keep reservation of session %q: %w", r.id, err)
	}
	tmp, err := os.CreateTemp(dir, r.id+tempInfix+"*")
	if err != nil {
		return fmt.Errorf("persistence: keep reservation of session %q: %w", r.id, err)
	}
	_, err = writeLines(tmp, line, records)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = replaceFile(tmp.Name(), r.s.reservedPath(r.id))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("persistence: keep reservation of session %q: %w", r.id, err)
	}
	return nil
}

// Reserved reads the reservation record of session id (Reservation.Keep):
// the header its file will have and the records after it. A session with
// no record is ErrNotFound; a record that cannot be read, ErrCorrupt. It
// takes no lock: Reserve holds the id, and whoever opens the session
// again reads the record first.
func (s *Store) Reserved(id string) (Header, []json.RawMessage, error) {
	if err := ValidateID(id); err != nil {
		return Header{}, nil, err
	}
	path := s.reservedPath(id)
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Header{}, nil, fmt.Errorf("%w: %q has no reservation", ErrNotFound, id)
	}
	if err != nil {
		return Header{}, nil, fmt.Errorf("persistence: read reservation of session %q: %w", id, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReservedSize+1))
	if err != nil {
		return Header{}, nil, fmt.Errorf("persistence: read reservation of session %q: %w", id, err)
	}
	if len(data) > maxReservedSize {
		return Header{}, nil, fmt.Errorf("%w: reservation of session %q is over %d bytes", ErrCorrupt, id, maxReservedSize)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	h, err := parseHeader(lines[0])
	if err != nil {
		return Header{}, nil, fmt.Errorf("reservation of session %q: %w", id, err)
	}
	if h.ID != id {
		return Header{}, nil, fmt.Errorf("%w: reservation of session %q names %q", ErrCorrupt, id, h.ID)
	}
	var records []json.RawMessage
	for _, l := range lines[1:] {
		if json.Valid(l) && len(l) > 0 && l[0] == '{' {
			records = append(records, json.RawMessage(bytes.Clone(l)))
		}
	}
	return h, records, nil
}

// IsReserved reports whether session id has a reservation record.
func (s *Store) IsReserved(id string) bool {
	if ValidateID(id) != nil {
		return false
	}
	fi, err := os.Lstat(s.reservedPath(id))
	return err == nil && fi.Mode().IsRegular()
}

func (s *Store) reservedPath(id string) string { return filepath.Join(s.dir, ReservedDir, id) }

// Release gives the id up (after Create it does nothing): the lock file
// goes too, unless the session has a file after all. The record (Keep)
// stays, so the session can be opened again; RemoveStale removes it when
// it is older than ReservationTTL, and Delete with the session.
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
