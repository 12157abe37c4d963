package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
)

// DefaultMaxMessageBytes is the longest line the transport accepts, the same
// default as the TypeScript SDK (base64 images make messages large).
const DefaultMaxMessageBytes = 32 << 20

// lineStream is the jsonrpc2.ObjectStream of ACP: one JSON-RPC message per
// line. It answers bad input itself (-32700 for a line that is not JSON,
// -32600 for a line that is not a single JSON-RPC message or is too long)
// and goes on reading, so one bad line never ends the connection, which is
// what jsonrpc2's own streams do.
//
// ReadObject is called by jsonrpc2's single read goroutine only; WriteObject
// is serialised by jsonrpc2.Conn, but the stream's own error replies are
// written from the read goroutine, so writes take wmu.
type lineStream struct {
	r      *bufio.Reader
	max    int
	closer io.Closer
	log    *slog.Logger

	wmu sync.Mutex
	w   io.Writer
	buf []byte // reused write buffer, guarded by wmu

	// eof is closed when the input has ended. ReadObject then waits for
	// Close before reporting the end to jsonrpc2, because jsonrpc2 closes
	// the connection on a read error, and the agent still has to write the
	// responses of the turns that the end of input cancels.
	eof       chan struct{}
	eofOnce   sync.Once
	closed    chan struct{}
	closeOnce sync.Once
}

func newLineStream(r io.Reader, w io.Writer, closer io.Closer, maxBytes int, log *slog.Logger) *lineStream {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMessageBytes
	}
	return &lineStream{
		r: bufio.NewReaderSize(r, 64<<10), max: maxBytes, w: w, closer: closer, log: log,
		eof: make(chan struct{}), closed: make(chan struct{}),
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline. A line longer than
// s.max is consumed up to its newline and reported as errLineTooLong. A last
// line without a newline is returned with a nil error, then io.EOF.
func (s *lineStream) readLine() ([]byte, error) {
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

// ReadObject implements jsonrpc2.ObjectStream. It returns only a message that
// jsonrpc2 can decode, or a read error (EOF) that ends the connection.
func (s *lineStream) ReadObject(v any) error {
	for {
		line, err := s.readLine()
		if errors.Is(err, errLineTooLong) {
			s.writeError(nil, CodeInvalidRequest, fmt.Sprintf("invalid request: message longer than %d bytes", s.max))
			continue
		}
		if err != nil {
			s.eofOnce.Do(func() { close(s.eof) })
			<-s.closed
			return err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		id, code, msg := checkMessage(line)
		if code != 0 {
			s.log.Debug("rejected input line", "code", code, "error", msg)
			s.writeError(id, code, msg)
			continue
		}
		if inexactCancel(line) {
			// A notification: nothing is answered. jsonrpc2 re-encodes
			// params, so the service could not tell this id from U+FFFD.
			s.log.Debug("ignoring $/cancel_request with an id that cannot be read exactly")
			continue
		}
		// Decode into a fresh value so a failure cannot leave v half set.
		fresh := reflect.New(reflect.TypeOf(v).Elem())
		if err := json.Unmarshal(line, fresh.Interface()); err != nil {
			s.writeError(id, CodeInvalidRequest, "invalid request: "+err.Error())
			continue
		}
		reflect.ValueOf(v).Elem().Set(fresh.Elem())
		return nil
	}
}

// WriteObject implements jsonrpc2.ObjectStream: one compact JSON value and a
// newline, in one write.
func (s *lineStream) WriteObject(obj any) error {
	var (
		data []byte
		err  error
	)
	// jsonrpc2's messages are json.Marshalers; calling MarshalJSON directly
	// skips the re-validation pass encoding/json makes over its output.
	if m, ok := obj.(json.Marshaler); ok {
		data, err = m.MarshalJSON()
	} else {
		data, err = json.Marshal(obj)
	}
	if err != nil {
		return err
	}
	return s.writeLine(data)
}

func (s *lineStream) writeLine(data []byte) error {
	data = s.validUTF8(data)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.buf = append(append(s.buf[:0], data...), '\n')
	_, err := s.w.Write(s.buf)
	if cap(s.buf) > 1<<20 { // do not pin a huge buffer after one large message
		s.buf = nil
	}
	return err
}

// writeLines writes complete lines (each ending in a newline) in one
// write. It is how an outbox writes a burst of updates.
func (s *lineStream) writeLines(data []byte) error {
	select {
	case <-s.closed:
		return ErrClosed
	default:
	}
	data = s.validUTF8(data)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.w.Write(data)
	return err
}

// validUTF8 is the last guard of "every stdout line is UTF-8": encoding/json
// copies json.RawMessage values as they are, so a raw value that came from
// outside with invalid bytes would reach the client unchanged. In valid
// JSON such bytes can only be inside strings, where U+FFFD keeps the line
// valid JSON.
func (s *lineStream) validUTF8(data []byte) []byte {
	if utf8.Valid(data) {
		return data
	}
	s.log.Warn("replaced invalid UTF-8 in an outgoing message")
	return bytes.ToValidUTF8(data, []byte("\uFFFD"))
}

// writeError answers a line the stream rejected. id is the raw id of the
// message when it could be read, else nil (sent as null).
func (s *lineStream) writeError(id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc2.Error  `json:"error"`
	}{"2.0", id, jsonrpc2.Error{Code: code, Message: msg}}
	data, err := json.Marshal(resp)
	if err == nil {
		err = s.writeLine(data)
	}
	if err != nil {
		s.log.Debug("writing error reply", "error", err)
	}
}

// Close implements jsonrpc2.ObjectStream.
func (s *lineStream) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closed)
		if s.closer != nil {
			err = s.closer.Close()
		}
	})
	return err
}

// envelopeKeys are the members of a JSON-RPC message that jsonrpc2 reads.
var envelopeKeys = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// checkMessage decides whether line is one JSON-RPC 2.0 request, notification
// or response that jsonrpc2 can decode without failing (a failure there would
// close the connection). It returns the message id when it is usable for the
// reply, and a non-zero code with a message when the line must be rejected.
//
// Keys are matched exactly: encoding/json matches struct fields
// case-insensitively (with Unicode folding), so "METHOD" or "ıd" would be
// read as a different member by jsonrpc2 than by us; such keys and duplicate
// envelope keys are rejected rather than guessed at.
func checkMessage(line []byte) (id json.RawMessage, code int64, msg string) {
	if !json.Valid(line) {
		return nil, CodeParseError, "parse error: not valid JSON"
	}
	switch line[0] {
	case '{':
	case '[':
		return nil, CodeInvalidRequest, "invalid request: batches are not supported"
	default:
		return nil, CodeInvalidRequest, "invalid request: a message must be a JSON object"
	}
	members, memberErr := topLevelMembers(line)
	if raw, ok := members["id"]; ok {
		if err := checkID(raw); err != nil {
			return nil, CodeInvalidRequest, "invalid request: " + err.Error()
		}
		if !bytes.Equal(raw, []byte("null")) {
			id = raw
		}
	}
	if memberErr != nil {
		return id, CodeInvalidRequest, "invalid request: " + memberErr.Error()
	}
	if v, ok := members["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return id, CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`
	}
	method, isRequest := members["method"]
	_, hasResult := members["result"]
	_, hasError := members["error"]
	switch {
	case isRequest:
		if len(method) == 0 || method[0] != '"' {
			return id, CodeInvalidRequest, `invalid request: "method" must be a string`
		}
		if hasResult || hasError {
			return id, CodeInvalidRequest, "invalid request: a message cannot be both a request and a response"
		}
		if p, ok := members["params"]; ok && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return id, CodeInvalidRequest, `invalid request: "params" must be an object`
		}
	case hasResult || hasError:
		if id == nil {
			// A response we cannot match to a request of ours; replying
			// to a response is not allowed, so it is dropped by the caller.
			return nil, CodeInvalidRequest, "invalid request: response without an id"
		}
		if hasError && string(members["error"]) != "null" {
			var e jsonrpc2.Error
			if members["error"][0] != '{' || json.Unmarshal(members["error"], &e) != nil {
				return id, CodeInvalidRequest, `invalid request: "error" must be an object with an integer "code" and a string "message"`
			}
		}
	default:
		return id, CodeInvalidRequest, `invalid request: neither "method" nor "result"/"error" is present`
	}
	return id, 0, ""
}

// topLevelMembers splits a JSON object into its envelope members. It
// rejects duplicate envelope keys and keys that fold to an envelope key
// without being equal to it, but still returns what it read (so the reply
// can carry the id).
func topLevelMembers(obj []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	members := make(map[string]json.RawMessage, 4)
	if _, err := dec.Token(); err != nil { // '{'
		return members, err
	}
	var firstErr error
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return members, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return members, err
		}
		for _, k := range envelopeKeys {
			if key == k {
				if _, dup := members[key]; dup && firstErr == nil {
					firstErr = fmt.Errorf("duplicate member %q", key)
				}
				members[key] = val
				break
			}
			if strings.EqualFold(key, k) && firstErr == nil {
				firstErr = fmt.Errorf("member %q is not %q (names are case-sensitive)", key, k)
			}
		}
	}
	return members, firstErr
}

// checkID accepts the ids jsonrpc2 can echo back exactly: strings, null and
// integers in [0, MaxInt64]. Fractions, exponents, negative numbers (which
// jsonrpc2 would echo as large unsigned numbers), booleans, objects and
// arrays are refused.
//
// A string id must also survive the round trip unchanged: encoding/json
// turns invalid UTF-8 and lone UTF-16 surrogate escapes ("\ud800") into
// U+FFFD, so such a request would be run and answered under another id,
// and echoing its raw bytes would put invalid UTF-8 on stdout. Those ids
// are refused (the caller answers -32600 with id null).
func checkID(raw json.RawMessage) error {
	switch raw[0] {
	case '"':
		if !utf8.Valid(raw) {
			return errors.New(`"id" is not valid UTF-8`)
		}
		if i := loneSurrogate(raw); i >= 0 {
			return fmt.Errorf(`"id" has a lone UTF-16 surrogate escape (%s)`, raw[i:i+6])
		}
		return nil
	case 'n':
		return nil
	}
	if raw[0] >= '0' && raw[0] <= '9' {
		if n, err := strconv.ParseUint(string(raw), 10, 64); err == nil && n <= math.MaxInt64 {
			return nil
		}
	}
	return fmt.Errorf(`"id" must be a string or a non-negative integer, got %s`, truncate(string(raw), 40))
}

// inexactCancel reports whether line is a $/cancel_request whose
// requestId fails checkID: it would cancel the request whose id is what
// encoding/json makes of it (U+FFFD for a lone surrogate).
func inexactCancel(line []byte) bool {
	if !bytes.Contains(line, []byte(`"$/cancel_request"`)) {
		return false
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != MethodCancelRequest || len(m.Params.RequestID) == 0 {
		return false
	}
	return checkID(m.Params.RequestID) != nil
}

// loneSurrogate returns the offset of the first \u escape in the JSON
// string literal lit that is half of a surrogate pair without its other
// half, or -1. lit is valid JSON, so every backslash starts an escape.
func loneSurrogate(lit []byte) int {
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			continue
		}
		if lit[i+1] != 'u' {
			i++ // skip the escaped character
			continue
		}
		r := hex4(lit[i+2 : i+6])
		switch {
		case 0xDC00 <= r && r <= 0xDFFF: // low half first
			return i
		case 0xD800 <= r && r <= 0xDBFF:
			if i+12 > len(lit) || lit[i+6] != '\\' || lit[i+7] != 'u' {
				return i
			}
			if lo := hex4(lit[i+8 : i+12]); lo < 0xDC00 || lo > 0xDFFF {
				return i
			}
			i += 11 // the pair
		default:
			i += 5
		}
	}
	return -1
}

// hex4 decodes four hex digits (valid JSON guarantees them).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
