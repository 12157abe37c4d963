package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Defaults of RotatingFile.
const (
	// DefaultLogMaxBytes is the size at which a log file is rotated.
	DefaultLogMaxBytes = 5 << 20
	// DefaultLogBackups is how many rotated files are kept (.1 … .N).
	DefaultLogBackups = 3
)

// RotatingFile is a log file capped in size: a write that would take it
// past MaxBytes first renames it to path.1 (path.1 to path.2, and so on,
// the oldest dropped) and starts a new one, so the logs of an agent that
// runs for months stay within (Backups+1)·MaxBytes. Several processes may
// share one path (every editor window starts an agent): a process that
// finds its file renamed by another reopens the path instead of rotating
// again. Files are created 0600 (logs name files and prompts). It is safe
// for concurrent use.
type RotatingFile struct {
	path     string
	maxBytes int64
	backups  int

	mu   sync.Mutex
	f    *os.File
	size int64
}

// OpenRotatingFile opens (creating it and its directory, 0700) the log
// file at path; maxBytes and backups of 0 mean the defaults.
func OpenRotatingFile(path string, maxBytes int64, backups int) (*RotatingFile, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultLogMaxBytes
	}
	if backups <= 0 {
		backups = DefaultLogBackups
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("opening log file: %w", err)
	}
	r := &RotatingFile{path: path, maxBytes: maxBytes, backups: backups}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *RotatingFile) open() error {
	f, err := OpenLogFile(r.path)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("opening log file: %w", err)
	}
	r.f, r.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past its cap.
// A line is never split between two files.
func (r *RotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, os.ErrClosed
	}
	if r.size+int64(len(p)) > r.maxBytes && r.size > 0 {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

// rotate shifts the backups and starts a new file; when another process
// rotated already (the path names another file, or a smaller one), it
// only reopens the path.
func (r *RotatingFile) rotate() error {
	cur, _ := r.f.Stat()
	onDisk, err := os.Stat(r.path)
	if err == nil && cur != nil && os.SameFile(cur, onDisk) {
		for i := r.backups - 1; i >= 1; i-- {
			os.Rename(r.backupName(i), r.backupName(i+1))
		}
		if err := os.Rename(r.path, r.backupName(1)); err != nil {
			return fmt.Errorf("rotating log file: %w", err)
		}
	}
	old := r.f
	r.f = nil
	old.Close()
	return r.open()
}

func (r *RotatingFile) backupName(i int) string { return r.path + "." + strconv.Itoa(i) }

// Close closes the file.
func (r *RotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
