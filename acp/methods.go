package acp

import (
	"context"
	"strings"
)

// ACP v1 method names (schema/v1/meta.json, plus session/fork from
// meta.unstable.json).
const (
	// Agent methods (client → agent).
	MethodInitialize             = "initialize"
	MethodAuthenticate           = "authenticate"
	MethodLogout                 = "logout"
	MethodSessionNew             = "session/new"
	MethodSessionLoad            = "session/load"
	MethodSessionResume          = "session/resume"
	MethodSessionFork            = "session/fork" // unstable
	MethodSessionClose           = "session/close"
	MethodSessionList            = "session/list"
	MethodSessionDelete          = "session/delete"
	MethodSessionSetMode         = "session/set_mode"
	MethodSessionSetConfigOption = "session/set_config_option"
	MethodSessionPrompt          = "session/prompt"
	MethodSessionCancel          = "session/cancel"    // notification
	MethodSessionSetTitle        = "session/set_title" // unstable
	MethodSessionStatus          = "session/status"    // unstable
	MethodSessionArchive         = "session/archive"   // unstable
	MethodSessionUnarchive       = "session/unarchive" // unstable
	// MethodSessionSteering is the steering extension claude-agent-acp and
	// codex-acp answer: a message for the turn in flight.
	MethodSessionSteering = "_session/steering"

	// Client methods (agent → client).
	MethodSessionUpdate            = "session/update" // notification
	MethodSessionRequestPermission = "session/request_permission"
	MethodFSReadTextFile           = "fs/read_text_file"
	MethodFSWriteTextFile          = "fs/write_text_file"
	MethodTerminalCreate           = "terminal/create"
	MethodTerminalOutput           = "terminal/output"
	MethodTerminalWaitForExit      = "terminal/wait_for_exit"
	MethodTerminalKill             = "terminal/kill"
	MethodTerminalRelease          = "terminal/release"
	MethodElicitationCreate        = "elicitation/create"
	MethodElicitationComplete      = "elicitation/complete" // notification

	// Protocol methods (either direction).
	MethodCancelRequest = "$/cancel_request" // notification
)

// Unstable methods of the SDK 2.4.0 schema (npm-sdk-2.4.0/v1/
// schema.unstable.json) beyond session management.
const (
	// MethodAuthStatus (agent) and MethodAuthStatusUpdate (client,
	// notification): the agent's authentication state.
	MethodAuthStatus       = "auth/status"
	MethodAuthStatusUpdate = "auth/status_update"
	// MethodProviders*: the client picks the model endpoints (agent).
	MethodProvidersList    = "providers/list"
	MethodProvidersSet     = "providers/set"
	MethodProvidersDisable = "providers/disable"
	// MethodMCPMessage carries MCP over ACP: the agent's inner MCP
	// requests to a server the client provides, and the client's
	// notifications about them.
	MethodMCPMessage = "mcp/message"
)

// The acp-agent extension methods (docs/extensions.md). Each is served by
// the session its params name (ExtensionSession), except the fork, which
// makes a new session (Forker). They are advertised in
// agentCapabilities._meta["acp-agent"].extensionMethods: see
// ExtensionMethods.
const (
	ExtPrefix                    = "_acp-agent/"
	MethodExtSessionSteer        = "_acp-agent/session/steer"
	MethodExtSessionFollowUp     = "_acp-agent/session/follow_up"
	MethodExtSessionPending      = "_acp-agent/session/pending"
	MethodExtSessionStats        = "_acp-agent/session/stats"
	MethodExtSessionTools        = "_acp-agent/session/tools"
	MethodExtSessionEvents       = "_acp-agent/session/events"
	MethodExtSessionForkable     = "_acp-agent/session/forkable_messages"
	MethodExtSessionFork         = "_acp-agent/session/fork"
	MethodExtSessionClearPending = "_acp-agent/session/clear_pending"
	// MethodExtSessionRewind rewinds a session to before one of its user
	// messages, optionally restoring the files its turns changed.
	MethodExtSessionRewind = "_acp-agent/session/rewind"
	// MethodExtStructured is a prompt whose answer must match a JSON
	// Schema, streamed as it is parsed.
	MethodExtStructured = "_acp-agent/structured"
)

// Direction says who calls a method.
type Direction uint8

const (
	// ToAgent methods are called by the client and served here.
	ToAgent Direction = 1 << iota
	// ToClient methods are called by the agent (ClientConn).
	ToClient
)

// Schemas is the set of official schema files (testdata/acp-schema) that
// define a method's params and result; a message is valid if it is valid
// against each.
type Schemas uint8

const (
	SchemaV1          Schemas = 1 << iota // v1/schema.json: the stable protocol
	SchemaV1Unstable                      // v1/schema.unstable.json
	SchemaSDKUnstable                     // npm-sdk-2.4.0/v1/schema.unstable.json
	SchemaV2                              // npm-sdk-2.4.0/v2/schema.json: ACP v2 (Preview)
	SchemaV2Unstable                      // npm-sdk-2.4.0/v2/schema.unstable.json
)

// MethodSpec describes one method of the method table: what tests and
// tools may know about it. The table itself (dispatch, the agent
// interface that serves a method, the capability that advertises it) is
// unexported.
type MethodSpec struct {
	Name         string
	Direction    Direction
	Notification bool
	// Params and Result name the definitions of the params and the
	// result in the schema files of Schemas ("" where there is none).
	Params, Result string
	Schemas        Schemas
	// Extension marks a method that is not ACP's (a name starting with
	// "_"); extensions have no official schema.
	Extension bool
	// ClientNotification names the params definition of the notification
	// the client sends under the same name, for a method the agent calls
	// (mcp/message).
	ClientNotification string
}

// method is one row of the method table.
type method = methodRow[Agent, AgentCapabilities]

// methodRow is one row of a method table, of either version: A is the
// version's agent interface, C its capabilities.
type methodRow[A any, C any] struct {
	MethodSpec
	// handle serves a request (see serverConn.dispatch); notify serves a
	// notification, on the read goroutine.
	handle func(c *serverConn, ctx context.Context, req *request) (func(), error)
	notify func(c *serverConn, req *request)
	// served reports whether agent serves the method (the optional
	// interface its handler needs); nil means every agent does.
	served func(agent A) bool
	// capability sets (on) or clears the capability that advertises the
	// method in the initialize response; nil means the method needs no
	// advertising (v2: auth/login and auth/logout are advertised by
	// authMethods, tool_call/cancel and terminal/cancel by each tool call
	// and terminal).
	capability func(caps *C, on bool)
	// opensSession marks methods that create or open a session: after
	// logout they need authenticate (v2: auth/login) again.
	opensSession bool
}

// methods is the method table: every method the agent serves or calls.
// Adding an ACP method is one row here, its types (types_*.go with
// Validate) and its handler. Dispatch, the known-method check, the
// capabilities advertised in initialize and acptest's schema checks all
// come from here. It is set in init because handlers look methods up.
var (
	methods     []*method
	methodIndex map[string]*method
)

func init() {
	methods = []*method{
		{MethodSpec: agentMethod(MethodInitialize, "InitializeRequest", "InitializeResponse", SchemaV1|SchemaSDKUnstable),
			handle: (*serverConn).initialize},
		{MethodSpec: agentMethod(MethodAuthenticate, "AuthenticateRequest", "AuthenticateResponse", SchemaV1),
			handle: (*serverConn).authenticate},
		{MethodSpec: agentMethod(MethodLogout, "LogoutRequest", "LogoutResponse", SchemaV1),
			handle: (*serverConn).logout, served: implements[Logouter],
			capability: func(c *AgentCapabilities, on bool) { setCap(&c.Auth.Logout, on) }},
		{MethodSpec: agentMethod(MethodSessionNew, "NewSessionRequest", "NewSessionResponse", SchemaV1),
			handle: (*serverConn).newSession, opensSession: true},
		{MethodSpec: agentMethod(MethodSessionLoad, "LoadSessionRequest", "LoadSessionResponse", SchemaV1),
			handle: (*serverConn).load, served: implements[SessionStore], opensSession: true,
			capability: func(c *AgentCapabilities, on bool) { c.LoadSession = on }},
		{MethodSpec: agentMethod(MethodSessionResume, "ResumeSessionRequest", "ResumeSessionResponse", SchemaV1),
			handle: (*serverConn).load, served: implements[SessionStore], opensSession: true,
			capability: func(c *AgentCapabilities, on bool) { setCap(&c.SessionCapabilities.Resume, on) }},
		{MethodSpec: agentMethod(MethodSessionFork, "ForkSessionRequest", "ForkSessionResponse", SchemaV1Unstable),
			handle: (*serverConn).forkSession, served: implements[Forker], opensSession: true,
			capability: func(c *AgentCapabilities, on bool) { setCap(&c.SessionCapabilities.Fork, on) }},
		{MethodSpec: agentMethod(MethodSessionList, "ListSessionsRequest", "ListSessionsResponse", SchemaV1|SchemaSDKUnstable),
			handle: (*serverConn).list, served: implements[SessionStore],
			capability: func(c *AgentCapabilities, on bool) { setCap(&c.SessionCapabilities.List, on) }},
		{MethodSpec: agentMethod(MethodSessionClose, "CloseSessionRequest", "CloseSessionResponse", SchemaV1),
			handle:     (*serverConn).closeSession,
			capability: func(c *AgentCapabilities, on bool) { setCap(&c.SessionCapabilities.Close, on) }},
		{MethodSpec: agentMethod(MethodSessionDelete, "DeleteSessionRequest", "DeleteSessionResponse", SchemaV1),
			handle: (*serverConn).deleteSession, served: implements[SessionStore],
			capability: func(c *AgentCapabilities, on bool) { setCap(&c.SessionCapabilities.Delete, on) }},
		{MethodSpec: agentMethod(MethodSessionSetMode, "SetSessionModeRequest", "SetSessionModeResponse", SchemaV1),
			handle: (*serverConn).setMode},
		{MethodSpec: agentMethod(MethodSessionSetConfigOption, "SetSessionConfigOptionRequest", "SetSessionConfigOptionResponse", SchemaV1),
			handle: (*serverConn).setConfigOption},
		{MethodSpec: agentMethod(MethodSessionPrompt, "PromptRequest", "PromptResponse", SchemaV1),
			handle: (*serverConn).prompt},
		{MethodSpec: MethodSpec{Name: MethodSessionCancel, Direction: ToAgent, Notification: true, Params: "CancelNotification", Schemas: SchemaV1},
			notify: (*serverConn).cancelNotification},
		{MethodSpec: agentMethod(MethodSessionSetTitle, "SetSessionTitleRequest", "SetSessionTitleResponse", SchemaSDKUnstable),
			handle: (*serverConn).setTitle, served: implements[SessionManager],
			capability: func(c *AgentCapabilities, on bool) { setCap(&c.SessionCapabilities.Title, on) }},
		{MethodSpec: agentMethod(MethodSessionStatus, "SessionStatusRequest", "SessionStatusResponse", SchemaSDKUnstable),
			handle: (*serverConn).status, served: implements[SessionManager],
			capability: func(c *AgentCapabilities, on bool) { setCap(&c.SessionCapabilities.Status, on) }},
		{MethodSpec: agentMethod(MethodSessionArchive, "ArchiveSessionRequest", "ArchiveSessionResponse", SchemaSDKUnstable),
			handle: (*serverConn).archive, served: implements[SessionManager],
			capability: func(c *AgentCapabilities, on bool) { setCap(&c.SessionCapabilities.Archive, on) }},
		{MethodSpec: agentMethod(MethodSessionUnarchive, "UnarchiveSessionRequest", "UnarchiveSessionResponse", SchemaSDKUnstable),
			handle: (*serverConn).archive, served: implements[SessionManager]},
		{MethodSpec: MethodSpec{Name: MethodCancelRequest, Direction: ToAgent | ToClient, Notification: true, Params: "CancelRequestNotification", Schemas: SchemaV1},
			notify: (*serverConn).cancelRequest},

		// SDK 2.4.0 unstable: authentication state, the model endpoints,
		// MCP over ACP.
		{MethodSpec: agentMethod(MethodAuthStatus, "AuthStatusRequest", "AuthStatusResponse", SchemaSDKUnstable),
			handle: (*serverConn).authStatus, served: implements[AuthStatusReporter],
			capability: func(c *AgentCapabilities, on bool) { setCap(&c.Auth.Status, on) }},
		{MethodSpec: agentMethod(MethodProvidersList, "ListProvidersRequest", "ListProvidersResponse", SchemaSDKUnstable),
			handle: (*serverConn).providers, served: implements[ProviderConfigurer], capability: providersCap},
		{MethodSpec: agentMethod(MethodProvidersSet, "SetProviderRequest", "SetProviderResponse", SchemaSDKUnstable),
			handle: (*serverConn).providers, served: implements[ProviderConfigurer], capability: providersCap},
		{MethodSpec: agentMethod(MethodProvidersDisable, "DisableProviderRequest", "DisableProviderResponse", SchemaSDKUnstable),
			handle: (*serverConn).providers, served: implements[ProviderConfigurer], capability: providersCap},
		clientMethod(MethodAuthStatusUpdate, "AuthStatusUpdateNotification", "", SchemaSDKUnstable),
		// The agent calls mcp/message; the client sends it as a
		// notification about one of those calls.
		{MethodSpec: MethodSpec{Name: MethodMCPMessage, Direction: ToClient, Params: "MessageMcpRequest", Result: "MessageMcpResponse",
			ClientNotification: "MessageMcpNotification", Schemas: SchemaSDKUnstable},
			notify: (*serverConn).mcpNotification, served: implements[MCPOverACP],
			capability: func(c *AgentCapabilities, on bool) { c.MCPCapabilities.ACP = on }},
	}
	// Extensions, served by the session their params name.
	methods = append(methods, extensionRows(&method{handle: (*serverConn).extensionFork, served: implements[Forker], opensSession: true})...)
	methods = append(methods,
		// The agent's calls to the client (ClientConn).
		clientMethod(MethodSessionUpdate, "SessionNotification", "", SchemaV1),
		clientMethod(MethodSessionRequestPermission, "RequestPermissionRequest", "RequestPermissionResponse", SchemaV1),
		clientMethod(MethodFSReadTextFile, "ReadTextFileRequest", "ReadTextFileResponse", SchemaV1),
		clientMethod(MethodFSWriteTextFile, "WriteTextFileRequest", "WriteTextFileResponse", SchemaV1),
		clientMethod(MethodTerminalCreate, "CreateTerminalRequest", "CreateTerminalResponse", SchemaV1),
		clientMethod(MethodTerminalOutput, "TerminalOutputRequest", "TerminalOutputResponse", SchemaV1),
		clientMethod(MethodTerminalWaitForExit, "WaitForTerminalExitRequest", "WaitForTerminalExitResponse", SchemaV1),
		clientMethod(MethodTerminalKill, "KillTerminalRequest", "KillTerminalResponse", SchemaV1),
		clientMethod(MethodTerminalRelease, "ReleaseTerminalRequest", "ReleaseTerminalResponse", SchemaV1),
		clientMethod(MethodElicitationCreate, "CreateElicitationRequest", "CreateElicitationResponse", SchemaSDKUnstable),
		clientMethod(MethodElicitationComplete, "CompleteElicitationNotification", "", SchemaSDKUnstable),
	)
	methodIndex = indexTable(methods, "method")
}

// row gives a table row's MethodSpec: rows of either version's table
// embed one, and tableRow is what the code both tables share needs.
func (s *MethodSpec) row() *MethodSpec { return s }

type tableRow interface{ row() *MethodSpec }

// indexTable indexes a method table by name (what names the table in the
// panic, which a name twice in it is).
func indexTable[R tableRow](rows []R, what string) map[string]R {
	index := make(map[string]R, len(rows))
	for _, m := range rows {
		name := m.row().Name
		if _, dup := index[name]; dup {
			panic("acp: " + what + " " + name + " is in the table twice")
		}
		index[name] = m
	}
	return index
}

// specsOf is a method table's MethodSpecs, in order.
func specsOf[R tableRow](rows []R) []MethodSpec {
	specs := make([]MethodSpec, len(rows))
	for i, m := range rows {
		specs[i] = *m.row()
	}
	return specs
}

// extensionNames is a method table's acp-agent extension methods
// (ExtPrefix), in order.
func extensionNames[R tableRow](rows []R) []string {
	var names []string
	for _, m := range rows {
		if m.row().Extension && strings.HasPrefix(m.row().Name, ExtPrefix) && m.row().Name != ExtPrefix {
			names = append(names, m.row().Name)
		}
	}
	return names
}

// gated reports whether an agent of either version that gates its
// methods (MethodGate) serves name; one that does not serves them all.
func gated(agent any, name string) bool {
	if g, ok := agent.(MethodGate); ok {
		return g.ServesMethod(name)
	}
	return true
}

func agentMethod(name, params, result string, schemas Schemas) MethodSpec {
	return MethodSpec{Name: name, Direction: ToAgent, Params: params, Result: result, Schemas: schemas}
}

func extension(name string) MethodSpec {
	return MethodSpec{Name: name, Direction: ToAgent, Extension: true}
}

// sessionExtensions are the extension methods a session serves
// (ExtensionSession), in the order both tables list them, with the fork,
// which makes a new session, among them.
var sessionExtensions = []string{MethodSessionSteering, MethodExtSessionSteer, MethodExtSessionFollowUp,
	MethodExtSessionPending, MethodExtSessionStats, MethodExtSessionTools, MethodExtSessionEvents,
	MethodExtSessionForkable, MethodExtSessionFork, MethodExtSessionClearPending, MethodExtSessionRewind,
	MethodExtStructured}

// extensionRows are a table's rows of sessionExtensions: each served by
// the session its params name, on a connection of either version, but
// the fork, which is fork with its name set.
func extensionRows[A, C any](fork *methodRow[A, C]) []*methodRow[A, C] {
	rows := make([]*methodRow[A, C], 0, len(sessionExtensions))
	for _, name := range sessionExtensions {
		if name == MethodExtSessionFork {
			fork.MethodSpec = extension(name)
			rows = append(rows, fork)
			continue
		}
		rows = append(rows, &methodRow[A, C]{MethodSpec: extension(name), handle: (*serverConn).extension})
	}
	return rows
}

// clientMethod is a row for a method the agent calls; a notification
// has no result.
func clientMethod(name, params, result string, schemas Schemas) *method {
	return clientRow[Agent, AgentCapabilities](name, params, result, schemas)
}

func clientRow[A, C any](name, params, result string, schemas Schemas) *methodRow[A, C] {
	return &methodRow[A, C]{MethodSpec: MethodSpec{Name: name, Direction: ToClient, Notification: result == "", Params: params, Result: result, Schemas: schemas}}
}

// providersCap advertises providers/* (the three rows share it).
func providersCap(c *AgentCapabilities, on bool) { setCap(&c.Providers, on) }

// implements reports whether agent implements the interface I
// (implementsV2: a v2 agent; a row's served needs its version's type).
func implements[I any](agent Agent) bool {
	_, ok := agent.(I)
	return ok
}

func implementsV2[I any](agent AgentV2) bool {
	_, ok := agent.(I)
	return ok
}

// setCap sets *p to a new T (on) or nil (off), keeping a value the agent
// set.
func setCap[T any](p **T, on bool) {
	switch {
	case !on:
		*p = nil
	case *p == nil:
		*p = new(T)
	}
}

// Methods returns the method table: the methods the agent serves and the
// ones it calls, in a fixed order.
func Methods() []MethodSpec { return specsOf(methods) }

// ExtensionMethods returns the acp-agent extension methods (ExtPrefix) of
// the table, in order: what an agent advertises in
// agentCapabilities._meta["acp-agent"].extensionMethods.
func ExtensionMethods() []string { return extensionNames(methods) }

// MethodGate is implemented by agents that serve some methods of their
// optional interfaces only in some configurations (acpagent serves
// session/load only with a session store). A method the gate refuses is
// neither advertised in initialize nor dispatched: it is answered -32601.
type MethodGate interface {
	ServesMethod(method string) bool
}

// serves reports whether agent serves m (either version).
func serves[A, C any](agent A, m *methodRow[A, C]) bool {
	return (m.served == nil || m.served(agent)) && gated(agent, m.Name)
}
