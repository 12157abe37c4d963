package agent

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
)

// HistoryConfig configures how a session keeps its history within the
// model's context window (seed 003): offloading long tool results to
// files, then compacting older messages into a summary.
type HistoryConfig struct {
	// OffloadDir is where long tool results go; empty disables offload.
	OffloadDir string
	// OffloadThreshold is the context size (tokens) from which offload
	// and compaction run; 0 means 75% of the model's context window, or
	// 150,000 tokens when the window is unknown.
	OffloadThreshold int
	// Disabled turns both off (history grows until the provider refuses).
	Disabled bool
	// Resize, if set, runs after each turn (seed 004 section 2): its
	// policy decides none, lite (keep the newest messages, tool pairs
	// whole) or deep (a compaction, unless Resize.Deep replaces it).
	Resize *compact.Resizer
}

// historyState is a session's context bookkeeping (under Session.mu).
type historyState struct {
	// turnsSinceResize counts turns for the resize policy.
	turnsSinceResize int
	// reported is the last provider-reported context size (input +
	// output tokens of the last response) and reportedAt the transcript
	// length then.
	reported, reportedAt int
	compaction           compact.State
	usage                pricing.UsageReport
	// shown is the context size the client was last shown (usage_update).
	shown uint64
}

// entriesFromMessages turns a rewritten conversation back into transcript
// entries. Entries of the old transcript that survive keep their time,
// source and display. Survivors are found by aligning both from the end
// (a rewrite keeps the newest messages): never by tool-call id alone,
// which providers such as Ollama and llama.cpp reuse in every response.
func entriesFromMessages(msgs []llm.Message, old []*Entry) []Entry {
	now := time.Now()
	var out []Entry
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleUser, llm.RoleSystem:
			if isReminder(m) {
				// Obsolete once the history is rewritten: the system
				// prompt is built again from the session as it is now.
				continue
			}
			e := Entry{Kind: EntryUser, Content: m.Content, Source: "prompt", Time: now}
			if t := partsText(m.Content); strings.HasPrefix(t, compact.CompressedHistoryPrefix) {
				e.Source = SourceSummary
			}
			out = append(out, e)
		case llm.RoleAssistant:
			if len(m.Content) > 0 || m.Reasoning != "" || m.ReasoningSignature != "" || len(m.RedactedReasoning) > 0 {
				out = append(out, Entry{Kind: EntryAssistant, Content: m.Content, Reasoning: m.Reasoning,
					ReasoningSignature: m.ReasoningSignature, RedactedReasoning: m.RedactedReasoning, Time: now})
			}
			if len(m.ToolCalls) > 0 {
				out = append(out, Entry{Kind: EntryToolCalls, ToolCalls: m.ToolCalls, Time: now})
			}
		case llm.RoleTool:
			out = append(out, Entry{Kind: EntryToolOutput, ToolCallID: m.ToolCallID, ToolName: m.ToolName, IsError: m.IsError,
				Text: llm.Message{Content: m.Content}.Text(), Time: now})
		}
	}
	j := len(old) - 1
	for i := len(out) - 1; i >= 0 && j >= 0; i-- {
		e := &out[i]
		for k := j; k >= 0; k-- {
			if survives(old[k], e) {
				o := old[k]
				e.Time, e.Source, e.Display = o.Time, o.Source, o.Display
				j = k - 1
				break
			}
		}
	}
	return out
}

// SourceSummary is the Source of the user entry holding a compaction's
// summary ("[Compressed History]"): not a message the user wrote, so it
// is neither forkable nor counted as a user message.
const SourceSummary = "compaction_summary"

// survives reports whether e, rebuilt from a rewritten conversation, is
// the old entry o (a tool output's text may have been offloaded).
func survives(o *Entry, e *Entry) bool {
	if o.Kind != e.Kind {
		return false
	}
	switch e.Kind {
	case EntryUser:
		return partsText(o.Content) == partsText(e.Content) && len(o.Content) == len(e.Content)
	case EntryAssistant:
		return partsText(o.Content) == partsText(e.Content) && o.Reasoning == e.Reasoning
	case EntryToolCalls:
		return slices.Equal(o.ToolCalls, e.ToolCalls)
	case EntryToolOutput:
		return o.ToolCallID == e.ToolCallID && o.ToolName == e.ToolName
	}
	return false
}

// replaceHistory installs a rewritten conversation and rewrites the
// session file atomically to match it (state records first, then the
// entries), so a crash leaves either the old file or the new one.
func (s *Session) replaceHistory(msgs []llm.Message) {
	s.mu.Lock()
	s.installLocked(entriesFromMessages(msgs, s.tr.entries))
	s.mu.Unlock()
	s.rewriteFile()
}

// installLocked makes entries the transcript (s.mu held); the caller then
// rewrites the file.
func (s *Session) installLocked(entries []Entry) {
	var tr transcript
	for _, e := range entries {
		tr.append(e)
	}
	s.tr = tr
	s.hist.reportedAt = 0
	s.sys = nil // the conversation's start changed: the system prompt is built again
}

// rewriteFile replaces the session file with the session as it is now:
// its state records, then its entries.
func (s *Session) rewriteFile() {
	j := s.cfg.Journal
	if j == nil {
		return
	}
	s.mu.Lock()
	plan := s.lastPlan
	s.mu.Unlock()
	model := s.CurrentModel()
	j.Rewrite(JournalState{Mode: s.Mode(), Model: model.ID, ThoughtLevel: model.ReasoningEffort,
		Decisions: s.perms.rememberedHistory(), Plan: plan, Usage: s.usageSnapshot()}, s.Transcript())
}

// replaceToolTexts installs offloaded tool results: only the texts of
// tool outputs change, so the entries keep everything else (times,
// sources, displays) and are replaced in place; the file is rewritten.
// msgs is the transcript's conversation with some tool texts replaced:
// its k-th tool message is the k-th tool output entry (by position, as
// tool-call ids repeat across responses with some providers).
func (s *Session) replaceToolTexts(msgs []llm.Message) {
	var texts []string
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			texts = append(texts, llm.Message{Content: m.Content}.Text())
		}
	}
	s.mu.Lock()
	k := 0
	for _, e := range s.tr.entries {
		if e.Kind == EntryToolOutput {
			k++
		}
	}
	if k != len(texts) {
		s.mu.Unlock()
		s.log.Warn("offload result does not match the history; not installed", "outputs", k, "results", len(texts))
		return
	}
	k = 0
	for i, e := range s.tr.entries {
		if e.Kind != EntryToolOutput {
			continue
		}
		if t := texts[k]; t != e.Text {
			c := *e // entries are shared with forks: copy, never mutate
			c.Text = t
			s.tr.entries[i] = &c
		}
		k++
	}
	s.mu.Unlock()
	s.rewriteFile()
}

// sanitizeHistory repairs a conversation that providers would refuse
// (tool calls without results after a turn was killed, arguments that are
// not JSON objects, orphaned results). It runs after a load and before
// each turn; not between the steps of a turn, where it would hide a bad
// tool call's error result from the model.
func (s *Session) sanitizeHistory() {
	s.mu.Lock()
	msgs := s.tr.messages()
	s.mu.Unlock()
	if out, changed := compact.Sanitize(msgs); changed {
		s.log.Warn("repaired the conversation history (unanswered or malformed tool calls were dropped)",
			"before", len(msgs), "after", len(out))
		s.replaceHistory(out)
	}
}

func (s *Session) offloader() *compact.Offloader {
	h := s.cfg.History
	if h.Disabled || h.OffloadDir == "" {
		return nil
	}
	o := compact.NewOffloader(h.OffloadDir)
	o.Threshold = s.contextThreshold()
	return o
}

func (s *Session) contextThreshold() int {
	if t := s.cfg.History.OffloadThreshold; t > 0 {
		return t
	}
	if info := s.CurrentModel().Info; info != nil && info.ContextWindow() > 0 {
		return info.ContextWindow() * 3 / 4
	}
	return 150_000
}

// contextTokensLocked is the context size of the next request, whose
// conversation is msgs: the last reported size plus an estimate for what
// was added since, or an estimate of msgs without a report.
func (s *Session) contextTokensLocked(msgs []llm.Message) int {
	if s.hist.reported == 0 || s.hist.reportedAt > len(s.tr.entries) {
		return compact.EstimateTokens(msgs)
	}
	since := transcript{entries: s.tr.entries[s.hist.reportedAt:]}
	return compact.ContextSize(s.hist.reported, since.messages())
}

// compactMode is why the history is being kept within the context.
type compactMode int

const (
	// compactAuto: before a model request; offload, then compact when
	// over the threshold (and cooled down).
	compactAuto compactMode = iota
	// compactForced: /compact; compacts now.
	compactForced
	// compactOverflow: the provider refused the prompt as too long;
	// everything but the user's own messages goes into the summary.
	compactOverflow
)

// DefaultUserMessageTokens is how much of the user's own messages a
// compaction keeps verbatim in the summary message.
const DefaultUserMessageTokens = 8_000

// DefaultKeepTokens is the most a compaction keeps of the newest
// messages verbatim (also never more than a third of the history).
const DefaultKeepTokens = 20_000

// keepWithinContext runs before each model request: offload long tool
// results when the context is over the threshold, then compact when that
// was not enough (seed 003). Failures are logged; the request goes on
// with the history it has.
func (s *Session) keepWithinContext(ctx context.Context, mode compactMode) error {
	if s.cfg.History.Disabled {
		return nil
	}
	forced := mode != compactAuto
	s.mu.Lock()
	s.hist.compaction.Advance()
	msgs := s.tr.messages()
	tokens := s.contextTokensLocked(msgs)
	s.mu.Unlock()
	var off compact.OffloadResult
	if o := s.offloader(); o != nil && !forced {
		var err error
		off, err = o.OffloadIfNeeded(msgs, tokens)
		if err != nil {
			s.log.Warn("offloading tool results", "error", err)
		}
		if off.OffloadedCount > 0 {
			s.log.Info("offloaded tool results", "count", off.OffloadedCount, "freedTokens", off.FreedTokens)
			s.replaceToolTexts(off.Messages)
		}
	} else {
		threshold := s.contextThreshold()
		off = compact.OffloadResult{Messages: msgs, PreviousTokens: tokens, CurrentTokens: tokens, StillExceedsThreshold: tokens >= threshold}
	}
	c := s.compactor(mode, off.Messages)
	s.mu.Lock()
	st := s.hist.compaction
	s.mu.Unlock()
	if !forced && !c.ShouldCompact(st, off) {
		return nil
	}
	id := uuid.NewString()
	// A history with nothing to summarize (a /compact of a short
	// conversation) starts no compaction the client would see fail.
	shown := c.CanCompact(off.Messages)
	if shown {
		s.compactionUpdate(ctx, id, CompactionInProgress, "", "")
	}
	res, _, err := c.CompactIfNeeded(ctx, &st, off, forced)
	s.mu.Lock()
	s.hist.compaction = st
	s.mu.Unlock()
	if err != nil {
		if errors.Is(err, compact.ErrNothingToCompact) {
			// Not a failure anyone must see on stderr either (/compact
			// says so itself).
			s.log.Info("nothing to compact; the history is kept as it was")
		} else {
			s.log.Warn("compaction failed; the history is kept as it was", "error", err)
		}
		if shown {
			s.compactionUpdate(ctx, id, CompactionFailed, "", err.Error())
		}
		return err
	}
	s.replaceHistory(res.Messages)
	if o := s.offloader(); o != nil {
		if _, err := o.Cleanup(res.Messages); err != nil {
			s.log.Warn("removing offloaded files", "error", err)
		}
	}
	s.log.Info("compacted the history", "summarized", res.SummarizedCount, "kept", res.KeptCount, "freedTokens", res.FreedTokens)
	s.compactionUpdate(ctx, id, CompactionCompleted, res.Summary, "")
	if !forced && !s.cfg.CompactionUpdates {
		// A client that shows no compactions would otherwise never learn
		// that the model now sees only a summary of the older messages
		// (/compact answers for itself). A notice, or a note in the chat
		// where the client shows no notices.
		s.update(ctx, Update{Kind: UpdateNotice, Notice: &Notice{Severity: "info", Title: "The conversation was compacted",
			Description: Count(res.SummarizedCount, "older message was", "older messages were") +
				" summarized to stay within the model's context window; /rewind reaches back only to the messages since"}})
	}
	s.contextUsage(ctx, res.CurrentTokens)
	return nil
}

// compactor is the compactor for mode on the history msgs: the newest
// messages kept verbatim are sized in tokens (none when the provider said
// the prompt is too long), the user's own messages are kept in the
// summary, and the summary request is bounded by the context threshold.
func (s *Session) compactor(mode compactMode, msgs []llm.Message) *compact.Compactor {
	c := compact.NewCompactor(s.summarize, s.offloader())
	c.KeepLast = 0
	c.KeepTokens = min(DefaultKeepTokens, compact.EstimateTokens(msgs)/3)
	if mode == compactOverflow || c.KeepTokens <= 0 {
		c.KeepTokens = 0
	}
	c.UserTokens = DefaultUserMessageTokens
	c.MaxInputTokens = s.contextThreshold()
	return c
}

// contextUsage tells the client the context's new size after the history
// shrank (usage_update keeps used and size current).
func (s *Session) contextUsage(ctx context.Context, used int) {
	info := s.CurrentModel().Info
	if info == nil || info.ContextWindow() <= 0 {
		return
	}
	u := &ContextUsage{Used: uint64(max(used, 0)), Size: uint64(info.ContextWindow())}
	s.mu.Lock()
	if s.cost > 0 {
		u.Cost = &Cost{Amount: s.cost, Currency: info.Currency}
	}
	s.hist.shown = u.Used
	s.mu.Unlock()
	s.update(ctx, Update{Kind: UpdateUsage, Usage: u})
	s.journalUsage(UsageRecord{Used: u.Used})
}

// resizeAfterTurn applies the resize policy, if any, after a turn.
func (s *Session) resizeAfterTurn(ctx context.Context) {
	r := s.cfg.History.Resize
	if r == nil || s.cfg.History.Disabled {
		return
	}
	s.mu.Lock()
	s.hist.turnsSinceResize++
	turns := s.hist.turnsSinceResize
	msgs := s.tr.messages()
	s.mu.Unlock()
	rz := *r
	if rz.Deep == nil {
		rz.Deep = s.compactor(compactAuto, msgs).Deep()
	}
	out, d, err := rz.Resize(ctx, msgs, turns)
	switch {
	case err != nil:
		s.log.Warn("resizing the history failed; it is kept", "decision", d.Kind, "reason", d.Reason, "error", err)
	case d.Kind != compact.KindNone && reflect.DeepEqual(out, msgs):
		// Nothing changed (a deep resize of a history too short to
		// summarize): the file is not rewritten.
		s.mu.Lock()
		s.hist.turnsSinceResize = 0
		s.mu.Unlock()
	case d.Kind != compact.KindNone:
		s.log.Info("resized the history", "decision", d.Kind, "reason", d.Reason, "before", len(msgs), "after", len(out))
		s.replaceHistory(out)
		s.mu.Lock()
		s.hist.turnsSinceResize = 0
		s.mu.Unlock()
		s.contextUsage(ctx, compact.EstimateTokens(out))
	}
}

// summarize asks the session's model for a compaction summary.
func (s *Session) summarize(ctx context.Context, prompt []llm.Message) (string, error) {
	model := s.CurrentModel()
	req := &llm.Request{Model: model.Name, Messages: prompt}
	if len(prompt) > 0 && prompt[0].Role == llm.RoleSystem {
		req.System, req.Messages = prompt[0].Text(), prompt[1:]
	}
	var b strings.Builder
	for ev, err := range model.Model.Stream(ctx, req) {
		if err != nil {
			return "", err
		}
		if ev.Kind == llm.EventTextDelta {
			b.WriteString(ev.Text)
		}
	}
	return b.String(), nil
}

// compactionUpdate tells clients that support it about a compaction
// (SDK 2.4.0 compaction_update and compaction_summary_chunk); others get
// nothing new on the wire.
func (s *Session) compactionUpdate(ctx context.Context, id string, st CompactionStatus, summary, errText string) {
	if !s.cfg.CompactionUpdates {
		return
	}
	if summary != "" {
		s.update(ctx, Update{Kind: UpdateCompactionSummary, Compaction: &Compaction{ID: id, Summary: summary}})
	}
	s.update(ctx, Update{Kind: UpdateCompaction, Compaction: &Compaction{ID: id, Status: st, Error: errText}})
}

// Compact compacts the history now (/compact): offloaded results are
// restored, older messages summarised by the model, the file rewritten.
func (s *Session) Compact(ctx context.Context) error {
	err := s.keepWithinContext(ctx, compactForced)
	if errors.Is(err, compact.ErrNothingToCompact) {
		return errors.New("nothing to compact, the conversation is too short")
	}
	return err
}

// CostReport is the session's usage and cost line (/cost, seed 003).
func (s *Session) CostReport() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hist.usage.FormatCostOutput()
}
