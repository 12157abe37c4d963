package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
)

// request is a request or notification read from the client.
type request struct {
	*jsonrpc2.Request
	// sessionID is the Message's SessionID: the response goes back with
	// it.
	sessionID string
}

// rpcConn is JSON-RPC 2.0 over a Stream, the protocol layer of one
// connection. Its read goroutine checks every message the Stream returns
// (checkMessage), answers a malformed one itself, hands requests and
// notifications to handle, and delivers responses to the calls waiting
// for them. Writes come from any goroutine.
//
// The wire types are sourcegraph/jsonrpc2's (Request, Response, ID,
// Error), encoded as its Conn encodes them, so what reaches the client is
// byte for byte what it was when jsonrpc2.Conn wrote it. rpcConn exists
// because jsonrpc2.Conn cannot serve ACP over more than one stream: its
// writes are not told which session they belong to, ignore ctx and are
// serialised by one mutex, and it closes the connection on the first read
// error, before cancelled turns have answered.
type rpcConn struct {
	stream Stream
	log    *slog.Logger
	// handle is called on the read goroutine for each request and
	// notification; it must not block.
	handle func(*request)

	nextID atomic.Uint64 // ids of our calls to the client

	// closed is set under mu, so that no call is added to pending after
	// close; writes read it without the lock.
	closed  atomic.Bool
	mu      sync.Mutex
	pending map[jsonrpc2.ID]chan *jsonrpc2.Response // calls awaiting a response

	// inputDone is closed when the read goroutine has returned: the input
	// ended, failed or the stream was closed.
	inputDone chan struct{}
}

func newRPCConn(stream Stream, log *slog.Logger, handle func(*request)) *rpcConn {
	return &rpcConn{
		stream: stream, log: log, handle: handle,
		pending: make(map[jsonrpc2.ID]chan *jsonrpc2.Response), inputDone: make(chan struct{}),
	}
}

// read is the connection's read goroutine. Its owner waits for inputDone.
func (c *rpcConn) read(ctx context.Context) {
	defer close(c.inputDone)
	for {
		m, err := c.stream.Read(ctx)
		if err != nil {
			if errors.Is(err, ErrInvalidRequest) || errors.Is(err, ErrParse) {
				// Input the transport skipped; the connection stays.
				c.log.Debug("rejected input", "error", err)
				w := WireError(err)
				c.writeError(ctx, nil, w.Code, w.Message, m.SessionID)
				continue
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, ErrClosed) {
				c.log.Debug("reading the client's messages", "error", err)
			}
			return
		}
		c.receive(ctx, m)
	}
}

// receive checks and dispatches one message.
func (c *rpcConn) receive(ctx context.Context, m Message) {
	id, isRequest, code, msg := checkMessage(m.Data)
	if code != 0 {
		c.log.Debug("rejected input line", "code", code, "error", msg)
		c.writeError(ctx, id, code, msg, m.SessionID)
		return
	}
	if isRequest {
		if inexactCancel(m.Data) {
			// A notification: nothing is answered. jsonrpc2 re-encodes
			// params, so the service could not tell this id from U+FFFD.
			c.log.Debug("ignoring $/cancel_request with an id that cannot be read exactly")
			return
		}
		req := &request{Request: new(jsonrpc2.Request), sessionID: m.SessionID}
		if err := json.Unmarshal(m.Data, req.Request); err != nil {
			c.writeError(ctx, id, CodeInvalidRequest, "invalid request: "+err.Error(), m.SessionID)
			return
		}
		c.handle(req)
		return
	}
	var resp jsonrpc2.Response
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		c.writeError(ctx, id, CodeInvalidRequest, "invalid request: "+err.Error(), m.SessionID)
		return
	}
	c.mu.Lock()
	ch := c.pending[resp.ID]
	delete(c.pending, resp.ID)
	c.mu.Unlock()
	if ch == nil {
		c.log.Debug("ignoring a response to no request of ours", "id", resp.ID.String())
		return
	}
	ch <- &resp // buffered: never blocks
}

// write sends messages through the stream, in order, after the last guard
// of "every message is UTF-8": encoding/json copies json.RawMessage
// values as they are, so a raw value that came from outside with invalid
// bytes would reach the client unchanged. In valid JSON such bytes can
// only be inside strings, where U+FFFD keeps the message valid JSON.
func (c *rpcConn) write(ctx context.Context, msgs ...Message) error {
	for i := range msgs {
		if !utf8.Valid(msgs[i].Data) {
			c.log.Warn("replaced invalid UTF-8 in an outgoing message")
			msgs[i].Data = bytes.ToValidUTF8(msgs[i].Data, []byte("\uFFFD"))
		}
	}
	return c.writeValid(ctx, msgs...)
}

// writeValid is write for messages the caller has checked for UTF-8.
func (c *rpcConn) writeValid(ctx context.Context, msgs ...Message) error {
	if c.closed.Load() {
		return ErrClosed
	}
	return c.stream.Write(ctx, msgs...)
}

// lineWriter is implemented by streams whose framing is a newline after
// each message (LineStream): a burst already encoded that way is written
// as it is, without being split and framed again.
type lineWriter interface {
	writeLines(lines []byte) error
}

// writeLines sends a burst of messages of one session, encoded as lines
// (each ending in a newline) and checked for UTF-8 by the caller, in one
// Write. msgs is scratch space for the split burst; it is returned for
// reuse.
func (c *rpcConn) writeLines(ctx context.Context, sessionID string, lines []byte, msgs []Message) ([]Message, error) {
	if c.closed.Load() {
		return msgs, ErrClosed
	}
	if lw, ok := c.stream.(lineWriter); ok {
		return msgs, lw.writeLines(lines)
	}
	msgs = msgs[:0]
	for rest := lines; len(rest) > 0; {
		// Encoded JSON has no raw newline: each one ends a message.
		i := bytes.IndexByte(rest, '\n')
		msgs = append(msgs, Message{Data: rest[:i], SessionID: sessionID})
		rest = rest[i+1:]
	}
	err := c.stream.Write(ctx, msgs...)
	clear(msgs) // drop the references into lines
	return msgs[:0], err
}

// reply sends the response to req: result, or the wire form of err.
func (c *rpcConn) reply(ctx context.Context, req *request, result any, err error) error {
	resp := &jsonrpc2.Response{ID: req.ID}
	if err == nil {
		if merr := resp.SetResult(result); merr != nil {
			err = fmt.Errorf("%w: encoding the result: %v", ErrInternal, merr)
		}
	}
	if err != nil {
		resp.Result, resp.Error = nil, WireError(err)
	}
	data, merr := json.Marshal(resp)
	if merr != nil {
		return merr
	}
	return c.write(ctx, Message{Data: data, SessionID: req.sessionID})
}

// writeError answers a message that was rejected before it could be
// handled, with its raw id when it could be read (else null).
func (c *rpcConn) writeError(ctx context.Context, id json.RawMessage, code int64, msg, sessionID string) {
	data, err := encodeRejection(id, code, msg)
	if err == nil {
		err = c.write(ctx, Message{Data: data, SessionID: sessionID})
	}
	if err != nil {
		c.log.Debug("writing error reply", "error", err)
	}
}

// encodeRejection is the error response to a rejected message.
func encodeRejection(id json.RawMessage, code int64, msg string) ([]byte, error) {
	if id == nil {
		id = json.RawMessage("null")
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc2.Error  `json:"error"`
	}{"2.0", id, jsonrpc2.Error{Code: code, Message: msg}})
}

// notify sends a notification, scoped to sessionID.
func (c *rpcConn) notify(ctx context.Context, sessionID, method string, params any) error {
	req := &jsonrpc2.Request{Method: method, Notif: true}
	if params != nil {
		if err := req.SetParams(params); err != nil {
			return err
		}
	}
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	return c.write(ctx, Message{Data: data, SessionID: sessionID})
}

// call sends a request to the client, scoped to sessionID, and waits for
// its response, which it decodes into result. An error answered by the
// client is returned as a *jsonrpc2.Error. If ctx ends first, the call is
// forgotten (a late response is ignored), ctx's error is returned, and
// id is the id the request went out with, for $/cancel_request.
func (c *rpcConn) call(ctx context.Context, sessionID, method string, params, result any) (id jsonrpc2.ID, err error) {
	id = jsonrpc2.ID{Num: c.nextID.Add(1)}
	req := &jsonrpc2.Request{Method: method, ID: id}
	if params != nil {
		if err := req.SetParams(params); err != nil {
			return id, err
		}
	}
	data, err := json.Marshal(req)
	if err != nil {
		return id, err
	}
	ch := make(chan *jsonrpc2.Response, 1)
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return id, ErrClosed
	}
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if err := c.write(ctx, Message{Data: data, SessionID: sessionID}); err != nil {
		forget()
		return id, err
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return id, ErrClosed
		}
		if resp.Error != nil {
			return id, resp.Error
		}
		if result == nil || resp.Result == nil {
			return id, nil
		}
		return id, json.Unmarshal(*resp.Result, result)
	case <-ctx.Done():
		forget()
		return id, ctx.Err()
	}
}

// close closes the stream and fails the calls still waiting. Writes after
// it return ErrClosed.
func (c *rpcConn) close() error {
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return nil
	}
	c.closed.Store(true)
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	return c.stream.Close()
}
