// Package host is what the agent is, whatever protocol serves it: it owns
// the live sessions (a table by id), the model choices and their
// discovery, the session store (package persistence) and each session's
// journal in the record format of docs/jsonl-format.md, load repair, file
// checkpoints and rewind, subagents (the task tool), the MCP servers of
// each session (package mcpclient, elicitation through the client), the
// repository's hooks and their pinning, slash commands and skills, the
// setup's notices, usage and the model probe of acp-agent doctor. It
// imports no protocol (TestTheHostImportsNoProtocol).
//
// # Adapters
//
// A protocol adapter (agent/acpagent for ACP v1) maps its protocol onto a
// Host and nothing more. For each session it opens it gives the host a
// Client: the session's UpdateSink and PostSink (agent.Update values to
// map), its PermissionRequester, the client's Features, the Editor its
// tools may use (files, terminals, questions), and what changes outside
// the session's turns (CommandsChanged, ModeChanged, OptionsChanged). A
// client that shows subagents as sessions of their own is a
// SubagentClient; one that asks the user MCP servers' questions is an
// Elicitor. The session lifecycle is the Host's and the Session's
// methods:
//
//	Host:    NewSession, LoadSession, ForkSession, ListSessions,
//	         DeleteSession, SetTitle, Archive, Status, Session (live),
//	         Usable, Stored, ProbeModel, Close
//	Session: Prompt (commands included) or PromptCommand/RunCommand and
//	         Submit, Commands, Options, SetOption, SetMode,
//	         Rewind, History (for a replay), Core (the agent.Session:
//	         queue, cancel, stats, tools, events), Close
//
// Errors wrap one of ErrInvalidParams, ErrInvalidRequest, ErrInternal and
// ErrNotStored, or are a *NotFoundError or *LockedError; their texts are
// the ones clients have seen, and an adapter gives each kind its code.
//
// # Session files
//
// The journal writes what the core tells it (agent.Journal) as records
// whose shapes were ACP's wire types when the ACP adapter owned the
// store (tool displays, plans); the host's own record types (records.go)
// encode exactly so and decode as leniently, so files of either age read
// the same (testdata/golden/records, testdata/golden/sessions).
//
// # Concurrency
//
// A Host is safe for concurrent use: its session table and model choices
// are under mutexes, and model discovery runs in one background goroutine
// (started by the first session, ended and waited for by Close). A
// Session is safe for concurrent use; its turns run on the core's worker,
// which calls the Client's Update in order; a session's first prompt
// creates its file from there too (Submit does not: its caller may be a
// read loop that other sessions' prompts wait behind), on a goroutine
// the worker starts and waits for, beside the model call (the journal's
// SaveWith, which calls nothing back; the answer is held until it
// returns), and so does the look at the command and skill files a prompt
// asks for (PromptCommand), shared by the sessions of a workspace
// (prompts.Cache, one per Host). The host calls Post and the *Changed
// methods from whoever changes the session (a protocol's read loop and
// the session's worker among them), so they must not block. A subagent
// runs as its own
// Session, on its own worker, while its parent's tool call waits for it;
// its parent's Close closes it (through the SubagentClient for one the
// client opened). MCP connections and the file history end with their
// session's Close.
package host
