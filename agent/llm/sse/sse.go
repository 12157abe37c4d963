package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLine is the line size limit used when NewReader is given 0.
// Chunks carrying a whole tool call or an image can be megabytes long.
const DefaultMaxLine = 16 << 20

// ErrTooLong means a line, or the data of one event, exceeded the Reader's
// limit. The stream cannot be resynchronised after it.
var ErrTooLong = errors.New("sse: line or event data exceeds the size limit")

// Event is one dispatched server-sent event.
type Event struct {
	// Name is the value of the last "event:" field, or "" when there was
	// none (the SSE default type, "message").
	Name string
	// Data is the event's data lines joined with "\n". It is only valid
	// until the next call to Next, which reuses its memory.
	Data []byte
}

// Reader reads Events from a text/event-stream body.
type Reader struct {
	br      *bufio.Reader
	max     int
	line    []byte // reused buffer for lines longer than br's buffer
	data    []byte // reused data buffer of the event being read
	started bool   // a line has been read, so a BOM is no longer possible
}

// NewReader returns a Reader of r whose lines, and whose events' data, may
// be at most maxLine bytes long; maxLine <= 0 means DefaultMaxLine.
func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &Reader{br: bufio.NewReaderSize(r, 32<<10), max: maxLine}
}

// Next returns the next event. It returns io.EOF when the input ends between
// events, an error wrapping io.ErrUnexpectedEOF when it ends inside one, an
// error wrapping ErrTooLong past the size limit, and otherwise the error of
// the underlying reader unchanged (so callers can test it with errors.Is).
func (r *Reader) Next() (Event, error) {
	r.data = r.data[:0]
	var (
		name    string
		hasData bool
		pending bool // a field line was read since the last dispatch
	)
	for {
		line, err := r.readLine()
		if err == io.EOF {
			if pending || len(line) > 0 {
				return Event{}, fmt.Errorf("sse: stream ended inside an event: %w", io.ErrUnexpectedEOF)
			}
			return Event{}, io.EOF
		}
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if hasData {
				return Event{Name: name, Data: r.data}, nil
			}
			// Per the SSE spec an event without data is not dispatched.
			name, pending = "", false
			continue
		}
		if line[0] == ':' {
			continue
		}
		pending = true
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				if len(r.data)+1+len(value) > r.max {
					return Event{}, fmt.Errorf("%w (%d bytes)", ErrTooLong, r.max)
				}
				r.data = append(r.data, '\n')
			}
			r.data = append(r.data, value...)
			hasData = true
		case "event":
			name = string(value)
		}
	}
}

// readLine returns the next line without its "\n" or "\r\n". At the end of
// the input it returns what is left of an unterminated line with io.EOF.
// The result is only valid until the next read.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		// The 2 spare bytes are the line terminator; the exact check is below.
		if len(r.line)+len(frag) > r.max+2 {
			return nil, fmt.Errorf("%w (%d bytes)", ErrTooLong, r.max)
		}
		var line []byte
		if err == nil && len(r.line) == 0 {
			line = frag // common case: the whole line is in br's buffer; no copy
		} else {
			r.line = append(r.line, frag...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				return r.line, err
			}
			line = r.line
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) > r.max {
			return nil, fmt.Errorf("%w (%d bytes)", ErrTooLong, r.max)
		}
		if !r.started {
			r.started = true
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		return line, nil
	}
}
