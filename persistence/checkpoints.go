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
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Checkpoints is a session's file history: a content-addressed object
// store (objects/<hash[:2]>/<hash>, SHA-256, written to a temporary file,
// fsynced, renamed) and an append-only log of what changed (log.jsonl,
// one JSON object per line, each append fsynced). It lives beside the
// session's file, in <session-dir>/<id>/checkpoints. A torn last line of
// the log (a crash mid-append) is skipped on open. Safe for concurrent
// use.
type Checkpoints struct {
	dir  string
	mu   sync.Mutex
	log  *os.File
	recs []CheckpointRecord
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
	// CheckpointRewindDone with its ID follows once it is complete.
	CheckpointRewind     = "rewind"
	CheckpointRewindDone = "rewind_done"
)

// CheckpointRecord is one line of the log.
type CheckpointRecord struct {
	Type      string    `json:"type"`
	Turn      int       `json:"turn,omitempty"`
	EntryTime time.Time `json:"entryTime,omitzero"`
	Path      string    `json:"path,omitempty"`
	Before    *string   `json:"before,omitempty"`
	Time      time.Time `json:"time"`
	Rewind    *Rewind   `json:"rewind,omitempty"`
}

// Rewind is a rewind: the files it sets (each to To, from From; nil:
// absent), the transcript length it keeps, and the entries it removed
// (as the session file stores them), so that it can be undone.
type Rewind struct {
	ID      int               `json:"id"`
	Undo    int               `json:"undo,omitempty"` // the rewind this one undoes
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
}

// OpenCheckpoints opens (creating) the checkpoint store in dir and reads
// its log.
func OpenCheckpoints(dir string) (*Checkpoints, error) {
	if err := os.MkdirAll(filepath.Join(dir, "objects"), 0o700); err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	path := filepath.Join(dir, "log.jsonl")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	c := &Checkpoints{dir: dir, log: f}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	for sc.Scan() {
		var r CheckpointRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Type != "" {
			c.recs = append(c.recs, r)
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
	return c, nil
}

// Close closes the log.
func (c *Checkpoints) Close() error { return c.log.Close() }

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
	if _, err := c.log.Write(b.Bytes()); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	if err := c.log.Sync(); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	c.recs = append(c.recs, recs...)
	return nil
}

// Put stores data and returns its hash; content already there is not
// written again. The object is not made durable here: a scan stores many
// contents of which few are ever referenced; Sync makes the referenced
// ones durable before a record names them.
func (c *Checkpoints) Put(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	path := c.objectPath(h)
	if _, err := os.Stat(path); err == nil {
		return h, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("checkpoints: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("checkpoints: %w", err)
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
		return "", fmt.Errorf("checkpoints: storing an object: %w", werr)
	}
	return h, nil
}

// Sync makes the objects stored under hashes durable (the file and its
// directory entry); call it before appending a record that names them.
func (c *Checkpoints) Sync(hashes ...string) error {
	dirs := map[string]bool{}
	for _, h := range hashes {
		if len(h) != 64 {
			return fmt.Errorf("%w: bad hash %q", ErrObjectMissing, h)
		}
		path := c.objectPath(h)
		// Read-write: Windows flushes only handles that may write.
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrObjectMissing, err)
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
		dirs[filepath.Dir(path)] = true
	}
	for dir := range dirs {
		if err := syncDirectory(dir); err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
	}
	return nil
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
	f, err := os.Open(c.objectPath(hash))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrObjectMissing, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrObjectMissing, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hash {
		return nil, fmt.Errorf("%w: %s does not match its hash", ErrObjectMissing, hash)
	}
	return data, nil
}

func (c *Checkpoints) objectPath(hash string) string {
	return filepath.Join(c.dir, "objects", hash[:2], hash)
}
