package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// This file is a v2 connection's side of the v2 method table: version
// negotiation, dispatch and one handler per method. What is not v2's own
// (the read loop, in-flight requests, outboxes, session limits, which
// connection a session is live on, shutdown) is the connection's, shared
// with v1.

// ProtocolVersionV2 is ACP v2 (Preview), served when Options.V2 is set.
const ProtocolVersionV2 ProtocolVersion = 2

// connV2 is the state of a v2 connection; guarded by serverConn.mu.
type connV2 struct {
	caps acpv2.ClientCapabilities
	// authAdvertised: initialize answered authMethods, which promise
	// auth/login and auth/logout.
	authAdvertised bool
	// mcp is the MCP transports initialize advertised; a session's MCP
	// servers must use them.
	mcp *acpv2.McpCapabilities
	// busy: a request other than initialize has been handled, after which
	// initialize may not be repeated.
	busy bool
}

// Why a held prompt was withdrawn (answered -32800).
var (
	errWithdrawnByCancel = errors.New("session/cancel withdrew the prompt before it was inserted")
	errWithdrawnByClose  = errors.New("the session closed before the prompt was inserted")
)

// requestedVersion reads params.protocolVersion: an integer in [0, 65535].
func requestedVersion(params *json.RawMessage) (ProtocolVersion, bool) {
	if params == nil {
		return 0, false
	}
	var p struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
	}
	var v uint16
	if json.Unmarshal(*params, &p) != nil || json.Unmarshal(p.ProtocolVersion, &v) != nil {
		return 0, false
	}
	return ProtocolVersion(v), true
}

// speaksV2 decides which protocol serves req: a v2 connection's requests,
// and the first initialize that asks for version 2 or more when the
// server has a v2 agent, are v2's; everything else is v1's, exactly as
// before v2 (a v1 connection never becomes v2).
func (c *serverConn) speaksV2(req *request) bool {
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	switch {
	case version == ProtocolVersionV2:
		return true
	case version != 0 || c.srv.opts.V2 == nil || req.Method != MethodInitialize:
		return false
	}
	v, ok := requestedVersion(req.Params)
	return ok && v >= ProtocolVersionV2
}

// dispatchV2 is dispatch for a v2 connection.
func (c *serverConn) dispatchV2(ctx context.Context, req *request) (func(), error) {
	m := tableV2().index[req.Method]
	if req.Method == MethodInitialize {
		return c.initializeV2(ctx, req)
	}
	c.mu.Lock()
	loggedOut, st := c.loggedOut, c.v2
	st.busy = true
	c.mu.Unlock()
	switch {
	case m == nil || m.Direction&ToAgent == 0:
		return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
	case m.Notification:
		return nil, fmt.Errorf("%w: %s is a notification and must not have an id", ErrInvalidRequest, req.Method)
	case !serves(c.srv.opts.V2, m):
		return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
	case (req.Method == acpv2.MethodAuthLogin || req.Method == acpv2.MethodAuthLogout) && !st.authAdvertised:
		return nil, fmt.Errorf("%w: %q (initialize advertised no authMethods)", ErrMethodNotFound, req.Method)
	case m.opensSession && loggedOut:
		return nil, fmt.Errorf("%w: logged out; call auth/login first", ErrAuthRequired)
	}
	return m.handle(c, ctx, req)
}

// notifyV2 serves a notification on a v2 connection.
func (c *serverConn) notifyV2(req *request) {
	if m := tableV2().index[req.Method]; m != nil && m.notify != nil {
		m.notify(c, req)
		return
	}
	c.log.Debug("ignoring notification", "method", req.Method)
}

// decodeV2 decodes the params of req (definition def) into p; a failure
// is -32602 naming the member.
func decodeV2(req *request, def string, p any) error {
	var raw []byte
	if req.Params != nil {
		raw = *req.Params
	}
	if err := acpv2.Decode(def, raw, p); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	return nil
}

// initializeV2 answers an initialize that chose v2: the highest version
// at or below the one asked for, 2. It may be repeated (asking for 2 or
// more) until another request is made. For a version newer than 2, what
// does not parse as v2 is dropped, and missing info becomes "unknown", as
// the SDK's router does; for 2 itself the params are checked strictly.
func (c *serverConn) initializeV2(ctx context.Context, req *request) (func(), error) {
	requested, _ := requestedVersion(req.Params)
	c.mu.Lock()
	repeat, st := c.version == ProtocolVersionV2, c.v2
	busy := st != nil && st.busy
	c.mu.Unlock()
	switch {
	case repeat && requested < ProtocolVersionV2:
		return nil, fmt.Errorf("%w: this connection speaks ACP v2; a repeated initialize must ask for version 2 or later", ErrInvalidRequest)
	case repeat && busy:
		return nil, fmt.Errorf("%w: initialize may be repeated only before any other request", ErrInvalidRequest)
	}
	var p acpv2.InitializeRequest
	if requested == ProtocolVersionV2 {
		if err := decodeV2(req, "InitializeRequest", &p); err != nil {
			return nil, err
		}
	} else {
		p = newerInitialize(*req.Params)
	}
	agent := c.srv.opts.V2
	resp, err := agent.Initialize(ctx, &p)
	if err != nil {
		return nil, err
	}
	resp.ProtocolVersion = acpv2.ProtocolVersion(ProtocolVersionV2)
	for _, m := range tableV2().rows {
		if m.capability != nil {
			m.capability(&resp.Capabilities, serves(agent, m))
		}
	}
	if len(resp.AuthMethods) > 0 && !implementsV2[AuthenticatorV2](agent) {
		c.log.Warn("the v2 agent advertises authMethods without serving auth/login and auth/logout; dropping them")
		resp.AuthMethods = nil
	}
	if resp.Capabilities.Meta, err = c.withTransportMeta(resp.Capabilities.Meta); err != nil {
		return nil, err
	}
	var mcp *acpv2.McpCapabilities
	if resp.Capabilities.Session != nil {
		mcp = resp.Capabilities.Session.MCP
	}
	c.mu.Lock()
	c.version, c.initialized = ProtocolVersionV2, true
	c.v2 = &connV2{caps: p.Capabilities, authAdvertised: len(resp.AuthMethods) > 0, mcp: mcp}
	c.mu.Unlock()
	return func() { c.answer(ctx, req, resp, nil) }, nil
}

// newerInitialize reads an initialize written for a version newer than
// 2: whatever parses as v2 is kept, the rest dropped.
func newerInitialize(raw json.RawMessage) acpv2.InitializeRequest {
	var members map[string]json.RawMessage
	_ = json.Unmarshal(raw, &members)
	p := acpv2.InitializeRequest{ProtocolVersion: acpv2.ProtocolVersion(ProtocolVersionV2)}
	if json.Unmarshal(members["info"], &p.Info) != nil || p.Info.Name == "" || p.Info.Version == "" {
		p.Info = acpv2.Implementation{Name: "unknown", Version: "unknown"}
	}
	if json.Unmarshal(members["capabilities"], &p.Capabilities) != nil {
		p.Capabilities = acpv2.ClientCapabilities{}
	}
	if meta := members["_meta"]; len(meta) > 0 && meta[0] == '{' {
		p.Meta = meta
	}
	return p
}

// authV2 serves auth/login and auth/logout: logout returns the
// connection to the unauthenticated state, as v1's logout does, and login
// leaves it.
func (c *serverConn) authV2(ctx context.Context, req *request) (func(), error) {
	auth := c.srv.opts.V2.(AuthenticatorV2)
	var run func(context.Context) error
	var result any
	loggedOut := req.Method == acpv2.MethodAuthLogout
	if loggedOut {
		var p acpv2.LogoutAuthRequest
		if err := decodeV2(req, "LogoutAuthRequest", &p); err != nil {
			return nil, err
		}
		run, result = func(ctx context.Context) error { return auth.Logout(ctx, &p) }, &acpv2.LogoutAuthResponse{}
	} else {
		var p acpv2.LoginAuthRequest
		if err := decodeV2(req, "LoginAuthRequest", &p); err != nil {
			return nil, err
		}
		run, result = func(ctx context.Context) error { return auth.Login(ctx, &p) }, &acpv2.LoginAuthResponse{}
	}
	return c.simple(ctx, req, func(ctx context.Context) (any, error) {
		if err := run(ctx); err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.loggedOut = loggedOut
		c.mu.Unlock()
		return result, nil
	}), nil
}

func (c *serverConn) authStatusV2(ctx context.Context, req *request) (func(), error) {
	var p acpv2.AuthStatusRequest
	if err := decodeV2(req, "AuthStatusRequest", &p); err != nil {
		return nil, err
	}
	agent := c.srv.opts.V2.(AuthStatusV2)
	return c.simple(ctx, req, func(ctx context.Context) (any, error) { return agent.AuthStatus(ctx) }), nil
}

// checkMCPTransports refuses a server whose transport initialize did not
// advertise (session.mcp), as the SDK's assertSupportedMcpServers does.
func (c *serverConn) checkMCPTransports(servers []acpv2.McpServer) error {
	c.mu.Lock()
	mcp := c.v2.mcp
	c.mu.Unlock()
	for i, s := range servers {
		ok := false
		switch {
		case s.Stdio != nil:
			ok = mcp != nil && mcp.Stdio != nil
		case s.HTTP != nil:
			ok = mcp != nil && mcp.HTTP != nil
		case s.ACP != nil:
			ok = mcp != nil && mcp.ACP != nil
		}
		if !ok {
			return &DataError{Err: fmt.Errorf("%w: mcpServers[%d]: transport %q is not supported", ErrInvalidParams, i, s.Tag()),
				Data: map[string]string{"type": s.Tag()}}
		}
	}
	return nil
}

func (c *serverConn) newSessionV2(ctx context.Context, req *request) (func(), error) {
	var p acpv2.NewSessionRequest
	if err := decodeV2(req, "NewSessionRequest", &p); err != nil {
		return nil, err
	}
	if err := c.checkMCPTransports(p.MCPServers); err != nil {
		return nil, err
	}
	return c.create(ctx, req, func() (*serviceSession, any, error) {
		client := c.newClientV2()
		sess, resp, err := c.srv.opts.V2.NewSession(ctx, &p, client)
		if err != nil {
			return nil, nil, err
		}
		return v2Session(resp.SessionID, sess, client), resp, nil
	}), nil
}

func v2Session(id string, sess SessionV2, client *ClientConnV2) *serviceSession {
	ss := newServiceSession(id, &client.sessionClient)
	ss.v2, ss.v2client = sess, client
	return ss
}

// decodeSessionV2 is decodeV2 for params that name a session (id points
// into p): the id's syntax is checked too, for the methods that take it
// to the store or look it up.
func decodeSessionV2(req *request, def string, p any, id *acpv2.SessionId) error {
	if err := decodeV2(req, def, p); err != nil {
		return err
	}
	return checkSessionID(*id)
}

// promptV2 hands the session a user message: it is answered once the
// session has inserted it (with its id), not when the work it starts
// ends. Until then it is held, and session/cancel, $/cancel_request or
// session/close withdraw it (-32800).
func (c *serverConn) promptV2(ctx context.Context, req *request) (func(), error) {
	var p acpv2.PromptRequest
	if err := decodeSessionV2(req, "PromptRequest", &p, &p.SessionID); err != nil {
		return nil, err
	}
	// Held until inserted: session/cancel, $/cancel_request and
	// session/close withdraw it.
	held, err := c.registerPrompt(ctx, req, p.SessionID)
	if err != nil {
		return nil, err
	}
	// Answered in order with the session's updates: its user_message
	// (queued before inserted is called) goes out first.
	inserted := func(id acpv2.MessageId, err error) {
		held.answer(func() (any, error) {
			if err != nil && held.ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %v", ErrRequestCancelled, context.Cause(held.ctx))
			}
			if err != nil {
				return nil, err
			}
			return &acpv2.PromptResponse{MessageID: id}, nil
		})
	}
	if err := held.ss.v2.Prompt(held.ctx, &p, inserted); err != nil {
		held.drop()
		return nil, err
	}
	return nil, nil
}

// cancelSessionV2 serves session/cancel, inline: the held prompts are
// withdrawn and the session's foreground work is cancelled. A prompt
// sent after it is not affected.
func (c *serverConn) cancelSessionV2(req *request) {
	var p acpv2.CancelSessionNotification
	if err := decodeV2(req, "CancelSessionNotification", &p); err != nil {
		c.log.Debug("bad session/cancel", "error", err)
		return
	}
	c.cancelSession(p.SessionID, errWithdrawnByCancel)
}

// setConfigOptionV2 applies session/set_config_option inline, like v1's.
func (c *serverConn) setConfigOptionV2(ctx context.Context, req *request) (func(), error) {
	var p acpv2.SetSessionConfigOptionRequest
	if err := decodeV2(req, "SetSessionConfigOptionRequest", &p); err != nil {
		return nil, err
	}
	ss, err := c.sessionNamed(p.SessionID)
	if err != nil {
		return nil, err
	}
	return c.applyIn(ctx, req, ss, func(ss *serviceSession) (any, error) {
		cs, ok := ss.v2.(ConfigurableSessionV2)
		if !ok {
			return nil, fmt.Errorf("%w: configId: session %s has no config options", ErrInvalidParams, p.SessionID)
		}
		opts, err := cs.SetConfigOption(ctx, &p)
		return &acpv2.SetSessionConfigOptionResponse{ConfigOptions: opts}, err
	})
}

// resumeV2 serves session/resume: the session is closed wherever it is
// live, opened from the agent, registered here, its conversation replayed
// when asked, its current state sent, and then the request answered.
func (c *serverConn) resumeV2(ctx context.Context, req *request) (func(), error) {
	var p acpv2.ResumeSessionRequest
	if err := decodeSessionV2(req, "ResumeSessionRequest", &p, &p.SessionID); err != nil {
		return nil, err
	}
	if err := c.checkMCPTransports(p.MCPServers); err != nil {
		return nil, err
	}
	return func() {
		ss, resumed, err := c.openV2(ctx, &p)
		if err != nil {
			c.answer(ctx, req, nil, err)
			return
		}
		if p.ReplayFrom != nil && resumed.Replay != nil {
			resumed.Replay(ctx)
		}
		state := resumed.State
		if state == nil {
			state = &acpv2.StateUpdate{Idle: &acpv2.IdleStateUpdate{}}
		}
		// The current state, after the replay and before the answer,
		// even without a replay (v2 requires it).
		if err := ss.v2client.Update(ctx, acpv2.SessionUpdate{StateUpdate: state}); err != nil {
			c.log.Debug("sending the resumed session's state", "session", ss.id, "error", err)
		}
		resp := resumed.Response
		ss.client.out.do(func() { c.answer(ctx, req, &resp, nil) })
	}, nil
}

// openV2 is open (v1's load and resume) for v2.
func (c *serverConn) openV2(ctx context.Context, p *acpv2.ResumeSessionRequest) (*serviceSession, *ResumedSessionV2, error) {
	if ch, ok := c.srv.opts.V2.(LoadCheckerV2); ok {
		if err := ch.CheckResume(ctx, p); err != nil {
			return nil, nil, notFoundData(err, p.SessionID)
		}
	}
	var resumed *ResumedSessionV2
	ss, err := c.reopen(p.SessionID, func() (*serviceSession, func(), error) {
		client := c.newClientV2()
		stop := func() {}
		if p.ReplayFrom != nil {
			var err error
			if stop, err = c.startLoading(&client.sessionClient, p.SessionID); err != nil {
				return nil, nil, err
			}
		}
		sess, r, err := c.srv.opts.V2.ResumeSession(ctx, p, client)
		if err != nil {
			stop()
			return nil, nil, notFoundData(err, p.SessionID)
		}
		resumed = r
		return v2Session(p.SessionID, sess, client), stop, nil
	})
	return ss, resumed, err
}

func (c *serverConn) listV2(ctx context.Context, req *request) (func(), error) {
	var p acpv2.ListSessionsRequest
	if err := decodeV2(req, "ListSessionsRequest", &p); err != nil {
		return nil, err
	}
	agent := c.srv.opts.V2
	return c.simple(ctx, req, func(ctx context.Context) (any, error) { return agent.ListSessions(ctx, &p) }), nil
}

func (c *serverConn) closeSessionV2(ctx context.Context, req *request) (func(), error) {
	var p acpv2.CloseSessionRequest
	if err := decodeSessionV2(req, "CloseSessionRequest", &p, &p.SessionID); err != nil {
		return nil, err
	}
	c.withdrawHeld(p.SessionID)
	return c.closeAnswering(ctx, req, p.SessionID, &acpv2.CloseSessionResponse{}), nil
}

// withdrawHeld withdraws a session's held prompts, inline, before the
// session is closed: they are answered -32800, not "cancelled" turns.
func (c *serverConn) withdrawHeld(id acpv2.SessionId) { c.cancelTurns(id, errWithdrawnByClose) }

func (c *serverConn) deleteSessionV2(ctx context.Context, req *request) (func(), error) {
	var p acpv2.DeleteSessionRequest
	if err := decodeSessionV2(req, "DeleteSessionRequest", &p, &p.SessionID); err != nil {
		return nil, err
	}
	return c.deleteAnswering(ctx, req, c.srv.opts.V2.(SessionDeleterV2), p.SessionID, &acpv2.DeleteSessionResponse{}), nil
}

// forkSessionV2 serves the unstable session/fork: the source may be live
// on any connection (a fork only reads it); the new session is this
// connection's.
func (c *serverConn) forkSessionV2(ctx context.Context, req *request) (func(), error) {
	var p acpv2.ForkSessionRequest
	if err := decodeSessionV2(req, "ForkSessionRequest", &p, &p.SessionID); err != nil {
		return nil, err
	}
	if err := c.checkMCPTransports(p.MCPServers); err != nil {
		return nil, err
	}
	var source SessionV2
	if ss := c.srv.liveSession(p.SessionID); ss != nil {
		source = ss.v2 // nil when it is live on a v1 connection
	}
	return c.forkV2(ctx, req, &p, source), nil
}

// forkV2 forks p.SessionID (source, when it is live on a v2 connection)
// into a session of this connection.
func (c *serverConn) forkV2(ctx context.Context, req *request, p *acpv2.ForkSessionRequest, source SessionV2) func() {
	forker := c.srv.opts.V2.(ForkerV2)
	return c.create(ctx, req, func() (*serviceSession, any, error) {
		client := c.newClientV2()
		sess, resp, err := forker.ForkSession(ctx, p, source, client)
		if err != nil {
			return nil, nil, notFoundData(err, p.SessionID)
		}
		return v2Session(resp.SessionID, sess, client), resp, nil
	})
}

// cancelWorkV2 serves tool_call/cancel and terminal/cancel: answered
// once the session accepted the cancellation (it then confirms it with a
// tool_call_update to a final status, or a terminal_update with its exit
// status). A session that cancels no tool call (no terminal) answers
// -32602, as the SDK does.
func (c *serverConn) cancelWorkV2(ctx context.Context, req *request) (func(), error) {
	var sessionID, member, id string
	var cancel func(SessionV2) (func(context.Context, string) error, bool)
	if req.Method == acpv2.MethodToolCallCancel {
		var p acpv2.CancelToolCallRequest
		if err := decodeV2(req, "CancelToolCallRequest", &p); err != nil {
			return nil, err
		}
		sessionID, member, id = p.SessionID, "toolCallId", p.ToolCallID
		cancel = func(s SessionV2) (func(context.Context, string) error, bool) {
			tc, ok := s.(ToolCallCancellerV2)
			if !ok {
				return nil, false
			}
			return tc.CancelToolCall, true
		}
	} else {
		var p acpv2.CancelTerminalRequest
		if err := decodeV2(req, "CancelTerminalRequest", &p); err != nil {
			return nil, err
		}
		sessionID, member, id = p.SessionID, "terminalId", p.TerminalID
		cancel = func(s SessionV2) (func(context.Context, string) error, bool) {
			tc, ok := s.(TerminalCancellerV2)
			if !ok {
				return nil, false
			}
			return tc.CancelTerminal, true
		}
	}
	ss, err := c.sessionNamed(sessionID)
	if err != nil {
		return nil, err
	}
	run, ok := cancel(ss.v2)
	if !ok {
		return nil, fmt.Errorf("%w: %s: %q cannot be cancelled", ErrInvalidParams, member, id)
	}
	return c.inSessionOrder(ctx, req, ss, func(ctx context.Context) (any, error) {
		if req.Method == acpv2.MethodToolCallCancel {
			return &acpv2.CancelToolCallResponse{}, run(ctx, id)
		}
		return &acpv2.CancelTerminalResponse{}, run(ctx, id)
	}), nil
}

// inSessionOrder is simple for work on a session whose answer follows
// the updates the work queued.
func (c *serverConn) inSessionOrder(ctx context.Context, req *request, ss *serviceSession, fn func(context.Context) (any, error)) func() {
	return func() {
		res, err := fn(ctx)
		if err != nil {
			res = nil
		}
		ss.client.out.do(func() { c.answer(ctx, req, res, err) })
	}
}

// setTitleV2, statusV2 and archiveV2 serve the unstable session/set_title,
// session/status, session/archive and session/unarchive through the
// agent's SessionManager, as v1's do.
func (c *serverConn) setTitleV2(ctx context.Context, req *request) (func(), error) {
	var p acpv2.SetSessionTitleRequest
	if err := decodeSessionV2(req, "SetSessionTitleRequest", &p, &p.SessionID); err != nil {
		return nil, err
	}
	return c.setTitleAnswering(ctx, req, c.srv.opts.V2.(SessionManager), p.SessionID, p.Title,
		func(title string) any { return &acpv2.SetSessionTitleResponse{Title: title} }), nil
}

// statusV2 answers "open" with the session's last state for a session
// live on a v2 connection, "open" for one live on a v1 connection, and
// asks the agent otherwise.
func (c *serverConn) statusV2(ctx context.Context, req *request) (func(), error) {
	var p acpv2.SessionStatusRequest
	if err := decodeSessionV2(req, "SessionStatusRequest", &p, &p.SessionID); err != nil {
		return nil, err
	}
	m := c.srv.opts.V2.(SessionManager)
	return c.simple(ctx, req, func(ctx context.Context) (any, error) {
		if ss := c.srv.liveSession(p.SessionID); ss != nil {
			resp := &acpv2.SessionStatusResponse{Status: acpv2.SessionStatusOpen}
			if ss.v2client != nil {
				resp.State = ss.v2client.State()
			}
			return resp, nil
		}
		st, err := m.SessionStatus(ctx, p.SessionID)
		if err != nil {
			return nil, notFoundData(err, p.SessionID)
		}
		return &acpv2.SessionStatusResponse{Status: acpv2.SessionStatus(st)}, nil
	}), nil
}

func (c *serverConn) archiveV2(ctx context.Context, req *request) (func(), error) {
	var p acpv2.ArchiveSessionRequest // UnarchiveSessionRequest has the same members
	def := "ArchiveSessionRequest"
	archive := req.Method == acpv2.MethodSessionArchive
	if !archive {
		def = "UnarchiveSessionRequest"
	}
	if err := decodeSessionV2(req, def, &p, &p.SessionID); err != nil {
		return nil, err
	}
	var result any = &acpv2.ArchiveSessionResponse{}
	if !archive {
		result = &acpv2.UnarchiveSessionResponse{}
	}
	return c.archiveAnswering(ctx, req, c.srv.opts.V2.(SessionManager), p.SessionID, archive, result), nil
}

// providersV2 serves the unstable providers/list, providers/set and
// providers/disable.
func (c *serverConn) providersV2(ctx context.Context, req *request) (func(), error) {
	pm := c.srv.opts.V2.(ProviderManagerV2)
	switch req.Method {
	case acpv2.MethodProvidersList:
		var p acpv2.ListProvidersRequest
		if err := decodeV2(req, "ListProvidersRequest", &p); err != nil {
			return nil, err
		}
		return c.simple(ctx, req, func(ctx context.Context) (any, error) {
			list, err := pm.ListProviders(ctx)
			if err != nil {
				return nil, err
			}
			return &acpv2.ListProvidersResponse{Providers: list}, nil
		}), nil
	case acpv2.MethodProvidersSet:
		var p acpv2.SetProviderRequest
		if err := decodeV2(req, "SetProviderRequest", &p); err != nil {
			return nil, err
		}
		return c.simple(ctx, req, func(ctx context.Context) (any, error) {
			return &acpv2.SetProviderResponse{}, pm.SetProvider(ctx, &p)
		}), nil
	default:
		var p acpv2.DisableProviderRequest
		if err := decodeV2(req, "DisableProviderRequest", &p); err != nil {
			return nil, err
		}
		return c.simple(ctx, req, func(ctx context.Context) (any, error) {
			return &acpv2.DisableProviderResponse{}, pm.DisableProvider(ctx, p.ProviderID)
		}), nil
	}
}

// ForkFromUserEntryMetaV2 is the key, under _meta["acp-agent"] of a v2
// session/fork, of the user entry the fork starts before: how
// _acp-agent/session/fork's fromUserEntryIndex reaches a ForkerV2 (v2's
// fork request has no member for it).
const ForkFromUserEntryMetaV2 = "fromUserEntryIndex"

// extensionForkV2 serves _acp-agent/session/fork on a v2 connection: a
// session/fork of the session its params name (live on this connection),
// from the user entry fromUserEntryIndex names.
func (c *serverConn) extensionForkV2(ctx context.Context, req *request) (func(), error) {
	ss, from, err := c.extensionForkParams(req)
	if err != nil {
		return nil, err
	}
	p := acpv2.ForkSessionRequest{SessionID: ss.id}
	if from != nil {
		meta, err := json.Marshal(map[string]any{"acp-agent": map[string]int{ForkFromUserEntryMetaV2: *from}})
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInternal, err)
		}
		p.Meta = meta
	}
	return c.forkV2(ctx, req, &p, ss.v2), nil
}
