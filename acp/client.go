package acp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/sourcegraph/jsonrpc2"
)

// ClientConn is one session's view of the connected client: the session's
// ordered update stream and the requests the agent may make of the client.
// Its methods are safe for concurrent use.
type ClientConn struct {
	svc       *AgentService
	conn      *jsonrpc2.Conn
	caps      ClientCapabilities
	sessionID string
	out       *outbox
}

// ErrNotAdvertised is returned for a client method the client did not
// advertise in its capabilities; such a method is never called.
var ErrNotAdvertised = errors.New("acp: the client did not advertise this capability")

// ErrClosed is returned when the connection or the session's update stream
// has been shut down.
var ErrClosed = errors.New("acp: connection closed")

// Capabilities returns what the client advertised in initialize.
func (c *ClientConn) Capabilities() ClientCapabilities { return c.caps }

// SessionID returns the session's id (empty until the session is created).
func (c *ClientConn) SessionID() string { return c.sessionID }

// Update queues a session/update for the session. Updates are written in
// the order they were queued, by the session's single outbox goroutine.
// Update blocks while the outbox is full (backpressure on the producer, not
// on the connection) until ctx is done.
func (c *ClientConn) Update(ctx context.Context, u SessionUpdate) error {
	return c.out.send(ctx, outItem{update: u})
}

// Call sends a request to the client and waits for its response. If ctx is
// cancelled first, the client is told with $/cancel_request and the cause
// of ctx is returned. An error answered by the client is a *jsonrpc2.Error,
// wrapped with the method name.
func (c *ClientConn) Call(ctx context.Context, method string, params, result any) error {
	id := jsonrpc2.ID{Num: c.svc.nextID.Add(1)}
	w, err := c.conn.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := w.Wait(ctx, result); err != nil {
		if ctx.Err() != nil {
			notifyCtx := context.WithoutCancel(ctx)
			if nerr := c.conn.Notify(notifyCtx, MethodCancelRequest, map[string]any{"requestId": id.Num}); nerr != nil {
				c.svc.log.Debug("sending $/cancel_request", "error", nerr)
			}
			return fmt.Errorf("%s: %w", method, context.Cause(ctx))
		}
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// RequestPermission asks the user to allow a tool call (baseline method).
func (c *ClientConn) RequestPermission(ctx context.Context, req *RequestPermissionRequest) (*RequestPermissionResponse, error) {
	req.SessionID = c.sessionID
	var resp RequestPermissionResponse
	if err := c.Call(ctx, MethodSessionRequestPermission, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// outItem is one entry of an outbox: an update to send, or a function (a
// response) to run in order with the updates.
type outItem struct {
	update SessionUpdate
	fn     func()
}

// outbox is the single writer of one session's updates and prompt
// responses. Producers call send; run delivers in FIFO order. Updates that
// are queued together are written together: run encodes a burst of them
// into one buffer and writes it with one system call, which is what lets a
// fast model stream at full speed without waiting on a write per chunk.
type outbox struct {
	stream    *lineStream
	log       *slog.Logger
	sessionID string // set before run starts
	ch        chan outItem
	quit      chan struct{}
	buf       []byte // run's write buffer
}

const (
	// outboxSize bounds how far a session's producers may run ahead of
	// the connection.
	outboxSize = 1024
	// burstBytes is the most run buffers before it writes.
	burstBytes = 64 << 10
)

func newOutbox(stream *lineStream, log *slog.Logger) *outbox {
	return &outbox{stream: stream, log: log, ch: make(chan outItem, outboxSize), quit: make(chan struct{})}
}

func (o *outbox) send(ctx context.Context, it outItem) error {
	select {
	case <-o.quit:
		return ErrClosed
	default:
	}
	select {
	case o.ch <- it:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-o.quit:
		return ErrClosed
	}
}

// do queues fn to run in order with the updates; used for responses.
func (o *outbox) do(ctx context.Context, fn func()) {
	if err := o.send(ctx, outItem{fn: fn}); err != nil {
		// The outbox is gone (shutdown): nothing can be written in order
		// any more, but the response must still be attempted.
		fn()
	}
}

// stop makes run deliver what is queued and return. Called once.
func (o *outbox) stop() { close(o.quit) }

func (o *outbox) run() {
	for {
		select {
		case it := <-o.ch:
			o.deliver(it)
		case <-o.quit:
			for {
				select {
				case it := <-o.ch:
					o.deliver(it)
				default:
					return
				}
			}
		}
	}
}

// deliver handles it and every item queued behind it.
func (o *outbox) deliver(it outItem) {
	buf := o.buf[:0]
	for {
		if it.fn != nil {
			// A response: everything before it goes out first.
			buf = o.flush(buf)
			it.fn()
		} else {
			n := len(buf)
			var err error
			if buf, err = appendUpdateLine(buf, o.sessionID, &it.update); err != nil {
				buf = buf[:n]
				o.log.Error("encoding session/update", "session", o.sessionID, "error", err)
			}
			if len(buf) >= burstBytes {
				buf = o.flush(buf)
			}
		}
		select {
		case it = <-o.ch:
			continue
		default:
		}
		break
	}
	buf = o.flush(buf)
	if cap(buf) <= 4*burstBytes { // keep the buffer unless a huge update grew it
		o.buf = buf
	}
}

func (o *outbox) flush(buf []byte) []byte {
	if len(buf) == 0 {
		return buf
	}
	if err := o.stream.writeLines(buf); err != nil && !errors.Is(err, ErrClosed) {
		o.log.Warn("sending session/update", "session", o.sessionID, "error", err)
	}
	return buf[:0]
}
