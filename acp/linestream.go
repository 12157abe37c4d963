package acp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxMessageBytes is the longest line the transport accepts, the same
// default as the TypeScript SDK (base64 images make messages large).
const DefaultMaxMessageBytes = 32 << 20

// LineStream is the Stream of ACP's stdio transport: one JSON-RPC message
// per line, in both directions. It skips blank lines and trims the space
// around a message; a line longer than the limit is skipped up to its
// newline and reported (the server answers it with -32600), so one bad
// line never ends the connection. A last line without a newline counts.
//
// Writes are serialised by the stream: each Write is one write to w, so a
// burst of updates costs one system call; an outbox's burst, already
// encoded as lines, is written without being copied (lineWriter).
type LineStream struct {
	r      *bufio.Reader
	max    int
	closer io.Closer

	wmu sync.Mutex
	w   io.Writer
	buf []byte // reused write buffer, guarded by wmu

	closed    chan struct{}
	closeOnce sync.Once
}

// NewLineStream returns the line stream that reads r and writes w.
// maxMessageBytes caps an incoming line; 0 means DefaultMaxMessageBytes.
// Close closes r if it is an io.Closer (os.Stdin, a pipe), which is what
// ends a Read blocked in it.
func NewLineStream(r io.Reader, w io.Writer, maxMessageBytes int) *LineStream {
	if maxMessageBytes <= 0 {
		maxMessageBytes = DefaultMaxMessageBytes
	}
	closer, _ := r.(io.Closer)
	return &LineStream{
		r: bufio.NewReaderSize(r, 64<<10), max: maxMessageBytes, w: w, closer: closer,
		closed: make(chan struct{}),
	}
}

var errLineTooLong = errors.New("line too long")

// Read implements Stream. It is called by one goroutine at a time; ctx is
// not consulted (a read from a pipe cannot be interrupted but by Close).
func (s *LineStream) Read(context.Context) (Message, error) {
	for {
		line, err := s.readLine()
		if errors.Is(err, errLineTooLong) {
			return Message{}, fmt.Errorf("%w: message longer than %d bytes", ErrInvalidRequest, s.max)
		}
		if err != nil {
			return Message{}, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		return Message{Data: line}, nil
	}
}

// readLine returns the next line without its newline. A line longer than
// s.max is consumed up to its newline and reported as errLineTooLong. A last
// line without a newline is returned with a nil error, then io.EOF.
func (s *LineStream) readLine() ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		frag, err := s.r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > s.max+1 { // +1: the newline is not part of the message
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, errLineTooLong
			}
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0 && !tooLong:
			return line, nil
		case errors.Is(err, io.EOF) && tooLong:
			return nil, errLineTooLong
		default:
			return nil, err
		}
	}
}

// Write implements Stream: each message and a newline, all in one write.
// ctx is not consulted: a write to a pipe cannot be interrupted but by
// the reader.
func (s *LineStream) Write(_ context.Context, msgs ...Message) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	buf := s.buf[:0]
	for _, m := range msgs {
		buf = append(append(buf, m.Data...), '\n')
	}
	err := s.writeLocked(buf)
	if cap(buf) <= 1<<20 { // do not pin a huge buffer after one large message
		s.buf = buf
	} else {
		s.buf = nil
	}
	return err
}

// writeLines implements lineWriter: lines are messages already framed,
// each followed by its newline, written as they are in one write.
func (s *LineStream) writeLines(lines []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeLocked(lines)
}

// writeLocked writes b to w; the caller holds wmu.
func (s *LineStream) writeLocked(b []byte) error {
	select {
	case <-s.closed:
		return ErrClosed
	default:
	}
	_, err := s.w.Write(b)
	return err
}

// Close implements Stream.
func (s *LineStream) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closed)
		if s.closer != nil {
			err = s.closer.Close()
		}
	})
	return err
}
