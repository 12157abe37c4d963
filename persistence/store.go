package persistence

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-agent/acp-agent/internal/sessionid"
)

// FormatVersion is the version of the file format this package writes,
// stored in every header.
const FormatVersion = 1

// MaxHeaderSize bounds an encoded header line, newline included. List reads
// no more than this of each file.
const MaxHeaderSize = 64 << 10

// MaxFileSize bounds the session file Open loads, which it reads into
// memory whole: a larger file (say a damaged, sparse one) is refused with
// ErrTooLarge rather than exhausting memory. Compaction (File.Rewrite)
// keeps real sessions far below it.
const MaxFileSize = 1 << 30

const headerType = "session"

var (
	// ErrNotFound reports a session that has no file in the store.
	ErrNotFound = errors.New("persistence: session not found")
	// ErrLocked reports a session held by another File, in this process or
	// another one.
	ErrLocked = errors.New("persistence: session locked")
	// ErrCorrupt reports a session file whose header line cannot be read.
	ErrCorrupt = errors.New("persistence: corrupt session file")
	// ErrTooLarge reports a session file over MaxFileSize.
	ErrTooLarge = errors.New("persistence: session file too large")
	// ErrInvalidCursor reports a ListOptions.Cursor that List did not make.
	ErrInvalidCursor = errors.New("persistence: invalid list cursor")
	// ErrInvalidID reports a session id that cannot name a file.
	ErrInvalidID = errors.New("persistence: invalid session id")
	// ErrClosed reports a call on a closed File.
	ErrClosed = errors.New("persistence: session file closed")
)

// Header is line 1 of a session file.
type Header struct {
	// Type is always "session"; Create and Rewrite fill it in.
	Type string `json:"type"`
	// Version is the FormatVersion the file was written with; Create and
	// Rewrite fill it in.
	Version int `json:"version"`
	// ID is the session id, which is also the file's base name.
	ID string `json:"id"`
	// CWD is the session's working directory.
	CWD string `json:"cwd"`
	// Timestamp is the creation time; Create fills in the current time if
	// it is zero.
	Timestamp time.Time `json:"timestamp"`
	// ParentSessionID is the session this one was forked from, if any.
	ParentSessionID string `json:"parentSessionId,omitempty"`
	// Title is the session's display title, if any.
	Title string `json:"title,omitempty"`
	// TitleByUser says the title was set by the user (session/set_title):
	// the agent no longer titles the session itself.
	TitleByUser bool `json:"titleByUser,omitempty"`
	// Archived hides the session from List unless asked for.
	Archived bool `json:"archived,omitempty"`
	// Subagent marks a child session a subagent of ParentSessionID ran
	// (a fork has a parent too, but is not one).
	Subagent bool `json:"subagent,omitempty"`
	// AdditionalDirectories are workspace roots besides CWD.
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
}

// encode fills in the defaults, checks h and returns its line, newline
// included.
func (h *Header) encode() ([]byte, error) {
	if h.Type == "" {
		h.Type = headerType
	}
	if h.Version == 0 {
		h.Version = FormatVersion
	}
	switch {
	case h.Type != headerType:
		return nil, fmt.Errorf("persistence: header type %q, want %q", h.Type, headerType)
	case h.Version != FormatVersion:
		return nil, fmt.Errorf("persistence: header version %d, this build writes %d", h.Version, FormatVersion)
	}
	if err := ValidateID(h.ID); err != nil {
		return nil, err
	}
	if h.Timestamp.IsZero() {
		h.Timestamp = time.Now().UTC()
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("persistence: encode header of session %q: %w", h.ID, err)
	}
	if len(b)+1 > MaxHeaderSize {
		return nil, fmt.Errorf("persistence: header of session %q is %d bytes, the limit is %d", h.ID, len(b)+1, MaxHeaderSize)
	}
	return append(b, '\n'), nil
}

func (h Header) clone() Header {
	h.AdditionalDirectories = append([]string(nil), h.AdditionalDirectories...)
	return h
}

// maxIDLen keeps "<id>.jsonl.tmp<digits>" well under NAME_MAX (255).
const maxIDLen = 128

// Exists reports whether the store holds a session with id (a data
// file; it may be damaged).
func (s *Store) Exists(id string) bool {
	if ValidateID(id) != nil {
		return false
	}
	fi, err := os.Lstat(s.dataPath(id))
	return err == nil && fi.Mode().IsRegular()
}

// ValidateID reports whether id can name a session: 1 to 128 bytes of
// ASCII letters, digits, '-', '_' and '.', not starting with '.' and not
// containing "..", and not spelled like another session's file or a
// Windows device (sessionid.NameClash). UUIDs qualify. The error wraps
// ErrInvalidID.
func ValidateID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrInvalidID)
	case len(id) > maxIDLen:
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrInvalidID, len(id), maxIDLen)
	case id[0] == '.':
		return fmt.Errorf("%w: %q starts with a dot", ErrInvalidID, id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		case c == '.':
			if i+1 < len(id) && id[i+1] == '.' {
				return fmt.Errorf("%w: %q contains \"..\"", ErrInvalidID, id)
			}
		default:
			return fmt.Errorf("%w: %q contains %q; allowed are letters, digits, '-', '_' and '.'", ErrInvalidID, id, rune(c))
		}
	}
	if why := sessionid.NameClash(id); why != "" {
		return fmt.Errorf("%w: %q: %s", ErrInvalidID, id, why)
	}
	return nil
}

// Store is a directory of session files. Any number of Stores, in any
// number of processes, may share one; the per-session locks keep them
// apart. Besides the directory a Store holds only its entry in RunningDir
// (from its first session lock; Close ends it) and what it tells the
// start after it. A Store is safe for concurrent use.
type Store struct {
	dir string
	// unsafeNoSync skips every fsync. Only tests that build large
	// fixtures set it.
	unsafeNoSync bool

	// holding counts the session locks this Store holds (Holds).
	mu      sync.Mutex
	holding map[string]int

	// Directory fsyncs are group-committed (syncDir): dirChanges counts
	// the callers that changed the directory and want it synced; under
	// dirMu, dirSynced is how many of them the fsyncs done so far cover
	// and dirSyncing, closed when it ends, the fsync running now (nil if
	// none); dirSyncs counts the fsyncs done (tests read it).
	dirChanges atomic.Uint64
	dirMu      sync.Mutex
	dirSynced  uint64
	dirSyncing chan struct{}
	dirSyncs   atomic.Int64

	// The Store's entry in RunningDir (register, Close): reg is nil
	// until the first session lock. touched (under mu) holds the ids
	// locked since, and dirty says a removal failed: Close checks both
	// before it says the Store left nothing.
	regMu      sync.Mutex
	reg        *fileLock
	regCleanup runtime.Cleanup
	touched    map[string]struct{}
	dirty      atomic.Bool
	// runningUnsynced: the entry in RunningDir was made and RunningDir
	// not fsynced since; the next fsync of the store directory does it
	// first (syncDir).
	runningUnsynced atomic.Bool
}

// lock takes session id's lock (acquireLock) for this Store. It is
// counted from before the attempt to after the release, so that Holds
// covers every moment the process-wide registry may name it.
func (s *Store) lock(id string) (*fileLock, error) {
	if err := s.register(); err != nil {
		return nil, err
	}
	s.count(id, 1)
	l, err := acquireLock(s.lockPath(id), id)
	if err != nil {
		s.count(id, -1)
	}
	return l, err
}

// unlock releases a lock this Store took (with remove, its file too).
func (s *Store) unlock(id string, l *fileLock, remove bool) error {
	err := l.release(remove)
	if err != nil && remove {
		s.leftBehind()
	}
	s.count(id, -1)
	return err
}

func (s *Store) count(id string, d int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holding == nil {
		s.holding = map[string]int{}
	}
	if d > 0 {
		if s.touched == nil {
			s.touched = map[string]struct{}{}
		}
		s.touched[id] = struct{}{}
	}
	if s.holding[id] += d; s.holding[id] <= 0 {
		delete(s.holding, id)
	}
}

// Holds reports whether this Store holds session id's lock (a File of it
// is open, or a Delete is under way): an ErrLocked then comes from the
// Store's own user, not from another process or Store.
func (s *Store) Holds(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holding[id] > 0
}

// OpenStore returns the store in dir, creating the directory (mode 0700:
// transcripts can hold secrets) if needed. dir is made absolute and its
// symlinks are resolved, so two Stores on one directory agree on the lock
// files' names.
func OpenStore(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("persistence: empty store directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("persistence: store directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("persistence: create store directory: %w", err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, fmt.Errorf("persistence: store directory %s: %w", dir, err)
	}
	return &Store{dir: abs}, nil
}

// DefaultDir returns the default store directory:
// $XDG_STATE_HOME/acp-agent/sessions if XDG_STATE_HOME is set to an
// absolute path (the XDG spec says to ignore relative ones), else
// on Windows %LOCALAPPDATA%\acp-agent\sessions, else
// $HOME/.local/state/acp-agent/sessions. It returns "" when HOME is not
// set either. getenv is usually os.Getenv.
func DefaultDir(getenv func(string) string) string {
	if x := getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "acp-agent", "sessions")
	}
	if x := getenv("LOCALAPPDATA"); x != "" && filepath.IsAbs(x) && runtime.GOOS == "windows" {
		return filepath.Join(x, "acp-agent", "sessions")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "state", "acp-agent", "sessions")
	}
	return ""
}

// Dir returns the store's absolute directory.
func (s *Store) Dir() string { return s.dir }

// Create makes a new session file holding only the header h and returns it
// open and locked. Create fills in h.Type, h.Version and a zero
// h.Timestamp. The header is written to a temporary file, fsynced and
// renamed into place, and the directory is fsynced, so after a crash the
// session either does not exist or has its complete header. An existing
// session with h.ID is an error wrapping fs.ErrExist.
func (s *Store) Create(h Header) (*File, error) {
	line, err := h.encode()
	if err != nil {
		return nil, err
	}
	id := h.ID
	lock, err := s.lock(id)
	if err != nil {
		return nil, err
	}
	f, err := s.create(lock, h, line, false, nil, nil)
	if err != nil {
		s.releaseFailed(lock, id)
		return nil, err
	}
	return f, nil
}

// releaseFailed releases the lock taken for a Create or Fork that failed,
// removing the lock file unless the session exists after all.
func (s *Store) releaseFailed(lock *fileLock, id string) {
	_, err := os.Lstat(s.dataPath(id))
	s.unlock(id, lock, errors.Is(err, fs.ErrNotExist))
}

// create publishes a new session file made of headerLine followed by what
// body writes (if body is non-nil), and returns it as a File holding lock.
// The caller releases lock on error. clean: no earlier holder can have
// left temporary files of the id (ReserveNew, Reservation.Prepare), and
// the store directory, which grows with every session, is not read for
// them. tmp, if not nil, is the empty temporary file to fill
// (Reservation.Prepare), open for appending, which stays open to be the
// File's; without it one is created here. create closes tmp on error,
// and removes it unless it was renamed into place.
func (s *Store) create(lock *fileLock, h Header, headerLine []byte, clean bool, tmp *os.File, body func(*os.File) error) (*File, error) {
	id := h.ID
	discard := func() {
		if tmp != nil {
			tmp.Close()
			s.removeOrMark(tmp.Name())
		}
	}
	if !clean {
		if err := s.removeTemps(id); err != nil {
			discard()
			return nil, err
		}
	}
	path := s.dataPath(id)
	if _, err := os.Lstat(path); err == nil {
		discard()
		return nil, fmt.Errorf("persistence: create session %q: %s: %w", id, path, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		discard()
		return nil, fmt.Errorf("persistence: create session %q: %w", id, err)
	}
	prepared := tmp != nil
	if !prepared {
		var err error
		if tmp, err = s.createTemp(id); err != nil {
			return nil, err
		}
	}
	_, err := tmp.Write(headerLine)
	if err == nil && body != nil {
		err = body(tmp)
	}
	if err != nil {
		discard()
		return nil, fmt.Errorf("persistence: write %s: %w", tmp.Name(), err)
	}
	var renamed bool
	var fd *os.File
	if prepared {
		// Open for appending already, and kept open across the rename:
		// no second open of the new file.
		renamed, err = s.publishFile(tmp, path, false)
		fd = tmp
		if err == nil && reopenAfterRename {
			fd.Close()
			fd, err = openData(path)
			prepared = false // fd is nil on error: nothing to close
		}
	} else {
		renamed, err = s.publish(tmp, path)
		if err == nil {
			fd, err = openData(path)
		}
	}
	if err != nil {
		if prepared && renamed {
			fd.Close()
		}
		if renamed {
			// The caller is told the session was not created, so it
			// must not exist; best effort, as the directory is failing.
			os.Remove(path)
			s.syncDir()
		}
		return nil, err
	}
	f := newFile(s, lock, fd, h)
	f.headerEnd = int64(len(headerLine))
	f.size = f.headerEnd
	return f, nil
}

// SkippedLine is a line in the middle of a session file that is not a JSON
// object. Open leaves it in the file and reports it here.
type SkippedLine struct {
	Line   int   // 1-based line number; the header is line 1
	Offset int64 // byte offset of the line's first byte
	Err    error // why the line was skipped
}

// Loaded is what Open read from a session file.
type Loaded struct {
	Header Header
	// Records are the file's complete, valid record lines in order,
	// without their newlines. They are slices of one buffer holding the
	// whole file; a caller that keeps a few of them long after dropping
	// the rest should copy those.
	Records []json.RawMessage
	// Skipped are the bad lines in the middle of the file, in order.
	Skipped []SkippedLine
	// TornTail is the number of bytes cut off the end of the file, 0 if
	// none. When it is not 0, the whole original file was first saved as
	// <id>.jsonl.broken.
	TornTail int64
}

// Open locks session id, reads its whole file, repairs a torn tail and
// returns the File, open for appending, with what it read.
//
// A last line that has no newline or is not a JSON object is torn, the
// remains of an append cut short by a crash: Open saves the whole file as
// <id>.jsonl.broken (fsynced, via rename), truncates the file to the end
// of the last line it keeps, and fsyncs it, so the next append starts on a
// fresh line. A bad line anywhere else is skipped and reported in
// Loaded.Skipped, and stays in the file: it is not the tail, so the file
// still ends with a newline and appends stay safe, and leaving it keeps the
// evidence without an unneeded rewrite.
//
// Errors: ErrNotFound if there is no such session, ErrLocked if it is
// open, ErrCorrupt if the header line cannot be read and ErrTooLarge if
// the file is over MaxFileSize (in both cases the file is left as it is),
// ErrInvalidID for a bad id.
func (s *Store) Open(id string) (*File, *Loaded, error) {
	return s.openWith(id, nil)
}

func (s *Store) openWith(id string, dec *decoder) (*File, *Loaded, error) {
	if err := ValidateID(id); err != nil {
		return nil, nil, err
	}
	lock, err := s.lock(id)
	if err != nil {
		return nil, nil, err
	}
	f, l, exists, err := s.open(lock, id, dec)
	if err != nil {
		// Do not leave a lock file behind for a session that does not
		// exist.
		s.unlock(id, lock, !exists)
		return nil, nil, err
	}
	return f, l, nil
}

func (s *Store) open(lock *fileLock, id string, dec *decoder) (_ *File, _ *Loaded, exists bool, _ error) {
	if err := s.removeTemps(id); err != nil {
		return nil, nil, true, err
	}
	path := s.dataPath(id)
	fd, err := openData(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, fmt.Errorf("%w: %q (%s)", ErrNotFound, id, path)
	}
	if err != nil {
		return nil, nil, true, err
	}
	ok := false
	defer func() {
		if !ok {
			fd.Close()
		}
	}()
	buf, err := readAll(fd)
	if err != nil {
		return nil, nil, true, fmt.Errorf("persistence: read %s: %w", path, err)
	}
	sc, err := scan(buf, id, dec)
	if dec != nil && dec.openErr != nil {
		return nil, nil, true, dec.openErr // the caller's, as it gave it
	}
	if err != nil {
		return nil, nil, true, fmt.Errorf("%w (%s)", err, path)
	}
	torn := int64(len(buf)) - sc.goodEnd
	if torn > 0 {
		if err := s.writeBroken(id, buf); err != nil {
			return nil, nil, true, err
		}
		if err := truncateFile(fd, sc.goodEnd); err != nil {
			return nil, nil, true, fmt.Errorf("persistence: truncate torn tail of %s: %w", path, err)
		}
		if err := s.fsync(fd); err != nil {
			return nil, nil, true, fmt.Errorf("persistence: sync %s: %w", path, err)
		}
	}
	f := newFile(s, lock, fd, sc.header)
	f.headerEnd = sc.headerEnd
	f.size = sc.goodEnd
	f.ends = sc.ends
	f.skips = sc.skips
	f.brokenSaved = torn > 0
	ok = true
	return f, &Loaded{
		Header:   sc.header.clone(),
		Records:  sc.records,
		Skipped:  sc.skipped,
		TornTail: torn,
	}, true, nil
}

// readAll reads the whole file in one allocation of its size.
func readAll(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, fi.Size(), MaxFileSize)
	}
	buf := make([]byte, fi.Size())
	n, err := f.ReadAt(buf, 0)
	if err != nil && n < len(buf) {
		// We hold the lock, so the file cannot shrink under us; a short
		// read is a real error.
		return nil, err
	}
	return buf, nil
}

// Delete removes session id: its file, its .broken copy, its reservation
// record, any stale temporary files and its lock file, then fsyncs the
// directory. An unknown id is not an error. Delete takes the session's lock to do so, so a
// session open anywhere, this process included, fails with ErrLocked: a
// caller deleting a session it has open closes the File first.
func (s *Store) Delete(id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	// The reservation record goes first: a crash after the file's
	// removal must not leave a record that reopens the session, empty.
	names := []string{s.reservedPath(id), s.dataPath(id), s.brokenPath(id), s.lockPath(id)}
	found := false
	for _, p := range names {
		if _, err := os.Lstat(p); err == nil {
			found = true
		}
	}
	if !found {
		return nil
	}
	lock, err := s.lock(id)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range names[:3] {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("persistence: delete session %q: %w", id, err))
		}
	}
	errs = append(errs, s.removeTemps(id))
	errs = append(errs, s.unlock(id, lock, true))
	errs = append(errs, s.syncDir())
	return errors.Join(errs...)
}

// Fork creates session h.ID holding h and the first n records of src as
// they are on disk at the call, and returns it open and locked. The prefix
// is consistent even while other goroutines append to src: appends only
// add bytes after it. Bad lines src skipped are not copied. The bytes are
// copied as they are, not re-encoded, into a temporary file that is
// fsynced and renamed into place before the directory is fsynced. src is
// not changed. n must be between 0 and src.Count().
func (s *Store) Fork(src *File, h Header, n int) (*File, error) {
	line, err := h.encode()
	if err != nil {
		return nil, err
	}
	if h.ID == src.id && s.dir == src.store.dir {
		return nil, fmt.Errorf("persistence: fork session %q onto itself", h.ID)
	}

	// Pin the prefix: a second descriptor opened under src.mu names the
	// file as it is now, even if a Rewrite replaces it during the copy.
	src.mu.Lock()
	if src.closed {
		src.mu.Unlock()
		return nil, fmt.Errorf("persistence: fork session %q: %w", src.id, ErrClosed)
	}
	if n < 0 || n > len(src.ends) {
		count := len(src.ends)
		src.mu.Unlock()
		return nil, fmt.Errorf("persistence: fork %d records of session %q, which has %d", n, src.id, count)
	}
	rd, err := os.Open(src.path)
	if err != nil {
		src.mu.Unlock()
		return nil, fmt.Errorf("persistence: fork session %q: %w", src.id, err)
	}
	defer rd.Close()
	segs, ends := src.prefixLayout(n, int64(len(line)))
	src.mu.Unlock()

	lock, err := s.lock(h.ID)
	if err != nil {
		return nil, err
	}
	f, err := s.create(lock, h, line, false, nil, func(tmp *os.File) error {
		for _, sg := range segs {
			if err := copyRange(tmp, rd, sg.off, sg.end-sg.off); err != nil {
				return fmt.Errorf("copy from %s: %w", src.path, err)
			}
		}
		return nil
	})
	if err != nil {
		s.releaseFailed(lock, h.ID)
		return nil, err
	}
	f.ends = ends
	if len(ends) > 0 {
		f.size = ends[len(ends)-1]
	}
	return f, nil
}

// writeLines writes headerLine and records, one per line, to w through one
// buffer and returns the offset just past each record's newline.
func writeLines(w *os.File, headerLine []byte, records []json.RawMessage) ([]int64, error) {
	// Up to 1 MiB of buffer, but no more than the file needs: a short
	// transcript is rewritten without allocating and zeroing a megabyte.
	size := len(headerLine)
	for _, r := range records {
		if size += len(r) + 1; size >= 1<<20 {
			break
		}
	}
	bw := bufio.NewWriterSize(w, min(size, 1<<20))
	ends := make([]int64, len(records))
	off := int64(len(headerLine))
	if _, err := bw.Write(headerLine); err != nil {
		return nil, err
	}
	for i, r := range records {
		bw.Write(r)
		if err := bw.WriteByte('\n'); err != nil {
			return nil, err
		}
		off += int64(len(r)) + 1
		ends[i] = off
	}
	return ends, bw.Flush()
}
