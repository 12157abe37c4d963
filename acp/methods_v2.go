package acp

import (
	"sync"

	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// methodV2 is one row of the v2 method table: as v1's (method), with the
// v2 agent's interfaces and capabilities.
type methodV2 = methodRow[AgentV2, acpv2.AgentCapabilities]

// methodTableV2 is the v2 method table: every method a v2 connection serves
// or calls. As with v1's, dispatch, the known-method check, the
// capabilities of initialize and acptest's schema checks come from it.
// It is built on first use (tableV2): a v1 connection never needs it, and
// building it at package init cost every start.
type methodTableV2 struct {
	rows  []*methodV2
	index map[string]*methodV2
}

var tableV2 func() methodTableV2

// Set in init, not in tableV2's declaration, because handlers look
// methods up (an initialization cycle otherwise); sync.OnceValue only
// wraps the function here.
func init() { tableV2 = sync.OnceValue(buildMethodsV2) }

func buildMethodsV2() methodTableV2 {
	stable, unstable := SchemaV2|SchemaV2Unstable, SchemaV2Unstable
	session := func(c *acpv2.AgentCapabilities) *acpv2.SessionCapabilities {
		if c.Session == nil {
			c.Session = &acpv2.SessionCapabilities{}
		}
		return c.Session
	}
	methodsV2 := []*methodV2{
		{MethodSpec: agentMethod(acpv2.MethodInitialize, "InitializeRequest", "InitializeResponse", stable),
			handle: (*serverConn).initializeV2},
		{MethodSpec: agentMethod(acpv2.MethodAuthLogin, "LoginAuthRequest", "LoginAuthResponse", stable),
			handle: (*serverConn).authV2, served: implementsV2[AuthenticatorV2]},
		{MethodSpec: agentMethod(acpv2.MethodAuthLogout, "LogoutAuthRequest", "LogoutAuthResponse", stable),
			handle: (*serverConn).authV2, served: implementsV2[AuthenticatorV2]},
		{MethodSpec: agentMethod(acpv2.MethodAuthStatus, "AuthStatusRequest", "AuthStatusResponse", unstable),
			handle: (*serverConn).authStatusV2, served: implementsV2[AuthStatusV2],
			capability: func(c *acpv2.AgentCapabilities, on bool) {
				if c.Auth == nil && on {
					c.Auth = &acpv2.AgentAuthCapabilities{}
				}
				if c.Auth != nil {
					setCap(&c.Auth.Status, on)
				}
			}},
		// The baseline session methods, advertised by session: {}.
		{MethodSpec: agentMethod(acpv2.MethodSessionNew, "NewSessionRequest", "NewSessionResponse", stable),
			handle: (*serverConn).newSessionV2, opensSession: true,
			capability: func(c *acpv2.AgentCapabilities, on bool) {
				if on {
					session(c)
				} else {
					c.Session = nil
				}
			}},
		{MethodSpec: agentMethod(acpv2.MethodSessionList, "ListSessionsRequest", "ListSessionsResponse", stable),
			handle: (*serverConn).listV2},
		{MethodSpec: agentMethod(acpv2.MethodSessionResume, "ResumeSessionRequest", "ResumeSessionResponse", stable),
			handle: (*serverConn).resumeV2, opensSession: true},
		{MethodSpec: agentMethod(acpv2.MethodSessionClose, "CloseSessionRequest", "CloseSessionResponse", stable),
			handle: (*serverConn).closeSessionV2},
		{MethodSpec: agentMethod(acpv2.MethodSessionPrompt, "PromptRequest", "PromptResponse", stable),
			handle: (*serverConn).promptV2},
		{MethodSpec: MethodSpec{Name: acpv2.MethodSessionCancel, Direction: ToAgent, Notification: true, Params: "CancelSessionNotification", Schemas: stable},
			notify: (*serverConn).cancelSessionV2},
		{MethodSpec: agentMethod(acpv2.MethodSessionSetConfigOption, "SetSessionConfigOptionRequest", "SetSessionConfigOptionResponse", stable),
			handle: (*serverConn).setConfigOptionV2},
		{MethodSpec: agentMethod(acpv2.MethodSessionDelete, "DeleteSessionRequest", "DeleteSessionResponse", stable),
			handle: (*serverConn).deleteSessionV2, served: implementsV2[SessionDeleterV2],
			capability: func(c *acpv2.AgentCapabilities, on bool) { setCap(&session(c).Delete, on) }},
		{MethodSpec: agentMethod(acpv2.MethodToolCallCancel, "CancelToolCallRequest", "CancelToolCallResponse", stable),
			handle: (*serverConn).cancelWorkV2},
		{MethodSpec: agentMethod(acpv2.MethodTerminalCancel, "CancelTerminalRequest", "CancelTerminalResponse", stable),
			handle: (*serverConn).cancelWorkV2},
		{MethodSpec: agentMethod(acpv2.MethodSessionFork, "ForkSessionRequest", "ForkSessionResponse", unstable),
			handle: (*serverConn).forkSessionV2, served: implementsV2[ForkerV2], opensSession: true,
			capability: func(c *acpv2.AgentCapabilities, on bool) { setCap(&session(c).Fork, on) }},
		{MethodSpec: agentMethod(acpv2.MethodSessionSetTitle, "SetSessionTitleRequest", "SetSessionTitleResponse", unstable),
			handle: (*serverConn).setTitleV2, served: implementsV2[SessionManager],
			capability: func(c *acpv2.AgentCapabilities, on bool) { setCap(&session(c).Title, on) }},
		{MethodSpec: agentMethod(acpv2.MethodSessionStatus, "SessionStatusRequest", "SessionStatusResponse", unstable),
			handle: (*serverConn).statusV2, served: implementsV2[SessionManager],
			capability: func(c *acpv2.AgentCapabilities, on bool) { setCap(&session(c).Status, on) }},
		{MethodSpec: agentMethod(acpv2.MethodSessionArchive, "ArchiveSessionRequest", "ArchiveSessionResponse", unstable),
			handle: (*serverConn).archiveV2, served: implementsV2[SessionManager],
			capability: func(c *acpv2.AgentCapabilities, on bool) { setCap(&session(c).Archive, on) }},
		{MethodSpec: agentMethod(acpv2.MethodSessionUnarchive, "UnarchiveSessionRequest", "UnarchiveSessionResponse", unstable),
			handle: (*serverConn).archiveV2, served: implementsV2[SessionManager]},
		{MethodSpec: agentMethod(acpv2.MethodProvidersList, "ListProvidersRequest", "ListProvidersResponse", unstable),
			handle: (*serverConn).providersV2, served: implementsV2[ProviderManagerV2],
			capability: func(c *acpv2.AgentCapabilities, on bool) { setCap(&c.Providers, on) }},
		{MethodSpec: agentMethod(acpv2.MethodProvidersSet, "SetProviderRequest", "SetProviderResponse", unstable),
			handle: (*serverConn).providersV2, served: implementsV2[ProviderManagerV2]},
		{MethodSpec: agentMethod(acpv2.MethodProvidersDisable, "DisableProviderRequest", "DisableProviderResponse", unstable),
			handle: (*serverConn).providersV2, served: implementsV2[ProviderManagerV2]},
		{MethodSpec: MethodSpec{Name: acpv2.MethodCancelRequest, Direction: ToAgent | ToClient, Notification: true, Params: "CancelRequestNotification", Schemas: stable},
			notify: (*serverConn).cancelRequest},
	}
	// Extensions, served by the session their params name.
	methodsV2 = append(methodsV2, extensionRows(&methodV2{handle: (*serverConn).extensionForkV2, served: implementsV2[ForkerV2], opensSession: true})...)
	methodsV2 = append(methodsV2,
		// The agent's calls to the client (ClientConnV2).
		clientMethodV2(acpv2.MethodSessionUpdate, "UpdateSessionNotification", "", stable),
		clientMethodV2(acpv2.MethodSessionRequestPermission, "RequestPermissionRequest", "RequestPermissionResponse", stable),
		clientMethodV2(acpv2.MethodElicitationCreate, "CreateElicitationRequest", "CreateElicitationResponse", stable),
		clientMethodV2(acpv2.MethodElicitationComplete, "CompleteElicitationNotification", "", stable),
		clientMethodV2(acpv2.MethodAuthStatusUpdate, "AuthStatusUpdateNotification", "", unstable),
	)
	return methodTableV2{rows: methodsV2, index: indexTable(methodsV2, "v2 method")}
}

func clientMethodV2(name, params, result string, schemas Schemas) *methodV2 {
	return clientRow[AgentV2, acpv2.AgentCapabilities](name, params, result, schemas)
}

// MethodsV2 returns the v2 method table: the methods a v2 connection
// serves and the ones the agent calls on it, in a fixed order.
func MethodsV2() []MethodSpec { return specsOf(tableV2().rows) }

// ExtensionMethodsV2 returns the acp-agent extension methods (ExtPrefix)
// a v2 connection serves, in order: what a v2 agent advertises in its
// initialize response's _meta["acp-agent"].extensionMethods.
func ExtensionMethodsV2() []string { return extensionNames(tableV2().rows) }
