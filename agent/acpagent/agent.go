package acpagent

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/google/uuid"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/mcpclient"
	"github.com/acp-agent/acp-agent/agent/pricing"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/telemetry"
)

// Config configures an Agent.
type Config struct {
	// Model is "PROVIDER/MODEL"; empty means DefaultModel.
	Model string
	// Getenv reads provider settings (API keys, base URLs); nil means
	// os.Getenv. Tests pass their own so they never see the real keys.
	Getenv func(string) string
	// HTTPClient is used for provider requests; nil means a default client.
	HTTPClient *http.Client
	// Logger receives diagnostics (never the API key); nil discards them.
	Logger *slog.Logger
	// Version is reported in agentInfo.
	Version string
	// Retry is how sessions retry transient model failures.
	Retry agent.RetryPolicy
	// StreamLimits caps what one model response may stream (tool-call
	// arguments, text); zero fields take the llm defaults.
	StreamLimits llm.Limits
	// Models is the pricing/model table; nil means pricing.Default().
	Models *pricing.Table
	// Telemetry receives session and prompt events; nil sends none.
	Telemetry agent.Telemetry
	// Choices are the models sessions can switch between (the "model"
	// config option); Model is always one of them.
	Choices []ModelChoice
	// DiscoverModels adds the models the choices' servers offer (GET
	// /v1/models and the like) to the choices, in the background after
	// the first session starts; call Close to end it.
	DiscoverModels bool
	// ExecutionStates sends execution_state_update and retry_update to
	// every client; otherwise only to clients that ask for them with
	// clientCapabilities._meta["acp-agent"].executionState.
	ExecutionStates bool
	// PromptTimeout bounds each prompt's turn; 0 means no limit.
	PromptTimeout time.Duration
	// Workspace are the rules of the built-in tools (paths, commands).
	Workspace tools.WorkspaceConfig
	// Mode is the mode sessions start in; empty means policy.ModeDefault.
	Mode policy.Mode
	// PermissionPolicy decides calls the mode says to ask about: ask the
	// user (default), allow, or deny.
	PermissionPolicy policy.PolicyMode
	// NoBuiltinTools leaves sessions without the built-in coding tools.
	NoBuiltinTools bool
	// StopHooks run when a turn ends normally (seed 003).
	StopHooks []agent.StopHook
	// Hooks run before and after tool calls, when a prompt is submitted
	// and when a session starts.
	Hooks []agent.Hook
	// HooksTrustFile remembers which project hook files
	// (ProjectHooksFile) the user trusted, by content hash; "" remembers
	// nothing, so every session asks.
	HooksTrustFile string
	// ModelTitles asks the model for each session's title after its first
	// turn (structured output); otherwise the title is the first line of
	// the first prompt.
	ModelTitles bool
	// Resize, if set, is the resize policy run after each turn (seed 004
	// section 2).
	Resize *compact.ResizePolicy
	// OffloadThreshold is the context size (tokens) from which long tool
	// results are offloaded and the history compacted; 0 means 75% of the
	// model's window (150,000 tokens when unknown).
	OffloadThreshold int
	// MaxTurnRequests caps the model requests of one turn; 0 means
	// agent.DefaultMaxTurnRequests.
	MaxTurnRequests int
	// Store keeps sessions on disk (session/load, resume, list, delete,
	// and crash safety); nil keeps them in memory only, and those methods
	// are not advertised.
	Store *persistence.Store
	// SetupError, if set, is why the agent cannot start sessions as set up
	// (a config file it could not read): initialize succeeds, and
	// session/new, load and fork answer with it, as when no model is
	// usable. If it has an ErrorData() any method, that is the error's
	// JSON-RPC data.
	SetupError error
	// Notices, if set, returns what the user must know about the setup
	// (the session directory cannot be used, the login shell did not
	// answer); the first session started tells them, once.
	Notices func() []Notice
}

// Agent implements acp.Agent: it creates sessions bound to one model.
type Agent struct {
	cfg      Config
	log      *slog.Logger
	spec     agent.ModelSpec
	model    agent.Model
	modelErr error // why no model is usable; reported at session/new
	// models are the choices of the "model" config option; def is the
	// default one (the model above).
	// modelsMu guards models and def, which model discovery
	// replaces (entries themselves are never changed once published).
	modelsMu sync.RWMutex
	models   []*modelEntry
	def      *modelEntry
	disc     discovery
	store    *persistence.Store
	// extraCommands are slash commands beyond the built-in ones.
	extraCommands []slashCommand

	trust trustStore
	// setupNotices tells the setup's notices once; discoveryNotice the
	// failed model listing.
	setupNotices sync.Once

	mu       sync.Mutex
	sessions map[string]*acpSession
}

var (
	_ acp.Agent  = (*Agent)(nil)
	_ acp.Forker = (*Agent)(nil)
)

// New returns an Agent. A model that cannot be used is not an error here:
// initialize must still succeed, and session/new explains what to set.
func New(cfg Config) *Agent {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Model == "" {
		cfg.Model = agent.DefaultModel
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Models == nil {
		cfg.Models = pricing.Default()
	}
	a := &Agent{cfg: cfg, log: cfg.Logger, sessions: make(map[string]*acpSession), store: cfg.Store}
	a.trust.path = cfg.HooksTrustFile
	a.disc.ctx, a.disc.cancel = context.WithCancel(context.Background())
	a.disc.done = make(chan struct{})
	a.models, a.modelErr = openModels(cfg)
	if a.modelErr == nil {
		i := slices.IndexFunc(a.models, func(e *modelEntry) bool { return e.choice.Spec == cfg.Model })
		a.def = a.models[i]
		a.spec, a.model, a.modelErr = a.def.spec, a.def.model, a.def.err
	}
	if cfg.SetupError != nil {
		a.modelErr = cfg.SetupError
	}
	if a.modelErr != nil {
		// session/new explains it to the user; stderr stays quiet.
		a.log.Info("no usable model", "error", a.modelErr)
	}
	return a
}

// unusable is the error of a session request while no model is usable
// (or the setup is broken): authentication required, with the reason and
// its data.
func (a *Agent) unusable() error {
	err := fmt.Errorf("%w: %v", acp.ErrAuthRequired, a.modelErr)
	if d, ok := a.modelErr.(interface{ ErrorData() any }); ok {
		return &acp.DataError{Err: err, Data: d.ErrorData()}
	}
	return err
}

// mcpCapabilities advertises the MCP transports the client package
// supports (stdio always).
func mcpCapabilities() acp.McpCapabilities {
	http, sse := mcpclient.Supports()
	return acp.McpCapabilities{HTTP: http, SSE: sse}
}

// authMethodID is our one authentication method: the model is configured
// through the agent's environment and flags (the API keys never come from
// the client), so authenticating checks that it is usable.
const authMethodID = "configure-model"

var (
	_ acp.Logouter   = (*Agent)(nil)
	_ acp.MethodGate = (*Agent)(nil)
)

// Initialize implements acp.Agent. It advertises only what is implemented;
// the capabilities of methods (session/load, list, fork, logout, ...) are
// set by the acp service from its method table, as ServesMethod says.
func (a *Agent) Initialize(_ context.Context, _ *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	resp := &acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionV1,
		AgentCapabilities: acp.AgentCapabilities{
			PromptCapabilities: acp.PromptCapabilities{Image: true, EmbeddedContext: true},
			MCPCapabilities:    mcpCapabilities(),
			SessionCapabilities: acp.SessionCapabilities{
				AdditionalDirectories: &acp.SessionAdditionalDirectoriesCapabilities{},
			},
			Meta: agentCapabilitiesMeta,
		},
		AgentInfo: &acp.Implementation{Name: "acp-agent", Title: "ACP Agent", Version: a.cfg.Version},
		// The method to authenticate again after logout; needed at first
		// only when no model is usable.
		AuthMethods: []acp.AuthMethod{{Agent: &acp.AuthMethodAgent{
			ID: authMethodID, Name: "Configure a model", Description: "The model is set with --model and the provider's API key in the agent's environment.",
		}}},
		// The steering extension of claude-agent-acp and codex-acp.
		Meta: json.RawMessage(`{"steering":{"supported":true}}`),
	}
	if a.modelErr != nil {
		resp.AuthMethods[0].Agent.Name = a.authMethodName()
		resp.AuthMethods[0].Agent.Description = a.modelErr.Error()
	}
	return resp, nil
}

// ServesMethod implements acp.MethodGate: the methods that read or change
// stored sessions are served only with a store.
func (a *Agent) ServesMethod(method string) bool {
	switch method {
	case acp.MethodSessionLoad, acp.MethodSessionResume, acp.MethodSessionList, acp.MethodSessionDelete,
		acp.MethodSessionSetTitle, acp.MethodSessionStatus, acp.MethodSessionArchive, acp.MethodSessionUnarchive:
		return a.store != nil
	}
	return true
}

// Authenticate implements acp.Agent. The model is configured through the
// environment and flags, so authenticating only checks that it is usable.
func (a *Agent) Authenticate(_ context.Context, req *acp.AuthenticateRequest) error {
	if req.MethodID != authMethodID {
		return fmt.Errorf("%w: methodId: unknown authentication method %q", acp.ErrInvalidParams, req.MethodID)
	}
	if a.modelErr != nil {
		return a.unusable()
	}
	return nil
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
// method table).
var agentCapabilitiesMeta = func() json.RawMessage {
	meta, err := json.Marshal(map[string]any{"acp-agent": map[string]any{
		"promptQueueing": true, "executionState": true, "promptUsage": true,
		"extensionMethods": acp.ExtensionMethods(),
	}})
	if err != nil {
		panic(err)
	}
	return meta
}()

// NewSession implements acp.Agent.
func (a *Agent) NewSession(ctx context.Context, req *acp.NewSessionRequest, client *acp.ClientConn) (acp.Session, *acp.NewSessionResponse, error) {
	if a.modelErr != nil {
		return nil, nil, a.unusable()
	}
	cfg, err := a.newSessionConfig(uuid.NewString(), req.CWD, req.AdditionalDirectories, client)
	if err != nil {
		return nil, nil, err
	}
	j, err := a.reserveFile(&cfg, req.AdditionalDirectories)
	if err != nil {
		closeWorkspace(cfg.Workspace)
		return nil, nil, err
	}
	s := agent.NewSession(cfg)
	as := a.newACPSession(s, client, j, req.AdditionalDirectories, cfg.Workspace)
	a.connectMCP(ctx, as, req.MCPServers, client.Capabilities())
	a.track(as)
	if a.cfg.Telemetry != nil {
		a.cfg.Telemetry.Emit(ctx, telemetry.EventSessionNew, s.ID(), acp.RequestID(ctx), "cwd", s.CWD())
	}
	as.post(acp.SessionUpdate{AvailableCommandsUpdate: as.availableCommands()})
	a.tellSetupNotices(as)
	a.log.Info("session created", "session", s.ID(), "cwd", s.CWD(), "model", a.spec.String())
	return as, &acp.NewSessionResponse{SessionID: s.ID(), Modes: modeState(s.Mode()), ConfigOptions: a.sessionOptions(s)}, nil
}

// Session returns a live session by id, for Go programs that embed the
// agent.
func (a *Agent) Session(id string) (*agent.Session, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	as, ok := a.sessions[id]
	if !ok {
		return nil, false
	}
	return as.s, true
}

// track makes as a live session; the first one starts model discovery.
func (a *Agent) track(as *acpSession) {
	a.mu.Lock()
	a.sessions[as.s.ID()] = as
	a.mu.Unlock()
	a.startDiscovery()
}

func (a *Agent) forget(id string) {
	a.mu.Lock()
	delete(a.sessions, id)
	a.mu.Unlock()
}
