package acp

import (
	"context"
	"strings"

	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// methodV2 is one row of the v2 method table: as v1's (method), with the
// v2 agent's interfaces and capabilities.
type methodV2 struct {
	MethodSpec
	handle func(c *serverConn, ctx context.Context, req *request) (func(), error)
	notify func(c *serverConn, req *request)
	// served reports whether the agent serves the method (the optional
	// interface its handler needs); nil means every AgentV2 does.
	served func(agent AgentV2) bool
	// capability sets (on) or clears the capability that advertises the
	// method in the initialize response; nil means none does (auth/login
	// and auth/logout are advertised by authMethods, tool_call/cancel and
	// terminal/cancel by each tool call and terminal).
	capability   func(caps *acpv2.AgentCapabilities, on bool)
	opensSession bool
}

// methodsV2 is the v2 method table: every method a v2 connection serves
// or calls. As with v1's, dispatch, the known-method check, the
// capabilities of initialize and acptest's schema checks come from it.
var (
	methodsV2     []*methodV2
	methodIndexV2 map[string]*methodV2
)

func init() {
	stable, unstable := SchemaV2|SchemaV2Unstable, SchemaV2Unstable
	session := func(c *acpv2.AgentCapabilities) *acpv2.SessionCapabilities {
		if c.Session == nil {
			c.Session = &acpv2.SessionCapabilities{}
		}
		return c.Session
	}
	methodsV2 = []*methodV2{
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

		// Extensions, served by the session their params name.
		{MethodSpec: extension(MethodSessionSteering), handle: (*serverConn).extensionV2},
		{MethodSpec: extension(MethodExtSessionSteer), handle: (*serverConn).extensionV2},
		{MethodSpec: extension(MethodExtSessionFollowUp), handle: (*serverConn).extensionV2},
		{MethodSpec: extension(MethodExtSessionPending), handle: (*serverConn).extensionV2},
		{MethodSpec: extension(MethodExtSessionStats), handle: (*serverConn).extensionV2},
		{MethodSpec: extension(MethodExtSessionTools), handle: (*serverConn).extensionV2},
		{MethodSpec: extension(MethodExtSessionEvents), handle: (*serverConn).extensionV2},
		{MethodSpec: extension(MethodExtSessionForkable), handle: (*serverConn).extensionV2},
		{MethodSpec: extension(MethodExtSessionFork), handle: (*serverConn).extensionForkV2, served: implementsV2[ForkerV2], opensSession: true},
		{MethodSpec: extension(MethodExtSessionClearPending), handle: (*serverConn).extensionV2},
		{MethodSpec: extension(MethodExtSessionRewind), handle: (*serverConn).extensionV2},
		{MethodSpec: extension(MethodExtStructured), handle: (*serverConn).extensionV2},

		// The agent's calls to the client (ClientConnV2).
		clientMethodV2(acpv2.MethodSessionUpdate, "UpdateSessionNotification", "", stable),
		clientMethodV2(acpv2.MethodSessionRequestPermission, "RequestPermissionRequest", "RequestPermissionResponse", stable),
		clientMethodV2(acpv2.MethodElicitationCreate, "CreateElicitationRequest", "CreateElicitationResponse", stable),
		clientMethodV2(acpv2.MethodElicitationComplete, "CompleteElicitationNotification", "", stable),
		clientMethodV2(acpv2.MethodAuthStatusUpdate, "AuthStatusUpdateNotification", "", unstable),
	}
	methodIndexV2 = make(map[string]*methodV2, len(methodsV2))
	for _, m := range methodsV2 {
		if _, dup := methodIndexV2[m.Name]; dup {
			panic("acp: v2 method " + m.Name + " is in the table twice")
		}
		methodIndexV2[m.Name] = m
	}
}

func clientMethodV2(name, params, result string, schemas Schemas) *methodV2 {
	return &methodV2{MethodSpec: MethodSpec{Name: name, Direction: ToClient, Notification: result == "", Params: params, Result: result, Schemas: schemas}}
}

// implementsV2 reports whether agent implements the interface I.
func implementsV2[I any](agent AgentV2) bool {
	_, ok := agent.(I)
	return ok
}

// MethodsV2 returns the v2 method table: the methods a v2 connection
// serves and the ones the agent calls on it, in a fixed order.
func MethodsV2() []MethodSpec {
	specs := make([]MethodSpec, len(methodsV2))
	for i, m := range methodsV2 {
		specs[i] = m.MethodSpec
	}
	return specs
}

// ExtensionMethodsV2 returns the acp-agent extension methods (ExtPrefix)
// a v2 connection serves, in order: what a v2 agent advertises in its
// initialize response's _meta["acp-agent"].extensionMethods.
func ExtensionMethodsV2() []string {
	var names []string
	for _, m := range methodsV2 {
		if m.Extension && strings.HasPrefix(m.Name, ExtPrefix) {
			names = append(names, m.Name)
		}
	}
	return names
}

// servesV2 reports whether agent serves m.
func servesV2(agent AgentV2, m *methodV2) bool {
	if m.served != nil && !m.served(agent) {
		return false
	}
	if g, ok := agent.(MethodGate); ok {
		return g.ServesMethod(m.Name)
	}
	return true
}
