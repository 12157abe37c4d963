package acpagent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/host"
)

// Config configures an Agent: the host's configuration and what only the
// ACP mapping has.
type Config struct {
	host.Config
	// TerminalLogin, if set, is advertised as a "terminal" auth method to
	// clients that can run one (auth.terminal, or Zed's and the ACP
	// registry's _meta "terminal-auth"): the client reruns the agent with
	// Args in a terminal (acp-agent login). Command is the agent's own
	// path, for clients that take the legacy _meta launch hint.
	TerminalLogin *TerminalLogin
	// ExecutionStates sends execution_state_update and retry_update to
	// every client; otherwise only to clients that ask for them with
	// clientCapabilities._meta["acp-agent"].executionState.
	ExecutionStates bool
}

// Options are what only the ACP mapping has (Config beside the host's).
type Options struct {
	TerminalLogin   *TerminalLogin
	ExecutionStates bool
}

// Agent implements acp.Agent over a host.Host: it maps ACP's methods to
// the host's session lifecycle, and each session to a host.Session.
type Agent struct {
	h        *host.Host
	ownsHost bool
	log      *slog.Logger
	opts     Options
}

var (
	_ acp.Agent  = (*Agent)(nil)
	_ acp.Forker = (*Agent)(nil)
)

// New returns an Agent on a host of its own, made from cfg (Close closes
// it). A model that cannot be used is not an error here: initialize must
// still succeed, and session/new explains what to set.
func New(cfg Config) *Agent {
	if cfg.RequestID == nil {
		cfg.RequestID = acp.RequestID
	}
	a := NewOnHost(host.New(cfg.Config), Options{TerminalLogin: cfg.TerminalLogin, ExecutionStates: cfg.ExecutionStates})
	a.ownsHost = true
	return a
}

// NewOnHost returns an Agent serving ACP over h, which others may serve
// too (h's Config.RequestID should be acp.RequestID, for telemetry).
func NewOnHost(h *host.Host, opts Options) *Agent {
	return &Agent{h: h, log: h.Logger(), opts: opts}
}

// Host is the host the agent serves.
func (a *Agent) Host() *host.Host { return a.h }

// Close stops the background work of the agent's own host (the model
// listing) and waits for it. Sessions are closed by the transport.
func (a *Agent) Close() {
	if a.ownsHost {
		a.h.Close()
	}
}

// DiscoveryDone is closed once the background model listing is merged
// (host.Host.DiscoveryDone).
func (a *Agent) DiscoveryDone() <-chan struct{} { return a.h.DiscoveryDone() }

// ProbeModel checks the default model as acp-agent doctor reports it
// (host.Host.ProbeModel).
func (a *Agent) ProbeModel(ctx context.Context, offline bool, timeout time.Duration) host.ModelProbe {
	return a.h.ProbeModel(ctx, offline, timeout)
}

// unusable is the error of a session request while no model is usable
// (or the setup is broken): authentication required, with the reason and
// its data.
func (a *Agent) unusable() error { return Unusable(a.h) }

// Unusable is the error of a session request while h has no usable model
// (or its setup is broken), for both ACP versions: authentication
// required, with the reason and its data.
func Unusable(h *host.Host) error {
	modelErr := h.Usable()
	err := fmt.Errorf("%w: %v", acp.ErrAuthRequired, modelErr)
	if d, ok := modelErr.(interface{ ErrorData() any }); ok {
		return &acp.DataError{Err: err, Data: d.ErrorData()}
	}
	return err
}

// mcpCapabilities advertises the MCP transports the host supports (stdio
// always).
func mcpCapabilities() acp.McpCapabilities {
	http, sse := host.MCPTransports()
	return acp.McpCapabilities{HTTP: http, SSE: sse}
}

// authMethodID is our one authentication method: the model is configured
// through the agent's environment and flags (the API keys never come from
// the client), so authenticating checks that it is usable.
const authMethodID = "configure-model"

var (
	_ acp.Logouter   = (*Agent)(nil)
	_ acp.MethodGate = (*Agent)(nil)
	_ acp.MCPOverACP = (*Agent)(nil)
)

// ConnectsMCPOverACP implements acp.MCPOverACP: the MCP servers a client
// declares with type "acp" are reached through its connection, by the
// same MCP client as stdio and HTTP servers.
func (a *Agent) ConnectsMCPOverACP() {}

// Initialize implements acp.Agent. It advertises only what is implemented;
// the capabilities of methods (session/load, list, fork, logout, ...) are
// set by the acp service from its method table, as ServesMethod says.
func (a *Agent) Initialize(_ context.Context, req *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	resp := &acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionV1,
		AgentCapabilities: acp.AgentCapabilities{
			PromptCapabilities: acp.PromptCapabilities{Image: true, EmbeddedContext: true},
			MCPCapabilities:    mcpCapabilities(),
			SessionCapabilities: acp.SessionCapabilities{
				AdditionalDirectories: &acp.SessionAdditionalDirectoriesCapabilities{},
				// The client's instructions, appended or in place of ours
				// (agent.ClientPrompt).
				SystemPrompt: &acp.SessionSystemPromptCapabilities{Mode: &acp.SessionSystemPromptModeCapabilities{
					Override: &acp.SessionSystemPromptOverrideCapabilities{}}},
			},
			Meta: agentCapabilitiesMeta(),
		},
		AgentInfo: &acp.Implementation{Name: "acp-agent", Title: "ACP Agent", Version: a.h.Version()},
		// The method to authenticate again after logout; needed at first
		// only when no model is usable.
		AuthMethods: []acp.AuthMethod{{Agent: &acp.AuthMethodAgent{
			ID: authMethodID, Name: "Configure a model", Description: "The model is set with --model and the provider's API key in the agent's environment.",
		}}},
		// The steering extension of claude-agent-acp and codex-acp.
		Meta: json.RawMessage(`{"steering":{"supported":true}}`),
	}
	if err := a.h.Usable(); err != nil {
		resp.AuthMethods[0].Agent.Name = a.authMethodName()
		resp.AuthMethods[0].Agent.Description = err.Error()
	}
	if m := a.terminalLogin(req); m != nil {
		resp.AuthMethods = append(resp.AuthMethods, *m)
	}
	return resp, nil
}

// ServesMethod implements acp.MethodGate: the methods that read or change
// stored sessions are served only with a store.
func (a *Agent) ServesMethod(method string) bool {
	switch method {
	case acp.MethodSessionLoad, acp.MethodSessionResume, acp.MethodSessionList, acp.MethodSessionDelete,
		acp.MethodSessionSetTitle, acp.MethodSessionStatus, acp.MethodSessionArchive, acp.MethodSessionUnarchive:
		return a.h.Stored()
	}
	return true
}

// Authenticate implements acp.Agent. The model is configured through the
// environment and flags, so authenticating only checks that it is usable.
func (a *Agent) Authenticate(ctx context.Context, req *acp.AuthenticateRequest) error {
	if req.MethodID != authMethodID {
		return fmt.Errorf("%w: methodId: unknown authentication method %q", acp.ErrInvalidParams, req.MethodID)
	}
	return a.usable(acp.ConnectionOf(ctx))
}

// Logout implements acp.Logouter. The agent holds no credential of the
// client's: Authenticate only checks the configured model, and the
// provider keys belong to the agent's environment, shared by every
// connection of the process (forgetting them would log out the other
// clients of `serve`). So there is nothing to forget here; the service
// returns this connection to the unauthenticated state, where new
// sessions need Authenticate again.
func (a *Agent) Logout(context.Context, *acp.LogoutRequest) error {
	a.log.Info("client logged out")
	return nil
}

// agentCapabilitiesMeta advertises what acp-agent adds to ACP: prompts
// sent while a turn runs are queued, and the extension methods (acp's
// method table). Made at the first initialize, not at package init.
var agentCapabilitiesMeta = sync.OnceValue(func() json.RawMessage {
	meta, err := json.Marshal(map[string]any{"acp-agent": map[string]any{
		"promptQueueing": true, "executionState": true, "promptUsage": true,
		"extensionMethods": acp.ExtensionMethods(),
	}})
	if err != nil {
		panic(err)
	}
	return meta
})

// authMethodName names the authentication method advertised while no
// session can start: what the user has to do.
func (a *Agent) authMethodName() string {
	if a.h.SetupBroken() {
		return "Fix the config file"
	}
	return "Configure a model"
}

// NewSession implements acp.Agent.
func (a *Agent) NewSession(ctx context.Context, req *acp.NewSessionRequest, client *acp.ClientConn) (acp.Session, *acp.NewSessionResponse, error) {
	if err := a.usable(client.Connection()); err != nil {
		return nil, nil, err
	}
	hs, err := a.h.NewSession(ctx, host.NewRequest{CWD: req.CWD, AdditionalDirectories: req.AdditionalDirectories,
		MCPServers: mcpServers(req.MCPServers), ClientPrompt: clientPrompt(req.SystemPrompt), Routes: routesOf(client.Connection())},
		a.client(client))
	if err != nil {
		return nil, nil, wireError(err)
	}
	return a.wrap(hs, client), &acp.NewSessionResponse{SessionID: hs.ID(), Modes: modeState(hs), ConfigOptions: configOptions(hs.Options())}, nil
}

// clientPrompt is a lifecycle request's systemPrompt for the host (nil:
// none sent). acp has checked it: a mode we advertise, text blocks only.
func clientPrompt(p *acp.SystemPrompt) *agent.ClientPrompt {
	if p == nil {
		return nil
	}
	texts := make([]string, 0, len(p.Content))
	for _, b := range p.Content {
		if b.Text != nil {
			texts = append(texts, b.Text.Text)
		}
	}
	return &agent.ClientPrompt{Text: strings.Join(texts, "\n\n"), Override: p.Mode == acp.SystemPromptOverride}
}

// Session returns a live session by id, for Go programs that embed the
// agent.
func (a *Agent) Session(id string) (*agent.Session, bool) {
	hs, ok := a.h.Session(id)
	if !ok {
		return nil, false
	}
	return hs.Core(), true
}
