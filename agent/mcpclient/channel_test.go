package mcpclient

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// providedServer is the other side of a Channel, as an ACP client that
// hosts an MCP server provides it: each Call is passed to an in-process
// server as its own request, the server's notifications about it go back
// through notify, and a call whose ctx ends is cancelled at the server
// (notifications/cancelled), as the client does on $/cancel_request.
type providedServer struct {
	conn mcp.Connection
	mu   sync.Mutex
	next int64
	// waits are the calls in flight, by the server-side id.
	waits  map[int64]chan *jsonrpc.Response
	notify map[int64]func(string, json.RawMessage)
	read   chan struct{}
	// ids are the ids the Manager's calls came with, in order.
	ids []string
}

func provide(t *testing.T, srv *mcp.Server) *providedServer {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	conn, err := ct.Connect(context.Background())
	require.NoError(t, err)
	p := &providedServer{conn: conn, waits: map[int64]chan *jsonrpc.Response{}, notify: map[int64]func(string, json.RawMessage){}, read: make(chan struct{})}
	go func() {
		defer close(p.read)
		for {
			msg, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			switch m := msg.(type) {
			case *jsonrpc.Response:
				id, _ := m.ID.Raw().(int64)
				p.mu.Lock()
				ch := p.waits[id]
				p.mu.Unlock()
				if ch != nil {
					ch <- m
				}
			case *jsonrpc.Request:
				if m.IsCall() {
					continue // the server's own requests: none here
				}
				p.mu.Lock()
				var fn func(string, json.RawMessage)
				for _, f := range p.notify { // one call in flight in these tests
					fn = f
				}
				p.mu.Unlock()
				if fn != nil {
					fn(m.Method, m.Params)
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = conn.Close()
		_ = ss.Close()
		<-p.read
	})
	return p
}

func (p *providedServer) Call(ctx context.Context, id, method string, params json.RawMessage,
	notify func(string, json.RawMessage)) (json.RawMessage, *RPCError, error) {
	p.mu.Lock()
	p.next++
	sid := p.next
	ch := make(chan *jsonrpc.Response, 1)
	p.waits[sid], p.notify[sid], p.ids = ch, notify, append(p.ids, id)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.waits, sid)
		delete(p.notify, sid)
		p.mu.Unlock()
	}()
	rid, _ := jsonrpc.MakeID(float64(sid))
	if err := p.conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: params}); err != nil {
		return nil, nil, err
	}
	if method == "initialize" {
		defer func() {
			_ = p.conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)})
		}()
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			var e *jsonrpc.Error
			if je, ok := resp.Error.(*jsonrpc.Error); ok {
				e = je
			} else {
				e = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: resp.Error.Error()}
			}
			return nil, &RPCError{Code: e.Code, Message: e.Message, Data: e.Data}, nil
		}
		return resp.Result, nil, nil
	case <-ctx.Done():
		_ = p.conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/cancelled",
			Params: json.RawMessage(`{"requestId":` + jsonNumber(sid) + `}`)})
		return nil, nil, ctx.Err()
	}
}

func jsonNumber(n int64) string {
	data, _ := json.Marshal(n)
	return string(data)
}

// Issue 29: a server the caller provides (MCP over ACP) is driven by the
// same SDK client as the other transports: handshake, tools listed and
// called, a server error as the tool's error, and a call cancelled by its
// ctx is cancelled at the server (the channel's ctx ends), after which the
// session still works. Each call's id is unique on the channel.
func TestChannelServerListsCallsAndCancels(t *testing.T) {
	slow := &slowTool{started: make(chan struct{}), cancelled: make(chan struct{})}
	p := provide(t, newTestServer("Echo: ", slow))
	m, failures := connect(t, []Server{{Channel: &ChannelServer{Name: "ed", ID: "editor-1", Channel: p}}}, Options{})
	require.Empty(t, failures)
	assert.Contains(t, toolNames(m.Tools()), "mcp__ed__echo")
	assert.Equal(t, "acp", m.Servers()[0].Transport)

	res, err := m.Call(context.Background(), "mcp__ed__echo", json.RawMessage(`{"message":"hi"}`))
	require.NoError(t, err)
	assert.Equal(t, "Echo: hi", res.Text)
	res, err = m.Call(context.Background(), "mcp__ed__fail", nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Text, "disk on fire")

	cancelSlowCall(t, m, "mcp__ed__slow", slow)
	res, err = m.Call(context.Background(), "mcp__ed__echo", json.RawMessage(`{"message":"after"}`))
	require.NoError(t, err)
	assert.Equal(t, "Echo: after", res.Text, "the session survives a cancelled call")

	p.mu.Lock()
	seen := map[string]bool{}
	for _, id := range p.ids {
		assert.False(t, seen[id], "id %s reused", id)
		seen[id] = true
	}
	p.mu.Unlock()
}
