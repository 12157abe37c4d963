package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// This file is the connection's side of the SDK 2.4.0 unstable methods
// that are about the connection rather than one session: the state an
// agent keeps per connection (Connection), auth/status and its updates,
// providers/*, the systemPrompt check of the session lifecycle requests,
// and the routing of MCP over ACP.

// Connection is one client connection of a Server as the agent sees it:
// a place for what the agent keeps per connection and no longer than it
// (the model endpoints a client chose with providers/set, say). Its
// methods are safe for concurrent use.
type Connection struct {
	mu     sync.Mutex
	values map[any]any
}

// Value returns the connection's value for key, made by init (under the
// connection's lock, so only once) the first time it is asked for.
func (c *Connection) Value(key any, init func() any) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.values[key]; ok {
		return v
	}
	if c.values == nil {
		c.values = map[any]any{}
	}
	v := init()
	c.values[key] = v
	return v
}

// AuthStatusReporter is implemented by agents that report their
// authentication state (auth/status, and auth/status_update when it
// changes). The service reports a logged-out connection as
// unauthenticated whatever the agent says.
type AuthStatusReporter interface {
	AuthStatus(ctx context.Context, conn *Connection) (*AuthStatusResponse, error)
}

// ProviderConfigurer is implemented by agents whose model endpoints the
// client may choose (providers/list, set, disable), for the sessions of
// its connection. Header values are secrets: an implementation must
// never log, store or echo them.
type ProviderConfigurer interface {
	ListProviders(ctx context.Context, conn *Connection) ([]ProviderInfo, error)
	SetProvider(ctx context.Context, conn *Connection, req *SetProviderRequest) error
	DisableProvider(ctx context.Context, conn *Connection, id ProviderId) error
}

// MCPOverACP is implemented by agents that connect the MCP servers a
// client declares with type "acp" (through ClientConn.CallMCP): it is
// what advertises mcpCapabilities.acp.
type MCPOverACP interface {
	ConnectsMCPOverACP()
}

// connExtras is what a serverConn keeps for the methods of this file.
type connExtras struct {
	mu     sync.Mutex
	shared *Connection
	// authState is the state last reported to the client ("" before).
	authState AuthState
	// systemPrompt is what initialize advertised of systemPrompt.
	systemPrompt *SessionSystemPromptCapabilities
	// mcp routes the client's mcp/message notifications to the inner
	// request in flight that they are about.
	mcp map[mcpRoute]func(method string, params json.RawMessage)
}

type mcpRoute struct{ server, request string }

type connectionKey struct{}

// ConnectionOf is the connection whose request ctx belongs to (nil
// outside one).
func ConnectionOf(ctx context.Context) *Connection {
	c, _ := ctx.Value(connectionKey{}).(*Connection)
	return c
}

// connection is c's Connection.
func (c *serverConn) connection() *Connection {
	c.x.mu.Lock()
	defer c.x.mu.Unlock()
	if c.x.shared == nil {
		c.x.shared = &Connection{}
	}
	return c.x.shared
}

// Connection is the connection the session's client is on.
func (c *ClientConn) Connection() *Connection { return c.conn.connection() }

func (c *serverConn) authStatus(ctx context.Context, req *request) (func(), error) {
	var p AuthStatusRequest
	if err := decodeOptionalParams(req.Params, &p); err != nil {
		return nil, err
	}
	return c.simple(ctx, req, func(ctx context.Context) (any, error) {
		st, err := c.currentAuthStatus(ctx)
		if err != nil {
			return nil, err
		}
		c.x.mu.Lock()
		c.x.authState = st.State
		c.x.mu.Unlock()
		return st, nil
	}), nil
}

// currentAuthStatus asks the agent, and reports a logged-out connection
// as unauthenticated.
func (c *serverConn) currentAuthStatus(ctx context.Context) (*AuthStatusResponse, error) {
	st, err := c.srv.agent.(AuthStatusReporter).AuthStatus(ctx, c.connection())
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	loggedOut := c.loggedOut
	c.mu.Unlock()
	if loggedOut {
		st.State = AuthStateUnauthenticated
	}
	return st, nil
}

// noteAuthStatus sends auth/status_update when the state differs from
// the one last reported on the connection (after logout, authenticate
// and providers/*, which may change it).
func (c *serverConn) noteAuthStatus(ctx context.Context) {
	if !serves(c.srv.agent, methodIndex[MethodAuthStatus]) {
		return
	}
	st, err := c.currentAuthStatus(ctx)
	if err != nil {
		c.log.Debug("auth status", "error", err)
		return
	}
	c.x.mu.Lock()
	changed := st.State != c.x.authState
	c.x.authState = st.State
	c.x.mu.Unlock()
	if !changed {
		return
	}
	if err := c.rpc.notify(context.WithoutCancel(ctx), "", MethodAuthStatusUpdate, st); err != nil {
		c.log.Debug("sending auth/status_update", "error", err)
	}
}

// providers serves providers/list, providers/set and providers/disable.
func (c *serverConn) providers(ctx context.Context, req *request) (func(), error) {
	pc := c.srv.agent.(ProviderConfigurer)
	conn := c.connection()
	switch req.Method {
	case MethodProvidersList:
		var p ListProvidersRequest
		if err := decodeOptionalParams(req.Params, &p); err != nil {
			return nil, err
		}
		return c.simple(ctx, req, func(ctx context.Context) (any, error) {
			list, err := pc.ListProviders(ctx, conn)
			if err != nil {
				return nil, err
			}
			return &ListProvidersResponse{Providers: list}, nil
		}), nil
	case MethodProvidersSet:
		var p SetProviderRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		return c.simple(ctx, req, func(ctx context.Context) (any, error) {
			if err := pc.SetProvider(ctx, conn, &p); err != nil {
				return nil, err
			}
			c.noteAuthStatus(ctx)
			return &SetProviderResponse{}, nil
		}), nil
	default:
		var p DisableProviderRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		return c.simple(ctx, req, func(ctx context.Context) (any, error) {
			if err := pc.DisableProvider(ctx, conn, p.ProviderID); err != nil {
				return nil, err
			}
			c.noteAuthStatus(ctx)
			return &DisableProviderResponse{}, nil
		}), nil
	}
}

// checkSystemPrompt refuses a lifecycle request's systemPrompt the agent
// did not advertise (the schema: an error, never a session without it).
func (c *serverConn) checkSystemPrompt(p *SystemPrompt) error {
	if p == nil {
		return nil
	}
	c.x.mu.Lock()
	caps := c.x.systemPrompt
	c.x.mu.Unlock()
	switch {
	case caps == nil:
		return fmt.Errorf("%w: systemPrompt: this agent does not take a system prompt (sessionCapabilities.systemPrompt)", ErrInvalidParams)
	case p.Mode == SystemPromptOverride && (caps.Mode == nil || caps.Mode.Override == nil):
		return fmt.Errorf("%w: systemPrompt.mode: override is not supported", ErrInvalidParams)
	}
	return nil
}

// CallMCP sends one inner MCP request to an MCP server the client
// provides (mcp/message) and waits for its outcome: the inner result or
// MCP error, in the response. While it waits, the client's mcp/message
// notifications about the request go to notify, on the connection's
// read loop (notify must not block). The request is the connection's,
// not the session's: it does not wait for the session's updates. If ctx
// ends first, the client is told with $/cancel_request.
func (c *ClientConn) CallMCP(ctx context.Context, req *MessageMcpRequest, notify func(method string, params json.RawMessage)) (*MessageMcpResponse, error) {
	sc := c.conn
	route := mcpRoute{req.ServerID, req.RequestID}
	if notify != nil {
		sc.x.mu.Lock()
		if sc.x.mcp == nil {
			sc.x.mcp = map[mcpRoute]func(string, json.RawMessage){}
		}
		if _, dup := sc.x.mcp[route]; dup {
			sc.x.mu.Unlock()
			return nil, fmt.Errorf("%s: request %q to server %q is already in flight", MethodMCPMessage, req.RequestID, req.ServerID)
		}
		sc.x.mcp[route] = notify
		sc.x.mu.Unlock()
		defer func() {
			sc.x.mu.Lock()
			delete(sc.x.mcp, route)
			sc.x.mu.Unlock()
		}()
	}
	var resp MessageMcpResponse
	id, err := sc.rpc.call(ctx, c.SessionID(), MethodMCPMessage, req, &resp)
	if err != nil {
		if ctx.Err() != nil {
			if nerr := sc.rpc.notify(context.WithoutCancel(ctx), c.SessionID(), MethodCancelRequest, map[string]any{"requestId": id.Num}); nerr != nil {
				sc.log.Debug("sending $/cancel_request", "error", nerr)
			}
			return nil, fmt.Errorf("%s: %w", MethodMCPMessage, context.Cause(ctx))
		}
		return nil, fmt.Errorf("%s: %w", MethodMCPMessage, err)
	}
	return &resp, nil
}

// mcpNotification serves the client's mcp/message notifications: each
// goes to the inner request it names; one about no request in flight is
// dropped (it may have just ended).
func (c *serverConn) mcpNotification(req *request) {
	var n MessageMcpNotification
	if err := decodeParams(req.Params, &n); err != nil {
		c.log.Debug("bad mcp/message notification", "error", err)
		return
	}
	c.x.mu.Lock()
	fn := c.x.mcp[mcpRoute{n.ServerID, n.RequestID}]
	c.x.mu.Unlock()
	if fn == nil {
		c.log.Debug("mcp/message notification for no request in flight", "server", n.ServerID, "request", n.RequestID)
		return
	}
	fn(n.Method, n.Params)
}
