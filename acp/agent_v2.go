package acp

import (
	"context"

	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// AgentV2 is what a Server drives on the connections that negotiated ACP
// v2 (Options.V2). The server owns the wire as for v1 (decoding,
// validation, ordering, cancellation, connections); the agent owns the
// sessions. One AgentV2 serves every v2 connection, so its methods are
// called concurrently; what depends on the client comes with each
// session's ClientConnV2.
//
// v2's baseline session methods (session/new, list, resume, close,
// prompt, cancel, update) are this interface and SessionV2; the optional
// interfaces below add the rest, and the server advertises each one's
// capability exactly when the agent implements it (MethodsV2).
type AgentV2 interface {
	// Initialize is told what the client offered and returns what the
	// agent offers: info, authMethods, and the capabilities that are not
	// methods (session.prompt, session.mcp, session.additionalDirectories,
	// session.systemPrompt). The server sets protocolVersion and the
	// capabilities of the method table. Non-empty authMethods promise
	// auth/login and auth/logout: the agent must implement AuthenticatorV2
	// (the server drops them otherwise).
	Initialize(ctx context.Context, req *acpv2.InitializeRequest) (*acpv2.InitializeResponse, error)
	// NewSession creates a session. Its updates go to client.Update,
	// which is valid for the life of the session.
	NewSession(ctx context.Context, req *acpv2.NewSessionRequest, client *ClientConnV2) (SessionV2, *acpv2.NewSessionResponse, error)
	// ResumeSession opens an existing session for client; an unknown one
	// is an error wrapping ErrSessionNotFound. The server has checked the
	// request (an absolute cwd, a replay cursor it supports) and closed
	// the session wherever it was live. When req.ReplayFrom is set the
	// session's update stream runs from the moment ResumeSession is
	// called, and the retained conversation is sent through client as
	// upserts (user_message, agent_message, agent_thought,
	// tool_call_update, plan_update, ...) with the ids they had: while it
	// is read, and the rest by the returned Replay, which the server runs
	// once the session is registered; then it sends the session's current
	// state_update, then answers.
	ResumeSession(ctx context.Context, req *acpv2.ResumeSessionRequest, client *ClientConnV2) (SessionV2, *ResumedSessionV2, error)
	// ListSessions lists the sessions the agent can resume.
	ListSessions(ctx context.Context, req *acpv2.ListSessionsRequest) (*acpv2.ListSessionsResponse, error)
}

// LoadCheckerV2 is an optional AgentV2 that can refuse a session/resume
// before anything is done, as LoadChecker does for v1: the server asks it
// before it closes the session wherever it is live, so that a resume
// refused for its request (a cwd that is no directory, one outside what
// the agent serves) does not end the live session it names.
// ResumeSession still checks what it opens.
type LoadCheckerV2 interface {
	CheckResume(ctx context.Context, req *acpv2.ResumeSessionRequest) error
}

// ResumedSessionV2 is a resumed session's answer, its replay and its
// state.
type ResumedSessionV2 struct {
	Response acpv2.ResumeSessionResponse
	// Replay sends the conversation (run only when the client asked for
	// a replay). It must return when ctx is done.
	Replay func(ctx context.Context)
	// State is the session's foreground state after resuming, sent after
	// the replay and before the response; nil means idle, with no stop
	// reason.
	State *acpv2.StateUpdate
}

// SessionV2 is one v2 conversation.
//
// v2's turn model: session/prompt only inserts a user message into the
// conversation and is answered with its id; the work it starts is
// reported by state_update ("running" when foreground work starts, "idle"
// with its stop reason when it ends: the end of a turn). A session sends
// its state updates itself, through its ClientConnV2, and reports
// requires_action while its foreground work waits on the user.
type SessionV2 interface {
	// Prompt hands the session a user message and must not block (it is
	// called on the connection's read loop, in the order the prompts
	// arrived). The session inserts the message into the conversation at
	// once, or holds it while other foreground work runs and inserts it
	// later, in the order received, and calls inserted exactly once:
	// with the message's id when it is inserted (the user_message update
	// it sends carries the same id), or with an error if it never is.
	// While the message is held, ctx being done withdraws it: the session
	// must not insert it any more, and calls inserted with ctx's error,
	// which the server answers -32800 (session/cancel, $/cancel_request,
	// session/close). session/cancel withdraws held messages before it
	// calls Cancel, so a turn that ends because of it starts none of them.
	// The work the message starts is the session's, on its own context:
	// it ends with Cancel or Close, not with ctx. If Prompt returns an
	// error (sent as the response), it must not call inserted.
	Prompt(ctx context.Context, req *acpv2.PromptRequest, inserted func(acpv2.MessageId, error)) error
	// Cancel stops the foreground work (session/cancel): the turn ends
	// with an idle state_update whose stop reason is "cancelled", and the
	// requests it made of the client are cancelled ($/cancel_request) and
	// treated as refused. Work in the background list goes on. It is
	// called on the read loop and must not block.
	Cancel()
	// Close ends the session (session/close, or the connection's end):
	// its work, foreground and background, stops, and Close returns when
	// it has. The server has cancelled the session's calls to the client
	// and withdrawn its held prompts first.
	Close() error
}

// ConfigurableSessionV2 is implemented by sessions with config options
// (session/set_config_option; v2 has no session modes: a mode is a config
// option of category "mode").
type ConfigurableSessionV2 interface {
	// SetConfigOption applies one change and returns the complete option
	// list; an unknown option or value is an error wrapping
	// ErrInvalidParams and changes nothing. It is called on the read
	// loop, so a prompt sent after it sees the change, and must not
	// block.
	SetConfigOption(ctx context.Context, req *acpv2.SetSessionConfigOptionRequest) ([]acpv2.SessionConfigOption, error)
}

// ToolCallCancellerV2 is implemented by sessions whose tool calls can be
// cancelled one at a time (tool_call/cancel), those whose
// tool_call_update advertised capabilities.cancel.
type ToolCallCancellerV2 interface {
	// CancelToolCall accepts the cancellation and returns; the session
	// then confirms it with a tool_call_update to a final status. An
	// unknown, final or uncancellable tool call is an error wrapping
	// ErrInvalidParams. It must not block.
	CancelToolCall(ctx context.Context, id acpv2.ToolCallId) error
}

// TerminalCancellerV2 is implemented by sessions whose terminals can be
// stopped (terminal/cancel), those whose terminal_update advertised
// capabilities.cancel.
type TerminalCancellerV2 interface {
	// CancelTerminal accepts the cancellation and returns; the session
	// then confirms it with a terminal_update that sets exitStatus. The
	// terminal is not released. An unknown, exited or uncancellable
	// terminal is an error wrapping ErrInvalidParams. It must not block.
	CancelTerminal(ctx context.Context, id acpv2.TerminalId) error
}

// AuthenticatorV2 is implemented by agents that advertise authMethods:
// auth/login runs one, auth/logout forgets the client's authentication.
// The server keeps the connection's logged-out state as for v1's logout:
// after auth/logout the methods that open sessions answer -32000 until
// auth/login succeeds.
type AuthenticatorV2 interface {
	Login(ctx context.Context, req *acpv2.LoginAuthRequest) error
	Logout(ctx context.Context, req *acpv2.LogoutAuthRequest) error
}

// SessionDeleterV2 is implemented by agents that delete sessions
// (session/delete, capability session.delete). The server closes a live
// session first; an unknown session is not an error. Its method is v1
// SessionStore's too (both ids are strings): session/delete of either
// version is served through it.
type SessionDeleterV2 interface {
	DeleteSession(ctx context.Context, id acpv2.SessionId) error
}

// ForkerV2 is implemented by agents that fork sessions (the unstable
// session/fork, capability session.fork). source is the live session when
// it is live on a v2 connection, else nil (the agent reads it from its
// store, or finds it live elsewhere). The new session is registered on
// the request's connection like one from session/new.
type ForkerV2 interface {
	ForkSession(ctx context.Context, req *acpv2.ForkSessionRequest, source SessionV2, client *ClientConnV2) (SessionV2, *acpv2.ForkSessionResponse, error)
}

// The unstable session/set_title, session/status, session/archive and
// session/unarchive are served by the agents that implement
// SessionManager, v1's interface: its methods know no protocol.

// ProviderManagerV2 is implemented by agents whose model endpoints the
// client may set (the unstable providers/list, providers/set and
// providers/disable; capability providers).
type ProviderManagerV2 interface {
	ListProviders(ctx context.Context) ([]acpv2.ProviderInfo, error)
	// SetProvider points a provider at an endpoint, with headers (keys)
	// the agent must never send back.
	SetProvider(ctx context.Context, req *acpv2.SetProviderRequest) error
	DisableProvider(ctx context.Context, id acpv2.ProviderId) error
}

// AuthStatusV2 is implemented by agents that report their authentication
// state (the unstable auth/status; capability auth.status).
type AuthStatusV2 interface {
	AuthStatus(ctx context.Context) (*acpv2.AuthStatusResponse, error)
}
