package agent

import (
	"context"
	"errors"
	"slices"

	"github.com/acp-agent/acp-agent/policy"
)

// Journal keeps a session durably (SessionConfig.Journal). The session
// tells it every change a reload must restore, in the order they
// happened; appends need not be durable until Sync, which the session
// calls before a prompt's result is delivered. Implementations must be
// safe for concurrent use: entries come from the session's worker, state
// changes from whoever changes the state. The host (agent/host)
// implements it over package persistence.
type Journal interface {
	// AppendEntry records an entry appended to the transcript.
	AppendEntry(e Entry)
	// SetMode, SetModel, Remember and SetPlan record state changes.
	SetMode(m policy.Mode)
	SetModel(id, thoughtLevel string)
	Remember(d RememberedDecision)
	SetPlan(p Plan)
	// Clear records that the transcript and plan were emptied (/clear).
	Clear()
	// SetTitle records the session's title: the first line of the first
	// prompt, or (replace) the model's title taking its place.
	SetTitle(title string, replace bool)
	// Rewrite replaces everything stored with st and entries (after
	// compaction or Resume).
	Rewrite(st JournalState, entries []Entry)
	// Sync makes everything recorded durable.
	Sync() error
	// Close releases the storage; the session calls it on Close.
	Close() error
}

// savingJournal is a Journal that creates the session's file only when
// told to (at its first message): Save creates it if it is not there
// yet, and a failure leaves nothing recorded, to be tried again.
type savingJournal interface {
	Save() error
}

// firstSaver is a savingJournal that saves a session's first message with
// its file (appendUser): SaveWith creates the file, as Save does, holding
// e as its last record, so that the message and the file are durable
// together, or appends e as AppendEntry does (and syncs it) when the file
// exists by then. A failure records nothing, to be tried again at the
// next message. The session calls SaveWith on a goroutine of its own,
// beside the model call that answers e, and shows nothing of the answer
// before it returns; SaveWith must not call back into the session.
type firstSaver interface {
	savingJournal
	// Saved reports whether the session's file exists.
	Saved() bool
	SaveWith(e Entry) error
}

// saveJournal saves the session's journal if it saves on demand.
func (s *Session) saveJournal() error {
	if j, ok := s.cfg.Journal.(savingJournal); ok {
		return j.Save()
	}
	return nil
}

// JournalState is a session's state as a Journal restores it.
type JournalState struct {
	Mode         policy.Mode
	Model        string
	ThoughtLevel string
	// Decisions are the remembered permission decisions, in order.
	Decisions []RememberedDecision
	Plan      *Plan
	// Usage is the session's usage (a snapshot), nil when none.
	Usage *UsageRecord
}

// RememberedDecision is one remembered answer to a permission request, as
// it is stored: its scope ("edits", "tool" with Tool, "command-approvals"
// with Command, Dir and the Approvals policy.CommandMemory made, "forget"
// to forget everything remembered before it; "command" is the old
// command format) and the decision ("allow" or "reject").
type RememberedDecision struct {
	Scope     string
	Tool      string
	Command   *policy.CommandLine
	Dir       string
	Approvals []policy.Approval
	Decision  string
}

// The scopes of RememberedDecision.
const (
	ScopeEdits = "edits"
	ScopeTool  = "tool"
	// ScopeCommandApprovals holds the approvals policy.CommandMemory
	// stored, kept as they are.
	ScopeCommandApprovals = "command-approvals"
	// ScopeForget forgets everything remembered before it: a fork's file
	// starts with a copy of its source's records, and the fork starts
	// with nothing remembered.
	ScopeForget = "forget"
	// ScopeCommand is the old command format, whose keys covered a
	// program and its first operand anywhere: its allows are ignored on
	// load (a reload must never widen an approval), its rejects still
	// reject.
	ScopeCommand = "command"
)

// Restored is what a session opened from storage gets back (Restore).
type Restored struct {
	// Entries are installed as they are (they are stored already).
	Entries []Entry
	// Append are entries to add after them and record (the results a
	// load repair gives to calls a stop left unanswered).
	Append []Entry
	// Decisions are the remembered decisions, in order.
	Decisions []RememberedDecision
	Plan      *Plan
	// Usage are the stored usage records, in order.
	Usage []UsageRecord
}

// Restore gives a session opened from storage its transcript, remembered
// decisions and plan, and makes its history consistent for the model
// (a damaged file or a turn killed mid-tool still loads and goes on). It
// fails while a turn runs.
func (s *Session) Restore(r Restored) error {
	if err := s.installEntries(r.Entries); err != nil {
		return err
	}
	for _, e := range r.Append {
		s.appendEntry(e)
	}
	for _, d := range r.Decisions {
		s.perms.restore(d)
	}
	s.sanitizeHistory()
	s.mu.Lock()
	s.lastPlan = r.Plan
	s.mu.Unlock()
	s.restoreUsage(r.Usage)
	return nil
}

// ClearContext empties the transcript and the plan (/clear); the journal
// records it, so a reload starts from the same empty context.
func (s *Session) ClearContext() {
	s.mu.Lock()
	s.tr = transcript{}
	s.lastPlan = nil
	s.sys = nil // a new conversation gets a new system prompt
	s.mu.Unlock()
	if j := s.cfg.Journal; j != nil {
		j.Clear()
	}
}

// ErrTurnRunning is returned by ReplaceTranscript and RunExclusive while
// a model turn runs or waits.
var ErrTurnRunning = errors.New("agent: a turn is running; cancel it first")

// ErrNotSaved is wrapped by a Journal's error when what the session
// recorded could not be stored (a full disk): the turn fails with it,
// and it is the storage's failure, not the model's.
var ErrNotSaved = errors.New("saving the session")

// ReplaceTranscript makes entries the session's whole conversation and
// rewrites the session's storage with it (a rewind, or its undo). It is
// meant for a command running on the worker (RunExclusive, or a command
// in a prompt's place): from there it always succeeds, even while the
// session is closing (Close waits for the worker before it closes the
// storage), and what is queued behind the command runs after it.
// Anywhere else it is refused while a turn runs or messages wait.
func (s *Session) ReplaceTranscript(entries []Entry) error {
	s.mu.Lock()
	inCommand := s.active != nil && s.active.it.run != nil
	switch {
	case inCommand:
	case s.closed:
		s.mu.Unlock()
		return ErrSessionClosed
	case s.busyLocked():
		s.mu.Unlock()
		return ErrTurnRunning
	}
	s.installLocked(entries)
	s.mu.Unlock()
	s.rewriteFile()
	return nil
}

// RunExclusive runs fn on the session's worker, alone: it is refused at
// once (ErrTurnRunning, fn never runs) while a model turn runs or waits
// in the queue, and otherwise queued behind the commands already queued
// (other RunExclusive calls, slash commands); prompts that arrive after
// it wait for it. So what fn checks when it starts still holds while it
// runs: no turn can change the conversation or the files meanwhile. It
// waits for fn and returns its error; if ctx ends while fn is still
// queued, fn is withdrawn and never runs (ctx is fn's context too: fn
// decides what must not be cut short).
func (s *Session) RunExclusive(ctx context.Context, fn func(ctx context.Context) error) error {
	it := &item{ctx: ctx, quiet: true, done: make(chan promptOutcome, 1),
		run: func(ctx context.Context) (PromptResult, error) { return PromptResult{}, fn(ctx) }}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrSessionClosed
	case s.modelTurnLocked():
		s.mu.Unlock()
		return ErrTurnRunning
	}
	s.enqueueLocked(it)
	it.stopWatch = context.AfterFunc(ctx, func() { s.withdraw(it) })
	s.mu.Unlock()
	out := <-it.done
	return out.err
}

// modelTurnLocked reports whether a model turn runs or waits (a command
// in a prompt's place is not one).
func (s *Session) modelTurnLocked() bool {
	if s.active != nil && s.active.it.run == nil {
		return true
	}
	return slices.ContainsFunc(s.queue, func(it *item) bool { return it.run == nil })
}

// Plan returns the plan the client was last sent (nil: none).
func (s *Session) Plan() *Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastPlan
}
