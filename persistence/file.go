package persistence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
)

// File is one open, locked session file. It is safe for concurrent use:
// Append, Sync, AppendSync, Rewrite, Count, Header and Fork (as a source)
// may be called from any number of goroutines at once.
type File struct {
	store *Store
	id    string
	path  string
	lock  *fileLock

	// mu serializes writes to the file and guards the fields below it.
	mu        sync.Mutex
	fd        *os.File // O_APPEND; replaced by Rewrite while holding mu and syncMu
	header    Header
	headerEnd int64   // offset just past the header's newline
	size      int64   // bytes in the file: we hold the lock, so nobody else writes
	ends      []int64 // ends[i]: offset just past record i's newline
	skips     []span  // bad lines Open left in place, ascending
	closed    bool    // also read under syncMu; written holding both
	// brokenSaved: Open saved the file as it found it to .broken (a torn
	// tail), so a repair must not overwrite that copy.
	brokenSaved bool

	// written counts the lines written since the File was made. It only
	// grows; Sync compares it with synced.
	written atomic.Uint64

	// failed is the first error after which the file may no longer be what
	// we think it is (a failed fsync, a torn write we could not cut off).
	// Every later call returns it.
	failed atomic.Pointer[error]

	// syncMu serializes fsyncs and guards synced. Callers that queue on it
	// while one fsync runs find their appends covered when they get it,
	// or share the next fsync: that is the group commit.
	syncMu sync.Mutex
	synced uint64       // value of written covered by the last fsync
	fsyncs atomic.Int64 // fsyncs done by Sync; tests read it

	// record is the reservation record (Reservation.Keep) of the session
	// the File was created from, if any: removed at the File's first
	// Sync or Close rather than while the first prompt waits to reach
	// the model. Until then it is dead (the file comes first wherever a
	// session is looked for) and RemoveStale removes it.
	record atomic.Pointer[string]
}

func newFile(s *Store, lock *fileLock, fd *os.File, h Header) *File {
	return &File{store: s, id: h.ID, path: s.dataPath(h.ID), lock: lock, fd: fd, header: h.clone()}
}

// Header returns the current header.
func (f *File) Header() Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.header.clone()
}

// Count returns the number of valid records in the file now: those Open
// returned, plus those appended since (or those of the last Rewrite, plus
// those appended since). Skipped lines are not counted.
func (f *File) Count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ends)
}

func (f *File) failure() error {
	if p := f.failed.Load(); p != nil {
		return *p
	}
	return nil
}

func (f *File) fail(err error) error {
	err = fmt.Errorf("%w (the session must be closed and reopened)", err)
	f.failed.CompareAndSwap(nil, &err)
	return f.failure()
}

// usable reports why f cannot be written, if it cannot. Call with mu or
// syncMu held.
func (f *File) usable() error {
	if f.closed {
		return fmt.Errorf("persistence: session %q: %w", f.id, ErrClosed)
	}
	return f.failure()
}

// Append writes each record as one line, in order, with one write(2) per
// line, so concurrent appenders never interleave within a line. A record
// must be one JSON object; one containing newlines (indented JSON) is
// compacted, and anything else is rejected before any record of the call is
// written. Append does not fsync: a record is durable once a Sync that
// started after Append returned has returned.
//
// If a write fails, the records before it stay written, and the partial
// line is cut off so the file still ends with a newline; if that cut
// fails too, the File refuses every later write.
func (f *File) Append(records ...json.RawMessage) error {
	if len(records) == 0 {
		return nil
	}
	lines, err := lines(records)
	if err != nil {
		return fmt.Errorf("persistence: append to session %q: %w", f.id, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	for _, ln := range lines {
		n, err := f.fd.Write(ln)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				// Named once: the descriptor's own name may be the
				// temporary file a first save renamed into place.
				err = pe.Err
			}
			err = fmt.Errorf("persistence: append to %s: %w", f.path, err)
			if n > 0 {
				if terr := truncateFile(f.fd, f.size); terr != nil {
					return f.fail(errors.Join(err, fmt.Errorf("persistence: cut partial line off %s: %w", f.path, terr)))
				}
			}
			return err
		}
		f.size += int64(n)
		f.ends = append(f.ends, f.size)
		f.written.Add(1)
	}
	return nil
}

// lines checks and normalizes records and returns each as a line ending in
// a newline, all in one buffer.
func lines(records []json.RawMessage) ([][]byte, error) {
	norm := make([]json.RawMessage, len(records))
	total := 0
	for i, r := range records {
		n, err := normalizeRecord(r)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		norm[i] = n
		total += len(n) + 1
	}
	buf := make([]byte, 0, total)
	out := make([][]byte, len(norm))
	for i, n := range norm {
		start := len(buf)
		buf = append(buf, n...)
		buf = append(buf, '\n')
		out[i] = buf[start:len(buf):len(buf)]
	}
	return out, nil
}

// Sync makes every record whose Append returned before Sync was called
// durable. Concurrent callers share fsyncs: a caller whose records were
// covered by an fsync that finished while it waited returns without one.
// A failed fsync is sticky (after one, Linux may have dropped the dirty
// pages and a later fsync can succeed without them): the File then refuses
// every write and Sync.
func (f *File) Sync() error {
	f.dropRecord()
	target := f.written.Load()
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	if f.synced >= target {
		return nil
	}
	return f.syncLocked()
}

// dropRecord removes the reservation record the File replaced, once.
func (f *File) dropRecord() {
	if p := f.record.Swap(nil); p != nil {
		_ = os.Remove(*p) // a failure leaves it to RemoveStale
	}
}

// syncLocked fsyncs with syncMu held.
func (f *File) syncLocked() error {
	// Everything counted in written is in the page cache already, so this
	// fsync covers at least upto.
	upto := f.written.Load()
	f.fsyncs.Add(1)
	if err := f.store.fsync(f.fd); err != nil {
		return f.fail(fmt.Errorf("persistence: sync %s: %w", f.path, err))
	}
	f.synced = upto
	return nil
}

// AppendSync is Append followed by Sync: when it returns nil, the records
// are durable.
func (f *File) AppendSync(records ...json.RawMessage) error {
	if err := f.Append(records...); err != nil {
		return err
	}
	return f.Sync()
}

// Repair rewrites the file with records (the header unchanged) after
// keeping the evidence: the file as it is now is first saved as
// <id>.jsonl.broken, unless the Open that returned f already saved the
// file as it found it there (a torn tail), which holds more. Use it when
// loading drops records that cannot be used; records that are kept should
// be passed as they were read, so they stay byte for byte.
func (f *File) Repair(records []json.RawMessage) error {
	f.mu.Lock()
	if err := f.usable(); err != nil {
		f.mu.Unlock()
		return err
	}
	if !f.brokenSaved {
		data, err := os.ReadFile(f.path) // we hold the lock and mu: nobody writes
		if err == nil {
			err = f.store.writeBroken(f.id, data)
		}
		if err != nil {
			f.mu.Unlock()
			return fmt.Errorf("persistence: saving %s as .broken before a repair: %w", f.path, err)
		}
		f.brokenSaved = true
	}
	h := f.header.clone()
	f.mu.Unlock()
	return f.Rewrite(h, records)
}

// Rewrite atomically replaces the whole file with h and records: it writes
// a temporary file in the store directory, fsyncs it, renames it over the
// session file and fsyncs the directory, so after a crash the file is
// either the old one or the new one. Records are checked and normalized as
// by Append. h.ID must be the session's id; a zero h.Timestamp keeps the
// current one. The File stays open and locked (the lock is on the sidecar
// lock file, which the rename does not touch), and later appends go to the
// new file. Appends and Syncs wait while Rewrite runs. Use it for
// compaction and header changes such as a new title.
func (f *File) Rewrite(h Header, records []json.RawMessage) error {
	if h.ID != f.id {
		return fmt.Errorf("persistence: rewrite session %q with a header for %q", f.id, h.ID)
	}
	norm := make([]json.RawMessage, len(records))
	for i, r := range records {
		n, err := normalizeRecord(r)
		if err != nil {
			return fmt.Errorf("persistence: rewrite session %q: record %d: %w", f.id, i, err)
		}
		norm[i] = n
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	if h.Timestamp.IsZero() {
		h.Timestamp = f.header.Timestamp
	}
	line, err := h.encode()
	if err != nil {
		return err
	}
	f.syncMu.Lock()
	defer f.syncMu.Unlock()

	tmp, err := f.store.createTemp(f.id)
	if err != nil {
		return err
	}
	ends, err := writeLines(tmp, line, norm)
	if err != nil {
		tmp.Close()
		f.store.removeOrMark(tmp.Name())
		return fmt.Errorf("persistence: write %s: %w", tmp.Name(), err)
	}
	if closeBeforeReplace {
		// Where a file this process holds open cannot be renamed over
		// (Windows without POSIX renames: FAT, network shares, Wine), the
		// old handle goes first; the lock file still keeps the session
		// ours.
		f.fd.Close()
	}
	if renamed, err := f.store.publish(tmp, f.path); err != nil {
		if !renamed {
			if closeBeforeReplace {
				fd, oerr := openData(f.path)
				if oerr != nil {
					return f.fail(oerr)
				}
				f.fd = fd
			}
			return err // the old file is intact and still ours
		}
		// Renamed, but the directory fsync failed: the rename may not
		// survive a crash. Switch to the new file, but refuse writes.
		f.fail(err)
	}
	fd, err := openData(f.path)
	if err != nil {
		return f.fail(err)
	}
	f.fd.Close() // the old inode is unlinked; nothing unsynced in it matters now
	f.fd = fd
	f.header = h.clone()
	f.headerEnd = int64(len(line))
	f.ends = ends
	f.skips = nil
	f.size = f.headerEnd
	if len(ends) > 0 {
		f.size = ends[len(ends)-1]
	}
	// The new file was fsynced whole, so every append so far is covered.
	f.synced = f.written.Load()
	return f.failure()
}

// Close syncs records appended since the last Sync, closes the file and
// releases the lock. It returns the error that made the File fail, if one
// did. Calling Close again returns nil.
func (f *File) Close() error {
	f.dropRecord()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	var errs []error
	if err := f.failure(); err != nil {
		errs = append(errs, err)
	} else if f.synced < f.written.Load() {
		errs = append(errs, f.syncLocked())
	}
	if err := f.fd.Close(); err != nil {
		errs = append(errs, fmt.Errorf("persistence: close %s: %w", f.path, err))
	}
	errs = append(errs, f.store.unlock(f.id, f.lock, false))
	f.closed = true
	return errors.Join(errs...)
}

// prefixLayout returns the byte ranges of the first n records (skipped
// lines between them left out) and where each record ends once they
// follow a header of newHeaderLen bytes. Call with mu held.
func (f *File) prefixLayout(n int, newHeaderLen int64) ([]span, []int64) {
	ends := make([]int64, n)
	if n == 0 {
		return nil, ends
	}
	limit := f.ends[n-1]
	var segs []span
	start := f.headerEnd
	for _, sk := range f.skips {
		if sk.off >= limit {
			break
		}
		if sk.off > start {
			segs = append(segs, span{start, sk.off})
		}
		start = sk.end
	}
	if limit > start {
		segs = append(segs, span{start, limit})
	}
	var skipped int64
	k := 0
	for i, e := range f.ends[:n] {
		for k < len(f.skips) && f.skips[k].end <= e {
			skipped += f.skips[k].end - f.skips[k].off
			k++
		}
		ends[i] = e - f.headerEnd - skipped + newHeaderLen
	}
	return segs, ends
}

// RewriteHeader replaces the header (a new title, say) and keeps every
// record, atomically, like Rewrite. It reads the records back from the
// file, so it costs a copy of the file: it is for rare changes.
func (f *File) RewriteHeader(h Header) error {
	f.mu.Lock()
	if err := f.usable(); err != nil {
		f.mu.Unlock()
		return err // closed: the file may be gone
	}
	path, n := f.path, len(f.ends)
	f.mu.Unlock()
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("persistence: rewriting the header of %s: %w", path, err)
	}
	f.mu.Lock()
	ends, skips, start := slices.Clone(f.ends), slices.Clone(f.skips), f.headerEnd
	f.mu.Unlock()
	if len(ends) != n || int64(len(data)) < start {
		return fmt.Errorf("persistence: rewriting the header of %s: the file changed while it was read", path)
	}
	records := make([]json.RawMessage, 0, n)
	pos := start
	for _, end := range ends {
		// Skipped bad lines lie between records: step over them.
		for _, sk := range skips {
			if sk.off == pos {
				pos = sk.end
			}
		}
		if end > int64(len(data)) {
			return fmt.Errorf("persistence: rewriting the header of %s: the file is shorter than its index", path)
		}
		records = append(records, json.RawMessage(bytes.TrimRight(data[pos:end], "\n")))
		pos = end
	}
	return f.Rewrite(h, records)
}
