package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/mcpclient"
	"github.com/acp-agent/acp-agent/agent/tools"
)

// Session is a live session of the host: the core session (Core) with
// what the host keeps beside it: its Client, its journal, its
// additional directories, its file history, its MCP connections and its
// subagents.
type Session struct {
	s     *agent.Session
	h     *Host
	c     Client
	j     *journal         // nil when sessions are not stored
	extra []string         // the additional directories it was opened with
	ws    *tools.Workspace // its built-in tools' workspace; nil without
	cp    *checkpoints     // its file history; nil when sessions are not stored
	log   *slog.Logger
	// plans are the plans a loaded session's file holds, placed, for
	// its history.
	plans []placedPlan
	// clientPrompt is the client's system prompt of the session (its
	// subagents and forks get it too).
	clientPrompt agent.ClientPrompt
	// routes are the model endpoints its client chose (nil: none).
	routes *Routes

	mu         sync.Mutex
	mcp        *mcpclient.Manager
	mcpServers []MCPServer
	children   []childRef    // its subagents, closed with it
	subSem     chan struct{} // bounds its running subagents
}

// ID is the session's id.
func (s *Session) ID() string { return s.s.ID() }

// Core is the session core, for what the host adds nothing to (queued
// messages, stats, tools, events, cancel).
func (s *Session) Core() *agent.Session { return s.s }

// AdditionalDirectories are the directories the session was opened
// with beside its working directory.
func (s *Session) AdditionalDirectories() []string { return s.extra }

// post queues an update without waiting, in order with the session's own
// updates.
func (s *Session) post(u agent.Update) {
	if err := s.c.Post(u); err != nil {
		s.log.Debug("sending update", "error", err)
	}
}

// Submit queues a prompt: it runs when the session is idle, after what
// is queued (a follow-up), and onComplete is called with its result by
// the session's worker after its last update. The first prompt saves
// the session (until then it is nobody's): its file is created, with the
// title taken from the message, by the session's worker when it records
// the message, beside the model call and before any of its answer is
// shown. Not here: the caller is the
// connection's read loop, and 200 sessions' first prompts would wait for
// each other's fsyncs on it; a file that cannot be created fails the
// prompt then.
func (s *Session) Submit(ctx context.Context, content []llm.Part, onComplete func(agent.PromptResult, error)) error {
	return s.SubmitMessage(ctx, "", content, onComplete)
}

// SubmitMessage is Submit for a user message whose id the client was
// given already (agent.PromptOptions.MessageID): the id is stored with
// it.
func (s *Session) SubmitMessage(ctx context.Context, id string, content []llm.Part, onComplete func(agent.PromptResult, error)) error {
	return s.SubmitCommand(ctx, id, "", content, onComplete)
}

// SubmitCommand is SubmitMessage for the prompt a command defined in a
// file expanded to: typed, the command as the user typed it, titles an
// untitled session, not the expansion (every "/review" would be titled
// with the command's template).
func (s *Session) SubmitCommand(ctx context.Context, id, typed string, content []llm.Part, onComplete func(agent.PromptResult, error)) error {
	err := s.s.Submit(ctx, content, agent.PromptOptions{Behavior: agent.FollowUp, OnComplete: onComplete, MessageID: id, Title: typed})
	if errors.Is(err, agent.ErrSessionClosed) {
		return sessionNotFound(s.ID(), "it is closed")
	}
	return err
}

// Prompt is Submit for a user's prompt: a slash command at its start
// ("/name args" in the first part) runs in the prompt's place, or
// (a command or skill defined in a file) its prompt replaces the first
// part. The commands are told again if their files changed
// (PromptCommand).
func (s *Session) Prompt(ctx context.Context, content []llm.Part, onComplete func(agent.PromptResult, error)) error {
	var first string
	if len(content) > 0 && content[0].Type == llm.PartText {
		first = content[0].Text
	}
	c, args := s.PromptCommand(first)
	if c != nil && c.Runs() {
		return s.RunCommand(ctx, c, args, onComplete)
	}
	if c != nil {
		text, err := c.Expand(args)
		if err != nil {
			return fmt.Errorf("%w: /%s: %v", ErrInvalidParams, c.Name, err)
		}
		content = append([]llm.Part{llm.TextPart(text)}, content[1:]...)
		return s.SubmitCommand(ctx, "", first, content, onComplete)
	}
	return s.Submit(ctx, content, onComplete)
}

// Close ends the session: its subagents, the session, its MCP
// connections; a stored one keeps only what its file history still
// names, an unsaved one leaves nothing behind.
func (s *Session) Close() error {
	s.h.forget(s.s.ID())
	s.closeChildren()
	err := s.s.Close()
	s.closeMCP()
	if s.cp != nil {
		// No command runs now: the workspace's contents kept for commands
		// that ended are dropped.
		var kept *tools.KeptScan
		if s.ws != nil {
			kept = s.ws.KeptScan()
		}
		if cerr := s.cp.compact(kept); cerr != nil {
			s.log.Warn("compacting the file checkpoints", "error", cerr)
		}
		s.cp.store.Close()
	}
	if s.j != nil && !s.j.saved() && s.h.store != nil {
		// Never saved: its directory (checkpoints, offloaded results)
		// goes with it.
		if rerr := os.RemoveAll(filepath.Join(s.h.store.Dir(), s.s.ID())); rerr != nil {
			s.log.Warn("removing an unsaved session's directory", "error", rerr)
		}
	}
	return err
}

// HistoryItem is one thing the conversation of a session showed: an entry
// (a user message, an assistant message, or a tool output, which is its
// tool call as it ended) or a plan. Exactly one is set.
type HistoryItem struct {
	Entry *agent.Entry
	Plan  *agent.Plan
}

// History is the conversation as it was shown, in the order it came, for
// a client that opens a stored session: user and assistant messages,
// every tool call with its final state, and each plan where it was sent
// (after the tool call that made it).
func (s *Session) History() []HistoryItem {
	var out []HistoryItem
	b := historyBuilder{plans: s.plans, emit: func(it HistoryItem) { out = append(out, it) }}
	entries := s.s.Transcript()
	for i := range entries {
		b.add(&entries[i])
	}
	if s.plans == nil {
		// No plan records placed (a session restored another way): the
		// last plan, at the end.
		if plan := s.s.Plan(); plan != nil {
			out = append(out, HistoryItem{Plan: plan})
		}
		return out
	}
	b.placeAll()
	return out
}
