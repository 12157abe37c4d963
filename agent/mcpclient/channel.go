package mcpclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ChannelServer is a server reached through a Channel the caller
// provides: MCP over ACP, where the server lives in the ACP client and
// each of our requests travels in an mcp/message of the ACP connection.
// It is driven by the same SDK client as the other transports.
type ChannelServer struct {
	Name string
	// ID names the server to whoever provides it (ACP's serverId).
	ID      string
	Channel Channel
}

// Channel carries an MCP client's requests to one server. The protocol
// it carries is request-scoped: there is no way to send the server a
// notification, and the server's notifications come about one of our
// requests in flight (its progress, the updates of a subscription).
type Channel interface {
	// Call sends one request (id is unique among this channel's requests
	// in flight) and returns its result or the server's MCP error; err is
	// for the channel's own failures (and ctx's end, on which the channel
	// tells the other side). While it waits, notify receives the server's
	// notifications about the request; notify never blocks.
	Call(ctx context.Context, id, method string, params json.RawMessage,
		notify func(method string, params json.RawMessage)) (result json.RawMessage, mcpErr *RPCError, err error)
}

// RPCError is an MCP error a server answered a request with.
type RPCError struct {
	Code    int64
	Message string
	Data    json.RawMessage
}

// channelTransport is the SDK transport of a ChannelServer.
type channelTransport struct {
	ch  Channel
	log *slog.Logger
}

func (t *channelTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &channelConn{ch: t.ch, log: t.log, prefix: hex.EncodeToString(nonce[:]) + "-",
		life: life, cancel: cancel, in: make(chan jsonrpc.Message, channelQueue), closed: make(chan struct{}),
		calls: map[string]context.CancelFunc{}}, nil
}

// channelQueue bounds what the server sent that the SDK has not read yet;
// a notification beyond it is dropped (the connection's read loop must
// never wait for the SDK).
const channelQueue = 256

// channelConn turns the SDK's messages into Channel calls: each request
// of ours runs as one Call on a goroutine of the connection, whose
// answer (or the server's notifications meanwhile) the SDK then reads.
// Our notifications have no way to the server: notifications/cancelled
// ends the call it names (the channel tells the other side), the others
// (notifications/initialized) are dropped.
type channelConn struct {
	ch     Channel
	log    *slog.Logger
	prefix string // makes our ids unique among all channels' to a server

	life   context.Context // the calls'; Close cancels it
	cancel context.CancelFunc
	in     chan jsonrpc.Message
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup

	mu    sync.Mutex
	calls map[string]context.CancelFunc // by our request id
}

func (c *channelConn) SessionID() string { return "" }

func (c *channelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.closed:
		return nil, mcp.ErrConnectionClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *channelConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		// A response to a request of the server's: the channel carries
		// none, so there is nothing to answer.
		return nil
	}
	if !req.IsCall() {
		if req.Method == "notifications/cancelled" {
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				c.mu.Lock()
				cancel := c.calls[c.key(p.RequestID)]
				c.mu.Unlock()
				if cancel != nil {
					cancel()
				}
			}
		}
		return nil
	}
	id := c.key(req.ID.Raw())
	callCtx, cancel := context.WithCancel(c.life)
	c.mu.Lock()
	c.calls[id] = cancel
	c.mu.Unlock()
	c.wg.Go(func() {
		defer func() {
			c.mu.Lock()
			delete(c.calls, id)
			c.mu.Unlock()
			cancel()
		}()
		result, mcpErr, err := c.ch.Call(callCtx, id, req.Method, req.Params, c.notify)
		resp := &jsonrpc.Response{ID: req.ID}
		switch {
		case err != nil && callCtx.Err() != nil:
			return // cancelled: the SDK has given up on it
		case err != nil:
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		case mcpErr != nil:
			resp.Error = &jsonrpc.Error{Code: mcpErr.Code, Message: mcpErr.Message, Data: mcpErr.Data}
		default:
			if len(result) == 0 {
				result = json.RawMessage("null")
			}
			resp.Result = result
		}
		select {
		case c.in <- resp:
		case <-c.closed:
		}
	})
	return nil
}

// key is the channel's id of one of our requests.
func (c *channelConn) key(id any) string { return fmt.Sprintf("%s%v", c.prefix, id) }

// notify passes the server's notification on to the SDK, never waiting.
func (c *channelConn) notify(method string, params json.RawMessage) {
	select {
	case c.in <- &jsonrpc.Request{Method: method, Params: params}:
	case <-c.closed:
	default:
		c.log.Warn("mcp server notification dropped: the client is behind", "method", method)
	}
}

// Close ends the calls in flight (the channel tells the other side) and
// waits for them.
func (c *channelConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.cancel()
	})
	c.wg.Wait()
	return nil
}
