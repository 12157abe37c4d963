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
// then Reserve) after the process that started it ended. Prepare makes
// the file early (empty, out of sight), so that Create, which the first
// prompt waits for, does not. Create turns it into the File, which
// removes the record at its first Sync or Close; Release gives the id up
// and keeps the record. It is safe for concurrent use.
type Reservation struct {
	s  *Store
	id string

	// clean: no earlier holder's temporary files of the id are left:
	// the id was new when reserved (ReserveNew), or Prepare removed
	// them.
	clean bool

	mu   sync.Mutex
	lock *fileLock // nil once created or released
	// prepared is the path of the empty file Prepare made for Create to
	// fill and publish ("" if none).
	prepared string
	// unrecorded: Keep writes no record (Unrecorded); kept: Keep wrote
	// one.
	unrecorded, kept bool
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
	r.clean = true
	return r, nil
}

// ID is the reserved session id.
func (r *Reservation) ID() string { return r.id }

// Prepare creates, empty, the file Create will fill and publish as the
// session's: a temporary file (<dir>/<id>.jsonl.tmp<digits>, the name
// Create gives one), which List and the session's id never find.
// Creating a file (a new inode, which the file system allocates under
// the directory's lock) is the costliest step of a session's first
// save, which the user waits for; made when the session starts, it is
// not on that path. Nothing of it is visible: until Create renames it
// into place it is a temporary file of a session with no file, which
// Release removes, and RemoveStale after a crash (as the one Create
// makes). For an id that may have been used (Reserve), the temporary
// files an earlier holder left are removed first, here rather than in
// Create. Calling it again does nothing; on error Create makes its file
// as without it.
func (r *Reservation) Prepare() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lock == nil {
		return fmt.Errorf("persistence: prepare the file of session %q: reservation %w", r.id, ErrClosed)
	}
	if r.prepared != "" {
		return nil
	}
	if !r.clean {
		if err := r.s.removeTemps(r.id); err != nil {
			return err
		}
		r.clean = true
	}
	tmp, err := r.s.createTemp(r.id)
	if err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		r.s.removeOrMark(tmp.Name())
		return fmt.Errorf("persistence: prepare the file of session %q: %w", r.id, err)
	}
	r.prepared = tmp.Name()
	return nil
}

// Create makes the session's file holding h (h.ID must be the reserved
// id) followed by records, as Store.Create does (fsynced, renamed into
// place, the directory fsynced), and returns it open; the File holds the
// lock from then on. The records are checked and normalized as by
// File.Append. On error the reservation still holds the lock. A file
// Prepare made is filled and renamed into place; without one (or if it
// is gone) a temporary file is created here.
func (r *Reservation) Create(h Header, records ...json.RawMessage) (*File, error) {
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
	var body []byte
	var ends []int64
	if len(records) > 0 {
		ls, err := lines(records)
		if err != nil {
			return nil, fmt.Errorf("persistence: create session %q: %w", r.id, err)
		}
		off := int64(len(line))
		for _, l := range ls {
			body = append(body, l...)
			off += int64(len(l))
			ends = append(ends, off)
		}
	}
	var tmp *os.File
	if r.prepared != "" {
		// Taken whatever happens next: on error publish removes it.
		tmp = openPrepared(r.prepared)
		r.prepared = ""
	}
	f, err := r.s.create(r.lock, h, line, r.clean, tmp, func(w *os.File) error {
		if len(body) == 0 {
			return nil
		}
		_, err := w.Write(body)
		return err
	})
	if err != nil {
		return nil, err
	}
	r.lock = nil
	f.ends = ends
	if len(ends) > 0 {
		f.size = ends[len(ends)-1]
	}
	// The file is the session now. Its record goes at the File's first
	// Sync or Close, not on the way to the model: nothing reads it while
	// the file exists, and RemoveStale removes it if it is left.
	if !r.unrecorded {
		rec := r.s.reservedPath(r.id)
		f.record.Store(&rec)
	}
	return f, nil
}

// openPrepared opens the file Prepare made at path for appending, if it
// is still there, a regular file and empty (nothing but Create writes
// it); otherwise the result is nil (and a file that is there is
// removed).
func openPrepared(path string) *os.File {
	f, err := openNoFollow(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		f.Close()
		os.Remove(path)
		return nil
	}
	return f
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
	if r.unrecorded {
		return nil
	}
	line, err := h.encode()
	if err != nil {
		return err
	}
	dir := filepath.Join(r.s.dir, ReservedDir)
	// Not synced, as the records in it: the next fsync of the store
	// directory (a session's first save) makes the entry durable.
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
	r.kept = true
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

// Release gives the id up (after Create it does nothing): the file
// Prepare made goes, and the lock file too, unless the session has a
// file after all. The record (Keep) stays, so the session can be opened
// again; RemoveStale removes it when it is older than ReservationTTL,
// and Delete with the session.
func (r *Reservation) Release() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lock == nil {
		return nil
	}
	var errs []error
	if r.prepared != "" {
		if err := os.Remove(r.prepared); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.s.leftBehind()
			errs = append(errs, fmt.Errorf("persistence: release session %q: %w", r.id, err))
		}
		r.prepared = ""
	}
	_, err := os.Lstat(r.s.dataPath(r.id))
	errs = append(errs, r.s.unlock(r.id, r.lock, errors.Is(err, fs.ErrNotExist)))
	r.lock = nil
	return errors.Join(errs...)
}
