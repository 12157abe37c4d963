package acphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-agent/acp-agent/acp"
)

// httpConn is one Streamable HTTP connection, from its initialize to its
// DELETE (or reaping, or the server's shutdown): the acp.Stream its
// acp.Server connection reads and writes. POSTs feed Read; Write queues
// each message on the event stream its SessionID names, created on first
// use (a session's messages may come before its client opens the GET).
type httpConn struct {
	h         *Handler
	id        string
	transport string
	opened    time.Time

	inbound chan acp.Message
	// ended is closed when the client's input is over (DELETE, reaping,
	// a dropped connection stream); endErr says why.
	ended   chan struct{}
	endOnce sync.Once
	endErr  error
	// done is closed by Close: the acp.Server has finished with the
	// connection.
	done      chan struct{}
	closeOnce sync.Once

	seq atomic.Uint64 // the cursors of all its streams

	// receivers counts the attached event streams and lastActive is the
	// last request or stream change (unix nanoseconds): atomics, because
	// event streams update them under their own locks.
	receivers  atomic.Int64
	lastActive atomic.Int64

	// mu guards streams and the initialize hand-over. Lock order: mu
	// before an eventStream's mu, never the other way.
	mu      sync.Mutex
	streams map[string]*eventStream
	// initID is the id of the initialize request while its response is
	// awaited (it goes back as the POST's body, not on a stream).
	initID   []byte
	initResp chan []byte

	stats connCounters
}

type connCounters struct {
	messagesIn, bytesIn, messagesOut, bytesOut, resumes, drops atomic.Int64
}

func newHTTPConn(h *Handler, id string) *httpConn {
	c := &httpConn{h: h, id: id, transport: "http", opened: time.Now(),
		inbound: make(chan acp.Message, 64), ended: make(chan struct{}), done: make(chan struct{}),
		streams: make(map[string]*eventStream)}
	c.touch()
	return c
}

// Read implements acp.Stream: the next message the client POSTed.
func (c *httpConn) Read(ctx context.Context) (acp.Message, error) {
	select {
	case m := <-c.inbound:
		return m, nil
	case <-c.ended:
		if c.endErr != nil {
			return acp.Message{}, fmt.Errorf("%w: %v", io.EOF, c.endErr)
		}
		return acp.Message{}, io.EOF
	case <-c.done:
		return acp.Message{}, acp.ErrClosed
	case <-ctx.Done():
		return acp.Message{}, ctx.Err()
	}
}

// deliver queues a message the client POSTed for Read, waiting for room
// while ctx lasts.
func (c *httpConn) deliver(ctx context.Context, m acp.Message) error {
	c.touch()
	select {
	case c.inbound <- m:
		c.stats.messagesIn.Add(1)
		c.stats.bytesIn.Add(int64(len(m.Data)))
		return nil
	case <-c.ended:
		return errConnEnded
	case <-c.done:
		return errConnEnded
	case <-ctx.Done():
		return ctx.Err()
	}
}

var errConnEnded = fmt.Errorf("%w: the connection has ended", acp.ErrClosed)

// Write implements acp.Stream. Messages are routed by SessionID; the
// response to initialize is handed to the POST that is waiting for it.
func (c *httpConn) Write(_ context.Context, msgs ...acp.Message) error {
	for len(msgs) > 0 {
		sid := msgs[0].SessionID
		if sid == "" && c.takeInitResponse(msgs[0].Data) {
			msgs = msgs[1:]
			continue
		}
		n := 1
		for n < len(msgs) && msgs[n].SessionID == sid {
			n++
		}
		s, err := c.stream(sid)
		if err != nil {
			return err
		}
		if err := s.write(msgs[:n]); err != nil {
			return err
		}
		msgs = msgs[n:]
	}
	return nil
}

// takeInitResponse hands data to the initialize POST if it is the
// response it waits for: a response with its id, as the server spells it
// ("\u0041" comes back "A"), or with none (null: the server refused the
// id itself, a fraction, an exponent, a number out of range, an object).
// No other request can be on the connection yet: its id goes to the
// client with this response.
func (c *httpConn) takeInitResponse(data []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.initResp == nil {
		return false
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(data, &env) != nil || env.Method != nil {
		return false
	}
	if id := compact(env.ID); len(id) != 0 && string(id) != "null" && !sameID(id, c.initID) {
		return false
	}
	c.initResp <- bytes.Clone(data) // buffered
	c.initResp = nil
	return true
}

// sameID reports whether the JSON ids a and b (compacted) are one value.
func sameID(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var sa, sb string
	return json.Unmarshal(a, &sa) == nil && json.Unmarshal(b, &sb) == nil && sa == sb
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

// stream returns the event stream of sessionID ("" the connection's),
// creating it; past the per-connection limit it forgets the least recently
// used idle one first.
func (c *httpConn) stream(sessionID string) (*eventStream, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.streams[sessionID]; ok {
		return s, nil
	}
	select {
	case <-c.done:
		return nil, acp.ErrClosed
	default:
	}
	if sessionID != "" && len(c.streams) > c.h.opts.MaxSessionStreams {
		c.evictLocked()
		if len(c.streams) > c.h.opts.MaxSessionStreams {
			return nil, fmt.Errorf("%w: this connection has %d session streams, its limit", errTooManyStreams, c.h.opts.MaxSessionStreams)
		}
	}
	s := newEventStream(c, sessionID)
	c.streams[sessionID] = s
	return s, nil
}

var errTooManyStreams = fmt.Errorf("%w: too many event streams", acp.ErrClosed)

// existing returns the stream of sessionID if it exists.
func (c *httpConn) existing(sessionID string) *eventStream {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.streams[sessionID]
}

// evictLocked forgets the session stream that has been idle longest.
func (c *httpConn) evictLocked() {
	type cand struct {
		id string
		at time.Time
	}
	var cands []cand
	for id, s := range c.streams {
		if id == "" {
			continue
		}
		if idle, at := s.idle(); idle {
			cands = append(cands, cand{id, at})
		}
	}
	if len(cands) == 0 {
		return
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].at.Before(cands[j].at) })
	s := c.streams[cands[0].id]
	delete(c.streams, cands[0].id)
	s.close()
}

func (c *httpConn) touch() { c.lastActive.Store(time.Now().UnixNano()) }

func (c *httpConn) receiverAttached() {
	c.receivers.Add(1)
	c.touch()
	c.h.stats.streamsOpen.Add(1)
}

func (c *httpConn) receiverDetached() {
	c.receivers.Add(-1)
	c.touch()
	c.h.stats.streamsOpen.Add(-1)
}

// idleSince reports since when the connection has had neither a request
// nor an open event stream (zero time: it has a stream open).
func (c *httpConn) idleSince() time.Time {
	if c.receivers.Load() > 0 {
		return time.Time{}
	}
	return time.Unix(0, c.lastActive.Load())
}

// endInput ends the client's input: the acp.Server winds the connection
// down (its turns answer "cancelled", its sessions are saved and closed)
// and then closes it.
func (c *httpConn) endInput(why error) {
	c.endOnce.Do(func() {
		c.endErr = why
		close(c.ended)
	})
}

// Close implements acp.Stream: every event stream ends (their receivers
// finish what they have), and the connection is forgotten.
func (c *httpConn) Close() error {
	c.closeOnce.Do(func() {
		c.endInput(nil)
		close(c.done)
		c.mu.Lock()
		streams := make([]*eventStream, 0, len(c.streams))
		for _, s := range c.streams {
			streams = append(streams, s)
		}
		c.mu.Unlock()
		for _, s := range streams {
			s.close()
		}
		c.h.forget(c, c.endErr)
	})
	return nil
}

// TransportCapabilities implements acp.TransportCapabilities: the event
// streams can be resumed with Last-Event-ID within the retention window.
func (c *httpConn) TransportCapabilities() map[string]any {
	o := &c.h.opts
	return map[string]any{"resumable": map[string]any{
		"retentionMessages": o.RetentionMessages, "retentionSeconds": int(o.RetentionTime / time.Second),
		"retentionBytes": o.RetentionBytes,
	}}
}

// snapshot returns the connection's counters.
func (c *httpConn) snapshot() ConnStats {
	c.mu.Lock()
	streams := make([]*eventStream, 0, len(c.streams))
	for _, s := range c.streams {
		streams = append(streams, s)
	}
	c.mu.Unlock()
	receivers := int(c.receivers.Load())
	st := ConnStats{ID: c.id, Transport: c.transport, Opened: c.opened, OpenStreams: receivers,
		MessagesIn: c.stats.messagesIn.Load(), BytesIn: c.stats.bytesIn.Load(),
		MessagesOut: c.stats.messagesOut.Load(), BytesOut: c.stats.bytesOut.Load(),
		Resumes: c.stats.resumes.Load(), Drops: c.stats.drops.Load()}
	for _, s := range streams {
		ss := s.counters()
		if ss.SessionID != "" {
			st.Sessions = append(st.Sessions, ss)
		}
	}
	sort.Slice(st.Sessions, func(i, j int) bool { return st.Sessions[i].SessionID < st.Sessions[j].SessionID })
	return st
}
