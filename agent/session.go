package agent

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
	"github.com/acp-agent/acp-agent/policy"
)

// This file holds the Session facade: its configuration, construction,
// accessors and state; its input and worker are in queue.go, its forks
// and its end in lifecycle.go.

// DefaultMaxTurnRequests is how many model requests one turn may make
// when MaxTurnRequests is not set: enough for long tool-using work (a
// request per tool round), a bound on a runaway loop's cost.
const DefaultMaxTurnRequests = 200

// SessionConfig configures a Session: who it is, then four cohesive
// parts (embedded, so their fields read as the config's own): the model
// and how it is called, the tools and who decides about them, where its
// updates go, and the callbacks; then how its history is kept and
// stored.
type SessionConfig struct {
	// ID is the session id; empty means a new random one.
	ID string
	// CWD is the session's working directory (absolute).
	CWD string
	// Title is the session's title; empty means the first prompt's first
	// line, once there is one.
	Title string
	// TitleByUser: the user set Title (SetTitle); the session does not
	// title itself (first line, model titles).
	TitleByUser bool

	ModelConfig
	ToolConfig
	OutputConfig
	HookConfig

	// History is how the history is kept within the context window.
	History HistoryConfig
	// Journal, when set, stores the session durably; the session closes
	// it on Close.
	Journal Journal
}

// ModelConfig is the model a session talks to and how its turns call it.
type ModelConfig struct {
	// Model answers the prompts; ModelName is the provider's model name.
	Model     Model
	ModelName string
	// ModelID names the model choice ("provider/model"); ReasoningEffort
	// is the starting thought level ("" for the provider's default).
	// SetModel and SetReasoningEffort change them.
	ModelID         string
	ReasoningEffort string
	// ModelInfo is the model's entry in the pricing table, if it has one:
	// its context window and prices give usage updates their size and
	// cost.
	ModelInfo *pricing.Model
	// SystemPrompt replaces the default system prompt when set.
	SystemPrompt string
	// ClientPrompt is the client's instructions for the session (ACP's
	// systemPrompt), composed with the default system prompt; see
	// ClientPrompt.
	ClientPrompt ClientPrompt
	// MaxTurnRequests caps the model requests of one turn; 0 means
	// DefaultMaxTurnRequests. A turn that reaches it gets one more
	// request, without tools, for a summary of where the work stands.
	MaxTurnRequests int
	// Retry is how transient model failures are retried.
	Retry RetryPolicy
	// StreamLimits caps one model response; see llm.Limits.
	StreamLimits llm.Limits
	// PromptTimeout, if positive, bounds each prompt's turn from the time
	// it starts running; a turn that runs longer ends with
	// ErrPromptTimedOut.
	PromptTimeout time.Duration
	// ModelTitles asks the model, with structured output, for a title
	// after the first turn (the first line of the first prompt is the
	// title until then).
	ModelTitles bool
}

// ToolConfig is what the model may call and who decides whether a call
// runs.
type ToolConfig struct {
	// Tools is the session's registry; nil means a new empty one.
	Tools *ToolRegistry
	// AllowedTools, when non-nil, is the only tools the model is offered
	// and may call.
	AllowedTools []string
	// Workspace, if set, gives the session its built-in tools and a
	// system prompt that describes it; the session closes it on Close.
	Workspace Workspace
	// Mode is the session mode (what tool calls may do without asking);
	// empty means policy.ModeDefault.
	Mode policy.Mode
	// PermissionPolicy is what happens to a call the mode says to ask
	// about: ask the user (default), allow, or deny.
	PermissionPolicy policy.PolicyMode
	// Permissions asks the user; nil means nobody can be asked, so calls
	// that need asking are rejected.
	Permissions PermissionRequester
}

// OutputConfig is where a session's updates, events and logs go.
type OutputConfig struct {
	// Sink receives the session's updates; nil sends none (the output
	// stream still has them).
	Sink UpdateSink
	// ExecutionStates turns on the execution-state and retry updates for
	// prompts (seed 002). Off by default: clients that do not know them
	// reject unknown updates.
	ExecutionStates bool
	// CompactionUpdates sends the compaction updates (clients that
	// advertise them).
	CompactionUpdates bool
	// Telemetry receives the prompt lifecycle events; nil sends none.
	Telemetry Telemetry
	// RequestID names the request a prompt's context belongs to, for the
	// events' requestId (the protocol adapter knows it); nil leaves it
	// empty.
	RequestID func(context.Context) string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// HookConfig are the callbacks of a session.
type HookConfig struct {
	// StopHooks run when a turn ends normally (seed 003); nil or empty
	// means none are loaded or run.
	StopHooks []StopHook
	// OnStopHookMessage, if set, is told each stop hook message (a
	// progress callback; a panic in it is logged and ignored).
	OnStopHookMessage func(text string)
	// OnRetry, if set, is told about each retry before its back-off.
	OnRetry func(RetryNotice)
	// OnDelete is called by Delete to remove the session's stored data.
	OnDelete func() error
	// Hooks run before and after tool calls, when a prompt's turn
	// starts and when the session's first turn starts (hooks.go).
	Hooks []Hook
}

// Telemetry receives telemetry events (telemetry.Recorder is one).
type Telemetry interface {
	Emit(ctx context.Context, name, sessionID, requestID string, attrs ...string)
}

// telemetryEvent sends a telemetry event about it (nil it: about the
// session); Emit, by contrast, sends an update to the sink.
func (s *Session) telemetryEvent(it *item, name string, attrs ...string) {
	if s.cfg.Telemetry == nil {
		return
	}
	ctx, requestID := context.Background(), ""
	if it != nil {
		ctx = it.ctx
		if s.cfg.RequestID != nil {
			requestID = s.cfg.RequestID(it.ctx)
		}
	}
	s.cfg.Telemetry.Emit(context.WithoutCancel(ctx), name, s.id, requestID, attrs...)
}

// PromptResult is what one prompt's turn produced.
type PromptResult struct {
	// Text is the assistant's final message of the turn.
	Text       string
	StopReason StopReason
	Usage      llm.Usage
}

// PromptOptions are the options of PromptContent.
type PromptOptions struct {
	Behavior StreamingBehavior
	// OnComplete, if set, is called with the prompt's result by the
	// session's worker, after the turn's last update was handed to the sink
	// and before any update of a later turn. The ACP service answers
	// session/prompt from it, so responses stay in order with updates.
	OnComplete func(PromptResult, error)
	// Run, if set, replaces the model turn: the worker runs it in the
	// prompt's place in the queue (slash commands). The content is not
	// added to the transcript.
	Run func(ctx context.Context) (PromptResult, error)
	// MessageID, if set, is the id of the user message the prompt adds
	// (Entry.MessageID); otherwise the session gives it one.
	MessageID string
	// Title, if set, is what an untitled session is titled from instead
	// of the content's text: a slash command as the user typed it, not
	// the prompt it expands to.
	Title string
}

// Session is one conversation with a model: the facade that the ACP
// service and Go programs drive. It keeps the transcript, runs turns (model
// calls and tool calls) on one worker goroutine that exists only while
// there is work, and queues messages that arrive while a turn runs.
//
// All methods are safe for concurrent use. Close (or Delete) waits for the
// worker; a session that was never closed holds no goroutine once idle.
type Session struct {
	id       string
	cfg      SessionConfig
	tools    *ToolRegistry
	allowed  map[string]bool // nil: all allowed
	log      *slog.Logger
	lifetime context.Context // cancelled by Close; parent of fire-and-forget work
	end      context.CancelCauseFunc
	worker   sync.WaitGroup
	running  runningCalls // the tool calls running now (CancelToolCall)

	// appendMu makes an entry's append to the transcript and its record in
	// the file one step for a fork, which copies both (lock order:
	// appendMu, then mu).
	appendMu sync.Mutex
	// sandboxNotice says once that commands are not confined.
	sandboxNotice sync.Once

	mu      sync.Mutex
	tr      transcript
	callIDs callIDs // the tool call ids the session has used (uniqueToolCallIDs)
	queue   []*item
	history []finished
	working bool // the worker goroutine is running
	active  *activeTurn
	closed  bool
	deleted bool
	// cost is the session's cumulative cost (when the model is priced).
	cost float64
	// model is the current model; the next model request uses it.
	model SessionModel
	// perms is the mode and the remembered permission decisions (own lock).
	perms *permissions
	// lastPlan is the plan the client was last sent, for session/load.
	lastPlan *Plan
	// hist is the context-window bookkeeping.
	hist historyState
	// modelTitled: the model was asked for a title (worker only).
	modelTitled bool
	// sessionEvents are the newest events of the session itself (not of
	// its transcript); see Events.
	sessionEvents []Event
	nextID        int64
	subs          []*Subscription
	// hooksStarted: the session-start hooks have run.
	hooksStarted bool
	// sys is the system prompt the model has (nil: built at the next
	// request).
	sys *promptSnapshot
	// guard counts the turn's failing calls (the loop guard).
	guard map[string]int
}

type activeTurn struct {
	it     *item
	cancel context.CancelCauseFunc
}

// NewSession returns an idle session.
func NewSession(cfg SessionConfig) *Session {
	if cfg.ID == "" {
		cfg.ID = uuid.NewString()
	}
	if cfg.MaxTurnRequests <= 0 {
		cfg.MaxTurnRequests = DefaultMaxTurnRequests
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Session{id: cfg.ID, cfg: cfg, tools: cfg.Tools, log: cfg.Logger.With("session", cfg.ID)}
	if s.tools == nil {
		s.tools = NewToolRegistry()
	}
	if cfg.AllowedTools != nil {
		s.allowed = make(map[string]bool, len(cfg.AllowedTools))
		for _, n := range cfg.AllowedTools {
			s.allowed[n] = true
		}
	}
	if cfg.Mode == "" {
		cfg.Mode = policy.ModeDefault
	}
	if cfg.PermissionPolicy == "" {
		cfg.PermissionPolicy = policy.PolicyAsk
	}
	s.cfg = cfg
	s.perms = &permissions{mode: cfg.Mode}
	if cfg.Workspace != nil {
		for _, t := range cfg.Workspace.Tools() {
			// A fork's cloned registry holds the source's built-ins,
			// bound to the source's workspace: replace them.
			s.tools.Unregister(t.Name)
			if err := s.tools.Register(t); err != nil {
				s.log.Error("registering a built-in tool", "tool", t.Name, "error", err)
			}
		}
	}
	s.model = SessionModel{ID: cfg.ModelID, Model: cfg.Model, Name: cfg.ModelName, Info: cfg.ModelInfo, ReasoningEffort: cfg.ReasoningEffort}
	s.lifetime, s.end = context.WithCancelCause(context.Background())
	return s
}

// SessionModel is the model a session talks to, and how.
type SessionModel struct {
	// ID is the model choice ("provider/model").
	ID string
	// Model is the provider; Name is the provider's model name.
	Model Model
	Name  string
	// Info is the model's pricing and context-window entry, if known.
	Info *pricing.Model
	// ReasoningEffort is the thought level ("" for the provider default).
	ReasoningEffort string
}

// AcceptsImages reports whether the model reads images: as its models
// file entry says, else as its provider says (llm.ProviderInfo.Images).
func (m SessionModel) AcceptsImages() bool {
	if m.Info != nil && m.Info.ImageInput != nil {
		return *m.Info.ImageInput
	}
	name, _, _ := strings.Cut(m.ID, "/")
	p, ok := llm.LookupProvider(name)
	return ok && p.Images
}

// Mode returns the session mode.
func (s *Session) Mode() policy.Mode { return s.perms.Mode() }

// SetMode switches the session mode; the next tool call is decided by it.
func (s *Session) SetMode(m policy.Mode) {
	s.perms.setMode(m)
	if j := s.cfg.Journal; j != nil {
		j.SetMode(m)
	}
}

// Title returns the session's title ("" until the first prompt).
func (s *Session) Title() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Title
}

// CurrentModel returns the session's model.
func (s *Session) CurrentModel() SessionModel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// SetModel switches the session to m. A turn that is running uses it from
// its next model request on; the transcript is kept.
func (s *Session) SetModel(m SessionModel) {
	s.mu.Lock()
	s.model = m
	s.mu.Unlock()
	// The system prompt names the model's tools; it is rebuilt for the
	// new model at its first request (systemPrompt checks the model).
	if j := s.cfg.Journal; j != nil {
		j.SetModel(m.ID, m.ReasoningEffort)
	}
}

// SetTitle sets the title the user chose. The session stops titling
// itself; storing the title is the caller's (the journal's header).
func (s *Session) SetTitle(title string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Title, s.cfg.TitleByUser = title, true
}

func (s *Session) titledByUser() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.TitleByUser
}

// SetModelInfo gives the session's model, if it is still id, the table
// entry info (a context window learnt from the server, say). Nothing is
// journaled: the entry is not part of the session's state.
func (s *Session) SetModelInfo(id string, info *pricing.Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.model.ID == id {
		s.model.Info = info
	}
}

// SetReasoningEffort sets the thought level of the next model requests.
func (s *Session) SetReasoningEffort(level string) {
	s.mu.Lock()
	s.model.ReasoningEffort = level
	id := s.model.ID
	s.mu.Unlock()
	if j := s.cfg.Journal; j != nil {
		j.SetModel(id, level)
	}
}

// Emit sends u through the session's one update path (the sink, then the
// output stream), from a PromptOptions.Run or a tool's Run: a slash
// command's answer, for example.
func (s *Session) Emit(ctx context.Context, u Update) { s.update(ctx, u) }

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// CWD returns the session's working directory.
func (s *Session) CWD() string { return s.cfg.CWD }

// Tools returns the session's tool registry.
func (s *Session) Tools() *ToolRegistry { return s.tools }

// ToolDescriptors lists the session's tools (see ToolRegistry.Descriptors).
func (s *Session) ToolDescriptors() []ToolDescriptor { return s.tools.Descriptors() }

// ActiveToolNames lists the tools the model is offered: enabled, meant
// for the session's mode and, with SessionConfig.AllowedTools, allowed.
func (s *Session) ActiveToolNames() []string {
	mode := s.Mode()
	return s.tools.activeNames(func(t *Tool) bool {
		return s.toolAllowed(t.Name) && (len(t.Modes) == 0 || slices.Contains(t.Modes, mode))
	})
}

// Unregister removes a tool from the session: it is no longer offered to
// the model nor callable.
func (s *Session) Unregister(name string) bool { return s.tools.Unregister(name) }

// UnregisterMCP removes a tool that came from an MCP server.
func (s *Session) UnregisterMCP(name string) bool { return s.tools.UnregisterMCP(name) }

func (s *Session) toolAllowed(name string) bool { return s.allowed == nil || s.allowed[name] }

// Stats is a consistent summary of the session (seed 000 scenarios 10, 12).
type Stats struct {
	SessionID         string                `json:"sessionId"`
	UserMessages      int                   `json:"userMessages"`
	AssistantMessages int                   `json:"assistantMessages"`
	ToolCalls         int                   `json:"toolCalls"`
	ToolResults       int                   `json:"toolResults"`
	TotalEntries      int                   `json:"totalEntries"`
	PendingMessages   int                   `json:"pendingMessages"`
	PendingBreakdown  map[PendingSource]int `json:"pendingBreakdown"`
	LastUpdatedAt     *time.Time            `json:"lastUpdatedAt"`
}

// Stats returns counts kept up to date on every change: O(1) in the
// length of the transcript.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{
		SessionID:         s.id,
		UserMessages:      s.tr.counts.user,
		AssistantMessages: s.tr.counts.assistant,
		ToolCalls:         s.tr.counts.toolCalls,
		ToolResults:       s.tr.counts.toolResults,
		TotalEntries:      len(s.tr.entries),
		PendingBreakdown:  map[PendingSource]int{SourcePromptFollowUp: 0, SourceSteer: 0, SourceFollowUp: 0},
	}
	for _, it := range s.queue {
		if it.pending() {
			st.PendingMessages++
			st.PendingBreakdown[it.source]++
		}
	}
	if !s.tr.counts.lastUpdated.IsZero() {
		t := s.tr.counts.lastUpdated
		st.LastUpdatedAt = &t
	}
	return st
}

// Transcript returns a copy of the entries (their payloads are shared and
// immutable).
func (s *Session) Transcript() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, len(s.tr.entries))
	for i, e := range s.tr.entries {
		out[i] = *e
	}
	return out
}

// Events expands the transcript into structured events (scenario 9).
// Session events (source "session", no entry index) record the pending
// queue: a message queued, resolved or failed. They are merged with the
// transcript's events by time.
func (s *Session) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	tr := s.tr.events()
	out := make([]Event, 0, len(tr)+len(s.sessionEvents))
	i, j := 0, 0
	for i < len(tr) || j < len(s.sessionEvents) {
		if j == len(s.sessionEvents) || (i < len(tr) && !s.sessionEvents[j].Time.Before(tr[i].Time)) {
			out = append(out, tr[i])
			i++
		} else {
			out = append(out, s.sessionEvents[j])
			j++
		}
	}
	return out
}

// maxSessionEvents bounds the session events kept.
const maxSessionEvents = 200

func (s *Session) sessionEventLocked(it *item, status PendingStatus, errText string) {
	s.sessionEvents = append(s.sessionEvents, Event{
		Type: "pending_message", Source: EventSourceSession, Text: preview(it.text, DefaultPreviewLength),
		Status: string(status), PendingSource: it.source, Error: errText, Time: time.Now(),
	})
	if n := len(s.sessionEvents) - maxSessionEvents; n > 0 {
		s.sessionEvents = slices.Delete(s.sessionEvents, 0, n)
	}
}
