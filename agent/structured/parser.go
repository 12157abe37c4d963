package structured

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Mode selects which events a Parser emits.
type Mode uint8

const (
	// EmitComplete emits one event per value when it is complete: every
	// leaf, every object and array (after its members), and finally the
	// root (Path ""). It is the default and the fast mode.
	EmitComplete Mode = iota
	// EmitPartial also emits progress: an event when an object or array
	// opens (Value is a new, empty container) and, at the end of each
	// Write, an event for a string value that grew (Value is the string so
	// far, Delta what it gained). Complete events are emitted as in
	// EmitComplete, with Delta set for strings.
	EmitPartial
	// EmitNone emits no events; the parser only builds the value.
	EmitNone
)

// Event is one update of a streamed JSON value.
//
// Values are shared with the parser and with other events (a complete
// object's map is the same map that appears in its parent): consumers must
// treat them as read-only. A value is never modified by the parser after
// the event that carries it, except that a Complete=false container from
// EmitPartial is a fresh empty container that is never filled.
type Event struct {
	// Path is the JSON Pointer (RFC 6901, "slash style") of the value:
	// "" for the root, "/items/0/title" for a nested one. "~" and "/" in
	// keys are escaped as "~0" and "~1".
	Path string
	// Value is the value so far: the final value when Complete, else a
	// partial string or an empty container (EmitPartial only).
	Value any
	// Delta is, for string values in EmitPartial mode, the text added since
	// the previous event for the same string.
	Delta string
	// Complete reports whether Value is final.
	Complete bool
}

// Errors reported by the Parser (wrapped; test with errors.Is).
var (
	// ErrNoJSON means the stream ended without any JSON value starting.
	ErrNoJSON = errors.New("structured: no JSON value found")
	// ErrIncomplete means the stream ended inside a JSON value.
	ErrIncomplete = errors.New("structured: JSON value incomplete at end of stream")
	// ErrClosed is returned by Write after Close.
	ErrClosed = errors.New("structured: parser closed")
)

// SyntaxError describes malformed JSON. Offset counts bytes from the start
// of the stream (including any prose before the JSON).
type SyntaxError struct {
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("structured: invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// DefaultMaxDepth is the nesting limit, the same as encoding/json's.
const DefaultMaxDepth = 10000

// maxNumberLen bounds the buffer of a number split across writes, so a
// hostile stream of digits cannot grow memory without limit.
const maxNumberLen = 1 << 16

// Bounds of the key prediction cache (Parser.keyCache).
const (
	maxCachedDepth = 64
	maxCachedKeys  = 64
)

// Option configures a Parser.
type Option func(*Parser)

// WithMode selects which events are emitted (default EmitComplete).
func WithMode(m Mode) Option { return func(p *Parser) { p.mode = m } }

// WithHandler delivers events to fn synchronously, from inside Write,
// instead of queueing them for Events. fn must not call the Parser.
func WithHandler(fn func(Event)) Option { return func(p *Parser) { p.handler = fn } }

// WithMaxDepth sets the nesting limit (default DefaultMaxDepth); deeper
// input is a syntax error.
func WithMaxDepth(n int) Option {
	return func(p *Parser) {
		if n > 0 {
			p.maxDepth = n
		}
	}
}

type phase uint8

const (
	phaseStart     phase = iota // before the first non-space byte, or after a fence line
	phaseProse                  // skipping prose, looking for '{', '[' or a fence
	phaseFence                  // counting the backticks of a fence opener
	phaseFenceLine              // skipping the rest of a fence's opening line
	phaseValue                  // inside the JSON value
	phaseDone                   // the root value is complete; the rest is ignored
	phaseFailed                 // unrecoverable syntax error; the rest is ignored
)

type state uint8

const (
	sValue      state = iota // expecting a value
	sArrFirst                // after '[': a value or ']'
	sObjFirst                // after '{': a key or '}'
	sObjKey                  // after ',' in an object: a key
	sColon                   // after a key: ':'
	sAfterValue              // after a member: ',' or the closer
	sString                  // inside a string
	sStrEsc                  // after '\' in a string
	sStrU                    // inside the 4 hex digits of \u
	sNumber                  // inside a number
	sLiteral                 // inside true, false or null
)

type frame struct {
	obj   map[string]any
	key   string // the key of the member being parsed (objects)
	base  int    // len(path) of the container itself
	start int    // where the array's elements begin in Parser.vals
	nkeys int    // keys seen so far (objects), to predict the next one
	isObj bool
}

// Parser is an incremental JSON parser for model output. Feed it the text
// in chunks of any size (splits may fall inside strings, escapes, UTF-8
// sequences, numbers or literals); it emits Events as values progress and
// builds the same value encoding/json.Unmarshal would produce into an any
// (float64 numbers, map[string]any objects, []any arrays, invalid UTF-8
// replaced by U+FFFD).
//
// Text before the JSON is skipped: leading prose up to the first '{' or
// '[', and a ``` fence line (```json) after which any JSON value may start.
// If the first non-space byte starts a JSON value it is parsed directly,
// so a bare "42" or "true" document works. Text after the root value is
// ignored. An object or array that begins the text (or a fence) and turns
// out malformed is a terminal error; a candidate found in prose, or a
// scalar that begins the text ("no problem ..."), is abandoned on error
// and scanning resumes at the offending byte. Events already emitted for
// an abandoned candidate are not retracted.
//
// Memory is bounded by the value being built plus, per nesting level, one
// stack frame; the input is never retained. A string or number split across
// writes is buffered until it ends (numbers are capped at 64 KiB).
//
// A Parser is not safe for concurrent use; use Broadcast to share its
// events between goroutines. It never panics on any input.
type Parser struct {
	mode     Mode
	handler  func(Event)
	maxDepth int

	phase      phase
	state      state
	resettable bool // an error abandons this candidate instead of failing
	backticks  int
	offset     int64 // stream offset of the start of the current chunk

	stack []frame
	path  []byte

	// string state
	str      []byte // decoded bytes of the current string
	strKey   bool
	sent     int  // bytes of str already reported by a partial event
	pending  rune // an unpaired surrogate from \u awaiting its partner, or 0
	uval     rune
	ucount   int
	sentText string // the partial string last reported (EmitPartial)

	num []byte

	lit    string
	litPos int
	litVal any

	// vals holds the elements of every open array, innermost last: an
	// array's elements are copied into an exactly sized slice when it
	// closes, which saves the repeated growth of appending to each array.
	vals []any
	// keyCache[d] lists the keys of the last object closed at depth d.
	// Objects in an array usually repeat their keys in the same order, so
	// a key is first compared with the key at the same position there,
	// which is cheaper than hashing and saves allocating the string.
	keyCache [][]string

	// arena backs event paths and short string values: one allocation
	// serves many strings.
	arena strings.Builder

	root   any
	err    error
	closed bool
	events []Event
}

// arenaSize is the size of an arena block. A retained string keeps its
// whole block alive, so blocks are kept small.
const arenaSize = 8 << 10

// maxArenaString is the longest string carved from the arena.
const maxArenaString = 128

// pathString returns the current path as a string.
func (p *Parser) pathString() string { return p.arenaString(p.path) }

// arenaString returns b as a string. Short strings are carved out of a
// shared block rather than allocated one by one: the events and values of
// a large document would otherwise cost an allocation each, and the
// garbage collector time that goes with it. The bytes a returned string
// covers are never written again (a strings.Builder only appends, and a
// new block replaces a full one), so the strings stay immutable.
func (p *Parser) arenaString(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if n > maxArenaString {
		return string(b)
	}
	if p.arena.Cap()-p.arena.Len() < n {
		p.arena = strings.Builder{}
		p.arena.Grow(arenaSize)
	}
	start := p.arena.Len()
	p.arena.Write(b)
	return p.arena.String()[start:]
}

// NewParser returns a Parser ready for the first chunk.
func NewParser(opts ...Option) *Parser {
	p := &Parser{maxDepth: DefaultMaxDepth}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Write feeds the next chunk. It always consumes all of b and returns
// len(b), nil, except after Close (ErrClosed): syntax errors are reported
// by Err and Close, so that a Parser can sit behind an io.Writer that
// tees model output. b is not retained.
func (p *Parser) Write(b []byte) (int, error) {
	if p.closed {
		return 0, ErrClosed
	}
	p.consume(b)
	p.offset += int64(len(b))
	if p.mode == EmitPartial {
		p.flushPartial()
	}
	return len(b), nil
}

// WriteString is Write for a string chunk.
func (p *Parser) WriteString(s string) (int, error) { return p.Write([]byte(s)) }

// Feed writes the chunk s and returns the events it produced (the queued
// events, when no handler is set) together with Err.
func (p *Parser) Feed(s string) ([]Event, error) {
	if _, err := p.WriteString(s); err != nil {
		return nil, err
	}
	return p.Events(), p.Err()
}

// Events returns and clears the queued events. Without a handler, events
// accumulate until Events (or Feed) is called.
func (p *Parser) Events() []Event {
	ev := p.events
	p.events = nil
	return ev
}

// Err returns the terminal syntax error, if any, or the last error of an
// abandoned candidate while no root value has completed. It is nil once
// the root value is complete.
func (p *Parser) Err() error {
	if p.phase == phaseDone {
		return nil
	}
	return p.err
}

// Done reports whether the root value is complete.
func (p *Parser) Done() bool { return p.phase == phaseDone }

// Value returns the root value once it is complete (Done), else nil.
func (p *Parser) Value() any {
	if p.phase == phaseDone {
		return p.root
	}
	return nil
}

// Close ends the stream. A number at the root is completed by it (a bare
// "42" has no terminator). It returns nil if the root value is complete,
// else ErrNoJSON, ErrIncomplete or the syntax error (wrapped). Queued
// events stay available through Events.
func (p *Parser) Close() error {
	if p.closed {
		return p.closeErr()
	}
	p.closed = true
	if p.phase == phaseValue && p.state == sNumber && len(p.stack) == 0 {
		p.endNumber(p.num)
	}
	return p.closeErr()
}

func (p *Parser) closeErr() error {
	switch {
	case p.phase == phaseDone:
		return nil
	case p.phase == phaseFailed:
		return p.err
	case p.phase == phaseValue:
		if p.err != nil {
			return fmt.Errorf("%w (after an earlier candidate failed: %w)", ErrIncomplete, p.err)
		}
		return ErrIncomplete
	case p.err != nil:
		return fmt.Errorf("%w: %w", ErrNoJSON, p.err)
	}
	return ErrNoJSON
}

// Snapshot returns the value so far: the root when Done; otherwise the
// open containers holding their complete members plus the string being
// parsed (numbers and literals appear only when complete). The containers
// are copies (members are shared), so the result is safe to keep while
// parsing goes on. It is nil before any value starts.
func (p *Parser) Snapshot() any {
	if p.phase == phaseDone {
		return p.root
	}
	if p.phase != phaseValue {
		return nil
	}
	var leaf any
	has := false
	if (p.state == sString || p.state == sStrEsc || p.state == sStrU) && !p.strKey {
		leaf, has = sanitize(p.str[:completePrefix(p.str)]), true
	}
	for k := len(p.stack) - 1; k >= 0; k-- {
		f := &p.stack[k]
		if f.isObj {
			m := maps.Clone(f.obj)
			// The top frame's key belongs to the child only once the key
			// is complete, i.e. we are past sColon.
			if has && (k < len(p.stack)-1 || !p.strKey) {
				m[f.key] = leaf
			}
			leaf = m
		} else {
			a := slices.Clone(p.vals[f.start:p.arrEnd(k)])
			if a == nil {
				a = []any{}
			}
			if has {
				a = append(a, leaf)
			}
			leaf = a
		}
		has = true
	}
	if !has {
		return nil
	}
	return leaf
}

// emit delivers or queues an event.
func (p *Parser) emit(e Event) {
	if p.handler != nil {
		p.handler(e)
		return
	}
	p.events = append(p.events, e)
}

// fail handles a syntax error at b[i]. It returns the index from which the
// caller continues: i itself when the candidate is abandoned (the byte is
// re-examined as prose), len(b) when the error is terminal.
func (p *Parser) fail(b []byte, i int, msg string) int {
	p.err = &SyntaxError{Offset: p.offset + int64(i), Msg: msg}
	clear(p.stack)
	p.stack = p.stack[:0]
	clear(p.vals)
	p.vals = p.vals[:0]
	p.path = p.path[:0]
	p.str = p.str[:0]
	p.num = p.num[:0]
	p.pending = 0
	if p.resettable {
		p.phase = phaseProse
		p.backticks = 0
		return i
	}
	p.phase = phaseFailed
	return len(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// consume runs the chunk through the phases.
func (p *Parser) consume(b []byte) {
	i := 0
	for i < len(b) {
		switch p.phase {
		case phaseDone, phaseFailed:
			return
		case phaseStart:
			c := b[i]
			switch {
			case isSpace(c):
				i++
			case c == '`':
				p.phase, p.backticks = phaseFence, 0
			case c == '{' || c == '[':
				p.startValue(false)
			case c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n':
				// A scalar may just be the first word of prose.
				p.startValue(true)
			default:
				p.phase = phaseProse
			}
		case phaseFence:
			c := b[i]
			if c == '`' {
				p.backticks++
				i++
				if p.backticks == 3 {
					p.phase = phaseFenceLine
				}
				continue
			}
			p.phase = phaseProse
		case phaseFenceLine:
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if i < len(b) {
				i++
				p.phase = phaseStart
			}
		case phaseProse:
			for i < len(b) {
				c := b[i]
				if c == '{' || c == '[' {
					p.startValue(true)
					break
				}
				i++
				if c == '`' {
					p.backticks++
					if p.backticks == 3 {
						p.phase = phaseFenceLine
						break
					}
				} else {
					p.backticks = 0
				}
			}
		case phaseValue:
			i = p.value(b, i)
		}
	}
}

func (p *Parser) startValue(resettable bool) {
	p.phase = phaseValue
	p.state = sValue
	p.resettable = resettable
	p.backticks = 0
	p.err = nil
}

// finish records a complete value: it emits the event and stores the value
// in its container (or as the root).
func (p *Parser) finish(v any) { p.finishDelta(v, "") }

// finishDelta is finish with the Delta of a string in EmitPartial mode.
func (p *Parser) finishDelta(v any, delta string) {
	if p.mode != EmitNone {
		p.emit(Event{Path: p.pathString(), Value: v, Delta: delta, Complete: true})
	}
	n := len(p.stack)
	if n == 0 {
		p.root = v
		p.phase = phaseDone
		return
	}
	f := &p.stack[n-1]
	if f.isObj {
		f.obj[f.key] = v
	} else {
		p.vals = append(p.vals, v)
	}
	p.state = sAfterValue
}

// arrEnd returns the end in vals of the elements of the array at stack
// index k: the start of the next array above it, or len(vals).
func (p *Parser) arrEnd(k int) int {
	for j := k + 1; j < len(p.stack); j++ {
		if !p.stack[j].isObj {
			return p.stack[j].start
		}
	}
	return len(p.vals)
}

// setIndexPath points path at element idx of the top (array) frame.
func (p *Parser) setIndexPath(f *frame, idx int) {
	p.path = append(p.path[:f.base], '/')
	p.path = strconv.AppendInt(p.path, int64(idx), 10)
}

// setKeyPath points path at member key of the top (object) frame.
func (p *Parser) setKeyPath(f *frame, key string) {
	p.path = append(p.path[:f.base], '/')
	for i := 0; i < len(key); i++ {
		switch c := key[i]; c {
		case '~':
			p.path = append(p.path, '~', '0')
		case '/':
			p.path = append(p.path, '~', '1')
		default:
			p.path = append(p.path, c)
		}
	}
}

func (p *Parser) push(isObj bool) bool {
	if len(p.stack) >= p.maxDepth {
		return false
	}
	f := frame{base: len(p.path), start: len(p.vals), isObj: isObj}
	if isObj {
		hint := 0
		if d := len(p.stack); d < len(p.keyCache) {
			hint = len(p.keyCache[d])
		}
		f.obj = make(map[string]any, hint)
	}
	p.stack = append(p.stack, f)
	if p.mode == EmitPartial {
		var empty any = map[string]any{}
		if !isObj {
			empty = []any{}
		}
		p.emit(Event{Path: p.pathString(), Value: empty})
	}
	return true
}

func (p *Parser) closeContainer() {
	n := len(p.stack) - 1
	f := p.stack[n]
	p.stack[n] = frame{} // drop references for the GC
	p.stack = p.stack[:n]
	p.path = p.path[:f.base]
	if f.isObj {
		p.finish(f.obj)
		return
	}
	// Never nil: encoding/json gives an empty, non-nil slice.
	arr := make([]any, len(p.vals)-f.start)
	copy(arr, p.vals[f.start:])
	clear(p.vals[f.start:]) // drop references for the GC
	p.vals = p.vals[:f.start]
	p.finish(arr)
}

// beginValue starts the value whose first byte is b[i].
func (p *Parser) beginValue(b []byte, i int) int {
	switch c := b[i]; c {
	case '{':
		if !p.push(true) {
			return p.fail(b, i, "exceeded max depth")
		}
		p.state = sObjFirst
		return i + 1
	case '[':
		if !p.push(false) {
			return p.fail(b, i, "exceeded max depth")
		}
		p.setIndexPath(&p.stack[len(p.stack)-1], 0)
		p.state = sArrFirst
		return i + 1
	case '"':
		p.state, p.strKey = sString, false
		p.str, p.sent, p.sentText = p.str[:0], 0, ""
		return p.stringBytes(b, i+1)
	case 't':
		p.lit, p.litVal = "true", true
	case 'f':
		p.lit, p.litVal = "false", false
	case 'n':
		p.lit, p.litVal = "null", nil
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			p.state = sNumber
			p.num = p.num[:0]
			return p.numberBytes(b, i)
		}
		return p.fail(b, i, fmt.Sprintf("unexpected %q looking for a value", c))
	}
	p.state, p.litPos = sLiteral, 1
	return i + 1
}

// value runs the JSON state machine over b from i until the chunk ends or
// the phase changes, and returns where it stopped.
func (p *Parser) value(b []byte, i int) int {
	for i < len(b) && p.phase == phaseValue {
		c := b[i]
		switch p.state {
		case sValue:
			if isSpace(c) {
				i++
				continue
			}
			i = p.beginValue(b, i)
		case sArrFirst:
			if isSpace(c) {
				i++
				continue
			}
			if c == ']' {
				p.closeContainer()
				i++
				continue
			}
			i = p.beginValue(b, i)
		case sObjFirst, sObjKey:
			if isSpace(c) {
				i++
				continue
			}
			if c == '}' && p.state == sObjFirst {
				p.closeContainer()
				i++
				continue
			}
			if c != '"' {
				i = p.fail(b, i, fmt.Sprintf("unexpected %q looking for an object key", c))
				continue
			}
			p.state, p.strKey = sString, true
			p.str = p.str[:0]
			i = p.stringBytes(b, i+1)
		case sColon:
			if isSpace(c) {
				i++
				continue
			}
			if c != ':' {
				i = p.fail(b, i, fmt.Sprintf("unexpected %q after object key", c))
				continue
			}
			p.state = sValue
			i++
		case sAfterValue:
			if isSpace(c) {
				i++
				continue
			}
			f := &p.stack[len(p.stack)-1]
			switch {
			case c == ',':
				if f.isObj {
					p.state = sObjKey
				} else {
					p.setIndexPath(f, len(p.vals)-f.start)
					p.state = sValue
				}
				i++
			case c == '}' && f.isObj, c == ']' && !f.isObj:
				p.closeContainer()
				i++
			default:
				i = p.fail(b, i, fmt.Sprintf("unexpected %q after value", c))
			}
		case sString:
			i = p.stringBytes(b, i)
		case sStrEsc:
			i = p.escape(b, i)
		case sStrU:
			i = p.hex(b, i)
		case sNumber:
			i = p.numberBytes(b, i)
		case sLiteral:
			for i < len(b) && p.litPos < len(p.lit) {
				if b[i] != p.lit[p.litPos] {
					break
				}
				i++
				p.litPos++
			}
			if p.litPos == len(p.lit) {
				p.finish(p.litVal)
			} else if i < len(b) {
				i = p.fail(b, i, fmt.Sprintf("invalid literal (expected %q)", p.lit))
			}
		}
	}
	return i
}

// strStop marks the bytes that end the fast scan of a string's body.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// stringBytes consumes string body bytes from b[i].
func (p *Parser) stringBytes(b []byte, i int) int {
	if p.pending != 0 && i < len(b) {
		if b[i] == '\\' {
			p.state = sStrEsc
			return i + 1
		}
		p.str = utf8.AppendRune(p.str, utf8.RuneError)
		p.pending = 0
	}
	j := i
	for j < len(b) && !strStop[b[j]] {
		j++
	}
	if j == len(b) {
		p.str = append(p.str, b[i:]...)
		return j
	}
	switch c := b[j]; {
	case c == '"':
		var raw []byte
		if len(p.str) == 0 {
			raw = b[i:j] // the whole string is in this chunk: no copy
		} else {
			p.str = append(p.str, b[i:j]...)
			raw = p.str
		}
		p.endString(raw)
		return j + 1
	case c == '\\':
		p.str = append(p.str, b[i:j]...)
		p.state = sStrEsc
		return j + 1
	default:
		return p.fail(b, j, "control character in string")
	}
}

// endString completes a key or a string value whose decoded bytes are raw.
func (p *Parser) endString(raw []byte) {
	if p.strKey {
		f := &p.stack[len(p.stack)-1]
		key := p.internKey(len(p.stack)-1, f.nkeys, raw)
		f.nkeys++
		f.key = key
		p.setKeyPath(f, key)
		p.state = sColon
		return
	}
	var s string
	if utf8.Valid(raw) {
		s = p.arenaString(raw)
	} else {
		s = sanitize(raw)
	}
	if p.mode == EmitPartial {
		p.finishDelta(s, s[min(len(p.sentText), len(s)):])
		return
	}
	p.finish(s)
}

// internKey returns the string of the idx-th key of an object at depth d,
// reusing the string of the previous object at that depth when it had the
// same key in the same position.
func (p *Parser) internKey(d, idx int, raw []byte) string {
	if d >= maxCachedDepth || idx >= maxCachedKeys {
		return sanitize(raw)
	}
	for len(p.keyCache) <= d {
		p.keyCache = append(p.keyCache, nil)
	}
	keys := p.keyCache[d]
	if idx < len(keys) && keys[idx] == string(raw) {
		return keys[idx]
	}
	s := sanitize(raw)
	if idx < len(keys) {
		keys[idx] = s
		p.keyCache[d] = keys[:idx+1] // later keys were for another shape
	} else if idx == len(keys) {
		p.keyCache[d] = append(keys, s)
	}
	return s
}

// escape handles the byte after a backslash.
func (p *Parser) escape(b []byte, i int) int {
	c := b[i]
	if c == 'u' {
		p.state, p.ucount, p.uval = sStrU, 0, 0
		return i + 1
	}
	if p.pending != 0 {
		p.str = utf8.AppendRune(p.str, utf8.RuneError)
		p.pending = 0
	}
	var d byte
	switch c {
	case '"', '\\', '/':
		d = c
	case 'b':
		d = '\b'
	case 'f':
		d = '\f'
	case 'n':
		d = '\n'
	case 'r':
		d = '\r'
	case 't':
		d = '\t'
	default:
		return p.fail(b, i, fmt.Sprintf("invalid escape %q", c))
	}
	p.str = append(p.str, d)
	p.state = sString
	return i + 1
}

// hex consumes the hex digits of a \u escape. Surrogates are paired the way
// encoding/json does it: a surrogate followed by a \u escape that completes
// a valid pair becomes one rune; otherwise it becomes U+FFFD and the next
// escape is decoded on its own.
func (p *Parser) hex(b []byte, i int) int {
	for i < len(b) && p.ucount < 4 {
		c := b[i]
		var v rune
		switch {
		case c >= '0' && c <= '9':
			v = rune(c - '0')
		case c >= 'a' && c <= 'f':
			v = rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v = rune(c-'A') + 10
		default:
			return p.fail(b, i, fmt.Sprintf("invalid hex digit %q in \\u escape", c))
		}
		p.uval = p.uval<<4 | v
		p.ucount++
		i++
	}
	if p.ucount < 4 {
		return i
	}
	rr := p.uval
	p.state = sString
	if p.pending != 0 {
		dec := utf16.DecodeRune(p.pending, rr)
		p.pending = 0
		if dec != utf8.RuneError {
			p.str = utf8.AppendRune(p.str, dec)
			return i
		}
		p.str = utf8.AppendRune(p.str, utf8.RuneError)
	}
	if utf16.IsSurrogate(rr) {
		p.pending = rr
		return i
	}
	p.str = utf8.AppendRune(p.str, rr)
	return i
}

// numChar marks the bytes that may appear in a JSON number.
var numChar = func() (t [256]bool) {
	for _, c := range []byte("0123456789+-.eE") {
		t[c] = true
	}
	return t
}()

// numberBytes consumes number bytes from b[i]; the number ends at the first
// other byte (which is left for the caller) or at Close.
func (p *Parser) numberBytes(b []byte, i int) int {
	j := i
	for j < len(b) && numChar[b[j]] {
		j++
	}
	if j == len(b) {
		if len(p.num)+j-i > maxNumberLen {
			return p.fail(b, i, "number too long")
		}
		p.num = append(p.num, b[i:j]...)
		return j
	}
	raw := b[i:j]
	if len(p.num) > 0 {
		p.num = append(p.num, raw...)
		raw = p.num
	}
	if !p.endNumber(raw) {
		return p.fail(b, j, fmt.Sprintf("invalid number %q", truncate(raw)))
	}
	return j
}

// endNumber completes the number raw; it reports false if raw is not a
// valid JSON number or is out of float64 range.
func (p *Parser) endNumber(raw []byte) bool {
	if !validNumber(raw) {
		if p.closed {
			p.err = &SyntaxError{Offset: p.offset, Msg: fmt.Sprintf("invalid number %q", truncate(raw))}
			p.phase = phaseFailed
		}
		return false
	}
	f, ok := fastNumber(raw)
	if !ok {
		var err error
		f, err = strconv.ParseFloat(string(raw), 64)
		if err != nil {
			// encoding/json refuses out-of-range numbers too.
			if p.closed {
				p.err = &SyntaxError{Offset: p.offset, Msg: fmt.Sprintf("number %q out of range", truncate(raw))}
				p.phase = phaseFailed
			}
			return false
		}
	}
	p.num = p.num[:0]
	if f >= 0 && f < 1024 && f == float64(int(f)) && !(f == 0 && raw[0] == '-') {
		// Boxing a float64 allocates; small integers are common, so their
		// boxes are shared (they are immutable).
		p.finish(smallInts()[int(f)])
	} else {
		p.finish(f)
	}
	return true
}

// smallInts holds boxed float64 values 0..1023, boxed on first use (not
// at every start: they are 1,024 allocations).
var smallInts = sync.OnceValue(func() *[1024]any {
	var t [1024]any
	for i := range t {
		t[i] = float64(i)
	}
	return &t
})

func truncate(b []byte) string {
	if len(b) > 32 {
		return string(b[:32]) + "..."
	}
	return string(b)
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastNumber converts a valid JSON number with at most 15 digits and no
// exponent, like "-12.34", without strconv. Both the digits as an integer
// (below 2^53) and the power of ten are exact in float64, so one IEEE
// division gives the correctly rounded result, the same value
// strconv.ParseFloat returns.
func fastNumber(b []byte) (float64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var n int64
	digits, frac := 0, -1
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			n = n*10 + int64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			}
		case c == '.' && frac < 0:
			frac = 0
		default:
			return 0, false
		}
	}
	if digits > 15 {
		return 0, false
	}
	f := float64(n)
	if frac > 0 {
		f /= pow10[frac]
	}
	if neg {
		f = -f
	}
	return f, true
}

// validNumber reports whether b matches the JSON number grammar:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return false
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(b)
}

// sanitize returns b as a string, replacing each byte of an invalid UTF-8
// sequence by U+FFFD exactly as encoding/json does.
func sanitize(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return string(out)
}

// completePrefix returns the length of b without a trailing, possibly
// incomplete UTF-8 sequence (whose rest may arrive in the next chunk).
func completePrefix(b []byte) int {
	n := len(b)
	// A rune is at most 4 bytes: look back at most 3 bytes for its start.
	for k := 1; k <= 3 && k <= n; k++ {
		c := b[n-k]
		if c < 0x80 {
			return n // ASCII: nothing pending
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[n-k:]) {
				return n - k
			}
			return n
		}
	}
	return n
}

// flushPartial reports a string value that grew during the last Write.
func (p *Parser) flushPartial() {
	if p.phase != phaseValue || p.strKey {
		return
	}
	if p.state != sString && p.state != sStrEsc && p.state != sStrU {
		return
	}
	k := completePrefix(p.str)
	if k <= p.sent {
		return
	}
	s := sanitize(p.str[:k])
	delta := s[min(len(p.sentText), len(s)):]
	p.sent, p.sentText = k, s
	p.emit(Event{Path: p.pathString(), Value: s, Delta: delta})
}
