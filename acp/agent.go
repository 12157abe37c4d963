package acp

import (
	"context"
	"encoding/json"
)

// Agent is what a Server drives: the model side of ACP. The server owns
// the wire (decoding, validation, ordering, cancellation, connections);
// the Agent owns sessions. One Agent serves every connection of its
// Server, so its methods are called concurrently, and what depends on the
// client (its capabilities) comes with each session's ClientConn.
// Package agent/acpagent provides the implementation.
type Agent interface {
	// Initialize is told what the client offered and returns what the agent
	// offers. The protocol version is negotiated by the service, and the
	// capabilities that advertise methods (loadSession, sessionCapabilities
	// list/resume/..., auth.logout) are set from the method table.
	Initialize(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error)
	// Authenticate runs an advertised authentication method.
	Authenticate(ctx context.Context, req *AuthenticateRequest) error
	// NewSession creates a session. Its updates go to client.Update, which
	// is valid for the life of the session.
	NewSession(ctx context.Context, req *NewSessionRequest, client *ClientConn) (Session, *NewSessionResponse, error)
}

// Logouter is implemented by agents that support logout. Logout forgets
// what the agent holds for the client's authentication; the service then
// returns the connection to the unauthenticated state (the methods that
// open sessions answer ErrAuthRequired until authenticate succeeds).
type Logouter interface {
	Logout(ctx context.Context, req *LogoutRequest) error
}

// Session is one conversation.
type Session interface {
	// Prompt queues a turn for req and returns without waiting for it: it
	// is called on the connection's read loop, in the order the prompts
	// arrived, and must not block. If the turn cannot be queued it returns
	// an error (sent as the response) and must not call finish. Otherwise
	// it calls finish exactly once, later, with the turn's outcome: after
	// the turn's last update was handed to the session's ClientConn and
	// before any update of a later turn (the response is written from
	// finish, so it stays in order with the updates). When ctx is
	// cancelled the turn stops at once (or, if still queued, is dropped);
	// the service then answers stopReason "cancelled".
	Prompt(ctx context.Context, req *PromptRequest, finish func(*PromptResponse, error)) error
	// Cancel stops the running turn and drops queued ones (session/cancel).
	// It is called on the read loop and must not block.
	Cancel()
	// Close frees the session's resources. It is called once, at shutdown,
	// after every prompt has finished.
	Close() error
}

// ConfigurableSession is implemented by sessions with config options
// (session/set_config_option).
type ConfigurableSession interface {
	// SetConfigOption applies one change and returns the complete option
	// list; nothing changes when it fails. It is called on the read loop,
	// so a prompt sent after it sees the change, and must not block.
	SetConfigOption(ctx context.Context, req *SetSessionConfigOptionRequest) ([]SessionConfigOption, error)
}

// ModalSession is implemented by sessions with modes (session/set_mode).
type ModalSession interface {
	// SetMode switches the session's mode; an unknown mode is an error
	// wrapping ErrInvalidParams and changes nothing. It is called on the
	// read loop and must not block.
	SetMode(ctx context.Context, mode SessionModeId) error
}

// ExtensionSession is implemented by sessions that serve extension methods
// (the extension rows of the method table, names starting with "_") whose
// params carry a "sessionId". The service finds the session on the
// request's connection (-32002 if it is not live there) and calls
// Extension with the raw params; a method the session does not serve must
// return an error wrapping ErrMethodNotFound.
type ExtensionSession interface {
	Extension(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// Forker is implemented by agents that can fork a session (session/fork
// and MethodExtSessionFork). source is the live session (on whichever
// connection it is open: a fork only reads it), or nil when it is not
// live (the agent then reads it from its store). The new session is
// registered on the request's connection like one from session/new.
type Forker interface {
	ForkSession(ctx context.Context, req *ForkRequest, source Session, client *ClientConn) (Session, *ForkSessionResponse, error)
}

// ForkRequest is what a fork copies and where the copy works.
type ForkRequest struct {
	SourceID SessionId
	// CWD and AdditionalDirectories of the new session; empty means the
	// source's.
	CWD                   string
	AdditionalDirectories []string
	// FromUserEntryIndex, if set, keeps only the conversation before that
	// user message (the extension method).
	FromUserEntryIndex *int
	// MCPServers of the new session; nil means the source's.
	MCPServers []McpServer
	// SystemPrompt is the client's for the new session; nil means the
	// source's (SDK 2.4.0 unstable).
	SystemPrompt *SystemPrompt
}

// SessionStore is implemented by agents that keep sessions beyond a
// connection: session/load, session/resume, session/list and
// session/delete. The service closes a session that is open (on any of
// its connections) before it is loaded, resumed or deleted, so the agent
// always works from its store and a session is live at most once.
type SessionStore interface {
	// LoadSession opens a stored session for client; an unknown one is an
	// error wrapping ErrSessionNotFound. With req.Replay, the session's
	// update stream runs from the moment LoadSession is called: the
	// conversation may be sent through client while it is read (what was
	// sent is written before the error of a load that fails), and the
	// returned Replay, which the service runs once the session is
	// registered, sends the rest; the service answers after it.
	LoadSession(ctx context.Context, req *LoadRequest, client *ClientConn) (Session, *LoadedSession, error)
	ListSessions(ctx context.Context, req *ListSessionsRequest) (*ListSessionsResponse, error)
	// DeleteSession removes a stored session; an unknown one is not an
	// error.
	DeleteSession(ctx context.Context, id SessionId) error
}

// LoadChecker is an optional SessionStore that can refuse a session/load
// or session/resume before anything is done: the service asks it before
// it closes the session wherever it is live (which the load must, to
// reopen its file), so that a load refused for its request (a cwd that is
// no directory, one outside what the agent serves) does not end the live
// session it names. LoadSession still checks what it opens.
type LoadChecker interface {
	CheckLoad(ctx context.Context, req *LoadRequest) error
}

// SessionManager is a SessionStore that also retitles, reports and
// archives sessions (the unstable session/set_title, session/status,
// session/archive and session/unarchive). An unknown session is an error
// wrapping ErrSessionNotFound.
type SessionManager interface {
	// SetSessionTitle stores title (normalized; an empty one is an error
	// wrapping ErrInvalidParams) for a live or stored session and returns
	// what it stored. The session is no longer titled automatically.
	SetSessionTitle(ctx context.Context, id SessionId, title string) (string, error)
	// SessionStatus is SessionStatusOpen or SessionStatusSaved, without
	// side effects.
	SessionStatus(ctx context.Context, id SessionId) (string, error)
	// ArchiveSession sets whether a stored session is archived (hidden
	// from session/list by default). The service closes a live session
	// before archiving it.
	ArchiveSession(ctx context.Context, id SessionId, archived bool) error
}

// LoadRequest is session/load (Replay) or session/resume.
type LoadRequest struct {
	SessionID             SessionId
	CWD                   string
	AdditionalDirectories []string
	MCPServers            []McpServer
	Replay                bool
	// SystemPrompt is the client's; nil means the one stored with the
	// session (SDK 2.4.0 unstable).
	SystemPrompt *SystemPrompt
}

// LoadedSession is a loaded session's state for the response, and its
// replay.
type LoadedSession struct {
	Modes         *SessionModeState
	ConfigOptions []SessionConfigOption
	Replay        func(ctx context.Context)
}
