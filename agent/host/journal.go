package host

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
)

// The record types of a session file (docs/jsonl-format.md). Every record
// is one JSON object with "type" and "time".
const (
	recEntry      = "entry"      // a transcript entry
	recMode       = "mode"       // the session mode changed
	recModel      = "model"      // the model or thought level changed
	recPermission = "permission" // a remembered allow_always / reject_always
	recPlan       = "plan"       // the plan the client was last sent
	recClear      = "clear"      // /clear: load drops the entries before it
	recUsage      = "usage"      // a response's usage, the meter shown, or a snapshot of both
	// recClientPrompt is the client's system prompt for the session
	// (ACP's systemPrompt), kept so that a reload composes the same one.
	recClientPrompt = "client_prompt"
)

// record is the union of the record types; unused members are omitted.
type record struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`

	// entry
	Kind               agent.EntryKind  `json:"kind,omitempty"`
	Content            []partRecord     `json:"content,omitempty"`
	Text               string           `json:"text,omitempty"` // a tool output's text
	Reasoning          string           `json:"reasoning,omitempty"`
	ReasoningSignature string           `json:"reasoningSignature,omitempty"`
	RedactedReasoning  []string         `json:"redactedReasoning,omitempty"`
	ToolCalls          []toolCallRecord `json:"toolCalls,omitempty"`
	ToolCallID         string           `json:"toolCallId,omitempty"`
	ToolName           string           `json:"toolName,omitempty"`
	IsError            bool             `json:"isError,omitempty"`
	Source             string           `json:"source,omitempty"`
	Display            *displayRecord   `json:"display,omitempty"`
	MessageID          string           `json:"messageId,omitempty"`
	Typed              string           `json:"typed,omitempty"` // a user message's slash command, as typed

	// mode
	Mode policy.Mode `json:"mode,omitempty"`
	// model
	Model        string `json:"model,omitempty"`
	ThoughtLevel string `json:"thoughtLevel,omitempty"`
	// permission
	Scope   string              `json:"scope,omitempty"` // "edits", "command-approvals", "tool", "forget"; "command" is the old format
	Tool    string              `json:"tool,omitempty"`
	Command *policy.CommandLine `json:"command,omitempty"`
	// Dir and Approvals: scope "command-approvals", what an answer about
	// Command run in Dir stored (policy.CommandMemory).
	Dir       string            `json:"dir,omitempty"`
	Approvals []policy.Approval `json:"approvals,omitempty"`
	Decision  string            `json:"decision,omitempty"` // "allow", "reject", "none"
	// plan
	Plan *planRecord `json:"plan,omitempty"`
	// usage: a response (Model, Tokens, Cost), the context size the
	// client was shown (Used), or a snapshot of the whole report (Totals,
	// Rounds) that replaces the usage records before it.
	Tokens *tokensRecord `json:"tokens,omitempty"`
	Cost   *float64      `json:"cost,omitempty"`
	Used   uint64        `json:"used,omitempty"`
	Totals *totalsRecord `json:"totals,omitempty"`
	Rounds []roundRecord `json:"rounds,omitempty"`
	// client_prompt
	ClientPrompt *clientPromptRecord `json:"clientPrompt,omitempty"`
}

// clientPromptRecord is a client's system prompt as stored.
type clientPromptRecord struct {
	Text     string `json:"text"`
	Override bool   `json:"override,omitempty"`
}

type tokensRecord struct {
	Input      int64 `json:"input,omitempty"`
	Output     int64 `json:"output,omitempty"`
	CacheRead  int64 `json:"cacheRead,omitempty"`
	CacheWrite int64 `json:"cacheWrite,omitempty"`
	Reasoning  int64 `json:"reasoning,omitempty"`
}

type roundRecord struct {
	Model  string       `json:"model"`
	Tokens tokensRecord `json:"tokens"`
	Cost   *float64     `json:"cost,omitempty"`
}

type totalsRecord struct {
	InputOther     int64    `json:"inputOther,omitempty"`
	Output         int64    `json:"output,omitempty"`
	CacheRead      int64    `json:"cacheRead,omitempty"`
	CacheWrite     int64    `json:"cacheWrite,omitempty"`
	Reasoning      int64    `json:"reasoning,omitempty"`
	Rounds         int      `json:"rounds,omitempty"`
	UnpricedRounds int      `json:"unpricedRounds,omitempty"`
	Cost           *float64 `json:"cost,omitempty"`
	Model          string   `json:"model,omitempty"`
}

func toTokens(u llm.Usage) tokensRecord {
	return tokensRecord{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CachedReadTokens, CacheWrite: u.CachedWriteTokens, Reasoning: u.ReasoningTokens}
}

func (t tokensRecord) usage() llm.Usage {
	return llm.Usage{InputTokens: t.Input, OutputTokens: t.Output, CachedReadTokens: t.CacheRead, CachedWriteTokens: t.CacheWrite, ReasoningTokens: t.Reasoning}
}

// usageRecord is the record of r.
func usageRecord(r agent.UsageRecord) record {
	rec := record{Type: recUsage, Used: r.Used}
	if rd := r.Round; rd != nil {
		t := toTokens(rd.Usage)
		rec.Model, rec.Tokens, rec.Cost = rd.Model, &t, rd.Cost
	}
	if sn := r.Snapshot; sn != nil {
		t := sn.Totals
		rec.Totals = &totalsRecord{InputOther: t.InputOther, Output: t.Output, CacheRead: t.CacheRead, CacheWrite: t.CacheWrite,
			Reasoning: t.Reasoning, Rounds: t.Rounds, UnpricedRounds: t.UnpricedRounds, Cost: t.Cost, Model: t.Model}
		for _, rd := range sn.Rounds {
			rec.Rounds = append(rec.Rounds, roundRecord{Model: rd.Model, Tokens: toTokens(rd.Usage), Cost: rd.Cost})
		}
	}
	return rec
}

// usage is the usage record read back.
func (r *record) usage() agent.UsageRecord {
	out := agent.UsageRecord{Used: r.Used}
	if r.Tokens != nil {
		out.Round = &pricing.UsageRound{Model: r.Model, Usage: r.Tokens.usage(), Cost: r.Cost}
	}
	if t := r.Totals; t != nil {
		sn := &pricing.UsageSnapshot{Totals: pricing.UsageTotals{InputOther: t.InputOther, Output: t.Output, CacheRead: t.CacheRead,
			CacheWrite: t.CacheWrite, Reasoning: t.Reasoning, Rounds: t.Rounds, UnpricedRounds: t.UnpricedRounds, Cost: t.Cost, Model: t.Model}}
		for _, rd := range r.Rounds {
			sn.Rounds = append(sn.Rounds, pricing.UsageRound{Model: rd.Model, Usage: rd.Tokens.usage(), Cost: rd.Cost})
		}
		out.Snapshot = sn
	}
	return out
}

type partRecord struct {
	Type     llm.PartType `json:"type"`
	Text     string       `json:"text,omitempty"`
	MIMEType string       `json:"mimeType,omitempty"`
	Data     string       `json:"data,omitempty"`
}

type toolCallRecord struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func entryRecord(e *agent.Entry) record {
	r := record{Type: recEntry, Time: e.Time, Kind: e.Kind, Reasoning: e.Reasoning, ReasoningSignature: e.ReasoningSignature,
		RedactedReasoning: e.RedactedReasoning, ToolCallID: e.ToolCallID, ToolName: e.ToolName, IsError: e.IsError,
		Source: e.Source, Display: toDisplayRecord(e.Display), MessageID: e.MessageID, Typed: e.Typed}
	for _, p := range e.Content {
		r.Content = append(r.Content, partRecord{Type: p.Type, Text: p.Text, MIMEType: p.MIMEType, Data: p.Data})
	}
	for _, c := range e.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, toolCallRecord{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	if e.Kind == agent.EntryToolOutput {
		r.Text = e.Text
	}
	return r
}

func (r *record) entry() agent.Entry {
	kind := interned(r.Kind, agent.EntryUser, agent.EntryAssistant, agent.EntryToolCalls, agent.EntryToolOutput)
	e := agent.Entry{Kind: kind, Reasoning: r.Reasoning, ReasoningSignature: r.ReasoningSignature, RedactedReasoning: r.RedactedReasoning,
		ToolCallID: r.ToolCallID, ToolName: r.ToolName, IsError: r.IsError, Source: r.Source, Time: r.Time, Display: r.Display.display(),
		MessageID: r.MessageID, Typed: r.Typed}
	if len(r.Content) > 0 {
		e.Content = make([]llm.Part, 0, len(r.Content))
	}
	for _, p := range r.Content {
		e.Content = append(e.Content, llm.Part{Type: interned(p.Type, llm.PartText, llm.PartImage), Text: p.Text, MIMEType: p.MIMEType, Data: p.Data})
	}
	if len(r.ToolCalls) > 0 {
		e.ToolCalls = make([]llm.ToolCall, 0, len(r.ToolCalls))
	}
	for _, c := range r.ToolCalls {
		e.ToolCalls = append(e.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	if r.Kind == agent.EntryToolOutput {
		e.Text = r.Text
	}
	return e
}

// interned returns the constant among known that equals s, else s: a
// loaded session's entries then share one "user" instead of holding
// 100,000 copies of it.
func interned[S ~string](s S, known ...S) S {
	for _, k := range known {
		if s == k {
			return k
		}
	}
	return s
}

// journal writes a session's records to its file. Appends are not synced;
// Sync is called before a response that depends on them (a prompt's).
// It is safe for concurrent use: entries come from the session's worker,
// state changes from the read loop.
type journal struct {
	// f is the session's file; nil until the session is saved (its first
	// prompt), while res holds its id and pending its state records.
	f   *persistence.File
	res *persistence.Reservation
	hdr persistence.Header
	log *slog.Logger

	mu sync.Mutex
	// entryStart[i] is the number of records before transcript entry i:
	// a fork from entry i copies that prefix.
	entryStart []int
	// early holds the records written while the session has no title: the
	// title goes in the header, and setting it rewrites the (small) file.
	early  []json.RawMessage
	titled bool
	// copied: the file starts with records copied from another session
	// (a fork), which early does not hold.
	copied bool
	err    error // the first rewrite error, reported by Sync
	// backlog are the records whose append failed (a full disk), and
	// every record written after them, in order: they are appended,
	// before anything else, by the next write or Sync that can (the
	// space is back), so that the file stays the transcript, without a
	// gap, and the session goes on. Sync reports the error until then.
	backlog []json.RawMessage
	// rewritten, when not nil, is the whole file a rewrite (a compaction,
	// a rewind) could not write: the next write or Sync that can writes
	// it, with the backlog after it, in place of the file, and until then
	// nothing is appended to the old file.
	rewritten []json.RawMessage
	cp        *checkpoints
	// pending are the records written before the file exists (the mode,
	// the model): the first lines of the file once it is saved.
	pending []json.RawMessage
	// holdKeep: a batch of state records is being written (keepOnce),
	// whose reservation record is written once, at its end.
	holdKeep bool
	// clientPrompt is the client's system prompt last recorded, which a
	// rewrite keeps; nil: none.
	clientPrompt *agent.ClientPrompt
	// beforeSave, when set (tests: Config.saveHook), runs at the start of
	// SaveWith, before its lock: a test holds a first save there, as a
	// slow disk would, or makes it fail.
	beforeSave func()
}

func newJournal(f *persistence.File, log *slog.Logger, entryStart []int, early []json.RawMessage) *journal {
	return &journal{f: f, log: log, entryStart: entryStart, early: early, titled: f.Header().Title != ""}
}

// newUnsavedJournal is the journal of a new session whose file is created
// when it is saved (save), with header h, by res.
func newUnsavedJournal(res *persistence.Reservation, h persistence.Header, log *slog.Logger) *journal {
	return &journal{res: res, hdr: h, log: log}
}

// save creates the session's file, if it has none yet: at the first
// prompt, so a session nobody prompted leaves nothing behind.
func (j *journal) save() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.saveLocked()
}

func (j *journal) saveLocked() error { return j.createLocked(nil) }

// createLocked creates the session's file, if it has none yet, with
// entry (nil: none) after the state records: a first message saved with
// the file (SaveWith).
func (j *journal) createLocked(entry json.RawMessage) error {
	if j.f != nil {
		return nil
	}
	if j.res == nil {
		return fmt.Errorf("%w: %w", agent.ErrNotSaved, persistence.ErrClosed)
	}
	// The state records are written with the header and fsynced with
	// it, rather than appended after.
	recs := j.pending
	if entry != nil {
		recs = append(slices.Clip(recs), entry)
	}
	f, err := j.res.Create(j.hdr, recs...)
	if err != nil {
		return fmt.Errorf("creating the session file: %w", err)
	}
	j.f, j.res = f, nil
	if entry != nil {
		j.entryStart = append(j.entryStart, len(j.pending))
	}
	// A title given before the file existed (the first message's) is in
	// its header already: nothing to rewrite for it.
	j.titled = j.hdr.Title != ""
	if !j.titled {
		j.early = recs
	}
	j.pending = nil
	return nil
}

// header is the session's header: its file's, or the one its file will
// have.
func (j *journal) header() persistence.Header {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		return j.f.Header()
	}
	return j.hdr
}

// saved reports whether the session has its file.
func (j *journal) saved() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f != nil
}

// write appends one record; a transcript entry saves the session first.
func (j *journal) write(r record, isEntry bool) {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	data, err := json.Marshal(r)
	if err == nil {
		j.mu.Lock()
		switch {
		case j.f == nil && !isEntry:
			j.pending = append(j.pending, data)
			if !j.holdKeep {
				j.keepLocked()
			}
		default:
			err = j.saveLocked()
			if err != nil {
				if j.err == nil {
					j.err = err
				}
				break
			}
			if isEntry {
				j.entryStart = append(j.entryStart, j.countLocked())
			}
			j.backlog = append(j.backlog, data)
			err = j.flushLocked()
		}
		j.mu.Unlock()
	}
	if err != nil {
		j.log.Error("saving the session", "error", err)
	}
}

// flushLocked appends the backlog, one record at a time (a failed append
// is cut back off the file: what was written stays written), and says
// why it could not.
func (j *journal) flushLocked() error {
	if j.rewritten != nil {
		recs := append(j.rewritten, j.backlog...)
		if err := j.f.Rewrite(j.f.Header(), recs); err != nil {
			return err
		}
		if !j.titled {
			j.early = recs
		}
		j.rewritten, j.backlog = nil, nil
		return nil
	}
	for len(j.backlog) > 0 {
		if err := j.f.Append(j.backlog[0]); err != nil {
			return err
		}
		if !j.titled {
			j.early = append(j.early, j.backlog[0])
		}
		j.backlog[0] = nil
		j.backlog = j.backlog[1:]
	}
	j.backlog = nil
	return nil
}

// countLocked is the number of records the file holds once what is held
// back is written.
func (j *journal) countLocked() int {
	if j.rewritten != nil {
		return len(j.rewritten) + len(j.backlog)
	}
	return j.f.Count() + len(j.backlog)
}

// flush appends the backlog, if any (a fork copies the file).
func (j *journal) flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil || len(j.backlog) == 0 && j.rewritten == nil {
		return nil
	}
	if err := j.flushLocked(); err != nil {
		return fmt.Errorf("%w: %w", agent.ErrNotSaved, err)
	}
	return nil
}

// keepLocked has the reservation's record follow the state, so that the
// session opens again as it is; a failure is not fatal (the record is
// only what a load of a session never prompted finds).
func (j *journal) keepLocked() {
	if j.f != nil || j.res == nil {
		return
	}
	if err := j.res.Keep(j.hdr, j.pending); err != nil {
		j.log.Warn("keeping the reservation of a session not saved yet", "error", err)
	}
}

// keepOnce runs record, which writes several state records (a new
// session's), with one write of the reservation's record at its end
// rather than one per record: each is a new file.
func (j *journal) keepOnce(record func()) {
	j.mu.Lock()
	j.holdKeep = true
	j.mu.Unlock()
	record()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.holdKeep = false
	j.keepLocked()
}

// Save creates the session's file if it is not there yet (agent's
// savingJournal): the session calls it before recording a prompt's
// message, so a prompt that cannot be kept fails before the model is
// called, and the next prompt tries again.
func (j *journal) Save() error {
	if err := j.save(); err != nil {
		return fmt.Errorf("%w: %w", agent.ErrNotSaved, err)
	}
	return nil
}

// Saved implements agent's firstSaver: whether the session has its file.
func (j *journal) Saved() bool { return j.saved() }

// SaveWith implements agent's firstSaver: the session's first message
// (e, a user entry) is saved with the session's file, in one creation
// (written after the header and the state records, fsynced, renamed into
// place, the directory fsynced), so that the message and the file are on
// disk together. The session runs it beside the model call that answers
// e. A failure records nothing (the next message tries again); a file
// made meanwhile (a title the user set) gets e appended and synced.
func (j *journal) SaveWith(e agent.Entry) error {
	if j.beforeSave != nil {
		j.beforeSave()
	}
	rec := entryRecord(&e)
	if rec.Time.IsZero() {
		rec.Time = time.Now()
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("%w: %w", agent.ErrNotSaved, err)
	}
	j.mu.Lock()
	created := j.f == nil
	if created {
		err = j.createLocked(data)
	}
	cp := j.cp
	j.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%w: %w", agent.ErrNotSaved, err)
	}
	if !created {
		j.AppendEntry(e)
		return j.Sync()
	}
	if cp != nil {
		// As AppendEntry: each user message is a checkpoint the files
		// can go back to. No tool runs before this returns.
		if err := cp.startTurn(e.Time); err != nil {
			j.log.Error("saving a file checkpoint", "error", err)
		}
	}
	return nil
}

// Sync makes every appended record durable (nothing to do while the
// session is not saved).
func (j *journal) Sync() error {
	j.mu.Lock()
	werr, f := j.err, j.f
	if werr == nil && (len(j.backlog) > 0 || j.rewritten != nil) {
		werr = j.flushLocked()
	}
	j.mu.Unlock()
	if werr != nil {
		return fmt.Errorf("%w: %w", agent.ErrNotSaved, werr)
	}
	if f == nil {
		return nil
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%w: %w", agent.ErrNotSaved, err)
	}
	return nil
}

// setTitle puts the title in the header (once; the file is small then).
// A session not saved yet gets it in the header its file will be created
// with (at its first message, which the title comes from): no rewrite,
// whose two fsyncs would delay the first model call of every session.
func (j *journal) setTitle(title string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.titled {
		return
	}
	if j.f == nil && j.res != nil {
		j.hdr.Title = title
		return
	}
	if err := j.saveLocked(); err != nil {
		j.log.Error("saving the session title", "error", err)
		return
	}
	h := j.f.Header()
	h.Title = title
	var err error
	if j.copied {
		err = j.f.RewriteHeader(h) // keeps the copied records
	} else {
		err = j.f.Rewrite(h, j.early)
	}
	if err != nil {
		j.log.Error("saving the session title", "error", err)
		return
	}
	j.titled, j.early = true, nil
}

// updateHeader changes the header (a title the user set, the archive
// state) and reports whether it was stored: the caller answers only then.
func (j *journal) updateHeader(change func(*persistence.Header)) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.saveLocked(); err != nil {
		return err
	}
	h := j.f.Header()
	change(&h)
	var err error
	if j.titled || j.copied {
		err = j.f.RewriteHeader(h)
	} else {
		err = j.f.Rewrite(h, j.early)
	}
	if err != nil {
		return err
	}
	if h.Title != "" {
		j.titled, j.early = true, nil
	}
	return nil
}

// retitle replaces the header's title on a titled session: the whole
// file is rewritten (rare: once, after the first turn).
func (j *journal) retitle(title string) {
	j.mu.Lock()
	// Under j.mu, as updateHeader: a title the user set meanwhile stays.
	h := j.f.Header()
	titled := j.titled
	if titled && !h.TitleByUser {
		h.Title = title
		if err := j.f.RewriteHeader(h); err != nil {
			j.log.Error("saving the session title", "error", err)
		}
	}
	j.mu.Unlock()
	if !titled && !h.TitleByUser {
		j.setTitle(title)
	}
}

// prefixFor is the number of records a fork keeping the first n entries
// copies (every record when n is the whole transcript).
func (j *journal) prefixFor(n int) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return 0
	}
	if n < len(j.entryStart) {
		return j.entryStart[n]
	}
	return j.f.Count()
}

// clearEntries forgets where entries start: after /clear the transcript
// starts again at entry 0.
func (j *journal) clearEntries() {
	j.mu.Lock()
	j.entryStart = j.entryStart[:0]
	j.mu.Unlock()
}

// entryStartPrefix is where each of the first n entries starts.
func (j *journal) entryStartPrefix(n int) []int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.entryStart[:min(n, len(j.entryStart))]
}

// The agent.Journal of a stored session: each call is one record.
var _ agent.Journal = (*journal)(nil)

// AppendEntry implements agent.Journal.
func (j *journal) AppendEntry(e agent.Entry) {
	if e.Kind == agent.EntryUser && e.Source != agent.SourceSummary {
		j.mu.Lock()
		cp := j.cp
		j.mu.Unlock()
		if cp != nil {
			// Each user message is a checkpoint the files can go back to.
			if err := cp.startTurn(e.Time); err != nil {
				j.log.Error("saving a file checkpoint", "error", err)
			}
		}
	}
	j.write(entryRecord(&e), true)
}

// setCheckpoints starts a checkpoint at each user message from now on.
func (j *journal) setCheckpoints(cp *checkpoints) {
	j.mu.Lock()
	j.cp = cp
	j.mu.Unlock()
}

// SetMode implements agent.Journal.
func (j *journal) SetMode(m policy.Mode) { j.write(record{Type: recMode, Mode: m}, false) }

// SetModel implements agent.Journal.
func (j *journal) SetModel(id, level string) {
	j.write(record{Type: recModel, Model: id, ThoughtLevel: level}, false)
}

// Remember implements agent.Journal.
func (j *journal) Remember(d agent.RememberedDecision) { j.write(decisionRecord(d), false) }

// SetPlan implements agent.Journal.
func (j *journal) SetPlan(p agent.Plan) {
	j.write(record{Type: recPlan, Plan: toPlanRecord(&p)}, false)
}

// setClientPrompt records the client's system prompt of the session
// (none: a record with no text), unless it is the one recorded.
func (j *journal) setClientPrompt(cp agent.ClientPrompt) {
	j.mu.Lock()
	same := j.clientPrompt != nil && *j.clientPrompt == cp
	if !same {
		j.clientPrompt = &cp
	}
	j.mu.Unlock()
	if !same {
		j.write(record{Type: recClientPrompt, ClientPrompt: &clientPromptRecord{Text: cp.Text, Override: cp.Override}}, false)
	}
}

// RecordUsage implements agent.UsageJournal.
func (j *journal) RecordUsage(r agent.UsageRecord) { j.write(usageRecord(r), false) }

// Clear implements agent.Journal: a clear record, after which load drops
// the entries before it, and the transcript starts again at entry 0.
func (j *journal) Clear() {
	j.write(record{Type: recClear}, false)
	j.clearEntries()
}

// SetTitle implements agent.Journal.
func (j *journal) SetTitle(title string, replace bool) {
	if replace {
		j.retitle(title)
	} else {
		j.setTitle(title)
	}
}

// Rewrite implements agent.Journal: the file is replaced by the state's
// records and the entries.
func (j *journal) Rewrite(st agent.JournalState, entries []agent.Entry) {
	state := []record{{Type: recMode, Mode: st.Mode}, {Type: recModel, Model: st.Model, ThoughtLevel: st.ThoughtLevel}}
	for _, d := range st.Decisions {
		state = append(state, decisionRecord(d))
	}
	if st.Usage != nil {
		state = append(state, usageRecord(*st.Usage))
	}
	j.mu.Lock()
	if cp := j.clientPrompt; cp != nil {
		state = append(state, record{Type: recClientPrompt, ClientPrompt: &clientPromptRecord{Text: cp.Text, Override: cp.Override}})
	}
	j.mu.Unlock()
	var after []record
	if st.Plan != nil {
		// After the entries: load shows a plan where it came in the
		// conversation, and the last one is the newest.
		after = append(after, record{Type: recPlan, Plan: toPlanRecord(st.Plan)})
	}
	j.rewrite(state, entries, after...)
}

// Close implements agent.Journal: an unsaved session gives its id up.
func (j *journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		if j.res == nil {
			return nil
		}
		err := j.res.Release()
		j.res = nil
		return err
	}
	if len(j.backlog) > 0 || j.rewritten != nil {
		if err := j.flushLocked(); err != nil {
			j.log.Error("saving the session: what could not be written is lost at its close (the file keeps what it had)", "records", len(j.backlog), "rewrite", j.rewritten != nil, "error", err)
		}
	}
	return j.f.Close()
}

func decisionRecord(d agent.RememberedDecision) record {
	return record{Type: recPermission, Scope: d.Scope, Tool: d.Tool, Command: d.Command, Dir: d.Dir, Approvals: d.Approvals, Decision: d.Decision}
}

func (r *record) decision() agent.RememberedDecision {
	return agent.RememberedDecision{Scope: r.Scope, Tool: r.Tool, Command: r.Command, Dir: r.Dir, Approvals: r.Approvals, Decision: r.Decision}
}

// offloadDir is where a stored session's long tool results go:
// <session-dir>/<sessionId>/offloaded.
func offloadDir(sessionDir, id string) string {
	return filepath.Join(sessionDir, id, "offloaded")
}

// rewrite replaces the file with state records, entries and the records
// after them.
func (j *journal) rewrite(state []record, entries []agent.Entry, after ...record) {
	var recs []json.RawMessage
	var starts []int
	for _, r := range state {
		r.Time = time.Now()
		data, err := json.Marshal(r)
		if err != nil {
			j.log.Error("encoding a session record", "error", err)
			return
		}
		recs = append(recs, data)
	}
	for i := range entries {
		data, err := json.Marshal(entryRecord(&entries[i]))
		if err != nil {
			j.log.Error("encoding a session record", "error", err)
			return
		}
		starts = append(starts, len(recs))
		recs = append(recs, data)
	}
	for _, r := range after {
		r.Time = time.Now()
		data, err := json.Marshal(r)
		if err != nil {
			j.log.Error("encoding a session record", "error", err)
			return
		}
		recs = append(recs, data)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.saveLocked(); err != nil {
		j.log.Error("rewriting the session file", "error", err)
		if j.err == nil {
			j.err = err
		}
		return
	}
	// What was held back is in recs (the whole session): it goes.
	j.entryStart = starts
	j.rewritten, j.backlog = recs, nil
	if err := j.flushLocked(); err != nil {
		// Held, written by the next write or Sync that can.
		j.log.Error("rewriting the session file", "error", err)
		return
	}
	// The file is the session again.
	j.err = nil
}
