package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// ErrStdout is returned by OpenJSONL for a path that is the process's
// stdout: stdout carries the protocol and telemetry never goes there.
var ErrStdout = errors.New("telemetry: refusing to write telemetry to stdout, which carries the protocol")

// jsonlWriteTimeout bounds one write to a pipe or FIFO whose reader has
// stalled. Regular files do not support deadlines and are not affected.
const jsonlWriteTimeout = time.Second

// JSONLSink appends each event as one JSON object per line (the file behind
// --telemetry-file). Each event is a single write under a mutex, so lines
// from concurrent Emits never interleave. Write errors are counted, never
// returned or panicked on; see Errors. It is safe for concurrent use.
type JSONLSink struct {
	mu       sync.Mutex
	f        *os.File // nil once closed
	regular  bool     // a regular file: fsync on Close
	broken   bool     // the last write was partial: start the next one on a new line
	timeout  time.Duration
	errCount atomic.Int64
}

// OpenJSONL opens path for appending (creating it with mode 0600: events
// can name directories and carry error text). It refuses "-" and any path
// that is the process's stdout with ErrStdout. Opening a FIFO blocks until
// it has a reader.
func OpenJSONL(path string) (*JSONLSink, error) {
	if path == "" {
		return nil, errors.New("telemetry: empty telemetry file path")
	}
	if path == "-" {
		return nil, ErrStdout
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening telemetry file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening telemetry file: %w", err)
	}
	if so, err := os.Stdout.Stat(); err == nil && os.SameFile(fi, so) {
		f.Close()
		return nil, fmt.Errorf("telemetry file %s: %w", path, ErrStdout)
	}
	return &JSONLSink{f: f, regular: fi.Mode().IsRegular(), timeout: jsonlWriteTimeout}, nil
}

// Emit appends e as one line. After Close, or when the write fails (a write
// to a stalled pipe gives up after a second), the event is dropped and
// counted in Errors.
func (s *JSONLSink) Emit(e Event) {
	if s == nil {
		return
	}
	line, err := json.Marshal(e)
	if err != nil {
		s.errCount.Add(1)
		return
	}
	line = append(line, '\n')

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		s.errCount.Add(1)
		return
	}
	if s.broken {
		line = append([]byte{'\n'}, line...)
	}
	if !s.regular && s.timeout > 0 {
		// Only pipes and the like support deadlines; an error here means
		// there is none to set.
		_ = s.f.SetWriteDeadline(time.Now().Add(s.timeout))
	}
	n, err := s.f.Write(line)
	if err != nil {
		s.errCount.Add(1)
		s.broken = n > 0 && n < len(line)
		return
	}
	s.broken = false
}

// Errors returns how many events could not be written.
func (s *JSONLSink) Errors() int64 {
	if s == nil {
		return 0
	}
	return s.errCount.Load()
}

// Close flushes the file to disk (for a regular file) and closes it. Later
// Emits are counted as errors; a second Close returns nil.
func (s *JSONLSink) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	f := s.f
	s.f = nil
	var syncErr error
	if s.regular {
		syncErr = f.Sync()
	}
	closeErr := f.Close()
	if err := errors.Join(syncErr, closeErr); err != nil {
		return fmt.Errorf("closing telemetry file: %w", err)
	}
	return nil
}
