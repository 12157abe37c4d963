package acp

import (
	"context"
	"encoding/json"
	"fmt"
)

// Message is one JSON-RPC message on its way through a Stream.
type Message struct {
	// Data is the message: one JSON value, without framing (no newline,
	// no HTTP or WebSocket envelope).
	Data json.RawMessage
	// SessionID scopes the message to an ACP session, for transports that
	// carry each session on a stream of its own (ACP's Streamable HTTP:
	// one event stream per Acp-Session-Id). "" is the connection itself.
	//
	// On a message the server writes, it names the session the message
	// belongs to: a session's updates and its requests to the client
	// (session/request_permission, fs/*, terminal/*, elicitation) carry
	// its id, and a response carries the SessionID of the request it
	// answers. On a message a Stream reads, it is what the transport was
	// told (a request header; always "" on stdio), and the server only
	// echoes it on the response.
	SessionID string
}

// Stream carries the messages of one ACP connection in both directions,
// in whatever framing its transport has: LineStream is newline-delimited
// JSON (stdio); WebSocket text frames or HTTP requests with event
// streams are others. Framing is all a Stream does. The server checks
// every message it reads and answers a malformed one (-32700, -32600)
// without ending the connection, keeps what it writes valid UTF-8, and
// orders its writes: a session's updates and its prompt responses are
// written by one goroutine in the order the session queued them.
//
// Read is called by one goroutine (the connection's reader); Write may be
// called by several goroutines at once, and Close at any time. Writes of
// messages with the same SessionID are made in order and must be
// delivered in that order.
type Stream interface {
	// Read returns the next message from the client, blocking until one
	// arrives, the input ends or the stream is closed. A transport that
	// has to skip input (a line longer than its limit) returns an error
	// wrapping ErrInvalidRequest or ErrParse: the server answers it with
	// that code and id null and reads on. Any other error ends the input
	// (io.EOF when the client is done): the server then cancels the
	// connection's turns, writes their last messages and closes the
	// stream. ctx bounds the wait where the transport can honour it.
	Read(ctx context.Context) (Message, error)
	// Write sends msgs in order, together where the framing allows (one
	// system call on a pipe, one flush of an event stream): an outbox
	// hands over a burst of updates in one call. It may block while the
	// client reads slowly (backpressure) and must not keep msgs or their
	// Data once it returns. After Close it returns ErrClosed.
	Write(ctx context.Context, msgs ...Message) error
	// Close ends the stream: a Read blocked in it returns where the
	// transport can interrupt it, and later Writes fail. It may be called
	// more than once.
	Close() error
}

// Listener hands a Server the connections of a transport that accepts
// several (an HTTP endpoint): see Server.Serve.
type Listener interface {
	// Accept waits for the next connection. An error (the listener was
	// closed, or ctx is done) ends Server.Serve.
	Accept(ctx context.Context) (Stream, error)
}

// TransportCapabilities is implemented by a Stream whose transport has
// capabilities of its own for the client to know (ACP's Streamable HTTP:
// how long its event streams can be resumed). The server adds them to its
// initialize response as agentCapabilities._meta["transport"]; a Stream
// that does not implement it (stdio) adds nothing.
type TransportCapabilities interface {
	TransportCapabilities() map[string]any
}

// withMetaKey returns the _meta object meta with key set to v (meta may be
// empty).
func withMetaKey(meta json.RawMessage, key string, v any) (json.RawMessage, error) {
	fields := map[string]json.RawMessage{}
	if len(meta) > 0 && string(meta) != "null" {
		if err := json.Unmarshal(meta, &fields); err != nil {
			return nil, fmt.Errorf("_meta is not an object: %w", err)
		}
	}
	val, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	fields[key] = val
	return json.Marshal(fields)
}
