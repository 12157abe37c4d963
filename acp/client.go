package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// sessionClient is what a session's view of its client is in either
// protocol version (ClientConn, ClientConnV2): its connection, its id, its
// ordered update stream and the calls it makes.
type sessionClient struct {
	conn *serverConn
	// id is the session's id, set once it is known (setSessionID, when
	// the session is registered): a call the session makes while it is
	// being created (an MCP server's re-listing of its tools, over
	// mcp/message) may read it meanwhile. Shared by the copies of the
	// struct.
	id    *atomic.Pointer[string]
	out   *outbox
	start func() // starts out (registerHeld); nil: started elsewhere
}

// ClientConn is one session's view of the client connected to it: the
// session's ordered update stream and the requests the agent may make of
// the client. Its capabilities are those its connection's client
// advertised in initialize; another connection of the same Server may
// have others. Its methods are safe for concurrent use.
type ClientConn struct {
	sessionClient
	caps ClientCapabilities
}

// setSessionID names the session, before its outbox runs.
func (c *sessionClient) setSessionID(id string) {
	c.id.Store(&id)
	c.out.sessionID = id
}

// ErrClosed is returned when the connection or the session's update stream
// has been shut down.
var ErrClosed = errors.New("acp: connection closed")

// Capabilities returns what the client of this session's connection
// advertised in initialize.
func (c *ClientConn) Capabilities() ClientCapabilities { return c.caps }

// SessionID returns the session's id (empty until the session is created).
func (c *sessionClient) SessionID() string {
	if id := c.id.Load(); id != nil {
		return *id
	}
	return ""
}

// Update queues a session/update for the session. Updates are written in
// the order they were queued, by the session's single outbox goroutine.
// Update blocks while the outbox is full (backpressure on the producer, not
// on the connection) until ctx is done.
func (c *ClientConn) Update(ctx context.Context, u SessionUpdate) error {
	return c.out.send(ctx, outItem{update: u})
}

// Post queues a session/update like Update but never waits for room: it is
// for the few updates sent from places that must not block, such as the
// connection's read loop (an execution state of "queued"). Updates stay in
// order with everything queued before and after. After the session's
// update stream has shut down it returns ErrClosed.
func (c *ClientConn) Post(u SessionUpdate) error {
	return c.out.post(outItem{update: u})
}

// Call sends a request to the client and waits for its response. If ctx is
// cancelled first, the client is told with $/cancel_request and the cause
// of ctx is returned. An error answered by the client is a *jsonrpc2.Error,
// wrapped with the method name.
func (c *sessionClient) Call(ctx context.Context, method string, params, result any) error {
	// Updates queued before the call go out before it: a permission
	// request must not overtake the tool_call it is about.
	if err := c.out.drained(ctx); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	id, err := c.conn.rpc.call(ctx, c.SessionID(), method, params, result)
	if err != nil {
		if ctx.Err() != nil {
			notifyCtx := context.WithoutCancel(ctx)
			if nerr := c.conn.rpc.notify(notifyCtx, c.SessionID(), MethodCancelRequest, map[string]any{"requestId": id.Num}); nerr != nil {
				c.conn.log.Debug("sending $/cancel_request", "error", nerr)
			}
			return fmt.Errorf("%s: %w", method, context.Cause(ctx))
		}
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// Notify sends a notification to the client (elicitation/complete), after
// the updates queued before it.
func (c *sessionClient) Notify(ctx context.Context, method string, params any) error {
	if err := c.out.drained(ctx); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := c.conn.rpc.notify(ctx, c.SessionID(), method, params); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// RequestPermission asks the user to allow a tool call (baseline method).
func (c *ClientConn) RequestPermission(ctx context.Context, req *RequestPermissionRequest) (*RequestPermissionResponse, error) {
	req.SessionID = c.SessionID()
	var resp RequestPermissionResponse
	if err := c.Call(ctx, MethodSessionRequestPermission, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// outItem is one entry of an outbox: an update to send (v1's, or v2's when
// v2 is set), or a function (a response) to run in order with the updates.
type outItem struct {
	update SessionUpdate
	v2     *acpv2.SessionUpdate
	fn     func()
	// merged is the text of update's chunk followed by the text of the
	// chunks merged into it while it waited (mergeLocked); nil if none
	// was.
	merged *strings.Builder
}

// textChunk is u's chunk if u is an agent_message_chunk or an
// agent_thought_chunk of plain text: a text block with no annotations and
// no _meta, on the chunk or on the block. Only such chunks are merged: the
// client sees the same text whether it comes in one notification or in
// several, and nothing else of the chunk could differ.
func textChunk(u *SessionUpdate) (c *ContentChunk, thought bool) {
	switch {
	case u.AgentMessageChunk != nil:
		c = u.AgentMessageChunk
	case u.AgentThoughtChunk != nil:
		c, thought = u.AgentThoughtChunk, true
	default:
		return nil, false
	}
	b := &c.Content
	if len(c.Meta) != 0 || b.Text == nil || b.Image != nil || b.Audio != nil || b.ResourceLink != nil || b.Resource != nil ||
		b.Unknown != nil || b.Text.Annotations != nil || len(b.Text.Meta) != 0 {
		return nil, false
	}
	return c, thought
}

// mergeLocked merges it, a plain text chunk, into the last queued item if
// that is a plain text chunk of the same kind and message (the same
// non-empty messageId) that the
// outbox's writer has not taken yet: the client gets their texts, in
// order, in one notification instead of two. It reports whether it did.
// Nothing waits for a merge: an item is merged only into one already
// waiting for the writer, and the writer takes whatever is queued when it
// is free, so a client that keeps up gets every chunk as it was sent.
func (o *outbox) mergeLocked(it *outItem) bool {
	if it.v2 != nil || it.fn != nil || len(o.items) == 0 {
		return false
	}
	c, thought := textChunk(&it.update)
	if c == nil {
		return false
	}
	last := &o.items[len(o.items)-1]
	if last.v2 != nil || last.fn != nil {
		return false
	}
	lc, lthought := textChunk(&last.update)
	// The same message only if an id says so: chunks without one (the
	// agent's notices) each stay a message of their own.
	if lc == nil || lthought != thought || c.MessageID == "" || lc.MessageID != c.MessageID {
		return false
	}
	if last.merged == nil {
		if len(lc.Content.Text.Text)+len(c.Content.Text.Text) > mergeBytes {
			return false
		}
		last.merged = new(strings.Builder)
		last.merged.WriteString(lc.Content.Text.Text)
	} else if last.merged.Len()+len(c.Content.Text.Text) > mergeBytes {
		return false
	}
	last.merged.WriteString(c.Content.Text.Text)
	return true
}

// mergedUpdate is it's update with its merged text, in new values: the
// caller's update is not changed.
func (it *outItem) mergedUpdate() SessionUpdate {
	c, thought := textChunk(&it.update)
	m := *c
	m.Content = ContentBlock{Text: &TextContent{Text: it.merged.String()}}
	if thought {
		return SessionUpdate{AgentThoughtChunk: &m}
	}
	return SessionUpdate{AgentMessageChunk: &m}
}

// outbox is the single writer of one session's updates and prompt
// responses, in the order they were queued. Updates are bounded: a producer
// that runs more than outboxSize items ahead of the connection waits, so a
// slow client slows the model stream. Responses never wait, because they
// are queued from places that must not block (the connection's read loop
// handles session/cancel inline). Updates queued together are written
// together: run encodes a burst into one buffer and writes it with one
// system call, which lets a fast model stream at full speed. A text chunk
// queued behind another of the same message that the writer has not taken
// yet joins it (mergeLocked): a client that falls behind gets fewer, longer
// chunks of the same text, in the same order, and never waits for it.
type outbox struct {
	rpc       *rpcConn
	log       *slog.Logger
	sessionID string // set before run starts

	mu       sync.Mutex
	stopOnce sync.Once
	items    []outItem
	// queued counts what was queued since the writer last took the items:
	// merged chunks too, so that merging never lets producers run further
	// ahead of the connection (outboxSize) than without it.
	queued int
	closed bool
	wake   chan struct{} // capacity 1: there are items
	space  chan struct{} // capacity 1: there is room for updates
	quit   chan struct{}
	ended  chan struct{} // closed when run returns

	buf  []byte    // run's write buffer: the burst's lines
	msgs []Message // scratch for rpcConn.writeLines
}

const (
	// outboxSize bounds how far a session's update producers may run
	// ahead of the connection.
	outboxSize = 1024
	// burstBytes is the most run buffers before it writes.
	burstBytes = 64 << 10
	// mergeBytes is the most text a chunk gets by merging (mergeLocked).
	mergeBytes = 16 << 10
)

func newOutbox(rpc *rpcConn, log *slog.Logger) *outbox {
	return &outbox{
		rpc: rpc, log: log,
		wake: make(chan struct{}, 1), space: make(chan struct{}, 1), quit: make(chan struct{}), ended: make(chan struct{}),
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// send queues an update, waiting for room while the outbox is full.
func (o *outbox) send(ctx context.Context, it outItem) error {
	for {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		o.mu.Lock()
		if o.closed {
			o.mu.Unlock()
			return ErrClosed
		}
		if o.queued < outboxSize {
			if !o.mergeLocked(&it) {
				o.items = append(o.items, it)
			}
			o.queued++
			room := o.queued < outboxSize
			o.mu.Unlock()
			signal(o.wake)
			if room {
				signal(o.space) // pass the turn to another waiting producer
			}
			return nil
		}
		o.mu.Unlock()
		select {
		case <-o.space:
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-o.quit:
			return ErrClosed
		}
	}
}

// post queues an update even while the outbox is full.
func (o *outbox) post(it outItem) error {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return ErrClosed
	}
	if !o.mergeLocked(&it) {
		o.items = append(o.items, it)
	}
	o.queued++
	o.mu.Unlock()
	signal(o.wake)
	return nil
}

// drained waits until everything queued so far has been written.
func (o *outbox) drained(ctx context.Context) error {
	done := make(chan struct{})
	o.do(func() { close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// do queues fn (a response) to run in order with the updates. It never
// blocks. Once the outbox has stopped, fn runs at once: nothing can be
// written in order any more, but the response must still be attempted.
func (o *outbox) do(fn func()) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		fn()
		return
	}
	o.items = append(o.items, outItem{fn: fn})
	o.queued++
	o.mu.Unlock()
	signal(o.wake)
}

// stop makes run deliver what is queued and return. Later calls do
// nothing.
func (o *outbox) stop() { o.stopOnce.Do(func() { close(o.quit) }) }

func (o *outbox) run() {
	defer close(o.ended)
	var batch []outItem
	for {
		select {
		case <-o.wake:
		case <-o.quit:
			o.mu.Lock()
			o.closed = true
			batch, o.items, o.queued = o.items, nil, 0
			o.mu.Unlock()
			o.deliver(batch)
			return
		}
		o.mu.Lock()
		batch, o.items, o.queued = o.items, batch[:0], 0
		o.mu.Unlock()
		signal(o.space)
		o.deliver(batch)
		clear(batch) // drop references to delivered updates
	}
}

// deliver writes a batch of items in order.
func (o *outbox) deliver(batch []outItem) {
	buf := o.buf[:0]
	for i := range batch {
		it := &batch[i]
		if it.fn != nil {
			// A response: everything before it goes out first.
			buf = o.flush(buf)
			it.fn()
			continue
		}
		n := len(buf)
		var err error
		if it.v2 != nil {
			buf, err = appendUpdateLineV2(buf, o.sessionID, it.v2)
		} else if it.merged != nil {
			u := it.mergedUpdate()
			buf, err = appendUpdateLine(buf, o.sessionID, &u)
		} else {
			buf, err = appendUpdateLine(buf, o.sessionID, &it.update)
		}
		if err != nil {
			buf = buf[:n]
			o.log.Error("encoding session/update", "session", o.sessionID, "error", err)
		}
		if len(buf) >= burstBytes {
			buf = o.flush(buf)
		}
	}
	buf = o.flush(buf)
	if cap(buf) <= 4*burstBytes { // keep the buffer unless a huge update grew it
		o.buf = buf
	}
}

// flush hands the encoded lines in buf to the connection as one burst,
// after the UTF-8 guard of rpcConn.write, made here in one pass.
func (o *outbox) flush(buf []byte) []byte {
	if len(buf) == 0 {
		return buf
	}
	lines := buf
	if !utf8.Valid(lines) {
		o.log.Warn("replaced invalid UTF-8 in an outgoing message")
		lines = bytes.ToValidUTF8(lines, []byte("\uFFFD"))
	}
	// No ctx bounds the write: stopping the connection is what unblocks
	// a stream whose client stopped reading.
	var err error
	if o.msgs, err = o.rpc.writeLines(context.Background(), o.sessionID, lines, o.msgs); err != nil && !errors.Is(err, ErrClosed) {
		o.log.Warn("sending session/update", "session", o.sessionID, "error", err)
	}
	return buf[:0]
}
