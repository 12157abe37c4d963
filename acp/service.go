package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// Options configures an AgentService.
type Options struct {
	// MaxMessageBytes caps one incoming line; 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// Logger receives diagnostics; nil discards them. It must not write to
	// the protocol stream.
	Logger *slog.Logger
	// ShutdownGrace bounds how long Serve waits for cancelled work to finish;
	// 0 means 1.5 s, which keeps exit within the 2 s clients allow.
	ShutdownGrace time.Duration
}

// AgentService serves ACP over one connection: it decodes and validates
// requests, tracks sessions and turns, and gives every session one goroutine
// (its outbox) that writes the session's updates and prompt responses in
// order. See the package documentation for the concurrency contract.
type AgentService struct {
	agent Agent
	opts  Options
	log   *slog.Logger

	// ctx is the parent of all request work; cancelled at shutdown.
	ctx    context.Context
	cancel context.CancelCauseFunc
	stream *lineStream
	// reqs counts request goroutines and outboxes counts session outboxes;
	// both are added to only under mu while !closing, so Wait is safe.
	reqs     sync.WaitGroup
	outboxes sync.WaitGroup
	nextID   atomic.Uint64 // ids of our requests to the client

	mu          sync.Mutex
	closing     bool
	initialized bool
	clientCaps  ClientCapabilities
	sessions    map[string]*serviceSession
	inflight    map[jsonrpc2.ID]context.CancelCauseFunc // client requests being served
}

// serviceSession is the service's view of one session.
type serviceSession struct {
	id     string
	sess   Session
	client *ClientConn
	// turns are the cancel funcs of this session's prompts (running or
	// queued), by request id; guarded by AgentService.mu.
	turns map[jsonrpc2.ID]context.CancelCauseFunc
}

type requestIDKey struct{}

// RequestID returns the JSON-RPC id (as JSON text) of the client request
// whose handling ctx belongs to, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

var (
	errShutdown      = errors.New("agent is shutting down")
	errTurnCancelled = errors.New("turn cancelled by the client")
)

// NewAgentService returns a service for agent. Call Serve to run it.
func NewAgentService(agent Agent, opts Options) *AgentService {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 1500 * time.Millisecond
	}
	return &AgentService{
		agent:    agent,
		opts:     opts,
		log:      log,
		sessions: make(map[string]*serviceSession),
		inflight: make(map[jsonrpc2.ID]context.CancelCauseFunc),
	}
}

// Serve speaks ACP, reading the client's messages from r and writing ours to
// w, until r ends or ctx is cancelled. Then it cancels every running turn,
// lets the turns send their last updates and "cancelled" responses, closes
// the sessions and returns nil. Everything Serve started has finished when
// it returns, unless work ignored cancellation for longer than
// ShutdownGrace, which is logged. Serve may be called once.
func (s *AgentService) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	s.ctx, s.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	defer s.cancel(errShutdown)
	var closer io.Closer
	if c, ok := r.(io.Closer); ok {
		closer = c
	}
	stream := newLineStream(r, w, closer, s.opts.MaxMessageBytes, s.log)
	s.stream = stream
	// The connection gets its own context: cancelling work must not close
	// the connection before the cancelled turns have answered.
	conn := jsonrpc2.NewConn(context.Background(), stream, s, jsonrpc2.SetLogger(slogPrinter{s.log}))
	select {
	case <-stream.eof:
		s.log.Debug("input ended")
	case <-conn.DisconnectNotify():
		s.log.Debug("connection closed")
	case <-ctx.Done():
		s.log.Debug("shutting down", "cause", context.Cause(ctx))
	}
	s.shutdown()
	if err := conn.Close(); err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		return err
	}
	return nil
}

func (s *AgentService) shutdown() {
	s.mu.Lock()
	s.closing = true
	sessions := make([]*serviceSession, 0, len(s.sessions))
	for _, ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()
	s.cancel(errShutdown)

	// Turns answer "cancelled" through their outboxes; the outboxes are told
	// to stop only after the turns have handed over their last messages.
	turns := make(chan struct{})
	go func() { s.reqs.Wait(); close(turns) }()
	deadline := time.NewTimer(s.opts.ShutdownGrace)
	defer deadline.Stop()
	select {
	case <-turns:
	case <-deadline.C:
		s.log.Warn("work still running after shutdown grace period; exiting anyway")
		return
	}
	for _, ss := range sessions {
		ss.client.startOut() // a held child's outbox must run to end
		ss.client.out.stop()
	}
	done := make(chan struct{})
	go func() { s.outboxes.Wait(); close(done) }()
	select {
	case <-done:
	case <-deadline.C:
		s.log.Warn("outboxes still writing after shutdown grace period; exiting anyway")
		return
	}
	for _, ss := range sessions {
		if err := ss.sess.Close(); err != nil {
			s.log.Warn("closing session", "session", ss.id, "error", err)
		}
	}
}

// Handle implements jsonrpc2.Handler. It runs on the connection's read
// goroutine and never blocks: it decodes, validates and registers state
// inline, so a later session/cancel always finds the turn it targets, and
// leaves the work and the reply to a goroutine.
func (s *AgentService) Handle(_ context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif {
		s.handleNotification(req)
		return
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		// No new work is started once shutdown has begun; the reply is
		// written inline because no goroutine may be started any more.
		s.reply(s.ctx, conn, req.ID, nil, fmt.Errorf("%w: %v", ErrInternal, errShutdown))
		return
	}
	if _, dup := s.inflight[req.ID]; dup {
		s.mu.Unlock()
		s.replyAsync(conn, req.ID, nil, fmt.Errorf("%w: request id %s is already in use", ErrInvalidRequest, req.ID))
		return
	}
	ctx, cancel := context.WithCancelCause(context.WithValue(s.ctx, requestIDKey{}, req.ID.String()))
	s.inflight[req.ID] = cancel
	s.mu.Unlock()

	work, err := s.dispatch(ctx, conn, req)
	if err != nil {
		s.finishRequest(req.ID)
		s.replyAsync(conn, req.ID, nil, err)
		return
	}
	if work == nil {
		return // queued inline; answered when it completes
	}
	if !s.spawnRequest(work) {
		s.finishRequest(req.ID)
		s.reply(s.ctx, conn, req.ID, nil, fmt.Errorf("%w: %v", ErrInternal, errShutdown))
	}
}

// dispatch validates req and registers its state. It returns the work to
// run off the read goroutine; that work replies and calls finishRequest.
// No work and no error means the request was queued and will be answered
// by its completion (session/prompt).
func (s *AgentService) dispatch(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (func(), error) {
	if req.Method == MethodInitialize {
		return s.initialize(ctx, conn, req)
	}
	s.mu.Lock()
	initialized := s.initialized
	s.mu.Unlock()
	if !initialized {
		if !isKnownMethod(req.Method) {
			return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
		}
		return nil, fmt.Errorf("%w: %s before initialize", ErrInvalidRequest, req.Method)
	}
	switch req.Method {
	case MethodAuthenticate:
		var p AuthenticateRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		return s.simple(ctx, conn, req.ID, func(ctx context.Context) (any, error) {
			if err := s.agent.Authenticate(ctx, &p); err != nil {
				return nil, err
			}
			return &AuthenticateResponse{}, nil
		}), nil
	case MethodSessionNew:
		var p NewSessionRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		return func() { s.newSession(ctx, conn, req.ID, &p) }, nil
	case MethodSessionPrompt:
		return s.prompt(ctx, conn, req)
	case MethodSessionLoad, MethodSessionResume:
		return s.load(ctx, conn, req)
	case MethodSessionFork:
		var p ForkSessionRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		return s.fork(ctx, conn, req, &ForkRequest{SourceID: p.SessionID, CWD: p.CWD, AdditionalDirectories: p.AdditionalDirectories, MCPServers: p.MCPServers})
	case MethodSessionList:
		store, ok := s.agent.(SessionStore)
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
		}
		var p ListSessionsRequest
		if req.Params != nil && string(*req.Params) != "null" {
			if err := decodeParams(req.Params, &p); err != nil {
				return nil, err
			}
		}
		return s.simple(ctx, conn, req.ID, func(ctx context.Context) (any, error) {
			return store.ListSessions(ctx, &p)
		}), nil
	case MethodSessionClose:
		var p CloseSessionRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		return s.simple(ctx, conn, req.ID, func(context.Context) (any, error) {
			if !s.closeLive(p.SessionID) {
				return nil, SessionNotFound(p.SessionID, "")
			}
			return &CloseSessionResponse{}, nil
		}), nil
	case MethodSessionDelete:
		store, ok := s.agent.(SessionStore)
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
		}
		var p DeleteSessionRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		return s.simple(ctx, conn, req.ID, func(ctx context.Context) (any, error) {
			s.closeLive(p.SessionID)
			return &DeleteSessionResponse{}, store.DeleteSession(ctx, p.SessionID)
		}), nil
	case MethodSessionSetTitle, MethodSessionStatus, MethodSessionArchive, MethodSessionUnarchive:
		return s.manage(ctx, conn, req)
	case MethodSessionSteering:
		return s.extension(ctx, conn, req)
	case MethodSessionSetConfigOption:
		return s.setConfigOption(ctx, conn, req)
	case MethodSessionSetMode:
		return s.setMode(ctx, conn, req)
	case MethodSessionCancel, MethodCancelRequest:
		return nil, fmt.Errorf("%w: %s is a notification and must not have an id", ErrInvalidRequest, req.Method)
	}
	if strings.HasPrefix(req.Method, ExtPrefix) {
		return s.extension(ctx, conn, req)
	}
	return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
}

// isKnownMethod reports whether method is one this service implements.
func isKnownMethod(method string) bool {
	if strings.HasPrefix(method, ExtPrefix) {
		return true
	}
	switch method {
	case MethodInitialize, MethodAuthenticate, MethodSessionNew, MethodSessionPrompt, MethodSessionCancel,
		MethodSessionSetConfigOption, MethodSessionSetMode, MethodSessionLoad, MethodSessionResume, MethodSessionFork,
		MethodSessionList, MethodSessionClose, MethodSessionDelete, MethodSessionSteering,
		MethodSessionSetTitle, MethodSessionStatus, MethodSessionArchive, MethodSessionUnarchive:
		return true
	}
	return false
}

func (s *AgentService) initialize(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (func(), error) {
	var p InitializeRequest
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	// Agent.Initialize is a pure description of the agent; running it
	// inline lets the next request see the connection initialized.
	resp, err := s.agent.Initialize(ctx, &p)
	if err != nil {
		return nil, err
	}
	// Version negotiation: we speak 1; echo it, else answer with ours.
	resp.ProtocolVersion = ProtocolVersionV1
	s.mu.Lock()
	s.initialized = true
	s.clientCaps = p.ClientCapabilities
	s.mu.Unlock()
	return func() {
		defer s.finishRequest(req.ID)
		s.reply(ctx, conn, req.ID, resp, nil)
	}, nil
}

// simple wraps request work that has no ordering needs: run fn, reply.
func (s *AgentService) simple(ctx context.Context, conn *jsonrpc2.Conn, id jsonrpc2.ID, fn func(context.Context) (any, error)) func() {
	return func() {
		defer s.finishRequest(id)
		res, err := fn(ctx)
		s.reply(ctx, conn, id, res, err)
	}
}

func (s *AgentService) newSession(ctx context.Context, conn *jsonrpc2.Conn, id jsonrpc2.ID, p *NewSessionRequest) {
	defer s.finishRequest(id)
	client := s.newClient(conn)
	sess, resp, err := s.agent.NewSession(ctx, p, client)
	if err != nil {
		s.reply(ctx, conn, id, nil, err)
		return
	}
	s.register(ctx, conn, id, sess, resp.SessionID, client, resp)
}

func (s *AgentService) newClient(conn *jsonrpc2.Conn) *ClientConn {
	s.mu.Lock()
	caps := s.clientCaps
	s.mu.Unlock()
	return &ClientConn{svc: s, conn: conn, caps: caps, out: newOutbox(s.stream, s.log)}
}

// register adds a created session, answers the request that created it
// with result, and then starts the session's outbox: the client must know
// the session id before it sees the session's updates.
func (s *AgentService) register(ctx context.Context, conn *jsonrpc2.Conn, id jsonrpc2.ID, sess Session, sessionID string, client *ClientConn, result any) {
	ss := &serviceSession{id: sessionID, sess: sess, client: client, turns: make(map[jsonrpc2.ID]context.CancelCauseFunc)}
	client.sessionID = sessionID
	client.out.sessionID = sessionID
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		s.reply(ctx, conn, id, nil, errShutdown)
		if err := sess.Close(); err != nil {
			s.log.Warn("closing session", "session", sessionID, "error", err)
		}
		return
	}
	s.sessions[sessionID] = ss
	s.outboxes.Add(1)
	s.mu.Unlock()
	s.reply(ctx, conn, id, result, nil)
	go func() {
		defer s.outboxes.Done()
		client.out.run()
	}()
}

// OpenChild opens a session the agent creates itself (a subagent of the
// session c belongs to) on c's connection under id: open builds it with
// its own ClientConn, whose updates carry id, and session/cancel naming
// id reaches it. The caller announces it
// (subagent_update on the parent, drained) first. CloseChild ends it.
func (c *ClientConn) OpenChild(id string, open func(*ClientConn) (Session, error)) (*ClientConn, error) {
	child := c.svc.newClient(c.conn)
	child.sessionID = id
	sess, err := open(child)
	if err != nil {
		return nil, err
	}
	if _, err := c.svc.registerHeld(sess, id, child); err != nil {
		return nil, err
	}
	return child, nil
}

// Release lets a child's updates out: until then they wait, so that the
// child can start work (and be cancelled) before the client has been told
// about it.
func (c *ClientConn) Release() { c.startOut() }

// CloseChild ends a child session OpenChild registered: it is cancelled,
// closed and forgotten, like session/close.
func (c *ClientConn) CloseChild(id string) { c.svc.closeLive(id) }

// Drained waits until every update queued on c so far has been written.
func (c *ClientConn) Drained(ctx context.Context) error { return c.out.drained(ctx) }

// registerLoaded adds a loaded session and starts its outbox at once: its
// replay goes out before the response, which is queued behind it.
func (s *AgentService) registerLoaded(sess Session, sessionID string, client *ClientConn) (*serviceSession, error) {
	ss, err := s.registerHeld(sess, sessionID, client)
	if err != nil {
		return nil, err
	}
	client.startOut()
	return ss, nil
}

// registerHeld adds a session whose outbox starts only with
// client.startOut: what it queues until then waits.
func (s *AgentService) registerHeld(sess Session, sessionID string, client *ClientConn) (*serviceSession, error) {
	ss := &serviceSession{id: sessionID, sess: sess, client: client, turns: make(map[jsonrpc2.ID]context.CancelCauseFunc)}
	client.sessionID = sessionID
	client.out.sessionID = sessionID
	// Set before the session is published: a session/close racing with
	// this request may start the outbox as soon as it is in the map.
	client.start = sync.OnceFunc(func() {
		go func() {
			defer s.outboxes.Done()
			client.out.run()
		}()
	})
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		if err := sess.Close(); err != nil {
			s.log.Warn("closing session", "session", sessionID, "error", err)
		}
		return nil, fmt.Errorf("%w: %v", ErrInternal, errShutdown)
	}
	s.sessions[sessionID] = ss
	s.outboxes.Add(1)
	s.mu.Unlock()
	return ss, nil
}

// startOut starts the client's outbox (once; registerHeld set it up).
func (c *ClientConn) startOut() {
	if c.start != nil {
		c.start()
	}
}

// closeLive closes a session open on this connection, if it is: its turns
// are cancelled (their prompts answer "cancelled"), the session is closed,
// and its update stream is flushed and stopped. It reports whether the
// session was open.
func (s *AgentService) closeLive(id SessionId) bool {
	s.mu.Lock()
	if s.closing {
		// shutdown stops and closes every session itself (a parent
		// closing its children lands here).
		s.mu.Unlock()
		return false
	}
	ss, ok := s.sessions[id]
	if ok {
		delete(s.sessions, id)
		for _, cancel := range ss.turns {
			cancel(errTurnCancelled)
		}
	}
	s.mu.Unlock()
	if !ok {
		return false
	}
	ss.sess.Cancel()
	if err := ss.sess.Close(); err != nil {
		s.log.Warn("closing session", "session", id, "error", err)
	}
	ss.client.startOut() // a held child's outbox must run to end
	ss.client.out.stop()
	<-ss.client.out.ended
	return true
}

func (s *AgentService) prompt(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (func(), error) {
	var p PromptRequest
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	ss, ok := s.sessions[p.SessionID]
	if !ok || s.closing {
		s.mu.Unlock()
		if !ok {
			return nil, SessionNotFound(p.SessionID, "")
		}
		return nil, fmt.Errorf("%w: %v", ErrInternal, errShutdown)
	}
	// A prompt while another runs is queued by the session (a follow-up);
	// session/cancel cancels all of them.
	turnCtx, cancel := context.WithCancelCause(ctx)
	ss.turns[req.ID] = cancel
	s.reqs.Add(1) // done in finish: shutdown waits for every prompt's answer
	s.mu.Unlock()

	replyCtx := context.WithoutCancel(ctx)
	var once sync.Once
	finish := func(resp *PromptResponse, err error) {
		once.Do(func() {
			if turnCtx.Err() != nil || errors.Is(err, context.Canceled) {
				// ACP: a cancelled turn is a result, never an error.
				resp, err = &PromptResponse{StopReason: StopReasonCancelled}, nil
			}
			// The session calls finish in order with its updates, so the
			// response is queued behind the turn's last update.
			ss.client.out.do(func() { s.reply(replyCtx, conn, req.ID, resp, err) })
			cancel(nil)
			s.mu.Lock()
			delete(ss.turns, req.ID)
			s.mu.Unlock()
			s.finishRequest(req.ID)
			s.reqs.Done()
		})
	}
	// Queued here, on the read loop, so prompts queue in arrival order.
	if err := ss.sess.Prompt(turnCtx, &p, finish); err != nil {
		once.Do(func() {
			cancel(nil)
			s.mu.Lock()
			delete(ss.turns, req.ID)
			s.mu.Unlock()
			s.reqs.Done()
		})
		return nil, err
	}
	return nil, nil
}

// setConfigOption applies session/set_config_option inline, on the read
// loop, so a prompt sent after it runs with the new setting.
func (s *AgentService) setConfigOption(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (func(), error) {
	var p SetSessionConfigOptionRequest
	return s.applyInline(ctx, conn, req, &p, func(ss *serviceSession) (any, error) {
		cs, ok := ss.sess.(ConfigurableSession)
		if !ok {
			return nil, fmt.Errorf("%w: configId: session %s has no config options", ErrInvalidParams, p.SessionID)
		}
		opts, err := cs.SetConfigOption(ctx, &p)
		return &SetSessionConfigOptionResponse{ConfigOptions: opts}, err
	}, func() SessionId { return p.SessionID })
}

// setMode applies session/set_mode inline, like setConfigOption.
func (s *AgentService) setMode(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (func(), error) {
	var p SetSessionModeRequest
	return s.applyInline(ctx, conn, req, &p, func(ss *serviceSession) (any, error) {
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
func (s *AgentService) applyInline(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request,
	p interface{ Validate() error }, apply func(*serviceSession) (any, error), sessionID func() SessionId) (func(), error) {
	if err := decodeParams(req.Params, p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	ss, ok := s.sessions[sessionID()]
	s.mu.Unlock()
	if !ok {
		return nil, SessionNotFound(sessionID(), "")
	}
	result, err := apply(ss)
	if err != nil {
		return nil, err
	}
	ss.client.out.do(func() {
		defer s.finishRequest(req.ID)
		s.reply(ctx, conn, req.ID, result, nil)
	})
	return nil, nil
}

// load serves session/load and session/resume: the session is closed if
// it is open here, loaded from the agent's store, registered, replayed
// (load only) and then answered.
func (s *AgentService) load(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (func(), error) {
	store, ok := s.agent.(SessionStore)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
	}
	lr := &LoadRequest{Replay: req.Method == MethodSessionLoad}
	if lr.Replay {
		var p LoadSessionRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		lr.SessionID, lr.CWD, lr.AdditionalDirectories, lr.MCPServers = p.SessionID, p.CWD, p.AdditionalDirectories, p.MCPServers
	} else {
		var p ResumeSessionRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		lr.SessionID, lr.CWD, lr.AdditionalDirectories, lr.MCPServers = p.SessionID, p.CWD, p.AdditionalDirectories, p.MCPServers
	}
	return func() {
		s.closeLive(lr.SessionID)
		client := s.newClient(conn)
		sess, loaded, err := store.LoadSession(ctx, lr, client)
		if err != nil {
			s.finishRequest(req.ID)
			s.reply(ctx, conn, req.ID, nil, err)
			return
		}
		ss, err := s.registerLoaded(sess, string(lr.SessionID), client)
		if err != nil {
			s.finishRequest(req.ID)
			s.reply(ctx, conn, req.ID, nil, err)
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
		ss.client.out.do(func() {
			defer s.finishRequest(req.ID)
			s.reply(ctx, conn, req.ID, result, nil)
		})
	}, nil
}

// fork serves session/fork and the fork extension.
func (s *AgentService) fork(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request, fr *ForkRequest) (func(), error) {
	forker, ok := s.agent.(Forker)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
	}
	s.mu.Lock()
	var source Session
	if ss, ok := s.sessions[fr.SourceID]; ok {
		source = ss.sess
	}
	s.mu.Unlock()
	return func() {
		defer s.finishRequest(req.ID)
		client := s.newClient(conn)
		sess, resp, err := forker.ForkSession(ctx, fr, source, client)
		if err != nil {
			s.reply(ctx, conn, req.ID, nil, err)
			return
		}
		s.register(ctx, conn, req.ID, sess, string(resp.SessionID), client, resp)
	}, nil
}

// manage serves session/set_title, session/status, session/archive and
// session/unarchive through the agent's SessionManager. Archiving closes
// the session first if it is live, as session/close does.
func (s *AgentService) manage(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (func(), error) {
	m, ok := s.agent.(SessionManager)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
	}
	switch req.Method {
	case MethodSessionSetTitle:
		var p SetSessionTitleRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		return s.simple(ctx, conn, req.ID, func(ctx context.Context) (any, error) {
			title, err := m.SetSessionTitle(ctx, p.SessionID, *p.Title)
			if err != nil {
				return nil, notFoundData(err, p.SessionID)
			}
			return &SetSessionTitleResponse{Title: title}, nil
		}), nil
	case MethodSessionStatus:
		var p SessionStatusRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		return s.simple(ctx, conn, req.ID, func(ctx context.Context) (any, error) {
			s.mu.Lock()
			_, live := s.sessions[p.SessionID]
			s.mu.Unlock()
			if live {
				return &SessionStatusResponse{Status: SessionStatusOpen}, nil
			}
			st, err := m.SessionStatus(ctx, p.SessionID)
			if err != nil {
				return nil, notFoundData(err, p.SessionID)
			}
			return &SessionStatusResponse{Status: st}, nil
		}), nil
	default: // archive, unarchive
		var p ArchiveSessionRequest
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		archive := req.Method == MethodSessionArchive
		return s.simple(ctx, conn, req.ID, func(ctx context.Context) (any, error) {
			if archive {
				s.closeLive(p.SessionID)
			}
			if err := m.ArchiveSession(ctx, p.SessionID, archive); err != nil {
				return nil, notFoundData(err, p.SessionID)
			}
			return &ArchiveSessionResponse{}, nil
		}), nil
	}
}

// notFoundData attaches {"sessionId"} to a session-not-found error, as
// the unstable session methods answer it.
func notFoundData(err error, id SessionId) error {
	if errors.Is(err, ErrSessionNotFound) {
		return &DataError{Err: err, Data: map[string]string{"sessionId": string(id)}}
	}
	return err
}

// extension serves "_acp-agent/..." methods that name a session.
func (s *AgentService) extension(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (func(), error) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if req.Params == nil || json.Unmarshal(*req.Params, &p) != nil {
		return nil, fmt.Errorf("%w: params: must be an object", ErrInvalidParams)
	}
	if err := ValidateSessionID(p.SessionID); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	s.mu.Lock()
	ss, ok := s.sessions[p.SessionID]
	s.mu.Unlock()
	if !ok {
		return nil, SessionNotFound(p.SessionID, "")
	}
	if req.Method == MethodExtSessionFork {
		var fp struct {
			FromUserEntryIndex *int `json:"fromUserEntryIndex"`
		}
		if err := json.Unmarshal(*req.Params, &fp); err != nil {
			return nil, fmt.Errorf("%w: fromUserEntryIndex: must be an integer", ErrInvalidParams)
		}
		return s.fork(ctx, conn, req, &ForkRequest{SourceID: ss.id, FromUserEntryIndex: fp.FromUserEntryIndex})
	}
	ext, ok := ss.sess.(ExtensionSession)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, req.Method)
	}
	return func() {
		res, err := ext.Extension(ctx, req.Method, *req.Params)
		// In order with the session's updates: the ones the method sent
		// (a streamed structured answer) go out before its response.
		ss.client.out.do(func() {
			defer s.finishRequest(req.ID)
			s.reply(ctx, conn, req.ID, res, err)
		})
	}, nil
}

func (s *AgentService) handleNotification(req *jsonrpc2.Request) {
	switch req.Method {
	case MethodSessionCancel:
		var p CancelNotification
		if err := decodeParams(req.Params, &p); err != nil {
			s.log.Debug("bad session/cancel", "error", err)
			return
		}
		s.mu.Lock()
		ss, ok := s.sessions[p.SessionID]
		if ok {
			for _, cancel := range ss.turns {
				cancel(errTurnCancelled)
			}
		}
		s.mu.Unlock()
		if ok {
			ss.sess.Cancel()
		}
	case MethodCancelRequest:
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		var id jsonrpc2.ID
		// The stream has dropped requestIds that cannot be read exactly
		// (inexactCancel): jsonrpc2 re-encodes params, losing the difference.
		if req.Params == nil || json.Unmarshal(*req.Params, &p) != nil || json.Unmarshal(p.RequestID, &id) != nil {
			s.log.Debug("bad $/cancel_request", "params", req.Params)
			return
		}
		s.mu.Lock()
		if cancel, ok := s.inflight[id]; ok {
			cancel(ErrRequestCancelled)
		}
		s.mu.Unlock()
	default:
		// ACP: unknown notifications are ignored.
		s.log.Debug("ignoring notification", "method", req.Method)
	}
}

// spawnRequest runs fn on a goroutine owned by the service, unless the
// service is shutting down.
func (s *AgentService) spawnRequest(fn func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.reqs.Add(1)
	go func() {
		defer s.reqs.Done()
		fn()
	}()
	return true
}

func (s *AgentService) finishRequest(id jsonrpc2.ID) {
	s.mu.Lock()
	if cancel, ok := s.inflight[id]; ok {
		cancel(nil)
		delete(s.inflight, id)
	}
	s.mu.Unlock()
}

// replyAsync replies from a new goroutine so the read loop never waits on a
// slow client.
func (s *AgentService) replyAsync(conn *jsonrpc2.Conn, id jsonrpc2.ID, result any, err error) {
	s.spawnRequest(func() { s.reply(s.ctx, conn, id, result, err) })
}

// reply sends the response to request id: result, or the wire form of err.
func (s *AgentService) reply(ctx context.Context, conn *jsonrpc2.Conn, id jsonrpc2.ID, result any, err error) {
	ctx = context.WithoutCancel(ctx)
	var sendErr error
	if err != nil {
		s.log.Debug("request failed", "id", id.String(), "error", err)
		sendErr = conn.ReplyWithError(ctx, id, WireError(err))
	} else {
		sendErr = conn.Reply(ctx, id, result)
	}
	if sendErr != nil && !errors.Is(sendErr, jsonrpc2.ErrClosed) {
		s.log.Warn("sending response", "id", id.String(), "error", sendErr)
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

// slogPrinter adapts slog to jsonrpc2.Logger.
type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Printf(format string, v ...any) {
	p.log.Debug(fmt.Sprintf(format, v...), "component", "jsonrpc2")
}
