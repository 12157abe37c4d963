package persistence

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Checkpoints is a session's file history: a content-addressed object
// store (objects/<hash[:2]>/<hash>, SHA-256, written to a temporary file,
// fsynced, renamed; and packs, objects/pack-<hash>, many contents in one
// file written durably at once: PutAll) and an append-only log of what
// changed (log.jsonl, one JSON object per line, each append fsynced). It
// lives beside the session's file, in <session-dir>/<id>/checkpoints. A
// torn last line of the log (a crash mid-append) is skipped on open. Safe
// for concurrent use.
type Checkpoints struct {
	dir  string
	mu   sync.Mutex
	log  *os.File
	recs []CheckpointRecord
	// packed is where each packed content is; durable, the loose
	// objects known to be durable (synced here, or named by the log).
	packed  map[string]packLoc
	durable map[string]bool
	// newDirs are the directories in which this store made an entry
	// (a directory, the log) that no fsync of theirs covers yet; they are
	// synced before anything that depends on the entry is reported
	// durable (syncNewDirs).
	dirsMu  sync.Mutex
	newDirs map[string]bool
}

// packLoc is a content's place in a pack.
type packLoc struct {
	path string
	off  int64
	n    int64
}

// Checkpoint record types.
const (
	// CheckpointTurn starts checkpoint Turn, at the user message sent at
	// EntryTime.
	CheckpointTurn = "turn"
	// CheckpointFile is a file's content before its first change in Turn
	// (Before nil: the file did not exist).
	CheckpointFile = "file"
	// CheckpointRewind is a rewind about to be carried out; a
	// CheckpointRewindDone with its ID follows once it is complete (or,
	// with Failed, once what it had set was put back). A rewind logged
	// with Accepted passed every check before it was logged: a load
	// completes it. (Files written before Accepted existed are judged by
	// what followed them: see docs/jsonl-format.md.)
	CheckpointRewind     = "rewind"
	CheckpointRewindDone = "rewind_done"
	// CheckpointCommand is a command about to run in Turn, with the
	// workspace before it (Command.Manifest); a CheckpointCommandDone
	// with its ID follows the file records of what it changed. A command
	// without one was interrupted: a load compares the manifest with the
	// workspace and records what changed.
	CheckpointCommand     = "command"
	CheckpointCommandDone = "command_done"
)

// CheckpointRecord is one line of the log.
type CheckpointRecord struct {
	Type      string    `json:"type"`
	Turn      int       `json:"turn,omitempty"`
	EntryTime time.Time `json:"entryTime,omitzero"`
	Path      string    `json:"path,omitempty"`
	Before    *string   `json:"before,omitempty"`
	// Mode is a file record's permission bits before (absent: unknown,
	// and in logs of older versions).
	Mode    uint32    `json:"mode,omitempty"`
	Time    time.Time `json:"time"`
	Rewind  *Rewind   `json:"rewind,omitempty"`
	Command *Command  `json:"command,omitempty"`
}

// Command is a command of CheckpointCommand and CheckpointCommandDone.
type Command struct {
	ID int `json:"id"`
	// Manifest is the hash of the workspace's state before the command
	// (the tools' format, stored with PutAll).
	Manifest string `json:"manifest,omitempty"`
	// Unrestorable are files the command changed whose content before it
	// was not kept (beyond the scan's limits); Incomplete, the scan did
	// not list the whole workspace, so files it created may not be
	// known. Interrupted: the agent stopped during the command and a
	// load recorded its changes.
	Unrestorable []string `json:"unrestorable,omitempty"`
	Incomplete   bool     `json:"incomplete,omitempty"`
	Interrupted  bool     `json:"interrupted,omitempty"`
}

// Rewind is a rewind: the files it sets (each to To, from From; nil:
// absent), the transcript length it keeps, and the entries it removed
// (as the session file stores them), so that it can be undone.
type Rewind struct {
	ID   int `json:"id"`
	Undo int `json:"undo,omitempty"` // the rewind this one undoes
	// Accepted: every check passed before the rewind was logged.
	Accepted bool `json:"accepted,omitempty"`
	// Failed, on a CheckpointRewindDone: the rewind did not happen (what
	// it had set was put back), and why.
	Failed  string            `json:"failed,omitempty"`
	Keep    int               `json:"keep"`
	Files   []RewindFile      `json:"files,omitempty"`
	Removed []json.RawMessage `json:"removed,omitempty"`
	// Entries is the transcript to restore (an undo).
	Entries []json.RawMessage `json:"entries,omitempty"`
}

// RewindFile is one file a rewind sets.
type RewindFile struct {
	Path string  `json:"path"`
	From *string `json:"from"`
	To   *string `json:"to"`
	// FromMode and ToMode are the permission bits with From and To (0:
	// unknown; a file written keeps its mode, a new one gets 0644).
	FromMode uint32 `json:"fromMode,omitempty"`
	ToMode   uint32 `json:"toMode,omitempty"`
}

// OpenCheckpoints opens the checkpoint store in dir and reads its log. A
// store not made yet is made at its first write (Append, Put, PutAll,
// TakeScan): a session's start creates no directory for it (a new
// session's start waited for two directories and a file), and a session
// that changes no file has none.
func OpenCheckpoints(dir string) (*Checkpoints, error) {
	c := &Checkpoints{dir: dir, packed: map[string]packLoc{}, durable: map[string]bool{}}
	f, _, err := openRegular(filepath.Join(dir, "log.jsonl"), os.O_RDWR|os.O_APPEND)
	if errors.Is(err, fs.ErrNotExist) {
		c.readPacks()
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	c.log = f
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	for sc.Scan() {
		var r CheckpointRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Type != "" {
			c.recs = append(c.recs, r)
			c.noteDurable(r)
		}
	}
	if err := sc.Err(); err != nil {
		f.Close()
		return nil, fmt.Errorf("checkpoints: reading the log: %w", err)
	}
	// A torn last line (no newline) would glue onto the next append.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				f.Close()
				return nil, fmt.Errorf("checkpoints: %w", err)
			}
		}
	}
	c.readPacks()
	return c, nil
}

// noteDurable marks the objects a logged record names as durable: they
// were synced before it was appended.
func (c *Checkpoints) noteDurable(r CheckpointRecord) {
	if r.Before != nil {
		c.durable[*r.Before] = true
	}
	if r.Rewind != nil {
		for _, f := range r.Rewind.Files {
			for _, h := range []*string{f.From, f.To} {
				if h != nil {
					c.durable[*h] = true
				}
			}
		}
	}
}

// makeStoreLocked makes the store's directories and its log, if they are not
// made yet (OpenCheckpoints). c.mu is held.
func (c *Checkpoints) makeStoreLocked() error {
	if c.log != nil {
		return nil
	}
	if err := c.mkdirAll(filepath.Join(c.dir, "objects")); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	path := filepath.Join(c.dir, "log.jsonl")
	_, statErr := os.Lstat(path)
	f, err := openNoFollow(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		c.noteNewEntry(c.dir)
	}
	c.log = f
	return nil
}

// mkdirAll is os.MkdirAll, noting the parent of every directory it
// makes (noteNewEntry): a new directory entry is durable only once its
// parent is fsynced.
func (c *Checkpoints) mkdirAll(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := c.mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
			return nil // made meanwhile, by whoever syncs it
		}
		return err
	}
	c.noteNewEntry(parent)
	return nil
}

// noteNewEntry records that an entry was made in dir, which syncNewDirs
// then fsyncs.
func (c *Checkpoints) noteNewEntry(dir string) {
	c.dirsMu.Lock()
	if c.newDirs == nil {
		c.newDirs = map[string]bool{}
	}
	c.newDirs[dir] = true
	c.dirsMu.Unlock()
}

// syncNewDirs fsyncs the directories in which entries were made since
// the last call (each once, however many entries), so that a record or
// object reported durable after it can be reached after a power cut: the
// first change of a session makes <id>/, checkpoints/, objects/, an
// objects/<hash[:2]>/ and log.jsonl at once, and this syncs their
// parents in one pass. Most calls find nothing to do.
func (c *Checkpoints) syncNewDirs() error {
	c.dirsMu.Lock()
	dirs := c.newDirs
	c.newDirs = nil
	c.dirsMu.Unlock()
	// Deepest first: an entry's own directory is made durable before the
	// entry that names it.
	for _, d := range slices.SortedFunc(maps.Keys(dirs), func(a, b string) int { return len(b) - len(a) }) {
		if err := syncDirectory(d); err != nil {
			for d := range dirs {
				c.noteNewEntry(d) // tried again by the next caller
			}
			return fmt.Errorf("checkpoints: %w", err)
		}
		delete(dirs, d)
	}
	return nil
}

// makeStore is makeStoreLocked for a caller that does not hold c.mu.
func (c *Checkpoints) makeStore() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.makeStoreLocked()
}

// Close closes the log (if the store was made).
func (c *Checkpoints) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.log == nil {
		return nil
	}
	return c.log.Close()
}

// Compact keeps what the log still needs and drops the packs: every
// content a record names (a file's content before, a rewind's contents,
// the manifest of a command that has not ended) that is in a pack is
// written as a loose object, durably, and then the packs are removed.
// The workspace's contents a pack kept for commands that ended are not
// needed any more; a session's next command stores them again. Call it
// when no command runs (the session is closing). If a content cannot be
// kept, the packs stay and the error says why.
func (c *Checkpoints) Compact() error { return c.CompactKeeping("", nil, nil) }

// CompactKeeping is Compact, except that the packs holding the contents
// of keep (the workspace's last scan) are moved to dir as the
// workspace's kept scan, with the index that index returns for the
// contents moved, for its next session to take (TakeScan); unless they
// hold mostly other contents, when they are dropped with the rest. A
// scan that cannot be kept costs the next session a full scan, nothing
// more.
func (c *Checkpoints) CompactKeeping(dir string, keep map[string]bool, index func(kept map[string]bool) ([]byte, error)) error {
	c.mu.Lock()
	recs := slices.Clone(c.recs)
	packs := map[string]bool{}
	for _, loc := range c.packed {
		packs[loc.path] = true
	}
	c.mu.Unlock()
	if len(packs) == 0 {
		return nil
	}
	ended := map[int]bool{}
	for _, r := range recs {
		if r.Type == CheckpointCommandDone && r.Command != nil {
			ended[r.Command.ID] = true
		}
	}
	needed := map[string]bool{}
	for _, r := range recs {
		if r.Before != nil {
			needed[*r.Before] = true
		}
		if r.Rewind != nil {
			for _, f := range r.Rewind.Files {
				for _, h := range []*string{f.From, f.To} {
					if h != nil {
						needed[*h] = true
					}
				}
			}
		}
		if r.Type == CheckpointCommand && r.Command != nil && !ended[r.Command.ID] {
			needed[r.Command.Manifest] = true
		}
	}
	for _, h := range slices.Sorted(maps.Keys(needed)) {
		c.mu.Lock()
		_, packed := c.packed[h]
		c.mu.Unlock()
		if !packed {
			continue
		}
		if data, err := c.readObject(h); err != nil || !matches(data, h) {
			data, err := c.readPacked(h)
			if err != nil || !matches(data, h) {
				return fmt.Errorf("%w: %s: cannot be kept outside its pack", ErrObjectMissing, h)
			}
			if err := c.writeObject(h, data); err != nil {
				return err
			}
		}
		// Synced now: the record that names it may have counted on the pack.
		c.mu.Lock()
		delete(c.durable, h)
		c.mu.Unlock()
		if err := c.Sync(h); err != nil {
			return err
		}
	}
	var keepErr error
	if dir != "" && len(keep) > 0 {
		var moved map[string]bool
		moved, keepErr = c.keepScan(dir, keep, index)
		for p, ok := range moved {
			if ok {
				delete(packs, p)
			}
		}
	}
	c.mu.Lock()
	c.packed = map[string]packLoc{}
	c.mu.Unlock()
	for p := range packs {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checkpoints: %w", err)
		}
	}
	if err := syncDirectory(filepath.Join(c.dir, "objects")); err != nil {
		return err
	}
	return keepErr
}

// Records returns the log's records, oldest first.
func (c *Checkpoints) Records() []CheckpointRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]CheckpointRecord(nil), c.recs...)
}

// Append adds records to the log durably (one fsync).
func (c *Checkpoints) Append(recs ...CheckpointRecord) error {
	var b bytes.Buffer
	for i := range recs {
		if recs[i].Time.IsZero() {
			recs[i].Time = time.Now().UTC()
		}
		data, err := json.Marshal(recs[i])
		if err != nil {
			return err
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.makeStoreLocked(); err != nil {
		return err
	}
	if _, err := c.log.Write(b.Bytes()); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	if err := c.log.Sync(); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	// The log's entry (and the directories above it), before the record
	// counts as durable; after the log's fsync, which on a journalling
	// file system committed their creation already, so these cost no
	// second commit.
	if err := c.syncNewDirs(); err != nil {
		return err
	}
	c.recs = append(c.recs, recs...)
	for _, r := range recs {
		c.noteDurable(r)
	}
	return nil
}

// Put stores data and returns its hash; content already there is not
// written again. The object is not made durable here: a scan stores many
// contents of which few are ever referenced; Sync makes the referenced
// ones durable before a record names them.
func (c *Checkpoints) Put(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	c.mu.Lock()
	_, packed := c.packed[h]
	c.mu.Unlock()
	if packed {
		return h, nil
	}
	if _, err := os.Stat(c.objectPath(h)); err == nil {
		return h, nil
	}
	if err := c.writeObject(h, data); err != nil {
		return "", err
	}
	return h, nil
}

// writeObject writes data as the loose object h (a temporary file
// renamed; not synced).
func (c *Checkpoints) writeObject(h string, data []byte) error {
	// The store first (its log too): the directories and the log are
	// then made, and later synced (syncNewDirs), together.
	if err := c.makeStore(); err != nil {
		return err
	}
	path := c.objectPath(h)
	if err := c.mkdirAll(filepath.Dir(path)); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = replaceFile(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("checkpoints: storing an object: %w", werr)
	}
	return nil
}

// Sync makes the objects stored under hashes durable (the file and its
// directory entry); call it before appending a record that names them.
// Packed contents and objects already synced are durable already.
func (c *Checkpoints) Sync(hashes ...string) error {
	dirs := map[string]bool{}
	var synced []string
	for _, h := range hashes {
		if len(h) != 64 {
			return fmt.Errorf("%w: bad hash %q", ErrObjectMissing, h)
		}
		c.mu.Lock()
		_, packed := c.packed[h]
		done := c.durable[h]
		c.mu.Unlock()
		if done {
			continue
		}
		path := c.objectPath(h)
		// Read-write: Windows flushes only handles that may write.
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			if packed {
				continue
			}
			return fmt.Errorf("%w: %v", ErrObjectMissing, err)
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
		dirs[filepath.Dir(path)] = true
		synced = append(synced, h)
	}
	for dir := range dirs {
		if err := syncDirectory(dir); err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
	}
	// objects/<hash[:2]>/ and the directories above it, if new.
	if err := c.syncNewDirs(); err != nil {
		return err
	}
	c.mu.Lock()
	for _, h := range synced {
		c.durable[h] = true
	}
	c.mu.Unlock()
	return nil
}

// PutAll stores contents durably, each under its hash (hex SHA-256,
// checked for the contents it writes): those not durable already go into
// one pack (objects/pack-<hash>: a JSON line listing each content's hash
// and length, then the contents), written to a temporary file, fsynced,
// renamed, its directory fsynced: one fsync where loose objects would
// take one each.
func (c *Checkpoints) PutAll(contents map[string][]byte) error {
	var header packHeader
	var body [][]byte
	c.mu.Lock()
	for _, h := range slices.Sorted(maps.Keys(contents)) {
		if _, ok := c.packed[h]; ok || c.durable[h] {
			continue
		}
		header.Objects = append(header.Objects, packEntry{H: h, N: int64(len(contents[h]))})
		body = append(body, contents[h])
	}
	c.mu.Unlock()
	if len(body) == 0 {
		return nil
	}
	for i, data := range body {
		if !matches(data, header.Objects[i].H) {
			return fmt.Errorf("checkpoints: content stored under %s does not match it", header.Objects[i].H)
		}
	}
	line, err := json.Marshal(header)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if err := c.makeStore(); err != nil {
		return err
	}
	dir := filepath.Join(c.dir, "objects")
	tmp, err := os.CreateTemp(dir, ".tmp-pack-*")
	if err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	w := bufio.NewWriterSize(tmp, 1<<20)
	_, werr := w.Write(line)
	for _, data := range body {
		if werr == nil {
			_, werr = w.Write(data)
		}
	}
	if werr == nil {
		werr = w.Flush()
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	sum := sha256.Sum256(line)
	path := filepath.Join(dir, "pack-"+hex.EncodeToString(sum[:]))
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("checkpoints: storing a pack: %w", werr)
	}
	if err := syncDirectory(dir); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	if err := c.syncNewDirs(); err != nil {
		return err
	}
	c.mu.Lock()
	c.indexPack(path, header.Objects, int64(len(line)))
	c.mu.Unlock()
	return nil
}

// packHeader is a pack's first line: its contents, in order.
type packHeader struct {
	Objects []packEntry `json:"objects"`
}

type packEntry struct {
	H string `json:"h"`
	N int64  `json:"n"`
}

// decodePackHeader decodes a pack's first line. The line json.Marshal
// writes is read directly (a kept scan's pack lists thousands of
// contents, read by every session that takes it); anything else goes
// through encoding/json, so what it accepts and refuses is unchanged.
func decodePackHeader(line []byte) (packHeader, error) {
	if h, ok := parsePackHeader(bytes.TrimSuffix(line, []byte("\n"))); ok {
		return h, nil
	}
	var h packHeader
	err := json.Unmarshal(line, &h)
	return h, err
}

// parsePackHeader reads exactly what json.Marshal writes for a
// packHeader whose hashes are lowercase hex; ok is false for anything
// else.
func parsePackHeader(b []byte) (h packHeader, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"objects":[`))
	if !ok {
		return h, false
	}
	if string(rest) == "]}" {
		return packHeader{Objects: []packEntry{}}, true
	}
	h.Objects = make([]packEntry, 0, bytes.Count(rest, []byte(`{"h":`)))
	for {
		if rest, ok = bytes.CutPrefix(rest, []byte(`{"h":"`)); !ok {
			return h, false
		}
		i := bytes.IndexByte(rest, '"')
		if i < 0 || bytes.ContainsFunc(rest[:i], func(r rune) bool { return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') }) {
			return h, false
		}
		e := packEntry{H: string(rest[:i])}
		if rest, ok = bytes.CutPrefix(rest[i+1:], []byte(`,"n":`)); !ok {
			return h, false
		}
		j := 0
		if j < len(rest) && rest[j] == '-' {
			j++
		}
		start := j
		for j < len(rest) && '0' <= rest[j] && rest[j] <= '9' {
			j++
		}
		if j == start || (rest[start] == '0' && j > start+1) {
			return h, false // no digits, or a leading zero JSON refuses
		}
		n, err := strconv.ParseInt(string(rest[:j]), 10, 64)
		if err != nil {
			return h, false
		}
		e.N = n
		h.Objects = append(h.Objects, e)
		if rest, ok = bytes.CutPrefix(rest[j:], []byte("}")); !ok {
			return h, false
		}
		if string(rest) == "]}" {
			return h, true
		}
		if rest, ok = bytes.CutPrefix(rest, []byte(",")); !ok {
			return h, false
		}
	}
}

// indexPack adds a pack's contents to the index (c.mu held).
func (c *Checkpoints) indexPack(path string, objects []packEntry, off int64) {
	for _, o := range objects {
		if o.N < 0 || o.N > MaxObjectSize {
			return
		}
		if _, ok := c.packed[o.H]; !ok && len(o.H) == 64 {
			c.packed[o.H] = packLoc{path: path, off: off, n: o.N}
		}
		off += o.N
	}
}

// readPacks indexes the packs in objects/ (a damaged one is skipped: Get
// checks every content against its hash anyway).
func (c *Checkpoints) readPacks() {
	dir := filepath.Join(c.dir, "objects")
	names, _ := filepath.Glob(filepath.Join(dir, "pack-*"))
	for _, path := range names {
		f, _, err := openRegular(path, os.O_RDONLY)
		if err != nil {
			continue
		}
		r := bufio.NewReaderSize(io.LimitReader(f, maxPackHeader), 64<<10)
		line, err := r.ReadBytes('\n')
		f.Close()
		if err != nil {
			continue
		}
		header, err := decodePackHeader(line)
		if err != nil {
			continue
		}
		c.mu.Lock()
		c.indexPack(path, header.Objects, int64(len(line)))
		c.mu.Unlock()
	}
}

// Bounds on what the store reads back: a session directory may have been
// planted or damaged, so what it holds is input.
const (
	// MaxObjectSize bounds a stored content: the workspace's files are
	// capped at 10 MiB (runtime.DefaultMaxFileSize), so a larger object,
	// or a pack entry claiming one, is damage, not history.
	MaxObjectSize = 256 << 20
	// maxPackHeader bounds a pack's first line (a pack of a scan's 2,000
	// contents has about 200 KB).
	maxPackHeader = 16 << 20
)

// openRegular opens path with flag as a regular file, and its FileInfo: a
// final symlink is refused (not followed), and so is a FIFO or a device,
// without waiting on its open (O_NONBLOCK) or blocking on its reads.
func openRegular(path string, flag int) (*os.File, fs.FileInfo, error) {
	f, err := openNoFollow(path, flag|openNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadRegularFile returns the contents of the regular file at path, at
// most max bytes of them (a larger file is an error): not a link, a FIFO
// or a device, whose reads could block or never end.
func ReadRegularFile(path string, max int64) ([]byte, error) {
	f, fi, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, over the limit of %d", path, fi.Size(), max)
	}
	// Sized from the stat, as os.ReadFile does: io.ReadAll alone grows its
	// buffer from 512 bytes, copying a kept scan of a large repository
	// (megabytes) a dozen times on every command.
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	_, err = buf.ReadFrom(io.LimitReader(f, max+1))
	data := buf.Bytes()
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%s: over the limit of %d bytes", path, max)
	}
	if err != nil {
		return nil, err
	}
	return data, nil
}

// ErrObjectMissing means a stored content is gone or damaged.
var ErrObjectMissing = errors.New("checkpoints: stored content missing or damaged")

// Get returns the content stored under hash, checked against it.
func (c *Checkpoints) Get(hash string) ([]byte, error) {
	if len(hash) != 64 {
		return nil, fmt.Errorf("%w: bad hash %q", ErrObjectMissing, hash)
	}
	if _, err := hex.DecodeString(hash); err != nil {
		return nil, fmt.Errorf("%w: bad hash %q", ErrObjectMissing, hash)
	}
	// The object, else its place in a pack: a torn object (written, not
	// yet synced, when the machine stopped) may have a good packed copy.
	data, err := c.readObject(hash)
	if err == nil && !matches(data, hash) {
		err = fmt.Errorf("%s does not match its hash", hash)
	}
	if err != nil {
		var perr error
		if data, perr = c.readPacked(hash); perr != nil {
			return nil, fmt.Errorf("%w: %v", ErrObjectMissing, err)
		}
		if !matches(data, hash) {
			return nil, fmt.Errorf("%w: %s does not match its hash", ErrObjectMissing, hash)
		}
	}
	return data, nil
}

func matches(data []byte, hash string) bool {
	sum := sha256.Sum256(data)
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], sum[:])
	return string(hexSum[:]) == hash
}

func (c *Checkpoints) readObject(hash string) ([]byte, error) {
	return ReadRegularFile(c.objectPath(hash), MaxObjectSize)
}

func (c *Checkpoints) readPacked(hash string) ([]byte, error) {
	c.mu.Lock()
	loc, ok := c.packed[hash]
	c.mu.Unlock()
	if !ok {
		return nil, fs.ErrNotExist
	}
	p, fi, err := openRegular(loc.path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if loc.n > MaxObjectSize || loc.off+loc.n > fi.Size() {
		return nil, fmt.Errorf("%s: an entry of %d bytes at %d, past the pack's end or the limit", loc.path, loc.n, loc.off)
	}
	data := make([]byte, loc.n)
	if _, err := p.ReadAt(data, loc.off); err != nil {
		return nil, err
	}
	return data, nil
}

func (c *Checkpoints) objectPath(hash string) string {
	return filepath.Join(c.dir, "objects", hash[:2], hash)
}
