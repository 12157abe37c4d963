package acp

import "context"

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
type method struct {
	MethodSpec
	// handle serves a request (see serverConn.dispatch); notify serves a
	// notification, on the read goroutine.
	handle func(c *serverConn, ctx context.Context, req *request) (func(), error)
	notify func(c *serverConn, req *request)
	// served reports whether agent serves the method (the optional
	// interface its handler needs); nil means every Agent does.
	served func(agent Agent) bool
	// capability sets (on) or clears the capability that advertises the
	// method in the initialize response; nil means the method needs no
	// advertising.
	capability func(caps *AgentCapabilities, on bool)
	// opensSession marks methods that create or open a session: after
	// logout they need authenticate again.
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
			notify: (*serverConn).cancelSession},
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

		// Extensions, served by the session their params name.
		{MethodSpec: extension(MethodSessionSteering), handle: (*serverConn).extension},
		{MethodSpec: extension(MethodExtSessionSteer), handle: (*serverConn).extension},
		{MethodSpec: extension(MethodExtSessionFollowUp), handle: (*serverConn).extension},
		{MethodSpec: extension(MethodExtSessionPending), handle: (*serverConn).extension},
		{MethodSpec: extension(MethodExtSessionStats), handle: (*serverConn).extension},
		{MethodSpec: extension(MethodExtSessionTools), handle: (*serverConn).extension},
		{MethodSpec: extension(MethodExtSessionEvents), handle: (*serverConn).extension},
		{MethodSpec: extension(MethodExtSessionForkable), handle: (*serverConn).extension},
		{MethodSpec: extension(MethodExtSessionFork), handle: (*serverConn).extensionFork, served: implements[Forker], opensSession: true},
		{MethodSpec: extension(MethodExtSessionClearPending), handle: (*serverConn).extension},
		{MethodSpec: extension(MethodExtSessionRewind), handle: (*serverConn).extension},
		{MethodSpec: extension(MethodExtStructured), handle: (*serverConn).extension},

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
	}
	methodIndex = make(map[string]*method, len(methods))
	for _, m := range methods {
		if _, dup := methodIndex[m.Name]; dup {
			panic("acp: method " + m.Name + " is in the table twice")
		}
		methodIndex[m.Name] = m
	}
}

func agentMethod(name, params, result string, schemas Schemas) MethodSpec {
	return MethodSpec{Name: name, Direction: ToAgent, Params: params, Result: result, Schemas: schemas}
}

func extension(name string) MethodSpec {
	return MethodSpec{Name: name, Direction: ToAgent, Extension: true}
}

// clientMethod is a row for a method the agent calls; a notification
// has no result.
func clientMethod(name, params, result string, schemas Schemas) *method {
	return &method{MethodSpec: MethodSpec{Name: name, Direction: ToClient, Notification: result == "", Params: params, Result: result, Schemas: schemas}}
}

// providersCap advertises providers/* (the three rows share it).
func providersCap(c *AgentCapabilities, on bool) { setCap(&c.Providers, on) }

// implements reports whether agent implements the interface I.
func implements[I any](agent Agent) bool {
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
func Methods() []MethodSpec {
	specs := make([]MethodSpec, len(methods))
	for i, m := range methods {
		specs[i] = m.MethodSpec
	}
	return specs
}

// ExtensionMethods returns the acp-agent extension methods (ExtPrefix) of
// the table, in order: what an agent advertises in
// agentCapabilities._meta["acp-agent"].extensionMethods.
func ExtensionMethods() []string {
	var names []string
	for _, m := range methods {
		if m.Extension && len(m.Name) > len(ExtPrefix) && m.Name[:len(ExtPrefix)] == ExtPrefix {
			names = append(names, m.Name)
		}
	}
	return names
}

// MethodGate is implemented by agents that serve some methods of their
// optional interfaces only in some configurations (acpagent serves
// session/load only with a session store). A method the gate refuses is
// neither advertised in initialize nor dispatched: it is answered -32601.
type MethodGate interface {
	ServesMethod(method string) bool
}

// serves reports whether agent serves m.
func serves(agent Agent, m *method) bool {
	if m.served != nil && !m.served(agent) {
		return false
	}
	if g, ok := agent.(MethodGate); ok {
		return g.ServesMethod(m.Name)
	}
	return true
}
