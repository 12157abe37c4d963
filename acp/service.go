package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"
)

// This file is the connection's side of the method table: dispatch and
// one handler per method.

type requestIDKey struct{}

// RequestID returns the JSON-RPC id (as JSON text) of the client request
// whose handling ctx belongs to, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// handle is called by the read goroutine for each request and
// notification. It never blocks: it decodes, validates and registers state
// inline, so a later session/cancel always finds the turn it targets, and
// leaves the work and the reply to a goroutine.
func (c *serverConn) handle(req *request) {
	if req.Notif {
		if c.speaksV2(req) {
			c.notifyV2(req)
			return
		}
		if m := methodIndex[req.Method]; m != nil && m.notify != nil {
			m.notify(c, req)
			return
		}
		// ACP: unknown notifications are ignored.
		c.log.Debug("ignoring notification", "method", req.Method)
		return
	}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		// No new work is started once shutdown has begun; the reply is
		// written inline because no goroutine may be started any more.
		c.reply(c.ctx, req, nil, fmt.Errorf("%w: %v", ErrInternal, errShutdown))
		return
	}
	if _, dup := c.inflight[req.ID]; dup {
		c.mu.Unlock()
		c.replyAsync(req, nil, fmt.Errorf("%w: request id %s is already in use", ErrInvalidRequest, req.ID))
		return
	}
	ctx, cancel := context.WithCancelCause(context.WithValue(context.WithValue(c.ctx, requestIDKey{}, req.ID.String()), connectionKey{}, c.connection()))
	c.inflight[req.ID] = cancel
	c.mu.Unlock()

	work, err := c.dispatch(ctx, req)
	if err != nil {
		c.finishRequest(req.ID)
		c.replyAsync(req, nil, err)
		return
	}
	if work == nil {
		return // queued inline; answered when it completes
	}
	if !c.spawnRequest(work) {
		c.finishRequest(req.ID)
		c.reply(c.ctx, req, nil, fmt.Errorf("%w: %v", ErrInternal, errShutdown))
	}
}

// dispatch finds req's method in the table, checks that it may run now
// and runs its handler, which validates req and registers its state. It
// returns the work to run off the read goroutine; that work answers. No
// work and no error means the request was queued and will be answered by
// its completion (session/prompt).
func (c *serverConn) dispatch(ctx context.Context, req *request) (func(), error) {
	if c.speaksV2(req) {
		return c.dispatchV2(ctx, req)
	}
	m := methodIndex[req.Method]
	known := m != nil && m.Direction&ToAgent != 0
	if req.Method != MethodInitialize {
		c.mu.Lock()
		initialized, loggedOut := c.initialized, c.loggedOut
		c.mu.Unlock()
		switch {
		case !known:
			return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
		case !initialized:
			return nil, fmt.Errorf("%w: %s before initialize", ErrInvalidRequest, req.Method)
		case m.Notification:
			return nil, fmt.Errorf("%w: %s is a notification and must not have an id", ErrInvalidRequest, req.Method)
		case !serves(c.srv.agent, m):
			return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
		case m.opensSession && loggedOut:
			return nil, fmt.Errorf("%w: logged out; call authenticate first", ErrAuthRequired)
		}
	}
	return m.handle(c, ctx, req)
}

func (c *serverConn) initialize(ctx context.Context, req *request) (func(), error) {
	var p InitializeRequest
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	// Agent.Initialize is a pure description of the agent; running it
	// inline lets the next request see the connection initialized.
	resp, err := c.srv.agent.Initialize(ctx, &p)
	if err != nil {
		return nil, err
	}
	// Version negotiation: we speak 1; echo it, else answer with ours.
	resp.ProtocolVersion = ProtocolVersionV1
	// The capabilities of methods are the table's: advertised exactly when
	// the agent serves the method.
	for _, m := range methods {
		if m.capability != nil {
			m.capability(&resp.AgentCapabilities, serves(c.srv.agent, m))
		}
	}
	if resp.AgentCapabilities.Meta, err = c.withTransportMeta(resp.AgentCapabilities.Meta); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.initialized = true
	c.version = ProtocolVersionV1
	c.clientCaps = p.ClientCapabilities
	c.mu.Unlock()
	c.x.mu.Lock()
	c.x.systemPrompt = resp.AgentCapabilities.SessionCapabilities.SystemPrompt
	c.x.mu.Unlock()
	return func() { c.answer(ctx, req, resp, nil) }, nil
}

func (c *serverConn) authenticate(ctx context.Context, req *request) (func(), error) {
	var p AuthenticateRequest
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	return c.simple(ctx, req, func(ctx context.Context) (any, error) {
		if err := c.srv.agent.Authenticate(ctx, &p); err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.loggedOut = false
		c.mu.Unlock()
		c.noteAuthStatus(ctx)
		return &AuthenticateResponse{}, nil
	}), nil
}

// logout returns the connection to the unauthenticated state: the
// methods that open sessions answer -32000 until authenticate succeeds
// on it. Sessions already open stay open. The agent is told first, to
// forget what it holds for this client.
func (c *serverConn) logout(ctx context.Context, req *request) (func(), error) {
	var p LogoutRequest
	if err := decodeOptionalParams(req.Params, &p); err != nil {
		return nil, err
	}
	agent := c.srv.agent.(Logouter)
	return c.simple(ctx, req, func(ctx context.Context) (any, error) {
		if err := agent.Logout(ctx, &p); err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.loggedOut = true
		c.mu.Unlock()
		c.noteAuthStatus(ctx)
		return &LogoutResponse{}, nil
	}), nil
}

// withTransportMeta adds to an initialize response's capabilities _meta
// what the connection's transport says of itself (either version).
func (c *serverConn) withTransportMeta(meta json.RawMessage) (json.RawMessage, error) {
	tc, ok := c.rpc.stream.(TransportCapabilities)
	if !ok {
		return meta, nil
	}
	meta, err := withMetaKey(meta, "transport", tc.TransportCapabilities())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInternal, err)
	}
	return meta, nil
}

// simple wraps request work that has no ordering needs: run fn, reply.
func (c *serverConn) simple(ctx context.Context, req *request, fn func(context.Context) (any, error)) func() {
	return func() {
		res, err := fn(ctx)
		c.answer(ctx, req, res, err)
	}
}

func (c *serverConn) newSession(ctx context.Context, req *request) (func(), error) {
	var p NewSessionRequest
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if err := c.checkSystemPrompt(p.SystemPrompt); err != nil {
		return nil, err
	}
	return c.create(ctx, req, func() (*serviceSession, any, error) {
		client := c.newClient()
		sess, resp, err := c.srv.agent.NewSession(ctx, &p, client)
		if err != nil {
			return nil, nil, err
		}
		return v1Session(resp.SessionID, sess, client), resp, nil
	}), nil
}

// create is the work of a request that opens a new session (new, fork;
// either version): a place for it is reserved (reserveSession), open
// makes it for a client of this connection, and register answers with
// open's result and starts the session's updates.
func (c *serverConn) create(ctx context.Context, req *request, open func() (*serviceSession, any, error)) func() {
	return func() {
		release, err := c.reserveSession("")
		if err != nil {
			c.answer(ctx, req, nil, err)
			return
		}
		defer release()
		ss, result, err := open()
		if err != nil {
			c.answer(ctx, req, nil, err)
			return
		}
		c.register(ctx, req, ss, result, release)
	}
}

func v1Session(id string, sess Session, client *ClientConn) *serviceSession {
	ss := newServiceSession(id, &client.sessionClient)
	ss.sess = sess
	return ss
}

func (c *serverConn) newClient() *ClientConn {
	c.mu.Lock()
	caps := c.clientCaps
	c.mu.Unlock()
	return &ClientConn{sessionClient: c.newSessionClient(), caps: caps}
}

func (c *serverConn) newSessionClient() sessionClient {
	return sessionClient{conn: c, id: new(atomic.Pointer[string]), out: newOutbox(c.rpc, c.log)}
}

// register adds a created session (a v1 Session, or ss.v2), answers the
// request that created it with result, and then starts the session's
// outbox: the client must know the session id before it sees the
// session's updates. release gives back the session's reservation
// (reserveSession) once it counts as live, before the answer, so that a
// client's next session/new is not refused for a place this one held.
func (c *serverConn) register(ctx context.Context, req *request, ss *serviceSession, result any, release func()) {
	ss.client.setSessionID(ss.id)
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		c.answer(ctx, req, nil, errShutdown)
		if err := ss.life().Close(); err != nil {
			c.log.Warn("closing session", "session", ss.id, "error", err)
		}
		return
	}
	c.sessions[ss.id] = ss
	c.srv.setLive(ss.id, c)
	c.outboxes.Add(1)
	c.mu.Unlock()
	release()
	c.answer(ctx, req, result, nil)
	go func() {
		defer c.outboxes.Done()
		ss.client.out.run()
	}()
}

// OpenChild opens a session the agent creates itself (a subagent of the
// session c belongs to) on c's connection under id: open builds it with
// its own ClientConn, whose updates carry id, and session/cancel naming
// id reaches it. The caller announces it
// (subagent_update on the parent, drained) first. CloseChild ends it.
func (c *ClientConn) OpenChild(id string, open func(*ClientConn) (Session, error)) (*ClientConn, error) {
	child := c.conn.newClient()
	child.setSessionID(id)
	sess, err := open(child)
	if err != nil {
		return nil, err
	}
	if err := c.conn.registerHeld(v1Session(id, sess, child)); err != nil {
		return nil, err
	}
	return child, nil
}

// Release lets a child's updates out: until then they wait, so that the
// child can start work (and be cancelled) before the client has been told
// about it.
func (c *sessionClient) Release() { c.startOut() }

// CloseChild ends a child session OpenChild registered: it is cancelled,
// closed and forgotten, like session/close.
func (c *sessionClient) CloseChild(id string) { c.conn.closeLive(id) }

// Drained waits until every update queued on c so far has been written.
func (c *sessionClient) Drained(ctx context.Context) error { return c.out.drained(ctx) }

// registerLoaded adds a loaded session and starts its outbox at once: its
// replay goes out before the response, which is queued behind it.
func (c *serverConn) registerLoaded(ss *serviceSession) error {
	if err := c.registerHeld(ss); err != nil {
		return err
	}
	ss.client.startOut()
	return nil
}

// registerHeld adds a session whose outbox starts only with
// client.startOut: what it queues until then waits.
func (c *serverConn) registerHeld(ss *serviceSession) error {
	client := ss.client
	// startLoading started it already, with the id set.
	running := client.start != nil
	if !running {
		client.setSessionID(ss.id)
	}
	// Set before the session is published: a session/close racing with
	// this request may start the outbox as soon as it is in the map.
	if !running {
		client.start = sync.OnceFunc(func() {
			go func() {
				defer c.outboxes.Done()
				client.out.run()
			}()
		})
	}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		if err := ss.life().Close(); err != nil {
			c.log.Warn("closing session", "session", ss.id, "error", err)
		}
		return fmt.Errorf("%w: %v", ErrInternal, errShutdown)
	}
	c.sessions[ss.id] = ss
	c.srv.setLive(ss.id, c)
	if !running {
		c.outboxes.Add(1)
	}
	c.mu.Unlock()
	return nil
}

// startOut starts the client's outbox (once; registerHeld set it up).
func (c *sessionClient) startOut() {
	if c.start != nil {
		c.start()
	}
}

// closeLive closes a session open on this connection, if it is: its turns
// are cancelled (their prompts answer "cancelled"), the session is closed,
// and its update stream is flushed and stopped. It reports whether the
// session was open.
func (c *serverConn) closeLive(id SessionId) bool {
	c.mu.Lock()
	if c.closing {
		// shutdown stops and closes every session itself (a parent
		// closing its children lands here).
		c.mu.Unlock()
		return false
	}
	ss, ok := c.sessions[id]
	if ok {
		delete(c.sessions, id)
		c.srv.forget(id, c)
		for _, cancel := range ss.turns {
			cancel(errTurnCancelled)
		}
	}
	c.mu.Unlock()
	if !ok {
		return false
	}
	if ss.v2client != nil {
		// v2: every request of the session's to the client is cancelled
		// ($/cancel_request) before session/close is answered.
		ss.v2client.cancelCalls(errSessionClosed)
	}
	ss.life().Cancel()
	if err := ss.life().Close(); err != nil {
		c.log.Warn("closing session", "session", id, "error", err)
	}
	ss.client.startOut() // a held child's outbox must run to end
	ss.client.out.stop()
	<-ss.client.out.ended
	return true
}

// session returns the session id live on this connection.
func (c *serverConn) session(id SessionId) (*serviceSession, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ss, ok := c.sessions[id]
	return ss, ok
}

func (c *serverConn) prompt(ctx context.Context, req *request) (func(), error) {
	var p PromptRequest
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	// A prompt while another runs is queued by the session (a follow-up);
	// session/cancel cancels all of them.
	pr, err := c.registerPrompt(ctx, req, p.SessionID)
	if err != nil {
		return nil, err
	}
	finish := func(resp *PromptResponse, err error) {
		pr.answer(func() (any, error) {
			if pr.ctx.Err() != nil || errors.Is(err, context.Canceled) {
				// ACP: a cancelled turn is a result, never an error.
				return &PromptResponse{StopReason: StopReasonCancelled}, nil
			}
			return resp, err
		})
	}
	// Queued here, on the read loop, so prompts queue in arrival order.
	if err := pr.ss.sess.Prompt(pr.ctx, &p, finish); err != nil {
		pr.drop()
		return nil, err
	}
	return nil, nil
}

// registeredPrompt is a prompt (either version) registered as one of its
// session's turns: session/cancel (v2: also $/cancel_request and
// session/close) cancels ctx, and shutdown waits until it is answered or
// dropped, once.
type registeredPrompt struct {
	c      *serverConn
	ss     *serviceSession
	req    *request
	ctx    context.Context
	cancel context.CancelCauseFunc
	once   sync.Once
}

// registerPrompt finds the session a prompt names and registers the
// prompt as one of its turns.
func (c *serverConn) registerPrompt(ctx context.Context, req *request, id SessionId) (*registeredPrompt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ss, ok := c.sessions[id]
	switch {
	case !ok:
		return nil, SessionNotFound(id, "")
	case c.closing:
		return nil, fmt.Errorf("%w: %v", ErrInternal, errShutdown)
	}
	pr := &registeredPrompt{c: c, ss: ss, req: req}
	pr.ctx, pr.cancel = context.WithCancelCause(ctx)
	ss.turns[req.ID] = pr.cancel
	c.reqs.Add(1)
	return pr, nil
}

// answer answers the prompt, the first time it is called, with what
// outcome returns; outcome runs before the prompt is forgotten, so ctx
// still tells whether it was cancelled. The session calls answer in
// order with its updates, so the response is queued behind the last
// update it sent.
func (pr *registeredPrompt) answer(outcome func() (any, error)) {
	pr.once.Do(func() {
		result, err := outcome()
		pr.forget()
		// The id is free before the client can see the response.
		pr.c.finishRequest(pr.req.ID)
		replyCtx := context.WithoutCancel(pr.ctx)
		pr.ss.client.out.do(func() { pr.c.reply(replyCtx, pr.req, result, err) })
		pr.c.reqs.Done()
	})
}

// drop forgets a prompt the session refused; the error is answered by
// the caller.
func (pr *registeredPrompt) drop() {
	pr.once.Do(func() {
		pr.forget()
		pr.c.reqs.Done()
	})
}

func (pr *registeredPrompt) forget() {
	pr.cancel(nil)
	pr.c.mu.Lock()
	delete(pr.ss.turns, pr.req.ID)
	pr.c.mu.Unlock()
}

// setConfigOption applies session/set_config_option inline, on the read
// loop, so a prompt sent after it runs with the new setting.
func (c *serverConn) setConfigOption(ctx context.Context, req *request) (func(), error) {
	var p SetSessionConfigOptionRequest
	return c.applyInline(ctx, req, &p, func(ss *serviceSession) (any, error) {
		cs, ok := ss.sess.(ConfigurableSession)
		if !ok {
			return nil, fmt.Errorf("%w: configId: session %s has no config options", ErrInvalidParams, p.SessionID)
		}
		opts, err := cs.SetConfigOption(ctx, &p)
		return &SetSessionConfigOptionResponse{ConfigOptions: opts}, err
	}, func() SessionId { return p.SessionID })
}

// setMode applies session/set_mode inline, like setConfigOption.
func (c *serverConn) setMode(ctx context.Context, req *request) (func(), error) {
	var p SetSessionModeRequest
	return c.applyInline(ctx, req, &p, func(ss *serviceSession) (any, error) {
		ms, ok := ss.sess.(ModalSession)
		if !ok {
			return nil, fmt.Errorf("%w: modeId: session %s has no modes", ErrInvalidParams, p.SessionID)
		}
		return &SetSessionModeResponse{}, ms.SetMode(ctx, p.ModeID)
	}, func() SessionId { return p.SessionID })
}

// applyInline decodes params into p, finds the session it names, and runs
// apply on the read loop. The result is answered in order with the
// session's updates, after the ones apply sent (a current_mode_update).
func (c *serverConn) applyInline(ctx context.Context, req *request,
	p interface{ Validate() error }, apply func(*serviceSession) (any, error), sessionID func() SessionId) (func(), error) {
	if err := decodeParams(req.Params, p); err != nil {
		return nil, err
	}
	ss, ok := c.session(sessionID())
	if !ok {
		return nil, SessionNotFound(sessionID(), "")
	}
	return c.applyIn(ctx, req, ss, apply)
}

// applyIn runs apply on ss, on the read loop, and answers its result in
// order with the session's updates (either version).
func (c *serverConn) applyIn(ctx context.Context, req *request, ss *serviceSession, apply func(*serviceSession) (any, error)) (func(), error) {
	result, err := apply(ss)
	if err != nil {
		return nil, err
	}
	ss.client.out.do(func() { c.answer(ctx, req, result, nil) })
	return nil, nil
}

// load serves session/load and session/resume: the session is closed
// wherever it is open, loaded from the agent's store, registered here,
// replayed (load only) and then answered.
func (c *serverConn) load(ctx context.Context, req *request) (func(), error) {
	store := c.srv.agent.(SessionStore)
	lr := &LoadRequest{Replay: req.Method == MethodSessionLoad}
	if lr.Replay {
		var p LoadSessionRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		lr.SessionID, lr.CWD, lr.AdditionalDirectories, lr.MCPServers, lr.SystemPrompt = p.SessionID, p.CWD, p.AdditionalDirectories, p.MCPServers, p.SystemPrompt
	} else {
		var p ResumeSessionRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		lr.SessionID, lr.CWD, lr.AdditionalDirectories, lr.MCPServers, lr.SystemPrompt = p.SessionID, p.CWD, p.AdditionalDirectories, p.MCPServers, p.SystemPrompt
	}
	if err := c.checkSystemPrompt(lr.SystemPrompt); err != nil {
		return nil, err
	}
	return func() {
		ss, loaded, err := c.open(ctx, store, lr)
		if err != nil {
			c.answer(ctx, req, nil, err)
			return
		}
		if lr.Replay && loaded.Replay != nil {
			loaded.Replay(ctx)
		}
		var result any = &ResumeSessionResponse{Modes: loaded.Modes, ConfigOptions: loaded.ConfigOptions}
		if lr.Replay {
			result = &LoadSessionResponse{Modes: loaded.Modes, ConfigOptions: loaded.ConfigOptions}
		}
		// Behind the replay, in order.
		ss.client.out.do(func() { c.answer(ctx, req, result, nil) })
	}, nil
}

// open closes lr's session wherever it is live, loads it from store and
// registers it here; a request the store refuses up front (LoadChecker)
// leaves the live session as it is.
func (c *serverConn) open(ctx context.Context, store SessionStore, lr *LoadRequest) (*serviceSession, *LoadedSession, error) {
	if ch, ok := store.(LoadChecker); ok {
		if err := ch.CheckLoad(ctx, lr); err != nil {
			return nil, nil, err
		}
	}
	var loaded *LoadedSession
	ss, err := c.reopen(lr.SessionID, func() (*serviceSession, func(), error) {
		client := c.newClient()
		stop := func() {}
		if lr.Replay {
			var err error
			if stop, err = c.startLoading(&client.sessionClient, string(lr.SessionID)); err != nil {
				return nil, nil, err
			}
		}
		sess, l, err := store.LoadSession(ctx, lr, client)
		if err != nil {
			stop()
			return nil, nil, err
		}
		loaded = l
		return v1Session(lr.SessionID, sess, client), stop, nil
	})
	return ss, loaded, err
}

// reopen serves the opening of a stored session (v1's load and resume,
// v2's resume): the session is closed wherever it is live, load opens it
// for a client of this connection, and it is registered here, its
// updates flowing at once. A claim keeps another load or resume of the
// same session from doing the same meanwhile, which would leave two live
// copies writing one session. load returns, beside the session, what
// ends an outbox it started early (startLoading) when registering fails.
func (c *serverConn) reopen(id SessionId, load func() (*serviceSession, func(), error)) (*serviceSession, error) {
	if err := c.srv.claim(id); err != nil {
		return nil, err
	}
	defer c.srv.unclaim(id)
	release, err := c.reserveSession(id)
	if err != nil {
		return nil, err
	}
	defer release()
	c.srv.closeAnywhere(id)
	ss, stop, err := load()
	if err != nil {
		return nil, err
	}
	if err := c.registerLoaded(ss); err != nil {
		stop()
		return nil, err
	}
	return ss, nil
}

// startLoading starts the outbox of a session being loaded with a replay
// before the session is registered, so that the agent can replay the
// conversation while it still reads it (the client named the session: it
// knows the id). registerHeld then finds the outbox started. stop, for a
// load that fails, writes what was queued and ends the outbox, before
// the error is answered.
func (c *serverConn) startLoading(client *sessionClient, id string) (stop func(), err error) {
	client.setSessionID(id)
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %v", ErrInternal, errShutdown)
	}
	c.outboxes.Add(1)
	c.mu.Unlock()
	client.start = sync.OnceFunc(func() {})
	go func() {
		defer c.outboxes.Done()
		client.out.run()
	}()
	return func() {
		client.out.stop()
		<-client.out.ended
	}, nil
}

func (c *serverConn) list(ctx context.Context, req *request) (func(), error) {
	var p ListSessionsRequest
	if err := decodeOptionalParams(req.Params, &p); err != nil {
		return nil, err
	}
	store := c.srv.agent.(SessionStore)
	return c.simple(ctx, req, func(ctx context.Context) (any, error) {
		return store.ListSessions(ctx, &p)
	}), nil
}

func (c *serverConn) closeSession(ctx context.Context, req *request) (func(), error) {
	var p CloseSessionRequest
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	return c.closeAnswering(ctx, req, p.SessionID, &CloseSessionResponse{}), nil
}

// closeAnswering serves session/close (either version): the session
// closes if it is live here, and result answers.
func (c *serverConn) closeAnswering(ctx context.Context, req *request, id SessionId, result any) func() {
	return c.simple(ctx, req, func(context.Context) (any, error) {
		if !c.closeLive(id) {
			return nil, SessionNotFound(id, "")
		}
		return result, nil
	})
}

func (c *serverConn) deleteSession(ctx context.Context, req *request) (func(), error) {
	var p DeleteSessionRequest
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	return c.deleteAnswering(ctx, req, c.srv.agent.(SessionStore), p.SessionID, &DeleteSessionResponse{}), nil
}

// deleteAnswering serves session/delete: the session is closed wherever
// it is live, deleted, and result answers.
func (c *serverConn) deleteAnswering(ctx context.Context, req *request, d SessionDeleterV2, id SessionId, result any) func() {
	return c.simple(ctx, req, func(ctx context.Context) (any, error) {
		c.srv.closeAnywhere(id)
		return result, d.DeleteSession(ctx, id)
	})
}

// forkSession serves session/fork.
func (c *serverConn) forkSession(ctx context.Context, req *request) (func(), error) {
	var p ForkSessionRequest
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if err := c.checkSystemPrompt(p.SystemPrompt); err != nil {
		return nil, err
	}
	return c.fork(ctx, req, &ForkRequest{SourceID: p.SessionID, CWD: p.CWD, AdditionalDirectories: p.AdditionalDirectories, MCPServers: p.MCPServers,
		SystemPrompt: p.SystemPrompt})
}

// fork serves session/fork and the fork extension. The source may be
// live on any connection (a fork only reads it); the new session is
// this connection's.
func (c *serverConn) fork(ctx context.Context, req *request, fr *ForkRequest) (func(), error) {
	forker := c.srv.agent.(Forker)
	var source Session
	if ss := c.srv.liveSession(fr.SourceID); ss != nil {
		source = ss.sess // nil when it is live on a v2 connection
	}
	return c.create(ctx, req, func() (*serviceSession, any, error) {
		client := c.newClient()
		sess, resp, err := forker.ForkSession(ctx, fr, source, client)
		if err != nil {
			return nil, nil, err
		}
		return v1Session(resp.SessionID, sess, client), resp, nil
	}), nil
}

// setTitle, status and archive serve the unstable session/set_title,
// session/status, session/archive and session/unarchive through the
// agent's SessionManager.
func (c *serverConn) setTitle(ctx context.Context, req *request) (func(), error) {
	var p SetSessionTitleRequest
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	return c.setTitleAnswering(ctx, req, c.srv.agent.(SessionManager), p.SessionID, *p.Title,
		func(title string) any { return &SetSessionTitleResponse{Title: title} }), nil
}

// setTitleAnswering serves session/set_title (either version) through
// m; result makes the answer of the title set.
func (c *serverConn) setTitleAnswering(ctx context.Context, req *request, m SessionManager, id SessionId, title string, result func(string) any) func() {
	return c.simple(ctx, req, func(ctx context.Context) (any, error) {
		title, err := m.SetSessionTitle(ctx, id, title)
		if err != nil {
			return nil, notFoundData(err, id)
		}
		return result(title), nil
	})
}

func (c *serverConn) status(ctx context.Context, req *request) (func(), error) {
	var p SessionStatusRequest
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	m := c.srv.agent.(SessionManager)
	return c.simple(ctx, req, func(ctx context.Context) (any, error) {
		if c.srv.liveOn(p.SessionID) != nil {
			return &SessionStatusResponse{Status: SessionStatusOpen}, nil
		}
		st, err := m.SessionStatus(ctx, p.SessionID)
		if err != nil {
			return nil, notFoundData(err, p.SessionID)
		}
		return &SessionStatusResponse{Status: st}, nil
	}), nil
}

// archive serves session/archive and session/unarchive. Archiving closes
// the session first wherever it is live, as session/close does.
func (c *serverConn) archive(ctx context.Context, req *request) (func(), error) {
	var p ArchiveSessionRequest
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	return c.archiveAnswering(ctx, req, c.srv.agent.(SessionManager), p.SessionID, req.Method == MethodSessionArchive, &ArchiveSessionResponse{}), nil
}

// archiveAnswering serves session/archive and session/unarchive (either
// version) through m; archiving closes the session first wherever it is
// live. result answers.
func (c *serverConn) archiveAnswering(ctx context.Context, req *request, m SessionManager, id SessionId, archive bool, result any) func() {
	return c.simple(ctx, req, func(ctx context.Context) (any, error) {
		if archive {
			c.srv.closeAnywhere(id)
		}
		if err := m.ArchiveSession(ctx, id, archive); err != nil {
			return nil, notFoundData(err, id)
		}
		return result, nil
	})
}

// notFoundData attaches {"sessionId"} to a session-not-found error, as
// the unstable session methods answer it.
func notFoundData(err error, id SessionId) error {
	if errors.Is(err, ErrSessionNotFound) {
		return &DataError{Err: err, Data: map[string]string{"sessionId": string(id)}}
	}
	return err
}

// extensionSession decodes the "sessionId" every extension method's
// params carry and finds that session on this connection.
func (c *serverConn) extensionSession(req *request) (*serviceSession, error) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if req.Params == nil || json.Unmarshal(*req.Params, &p) != nil {
		return nil, fmt.Errorf("%w: params: must be an object", ErrInvalidParams)
	}
	return c.sessionNamed(p.SessionID)
}

// sessionNamed checks a session id the client sent and finds it on this
// connection.
func (c *serverConn) sessionNamed(id SessionId) (*serviceSession, error) {
	if err := checkSessionID(id); err != nil {
		return nil, err
	}
	ss, ok := c.session(id)
	if !ok {
		return nil, SessionNotFound(id, "")
	}
	return ss, nil
}

// checkSessionID checks the syntax of a session id the client sent:
// -32602 naming what is wrong.
func checkSessionID(id SessionId) error {
	if err := ValidateSessionID(id); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	return nil
}

// extension serves the extension methods that name a session, on a
// connection of either version.
func (c *serverConn) extension(ctx context.Context, req *request) (func(), error) {
	ss, err := c.extensionSession(req)
	if err != nil {
		return nil, err
	}
	ext, ok := ss.life().(ExtensionSession)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
	}
	return func() {
		res, err := ext.Extension(ctx, req.Method, *req.Params)
		// In order with the session's updates: the ones the method sent
		// (a streamed structured answer) go out before its response.
		ss.client.out.do(func() { c.answer(ctx, req, res, err) })
	}, nil
}

// extensionFork serves MethodExtSessionFork: a fork of a session of this
// connection, up to a user message.
func (c *serverConn) extensionFork(ctx context.Context, req *request) (func(), error) {
	ss, from, err := c.extensionForkParams(req)
	if err != nil {
		return nil, err
	}
	return c.fork(ctx, req, &ForkRequest{SourceID: ss.id, FromUserEntryIndex: from})
}

// extensionForkParams are MethodExtSessionFork's params, for either
// version: the session (of this connection) and the user entry the fork
// starts before (nil: all of it).
func (c *serverConn) extensionForkParams(req *request) (*serviceSession, *int, error) {
	ss, err := c.extensionSession(req)
	if err != nil {
		return nil, nil, err
	}
	var fp struct {
		FromUserEntryIndex *int `json:"fromUserEntryIndex"`
	}
	if err := json.Unmarshal(*req.Params, &fp); err != nil {
		return nil, nil, fmt.Errorf("%w: fromUserEntryIndex: must be an integer", ErrInvalidParams)
	}
	return ss, fp.FromUserEntryIndex, nil
}

// cancelNotification serves session/cancel, inline, like a preempter:
// the session's turns (running and queued) are cancelled.
func (c *serverConn) cancelNotification(req *request) {
	var p CancelNotification
	if err := decodeParams(req.Params, &p); err != nil {
		c.log.Debug("bad session/cancel", "error", err)
		return
	}
	c.cancelSession(p.SessionID, errTurnCancelled)
}

// cancelSession serves session/cancel (either version): the prompts of
// session id registered here are cancelled with cause, and the session's
// work too. An unknown or idle session is a no-op.
func (c *serverConn) cancelSession(id SessionId, cause error) {
	if ss := c.cancelTurns(id, cause); ss != nil {
		ss.life().Cancel()
	}
}

// cancelTurns cancels, with cause, the prompts of session id registered
// on this connection (v1: its turns, v2: its held prompts) and returns the
// session, or nil when it is not here.
func (c *serverConn) cancelTurns(id SessionId, cause error) *serviceSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	ss, ok := c.sessions[id]
	if !ok {
		return nil
	}
	for _, cancel := range ss.turns {
		cancel(cause)
	}
	return ss
}

// cancelRequest serves $/cancel_request: the request in flight with that
// id is cancelled.
func (c *serverConn) cancelRequest(req *request) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	var id jsonrpc2.ID
	// The connection has dropped requestIds that cannot be read exactly
	// (inexactCancel): jsonrpc2 re-encodes params, losing the difference.
	if req.Params == nil || json.Unmarshal(*req.Params, &p) != nil || json.Unmarshal(p.RequestID, &id) != nil {
		c.log.Debug("bad $/cancel_request", "params", req.Params)
		return
	}
	c.mu.Lock()
	if cancel, ok := c.inflight[id]; ok {
		cancel(ErrRequestCancelled)
	}
	c.mu.Unlock()
}

// spawnRequest runs fn on a goroutine owned by the connection, unless it
// is shutting down.
func (c *serverConn) spawnRequest(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.reqs.Add(1)
	go func() {
		defer c.reqs.Done()
		fn()
	}()
	return true
}

func (c *serverConn) finishRequest(id jsonrpc2.ID) {
	c.mu.Lock()
	if cancel, ok := c.inflight[id]; ok {
		cancel(nil)
		delete(c.inflight, id)
	}
	c.mu.Unlock()
}

// answer finishes req and sends its response. The id is free again before
// the response is written: a client may reuse it once it has the
// response (JSON-RPC only asks ids to be unique among requests in flight).
func (c *serverConn) answer(ctx context.Context, req *request, result any, err error) {
	c.finishRequest(req.ID)
	c.reply(ctx, req, result, err)
}

// replyAsync replies from a new goroutine so the read loop never waits on a
// slow client.
func (c *serverConn) replyAsync(req *request, result any, err error) {
	c.spawnRequest(func() { c.reply(c.ctx, req, result, err) })
}

// reply sends the response to req: result, or the wire form of err. It is
// sent even when ctx has been cancelled (gopls' detached reply).
func (c *serverConn) reply(ctx context.Context, req *request, result any, err error) {
	if err != nil {
		c.log.Debug("request failed", "id", req.ID.String(), "error", err)
	}
	if sendErr := c.rpc.reply(context.WithoutCancel(ctx), req, result, err); sendErr != nil && !errors.Is(sendErr, ErrClosed) {
		c.log.Warn("sending response", "id", req.ID.String(), "error", sendErr)
	}
}

// decodeParams decodes request params into p and validates them; every
// failure is ErrInvalidParams with a message that names the field.
func decodeParams(raw *json.RawMessage, p interface{ Validate() error }) error {
	if raw == nil || string(*raw) == "null" {
		return fmt.Errorf("%w: params: required", ErrInvalidParams)
	}
	if err := json.Unmarshal(*raw, p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%w: %s: expected %s, got JSON %s", ErrInvalidParams, te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	return nil
}

// decodeOptionalParams is decodeParams for methods whose params are all
// optional: absent or null params are the zero value.
func decodeOptionalParams(raw *json.RawMessage, p interface{ Validate() error }) error {
	if raw == nil || string(*raw) == "null" {
		return p.Validate()
	}
	return decodeParams(raw, p)
}
