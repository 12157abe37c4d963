package host

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
	"github.com/acp-agent/acp-agent/agent/prompts"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
)

// Config configures a Host.
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
	// Version is the program's version, told to MCP servers (and by an
	// adapter to its clients).
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
	// RequestID names the protocol request a context belongs to, for
	// telemetry (the ACP adapter sets acp.RequestID); nil names none.
	RequestID func(context.Context) string
	// Choices are the models sessions can switch between (the "model"
	// option); Model is always one of them.
	Choices []ModelChoice
	// DiscoverModels adds the models the choices' servers offer (GET
	// /v1/models and the like) to the choices, in the background after
	// the first session starts; call Close to end it.
	DiscoverModels bool
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
	// OneShot says every new session is prompted as soon as it starts,
	// by a process that ends with the turn (acp-agent exec): a session
	// keeps no reservation record (persistence.Reservation.Unrecorded),
	// which nothing would read before the prompt saves it.
	OneShot bool
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
	// Store keeps sessions on disk (load, resume, list, delete, and crash
	// safety); nil keeps them in memory only, and what needs the store
	// fails with ErrNotStored.
	Store *persistence.Store
	// SetupError, if set, is why the host cannot start sessions as set up
	// (a config file it could not read): Usable returns it. If it has an
	// ErrorData() any method, an adapter sends that as its error's data.
	SetupError error
	// Notices, if set, returns what the user must know about the setup
	// (the session directory cannot be used, the login shell did not
	// answer); the first session started tells them, once.
	Notices func() []Notice

	// saveHook, set by tests only (export_test.go), runs when a session's
	// first message starts being saved with its file (journal.beforeSave).
	saveHook func()
}

// Host owns what the agent is, whatever protocol serves it: the live
// sessions, the model choices (and their discovery), the session store
// and each session's journal, file checkpoints, subagents, MCP servers,
// project hooks, commands and skills, and the setup's notices. An adapter
// maps a protocol onto it; see the package doc.
type Host struct {
	cfg      Config
	log      *slog.Logger
	spec     agent.ModelSpec
	model    agent.Model
	modelErr error // why no model is usable; reported by Usable
	// models are the model choices; def is the default one (the model
	// above). modelsMu guards models and def, which model discovery
	// replaces (entries themselves are never changed once published).
	modelsMu sync.RWMutex
	models   []*modelEntry
	def      *modelEntry
	disc     discovery
	store    *persistence.Store
	// extraCommands are slash commands beyond the built-in ones.
	extraCommands []slashCommand

	trust trustStore
	// setupNotices tells the setup's notices once.
	setupNotices sync.Once

	mu       sync.Mutex
	sessions map[string]*Session
}

// New returns a Host. A model that cannot be used is not an error here:
// an adapter's handshake must still succeed, and Usable says what to set.
func New(cfg Config) *Host {
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
	if cfg.Workspace.PromptCache == nil {
		// The sessions of a workspace share its commands and skills.
		cfg.Workspace.PromptCache = prompts.NewCache()
	}
	h := &Host{cfg: cfg, log: cfg.Logger, sessions: make(map[string]*Session), store: cfg.Store}
	h.trust.path = cfg.HooksTrustFile
	h.disc.ctx, h.disc.cancel = context.WithCancel(context.Background())
	h.disc.done = make(chan struct{})
	h.models, h.modelErr = openModels(cfg)
	if h.modelErr == nil {
		i := slices.IndexFunc(h.models, func(e *modelEntry) bool { return e.choice.Spec == cfg.Model })
		h.def = h.models[i]
		h.spec, h.model, h.modelErr = h.def.spec, h.def.model, h.def.err
	}
	if cfg.SetupError != nil {
		h.modelErr = cfg.SetupError
	}
	if h.modelErr != nil {
		// An adapter explains it to the user; stderr stays quiet.
		h.log.Info("no usable model", "error", h.modelErr)
	}
	return h
}

// Usable is why no session can start (no usable model, or SetupError);
// nil when sessions can start.
func (h *Host) Usable() error { return h.modelErr }

// SetupBroken reports whether Usable's error is the setup's
// (Config.SetupError) rather than the model's.
func (h *Host) SetupBroken() bool { return h.cfg.SetupError != nil }

// Stored reports whether sessions are stored (Config.Store), so that they
// can be loaded, listed and deleted.
func (h *Host) Stored() bool { return h.store != nil }

// Version is Config.Version.
func (h *Host) Version() string { return h.cfg.Version }

// Logger is the host's logger.
func (h *Host) Logger() *slog.Logger { return h.log }

// DefaultModelSpec is the default model ("PROVIDER/MODEL").
func (h *Host) DefaultModelSpec() string { return h.spec.String() }

// Session returns a live session by id.
func (h *Host) Session(id string) (*Session, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[id]
	return s, ok
}

// track makes s a live session; the first one starts model discovery.
func (h *Host) track(s *Session) {
	h.mu.Lock()
	h.sessions[s.s.ID()] = s
	h.mu.Unlock()
	h.startDiscovery()
}

func (h *Host) forget(id string) {
	h.mu.Lock()
	delete(h.sessions, id)
	h.mu.Unlock()
}

// live returns the session with id if it is open here.
func (h *Host) live(id string) *Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

// liveSessions are the sessions open now (a snapshot).
func (h *Host) liveSessions() []*Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	sessions := make([]*Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	return sessions
}

// requestID is the protocol request ctx belongs to ("" without one).
func (h *Host) requestID(ctx context.Context) string {
	if h.cfg.RequestID == nil {
		return ""
	}
	return h.cfg.RequestID(ctx)
}
