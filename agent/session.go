package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/telemetry"
)

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

	// appendMu makes an entry's append to the transcript and its record in
	// the file one step for a fork, which copies both (lock order:
	// appendMu, then mu).
	appendMu sync.Mutex
	// sandboxNotice says once that commands are not confined.
	sandboxNotice sync.Once

	mu      sync.Mutex
	tr      transcript
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

// ActiveToolNames lists the tools the model is offered: enabled and, with
// SessionConfig.AllowedTools, allowed.
func (s *Session) ActiveToolNames() []string {
	return slices.DeleteFunc(s.tools.ActiveNames(), func(n string) bool { return !s.toolAllowed(n) })
}

// Unregister removes a tool from the session: it is no longer offered to
// the model nor callable.
func (s *Session) Unregister(name string) bool { return s.tools.Unregister(name) }

// UnregisterMCP removes a tool that came from an MCP server.
func (s *Session) UnregisterMCP(name string) bool { return s.tools.UnregisterMCP(name) }

func (s *Session) toolAllowed(name string) bool { return s.allowed == nil || s.allowed[name] }

// Prompt sends text and waits for the turn's result. While another turn
// runs, behavior decides: Reject (default) fails, Steer and FollowUp queue
// the message and wait until it has run.
func (s *Session) Prompt(ctx context.Context, text string, behavior ...StreamingBehavior) (PromptResult, error) {
	opts := PromptOptions{}
	if len(behavior) > 0 {
		opts.Behavior = behavior[0]
	}
	return s.PromptContent(ctx, []llm.Part{llm.TextPart(text)}, opts)
}

// PromptContent is Prompt with content parts and options. It returns when
// this prompt's own turn has ended (a queued follow-up runs after it on the
// session's worker), or when ctx is done while the message is still queued.
// A cancelled turn returns an error for which errors.Is(err,
// context.Canceled) holds, with the partial result.
func (s *Session) PromptContent(ctx context.Context, content []llm.Part, opts PromptOptions) (PromptResult, error) {
	it, err := s.submit(ctx, content, opts, true)
	if err != nil {
		return PromptResult{}, err
	}
	out := <-it.done
	return out.res, out.err
}

// Submit queues content like PromptContent but returns at once; the result
// goes to opts.OnComplete, which is called exactly once unless Submit
// returns an error. If ctx is done while the message is still queued, it
// is withdrawn and completes with a cancellation error.
func (s *Session) Submit(ctx context.Context, content []llm.Part, opts PromptOptions) error {
	_, err := s.submit(ctx, content, opts, false)
	return err
}

func (s *Session) submit(ctx context.Context, content []llm.Part, opts PromptOptions, await bool) (*item, error) {
	it := &item{content: content, text: partsText(content), ctx: ctx, onComplete: opts.OnComplete, states: s.cfg.ExecutionStates, run: opts.Run}
	if await {
		it.done = make(chan promptOutcome, 1)
	}
	// Before it is queued: once queued, the worker may start it (and say
	// prompt_started) at once.
	s.telemetryEvent(it, telemetry.EventPromptRequested)
	if err := s.queueSubmitted(it, opts); err != nil {
		return nil, err
	}
	return it, nil
}

func (s *Session) queueSubmitted(it *item, opts PromptOptions) error {
	ctx := it.ctx
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrSessionClosed
	}
	if s.busyLocked() {
		switch opts.Behavior {
		case Steer:
			it.source = SourceSteer
		case FollowUp:
			it.source = SourcePromptFollowUp
		default:
			s.mu.Unlock()
			return ErrPromptAlreadyRunning
		}
	}
	if it.states {
		it.queuedSent = make(chan struct{})
	}
	s.enqueueLocked(it)
	// A queued message whose caller gives up is withdrawn; once it runs,
	// the turn's context (derived from ctx) ends the turn instead.
	it.stopWatch = context.AfterFunc(ctx, func() { s.withdraw(it) })
	s.mu.Unlock()
	// Never under s.mu: a Go sink may call back into the session or make
	// us wait (backpressure). The worker waits for this before "running".
	s.queuedDone(it)
	return nil
}

// withdraw removes it from the queue, if it is still there, and completes
// it with its context's cancellation.
func (s *Session) withdraw(it *item) {
	s.mu.Lock()
	i := slices.Index(s.queue, it)
	if i >= 0 {
		s.queue = slices.Delete(s.queue, i, i+1)
	}
	s.mu.Unlock()
	if i >= 0 {
		s.complete(it, PromptResult{}, cancelled(it.ctx))
	}
}

// Steer queues text to be delivered inside the running turn at its next
// model-call boundary (fire and forget). When idle it starts a turn at once.
func (s *Session) Steer(text string) error {
	return s.Queue(SourceSteer, []llm.Part{llm.TextPart(text)})
}

// FollowUp queues text to run after the running turn (fire and forget).
// When idle it starts a turn at once; the message runs exactly once.
func (s *Session) FollowUp(text string) error {
	return s.Queue(SourceFollowUp, []llm.Part{llm.TextPart(text)})
}

// Send is the streaming-input mode of seed 001: content is pushed to the
// session's FIFO queue and consumed by the agent loop in order; results
// reach the subscribers (Subscribe). It fails once the session is closed.
func (s *Session) Send(content ...llm.Part) error {
	if len(content) == 0 {
		return errors.New("agent: Send: no content")
	}
	return s.Queue(SourceFollowUp, content)
}

// Queue queues a message without waiting for it: SourceSteer joins the
// running turn at its next model-call boundary, SourceFollowUp runs after
// it (as Steer, FollowUp and Send do with text).
func (s *Session) Queue(source PendingSource, content []llm.Part) error {
	it := &item{source: source, content: content, text: partsText(content), ctx: s.lifetime}
	// Before it is queued (the worker may then say prompt_started at once)
	// and not under s.mu: no callback runs under the session lock.
	s.telemetryEvent(it, telemetry.EventPromptRequested, "source", string(source))
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrSessionClosed
	}
	s.enqueueLocked(it)
	s.mu.Unlock()
	return nil
}

// QueueIfBusy queues content as source only while a turn runs or
// messages wait, and reports whether it did: a steer for a turn that has
// already ended is the caller's to send as a prompt.
func (s *Session) QueueIfBusy(source PendingSource, content []llm.Part) (bool, error) {
	it := &item{source: source, content: content, text: partsText(content), ctx: s.lifetime}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return false, ErrSessionClosed
	case !s.busyLocked():
		s.mu.Unlock()
		return false, nil
	}
	s.enqueueLocked(it)
	s.mu.Unlock()
	// After the lock (no callback runs under it); the turn it joins is
	// already running, so this cannot follow its prompt_started.
	s.telemetryEvent(it, telemetry.EventPromptRequested, "source", string(source))
	return true, nil
}

// enqueueLocked queues it and starts the worker if it is not running.
func (s *Session) enqueueLocked(it *item) {
	s.nextID++
	it.id = s.nextID
	it.enqueued = time.Now()
	s.queue = append(s.queue, it)
	if it.pending() {
		s.sessionEventLocked(it, PendingQueued, "")
	}
	if !s.working {
		s.working = true
		s.worker.Add(1)
		go s.work()
	}
}

// busyLocked reports whether a turn runs or messages wait. The worker
// goroutine may still be finishing after the last prompt has returned
// (publishing its result, exiting); that is not busy, or a caller's next
// Prompt right after the previous one returned could be rejected.
func (s *Session) busyLocked() bool { return s.active != nil || len(s.queue) > 0 }

// work runs queued items in FIFO order until the queue is empty.
func (s *Session) work() {
	defer s.worker.Done()
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.working = false
			s.mu.Unlock()
			return
		}
		it := s.queue[0]
		s.queue = s.queue[1:]
		if err := it.ctx.Err(); err != nil {
			s.mu.Unlock()
			s.complete(it, PromptResult{}, cancelled(it.ctx))
			continue
		}
		ctx, cancel := context.WithCancelCause(it.ctx)
		s.active = &activeTurn{it: it, cancel: cancel}
		s.mu.Unlock()

		s.sendState(it, ExecRunning, 0, "")
		s.telemetryEvent(it, telemetry.EventPromptStarted)
		started := time.Now()
		turnCtx, stopTimer := ctx, context.CancelFunc(func() {})
		if s.cfg.PromptTimeout > 0 {
			turnCtx, stopTimer = context.WithTimeoutCause(ctx, s.cfg.PromptTimeout, ErrPromptTimedOut)
		}
		var (
			res     PromptResult
			steered []*item
			err     error
		)
		if it.run != nil {
			res, err = it.run(turnCtx)
		} else {
			res, steered, err = s.runTurn(turnCtx, it)
			if err == nil && turnCtx.Err() == nil {
				s.runStopHooks(turnCtx, &res)
				s.resizeAfterTurn(turnCtx)
			}
		}
		if err == nil && turnCtx.Err() != nil {
			err = context.Cause(turnCtx)
		}
		switch {
		case err != nil && errors.Is(context.Cause(turnCtx), ErrPromptTimedOut) && ctx.Err() == nil:
			err = fmt.Errorf("%w after %v", ErrPromptTimedOut, s.cfg.PromptTimeout)
		case err != nil && turnCtx.Err() != nil:
			err = cancelled(turnCtx)
		}
		stopTimer()
		cancel(nil)
		s.mu.Lock()
		s.active = nil
		s.mu.Unlock()
		// Steer messages that joined the turn are recorded before the
		// prompt they joined returns, so its caller sees a complete history.
		s.mu.Lock()
		for _, st := range steered {
			if st.pending() {
				s.recordLocked(st, err)
			}
		}
		s.mu.Unlock()
		s.complete(it, res, err)
		if s.cfg.ModelTitles && err == nil && it.run == nil && !s.modelTitled && !s.titledByUser() {
			// After the response: the title costs the next prompt, not
			// this one.
			s.modelTitled = true
			s.titleFromModel(context.WithoutCancel(it.ctx))
		}
		for _, st := range steered {
			s.deliver(st, res, err, false)
		}
		end := &TurnEnd{StopReason: res.StopReason, Text: res.Text, Usage: res.Usage, Err: errString(err), Duration: time.Since(started)}
		s.mu.Lock()
		end.TotalCost = s.hist.usage.Totals().Cost // the /cost figure
		s.mu.Unlock()
		s.update(context.WithoutCancel(it.ctx), Update{Kind: UpdateTurnEnded, Turn: end})
	}
}

// complete delivers an item's result, recording pending items in the
// resolved/failed history.
func (s *Session) complete(it *item, res PromptResult, err error) {
	s.deliver(it, res, err, true)
}

// deliver hands an item's result to its completion callback and waiting
// caller; with record, pending items also go to the history.
func (s *Session) deliver(it *item, res PromptResult, err error, record bool) {
	if it.stopWatch != nil {
		it.stopWatch()
	}
	if s.cfg.Journal != nil && record {
		// Durable before the response that depends on it.
		if serr := s.cfg.Journal.Sync(); serr != nil && err == nil {
			err = serr
		}
	}
	state, message := finalState(err)
	s.sendState(it, state, 0, message)
	switch {
	case err == nil:
		s.telemetryEvent(it, telemetry.EventPromptCompleted, "stopReason", string(res.StopReason))
	case errors.Is(err, ErrPromptTimedOut):
		s.telemetryEvent(it, telemetry.EventPromptTimedOut, "error", err.Error())
	case errors.Is(err, context.Canceled) || errors.Is(err, ErrSessionClosed):
		s.telemetryEvent(it, telemetry.EventPromptCancelled)
	default:
		s.telemetryEvent(it, telemetry.EventPromptFailed, "error", err.Error())
	}
	if record && it.pending() {
		s.mu.Lock()
		s.recordLocked(it, err)
		s.mu.Unlock()
	}
	if it.onComplete != nil {
		it.onComplete(res, err)
	}
	if it.done != nil {
		it.done <- promptOutcome{res, err}
	}
}

// recordLocked adds a finished pending item to the history.
func (s *Session) recordLocked(it *item, err error) {
	f := finished{it: it, status: PendingResolved, at: time.Now()}
	if err != nil {
		f.status, f.err = PendingFailed, err.Error()
	}
	s.history = append(s.history, f)
	if n := len(s.history) - maxPendingHistory; n > 0 {
		s.history = slices.Delete(s.history, 0, n)
	}
	s.sessionEventLocked(it, f.status, f.err)
}

// dropQueued removes every queued item and returns them.
func (s *Session) dropQueuedLocked() []*item {
	q := s.queue
	s.queue = nil
	return q
}

// CancelActivePrompt cancels the running turn; the prompt returns a
// cancellation error, and every queued message fails with one too (and is
// recorded as failed). It reports whether a turn was running.
func (s *Session) CancelActivePrompt() bool {
	s.mu.Lock()
	active := s.active
	queued := s.dropQueuedLocked()
	for _, it := range queued {
		if it.pending() {
			s.recordLocked(it, ErrPromptCancelled)
		}
	}
	if active != nil {
		active.cancel(ErrPromptCancelled)
	}
	s.mu.Unlock()
	for _, it := range queued {
		s.deliver(it, PromptResult{}, ErrPromptCancelled, false)
	}
	return active != nil
}

// PendingMessageCount is the number of queued messages.
func (s *Session) PendingMessageCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingCountLocked()
}

func (s *Session) pendingCountLocked() int {
	n := 0
	for _, it := range s.queue {
		if it.pending() {
			n++
		}
	}
	return n
}

// PendingMessages returns the queued messages in order, then (with
// includeResolved) the newest resolved/failed ones, oldest first. Previews
// are cut at maxLength characters plus "..."; maxLength is clamped to at
// least 1, as seed 000's pendingMessages does (pass DefaultPreviewLength
// for the seed's default of 120).
func (s *Session) PendingMessages(maxLength int, includeResolved bool) []PendingMessage {
	maxLength = max(maxLength, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PendingMessage
	for _, it := range s.queue {
		if it.pending() {
			out = append(out, it.snapshot(PendingQueued, maxLength))
		}
	}
	if includeResolved {
		for _, f := range s.history {
			m := f.it.snapshot(f.status, maxLength)
			at := f.at
			m.FinishedAt, m.Error = &at, f.err
			out = append(out, m)
		}
	}
	return out
}

// ClearPendingHistory forgets resolved/failed messages and returns how
// many; the queue is untouched.
func (s *Session) ClearPendingHistory() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.history)
	s.history = nil
	return n
}

// ClearPendingState drops the queue (waiting callers get a cancellation
// error; nothing is recorded as failed) and the history, and with
// cancelActivePrompt also cancels the running turn.
func (s *Session) ClearPendingState(cancelActivePrompt bool) ClearPendingResult {
	s.mu.Lock()
	queued := s.dropQueuedLocked()
	r := ClearPendingResult{QueuedRemoved: 0, ResolvedRemoved: len(s.history)}
	s.history = nil
	if cancelActivePrompt && s.active != nil {
		s.active.cancel(ErrPromptCancelled)
		r.ActivePromptCancelled = true
	}
	s.mu.Unlock()
	for _, it := range queued {
		if it.pending() {
			r.QueuedRemoved++
		}
		// Not recorded: ClearPendingState clears history too.
		s.deliver(it, PromptResult{}, ErrPromptCancelled, false)
	}
	return r
}

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

// ForkableMessage is a user message a fork can start from.
type ForkableMessage struct {
	EntryIndex int    `json:"entryIndex"`
	Text       string `json:"text"`
}

// ForkableUserMessages lists the user messages a fork can start from, in
// transcript order: those with text the user wrote (seed 000 S5). Blank
// and image-only messages and a compaction's summary are not listed, and
// forking from them is refused like any other non-user entry (S20).
func (s *Session) ForkableUserMessages() []ForkableMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ForkableMessage
	for i, e := range s.tr.entries {
		if e.forkable() {
			out = append(out, ForkableMessage{EntryIndex: i, Text: e.Text})
		}
	}
	return out
}

// ForkOptions configure ForkWith.
type ForkOptions struct {
	// ID of the new session; empty means a new random one.
	ID string
	// FromUserEntryIndex, if set, keeps only the entries before that user
	// message.
	FromUserEntryIndex *int
	// Sink of the new session (nil: none).
	Sink UpdateSink
	// Permissions of the new session (nil: nobody to ask).
	Permissions PermissionRequester
	// Workspace of the new session (nil: the fork has no built-in tools).
	Workspace Workspace
	// Journal, if set, makes the fork's journal: it is called with the
	// source's appends held and the number of entries the fork keeps (its
	// first ones), so the journal can copy exactly the records of those.
	Journal func(keptEntries int) (Journal, error)
}

// Fork returns a new session with its own id, an equal but independent
// transcript (entries are shared, not copied), a copy of the tool
// registry, and no pending state.
func (s *Session) Fork() (*Session, error) { return s.ForkWith(ForkOptions{}) }

// ForkFromUserEntry forks keeping only the context before the user message
// at index; an index that is not a user message gives
// *InvalidForkEntryIndexError and creates nothing.
func (s *Session) ForkFromUserEntry(index int) (*Session, error) {
	return s.ForkWith(ForkOptions{FromUserEntryIndex: &index})
}

// ForkWith forks with options.
func (s *Session) ForkWith(opts ForkOptions) (*Session, error) {
	if opts.Journal != nil {
		// A turn may be appending entries: the journal's copy and the
		// memory copy hold the same entries, or a restart loses the
		// difference.
		s.appendMu.Lock()
		defer s.appendMu.Unlock()
	}
	s.mu.Lock()
	n := len(s.tr.entries)
	if opts.FromUserEntryIndex != nil {
		i := *opts.FromUserEntryIndex
		if i < 0 || i >= n || !s.tr.entries[i].forkable() {
			s.mu.Unlock()
			return nil, &InvalidForkEntryIndexError{Index: i}
		}
		n = i
	}
	tr := s.tr.prefix(n)
	model := s.model
	s.mu.Unlock()
	var journal Journal
	if opts.Journal != nil {
		j, err := opts.Journal(n)
		if err != nil {
			return nil, err
		}
		journal = j
	}
	cfg := s.cfg
	cfg.Mode = s.perms.Mode()
	// The fork talks to the model the source talks to now.
	cfg.ModelID, cfg.Model, cfg.ModelName, cfg.ModelInfo, cfg.ReasoningEffort = model.ID, model.Model, model.Name, model.Info, model.ReasoningEffort
	cfg.ID, cfg.Sink, cfg.Tools, cfg.OnDelete = opts.ID, opts.Sink, s.tools.Clone(), nil
	cfg.Permissions, cfg.Workspace = opts.Permissions, opts.Workspace
	if opts.Workspace == nil && s.cfg.Workspace != nil {
		// The cloned registry holds the source's built-ins, bound to the
		// source's workspace.
		for _, t := range s.cfg.Workspace.Tools() {
			cfg.Tools.Unregister(t.Name)
		}
	}
	cfg.Journal = journal
	f := NewSession(cfg)
	f.tr = tr
	f.perms = s.perms.forFork()
	return f, nil
}

// Resume replaces the transcript with entries (a saved snapshot) and, for
// a stored session, rewrites its file to match, so a later session/load
// replays what was resumed. It fails while a turn runs.
func (s *Session) Resume(entries []Entry) error {
	entries = slices.Clone(entries)
	now := time.Now()
	for i := range entries {
		if entries[i].Time.IsZero() {
			entries[i].Time = now // a record's time is required in the file
		}
	}
	if err := s.installEntries(entries); err != nil {
		return err
	}
	s.rewriteFile()
	return nil
}

// installEntries replaces the transcript without touching the file (the
// store installs what it has just read from that file).
func (s *Session) installEntries(entries []Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busyLocked() {
		return ErrPromptAlreadyRunning
	}
	var tr transcript
	for _, e := range entries {
		tr.append(e)
	}
	s.tr = tr
	return nil
}

// Close stops accepting input, fails queued messages, lets the running
// turn finish, waits for the worker, and ends the subscribers' streams.
func (s *Session) Close() error {
	s.shutdown(false)
	return nil
}

// Delete closes the session, removes its stored data (SessionConfig.
// OnDelete) and tells the subscribers, whose streams then end.
func (s *Session) Delete() error {
	s.shutdown(true)
	s.mu.Lock()
	first := !s.deleted
	s.deleted = true
	s.mu.Unlock()
	if first && s.cfg.OnDelete != nil {
		return s.cfg.OnDelete()
	}
	return nil
}

func (s *Session) shutdown(deleted bool) {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	queued := s.dropQueuedLocked()
	s.mu.Unlock()
	for _, it := range queued {
		s.complete(it, PromptResult{}, ErrSessionClosed)
	}
	s.worker.Wait()
	if already {
		return
	}
	s.end(ErrSessionClosed)
	if s.cfg.Journal != nil {
		if err := s.cfg.Journal.Close(); err != nil {
			s.log.Warn("closing the session file", "error", err)
		}
	}
	if s.cfg.Workspace != nil {
		if err := s.cfg.Workspace.Close(); err != nil {
			s.log.Warn("closing the workspace", "error", err)
		}
	}
	if deleted {
		s.update(context.Background(), Update{Kind: UpdateDeleted})
	}
	s.closeSubscribers()
}

// cancelled is the error of work stopped because ctx was cancelled: it
// wraps ErrPromptCancelled (so context.Canceled) and the cause, once.
func cancelled(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrPromptCancelled) {
		return cause
	}
	return fmt.Errorf("%w: %w", ErrPromptCancelled, cause)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
