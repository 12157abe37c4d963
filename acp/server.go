package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// Options configures a Server.
type Options struct {
	// MaxMessageBytes caps one incoming line of the stdio transport
	// (AgentService); 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// Logger receives diagnostics; nil discards them. It must not write to
	// the protocol stream.
	Logger *slog.Logger
	// ShutdownGrace bounds how long a connection's shutdown waits for
	// cancelled work to finish; 0 means 1.5 s, which keeps exit within
	// the 2 s clients allow.
	ShutdownGrace time.Duration
	// MaxSessions caps the sessions clients have open at once, on all
	// connections together; MaxSessionsPerConnection caps them on one
	// connection. 0 means no limit (stdio). session/new, load, resume and
	// fork beyond a limit answer -32600 saying so; sessions the agent
	// opens itself (subagents) are not refused.
	MaxSessions              int
	MaxSessionsPerConnection int
	// V2 serves ACP v2 (Preview) to the clients that ask for it: an
	// initialize whose protocolVersion is 2 or more makes the connection
	// v2 (it is answered 2), anything lower keeps it v1. With V2 nil
	// every connection is v1, as v1's version negotiation has it.
	V2 AgentV2
}

// Server serves ACP on behalf of one Agent, on any number of connections
// at once (ServeConn, Serve). Each connection has its own client
// capabilities (from its initialize), its own requests in flight, its own
// calls to the client and its own live sessions, each with its outbox; a
// session's updates go to the connection it was opened on and nowhere
// else. The Agent, and through it the sessions table and the store, is
// shared.
//
// A session is live on one connection at a time. session/load,
// session/resume, session/delete and session/archive of a session that is
// live on another connection close it there first (its turns answer
// "cancelled" there), as they do on their own connection; every other
// method sees only the sessions of its own connection.
type Server struct {
	agent Agent
	opts  Options
	log   *slog.Logger

	mu sync.Mutex
	// live is the connection each live session is open on.
	live map[SessionId]*serverConn
	// opening are the sessions a load or resume is opening, so that two
	// connections cannot open one session twice.
	opening map[SessionId]bool
	// reserved counts the sessions being opened under the limits
	// (reserveSession), not yet in live.
	reserved int
}

// NewServer returns a server for agent.
func NewServer(agent Agent, opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 1500 * time.Millisecond
	}
	return &Server{agent: agent, opts: opts, log: log,
		live: make(map[SessionId]*serverConn), opening: make(map[SessionId]bool)}
}

// serverConn is one connection of a Server: its state and its sessions.
type serverConn struct {
	srv *Server
	rpc *rpcConn
	log *slog.Logger

	// ctx is the parent of all request work; cancelled at shutdown.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// reqs counts request goroutines and outboxes counts session outboxes;
	// both are added to only under mu while !closing, so Wait is safe.
	reqs     sync.WaitGroup
	outboxes sync.WaitGroup

	mu          sync.Mutex
	closing     bool
	initialized bool
	// version is the protocol the connection's first initialize chose
	// (0 until then); a connection never changes it.
	version ProtocolVersion
	// v2 is the state of a v2 connection (version 2), else nil.
	v2 *connV2
	// loggedOut is set by logout and cleared by authenticate: until then
	// the methods that open sessions answer -32000.
	loggedOut  bool
	clientCaps ClientCapabilities
	sessions   map[string]*serviceSession
	inflight   map[jsonrpc2.ID]context.CancelCauseFunc // client requests being served
	// reserved counts this connection's sessions being opened under the
	// limits; guarded by srv.mu.
	reserved int
	// x is the state of the SDK 2.4.0 unstable methods (connection.go).
	x connExtras
}

// serviceSession is the connection's view of one live session: a v1
// Session or a SessionV2, and its client.
type serviceSession struct {
	id       string
	sess     Session       // v1; nil on a v2 session
	v2       SessionV2     // v2; nil on a v1 session
	v2client *ClientConnV2 // v2's client
	client   *sessionClient
	// turns are the cancel funcs of this session's prompts (running or
	// queued; on v2, those not yet inserted), by request id; guarded by
	// serverConn.mu.
	turns map[jsonrpc2.ID]context.CancelCauseFunc
}

func newServiceSession(id string, client *sessionClient) *serviceSession {
	return &serviceSession{id: id, client: client, turns: make(map[jsonrpc2.ID]context.CancelCauseFunc)}
}

// lifecycle is what the server asks of a session of either version.
type lifecycle interface {
	Cancel()
	Close() error
}

func (ss *serviceSession) life() lifecycle {
	if ss.v2 != nil {
		return ss.v2
	}
	return ss.sess
}

var (
	errShutdown      = errors.New("agent is shutting down")
	errTurnCancelled = errors.New("turn cancelled by the client")
)

// ServeConn serves one connection on stream until its input ends, the
// stream fails or ctx is cancelled. Then it cancels the connection's
// running turns, lets them send their last updates and "cancelled"
// responses, closes its sessions and the stream, and returns. Everything
// it started has finished by then, unless work ignored cancellation for
// longer than ShutdownGrace, which is logged. ServeConn may be called for
// any number of streams at once.
func (s *Server) ServeConn(ctx context.Context, stream Stream) error {
	c := &serverConn{srv: s, log: s.log,
		sessions: make(map[string]*serviceSession), inflight: make(map[jsonrpc2.ID]context.CancelCauseFunc)}
	c.ctx, c.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	defer c.cancel(errShutdown)
	c.rpc = newRPCConn(stream, s.log, c.handle)
	// Reads are ended by closing the stream, not by ctx: the client's
	// answers to our calls are read until the connection is done.
	go c.rpc.read(context.WithoutCancel(ctx))

	select {
	case <-c.rpc.inputDone:
		c.log.Debug("input ended")
	case <-ctx.Done():
		c.log.Debug("shutting down", "cause", context.Cause(ctx))
	}
	grace, stop := context.WithTimeout(context.Background(), s.opts.ShutdownGrace)
	defer stop()
	c.shutdown(grace.Done())
	err := c.rpc.close()
	select {
	case <-c.rpc.inputDone:
	case <-grace.Done():
		// A read that closing cannot interrupt (a terminal's stdin) ends
		// with the process.
		c.log.Warn("the stream's reader did not stop after shutdown grace period")
	}
	if errors.Is(err, ErrClosed) {
		err = nil
	}
	return err
}

// Serve serves every connection l accepts, each on its own goroutine,
// until Accept fails. It returns Accept's error once all of those
// connections have ended: they end when their input does, or all at once
// when ctx is cancelled.
func (s *Server) Serve(ctx context.Context, l Listener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		stream, err := l.Accept(ctx)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.ServeConn(ctx, stream); err != nil {
				s.log.Warn("connection ended with an error", "error", err)
			}
		}()
	}
}

// shutdown winds the connection down: no new work, every turn cancelled
// and answered, outboxes flushed, sessions closed; it gives up waiting
// when deadline fires.
func (c *serverConn) shutdown(deadline <-chan struct{}) {
	c.mu.Lock()
	c.closing = true
	sessions := make([]*serviceSession, 0, len(c.sessions))
	for _, ss := range c.sessions {
		sessions = append(sessions, ss)
	}
	c.mu.Unlock()
	c.cancel(errShutdown)

	// Turns answer "cancelled" through their outboxes; the outboxes are told
	// to stop only after the turns have handed over their last messages.
	turns := make(chan struct{})
	go func() { c.reqs.Wait(); close(turns) }()
	select {
	case <-turns:
	case <-deadline:
		c.log.Warn("work still running after shutdown grace period; exiting anyway")
		c.srv.forgetAll(c, sessions)
		return
	}
	// A v2 session's work outlives its prompts' answers: it is cancelled
	// and the session closed now, so that its last updates (the idle
	// state) are queued before its outbox stops.
	v2done := make(chan struct{})
	go func() {
		defer close(v2done)
		for _, ss := range sessions {
			if ss.v2 != nil {
				ss.v2client.cancelCalls(errShutdown)
				ss.v2.Cancel()
				ss.client.startOut()
				if err := ss.v2.Close(); err != nil {
					c.log.Warn("closing session", "session", ss.id, "error", err)
				}
			}
		}
	}()
	select {
	case <-v2done:
	case <-deadline:
		c.log.Warn("sessions still closing after shutdown grace period; exiting anyway")
		c.srv.forgetAll(c, sessions)
		return
	}
	for _, ss := range sessions {
		ss.client.startOut() // a held child's outbox must run to end
		ss.client.out.stop()
	}
	done := make(chan struct{})
	go func() { c.outboxes.Wait(); close(done) }()
	select {
	case <-done:
	case <-deadline:
		c.log.Warn("outboxes still writing after shutdown grace period; exiting anyway")
		c.srv.forgetAll(c, sessions)
		return
	}
	for _, ss := range sessions {
		if ss.sess == nil {
			continue // v2: closed above
		}
		if err := ss.sess.Close(); err != nil {
			c.log.Warn("closing session", "session", ss.id, "error", err)
		}
	}
	c.srv.forgetAll(c, sessions)
}

// reserveSession holds a place for a session this connection is about to
// open, under Options.MaxSessions and MaxSessionsPerConnection; release
// gives it back once the session is registered (or failed to open).
// replacing is a session the open closes first (a load of a session live
// somewhere), which does not count.
func (c *serverConn) reserveSession(replacing SessionId) (release func(), err error) {
	s := c.srv
	if s.opts.MaxSessions <= 0 && s.opts.MaxSessionsPerConnection <= 0 {
		return func() {}, nil
	}
	c.mu.Lock()
	mine := len(c.sessions)
	if _, ok := c.sessions[replacing]; ok {
		mine--
	}
	c.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	all := len(s.live) + s.reserved
	if _, ok := s.live[replacing]; ok {
		all--
	}
	switch {
	case s.opts.MaxSessions > 0 && all >= s.opts.MaxSessions:
		return nil, fmt.Errorf("%w: the agent has %d sessions open, its limit; close one (session/close) or try later", ErrInvalidRequest, s.opts.MaxSessions)
	case s.opts.MaxSessionsPerConnection > 0 && mine+c.reserved >= s.opts.MaxSessionsPerConnection:
		return nil, fmt.Errorf("%w: this connection has %d sessions open, its limit; close one (session/close) first", ErrInvalidRequest, s.opts.MaxSessionsPerConnection)
	}
	s.reserved++
	c.reserved++
	return sync.OnceFunc(func() {
		s.mu.Lock()
		s.reserved--
		c.reserved--
		s.mu.Unlock()
	}), nil
}

// claim marks id as being opened by a load or resume; it fails while
// another one is.
func (s *Server) claim(id SessionId) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opening[id] {
		return fmt.Errorf("%w: session %s is being opened by another request; try again", ErrInvalidRequest, id)
	}
	s.opening[id] = true
	return nil
}

func (s *Server) unclaim(id SessionId) {
	s.mu.Lock()
	delete(s.opening, id)
	s.mu.Unlock()
}

// setLive records that id is live on c.
func (s *Server) setLive(id SessionId, c *serverConn) {
	s.mu.Lock()
	s.live[id] = c
	s.mu.Unlock()
}

// forget drops id from the live sessions if it is live on c.
func (s *Server) forget(id SessionId, c *serverConn) {
	s.mu.Lock()
	if s.live[id] == c {
		delete(s.live, id)
	}
	s.mu.Unlock()
}

func (s *Server) forgetAll(c *serverConn, sessions []*serviceSession) {
	for _, ss := range sessions {
		s.forget(ss.id, c)
	}
}

// liveOn returns the connection id is live on, or nil.
func (s *Server) liveOn(id SessionId) *serverConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[id]
}

// closeAnywhere closes id on whichever connection it is live on.
func (s *Server) closeAnywhere(id SessionId) {
	if c := s.liveOn(id); c != nil {
		c.closeLive(id)
	}
}

// liveSession returns id's session on whichever connection it is live,
// or nil.
func (s *Server) liveSession(id SessionId) *serviceSession {
	c := s.liveOn(id)
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[id]
}

// AgentService serves ACP on one stdio connection: a Server with one
// LineStream. It is what the acp-agent binary runs.
type AgentService struct {
	srv *Server
}

// NewAgentService returns a service for agent. Call Serve to run it.
func NewAgentService(agent Agent, opts Options) *AgentService {
	return &AgentService{srv: NewServer(agent, opts)}
}

// Serve speaks ACP, reading the client's messages from r and writing ours to
// w, one per line, until r ends or ctx is cancelled (Server.ServeConn with
// a LineStream). Serve may be called once.
func (s *AgentService) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.srv.ServeConn(ctx, NewLineStream(r, w, s.srv.opts.MaxMessageBytes))
}
