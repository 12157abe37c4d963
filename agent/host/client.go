package host

import (
	"context"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/mcpclient"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/policy"
)

// Client is the protocol side of one session, which an adapter gives the
// host for each session it opens: where the session's updates go, who
// answers its permission requests, what the user's editor offers its
// tools, and where what changes outside its turns is shown.
//
// Update may block (backpressure) and is called from the session's
// worker, in order. Post and the *Changed methods must not block: they
// are called from whoever changes the session (a protocol's read loop
// among them) and queue in order with the updates.
type Client interface {
	agent.UpdateSink
	agent.PostSink
	agent.PermissionRequester
	// Features are what the client can show and do.
	Features() Features
	// Editor is what the user's editor offers the built-in tools of
	// session id (its files, terminals, questions); the zero Editor runs
	// everything locally.
	Editor(sessionID string) tools.Editor
	// CommandsChanged: the session's slash commands are these (when it
	// opens, and when its command or skill files changed).
	CommandsChanged(cmds []Command)
	// ModeChanged: the session's mode changed (SetMode, SetOption, the
	// /mode command).
	ModeChanged(m policy.Mode)
	// OptionsChanged: the session's options are these (after SetMode, the
	// /model command, or model discovery).
	OptionsChanged(opts []Option)
}

// Features are what a client can show and do.
type Features struct {
	// Notices: it shows notice updates; otherwise the setup's notices go
	// to the log and other notes into the conversation.
	Notices bool
	// ExecutionStates: it wants execution-state and retry updates.
	ExecutionStates bool
	// Compaction: it wants compaction updates.
	Compaction bool
	// Subagents: it shows a session's subagents as sessions of their
	// own; the Client then implements SubagentClient.
	Subagents bool
	// ElicitForm, ElicitURL: it asks the user an MCP server's questions
	// in these modes; the Client then implements Elicitor.
	ElicitForm, ElicitURL bool
}

// SubagentClient is a Client that shows a session's subagents as sessions
// of their own (Features.Subagents).
type SubagentClient interface {
	Client
	// OpenChild makes child session id known to the client, with its
	// updates held until the returned Child is released, and calls open
	// with the child's own Client to create it.
	OpenChild(id string, open func(Client) (*Session, error)) (Child, error)
	// CloseChild ends a child opened by OpenChild: the client forgets it
	// and closes the Session.
	CloseChild(id string)
	// Subagent tells the client about a subagent of this session.
	Subagent(ev SubagentEvent)
	// Drained waits until everything queued for the client so far was
	// delivered.
	Drained(ctx context.Context) error
}

// SessionMessenger is a Client that shows the messages between a
// session and its subagents (Features.Subagents): each is shown on both
// sessions, the sender's view and the recipient's.
type SessionMessenger interface {
	// SessionMessage shows m on the client's session, in order with its
	// updates; it must not block.
	SessionMessage(m SessionMessage)
}

// SessionMessage is a message between two sessions: the task a parent
// gave its subagent, or the subagent's answer. ID is the message's id on
// the session it is shown on, OtherID its id on the other one.
type SessionMessage struct {
	ID, OtherID string
	From, To    string // the sender's and the recipient's session ids
	Text        string
}

// Child is a child session's side of a SubagentClient.
type Child interface {
	// Release lets the child's held updates go.
	Release()
	// Drained waits until everything queued for the child so far was
	// delivered.
	Drained(ctx context.Context) error
}

// SubagentEvent is what a client is told of a subagent: it started
// (State "running", with everything), it ended ("idle", ID only), or it
// was found stored when its parent opened ("idle", with Title and CWD).
type SubagentEvent struct {
	ID          string
	Title       string
	Description string
	CWD         string
	State       string // "running" or "idle"
	// Cancellable: the client may cancel the child alone.
	Cancellable bool
}

// The MCP server configuration and elicitation types, for adapters (which
// need not import agent/mcpclient).
type (
	// MCPServer is an MCP server a client names for a session.
	MCPServer = mcpclient.Server
	// MCPStdioServer, MCPHTTPServer and MCPUnknownServer are its kinds.
	MCPStdioServer   = mcpclient.StdioServer
	MCPHTTPServer    = mcpclient.HTTPServer
	MCPUnknownServer = mcpclient.UnknownServer
	// MCPChannelServer is a server the client itself provides, reached
	// through an MCPChannel the adapter implements (MCP over ACP); an
	// MCPError is the server's answer to a request it refused.
	MCPChannelServer = mcpclient.ChannelServer
	MCPChannel       = mcpclient.Channel
	MCPError         = mcpclient.RPCError
	// MCPEnvVariable and MCPHTTPHeader configure them.
	MCPEnvVariable = mcpclient.EnvVariable
	MCPHTTPHeader  = mcpclient.HTTPHeader
	// Elicitation is an MCP server's question for the user: Mode "form"
	// with RequestedSchema (the server's JSON schema), or "url" with URL
	// and ElicitationID. Its Message names the server.
	Elicitation = mcpclient.Elicitation
	// ElicitationResult is the user's answer: Action "accept" (with
	// Content, for a form), "decline" or "cancel".
	ElicitationResult = mcpclient.ElicitationResult
)

// MCPChannels is a Client that provides MCP servers of its own (MCP over
// ACP): a session's MCPChannelServer with that ID is reached through
// the channel it returns, on the session's own connection.
type MCPChannels interface {
	MCPChannel(serverID string) MCPChannel
}

// Elicitor is a Client that asks the user MCP servers' questions
// (Features.ElicitForm, ElicitURL): the host has checked the mode and
// the URL and put the server's name in the message.
type Elicitor interface {
	// Elicit asks the user for session sessionID; it may block until the
	// user answers, and ends with ctx.
	Elicit(ctx context.Context, sessionID string, e Elicitation) (ElicitationResult, error)
	// ElicitationComplete tells the user that server's URL elicitation id
	// has completed.
	ElicitationComplete(server, id string)
}
