package acpv2agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// v2Session adapts a host.Session to acp.SessionV2.
//
// A prompt is inserted into the conversation when the session is idle:
// running, its user_message, its answer (the message's id), then its
// turn. A prompt that comes while a turn runs is held, and inserted when
// that turn has ended, in the order held; session/cancel, session/close
// and $/cancel_request withdraw held prompts (their ctx ends).
type v2Session struct {
	hs  *host.Session
	s   *agent.Session // hs.Core()
	a   *Agent
	cl  *v2Client
	log *slog.Logger

	mu sync.Mutex
	// busy: a prompt the session inserted has not ended yet.
	busy   bool
	held   []*heldPrompt
	closed bool
}

// heldPrompt is a prompt waiting for the running turn to end.
type heldPrompt struct {
	ctx      context.Context
	insert   *insertion
	inserted func(acpv2.MessageId, error)
	stop     func() bool // stops the withdrawal on ctx
}

// insertion is a prompt ready to insert: the model's content, and the
// command that runs in its place (or nil).
type insertion struct {
	prompt  []acpv2.ContentBlock
	content []llm.Part
	command *host.Command
	args    string
	typed   string // a file command's line, which titles the session
}

var (
	_ acp.SessionV2             = (*v2Session)(nil)
	_ acp.ConfigurableSessionV2 = (*v2Session)(nil)
)

// wrap adapts hs for its connection.
func (a *Agent) wrap(hs *host.Session, cl *v2Client) *v2Session {
	s := &v2Session{hs: hs, s: hs.Core(), a: a, cl: cl, log: a.log.With("session", hs.ID())}
	cl.turnEnded = s.turnEnded
	return s
}

// Prompt implements acp.SessionV2.
func (s *v2Session) Prompt(ctx context.Context, req *acpv2.PromptRequest, inserted func(acpv2.MessageId, error)) error {
	in, err := s.prepare(req.Prompt)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return acp.SessionNotFound(s.hs.ID(), "it is closed")
	}
	if s.busy || s.cl.foreground() {
		h := &heldPrompt{ctx: ctx, insert: in, inserted: inserted}
		s.held = append(s.held, h)
		h.stop = context.AfterFunc(ctx, func() { s.withdraw(h) })
		s.mu.Unlock()
		return nil
	}
	s.busy = true
	s.mu.Unlock()
	s.insert(in, inserted)
	return nil
}

// prepare checks a prompt before anything is sent: its content, and the
// slash command it starts with.
func (s *v2Session) prepare(prompt []acpv2.ContentBlock) (*insertion, error) {
	content, err := userContent(prompt)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
	}
	in := &insertion{prompt: prompt, content: content}
	var first string
	if content[0].Type == llm.PartText {
		first = content[0].Text
	}
	c, args := s.hs.PromptCommand(first)
	switch {
	case c != nil && c.Runs():
		in.command, in.args = c, args
	case c != nil:
		text, err := c.Expand(args)
		if err != nil {
			return nil, fmt.Errorf("%w: /%s: %v", acp.ErrInvalidParams, c.Name, err)
		}
		// The command's prompt replaces the first block ("/name args"),
		// which titles the session.
		in.content = append([]llm.Part{llm.TextPart(text)}, content[1:]...)
		in.typed = first
	}
	return in, nil
}

// insert sends running and the user message, answers the prompt with the
// message's id and submits its turn. The id is new, and stored with the
// message (host.Session.SubmitMessage), so a replay sends it with the
// same id; a command that runs in a prompt's place adds no message, and
// gets an id of its own.
func (s *v2Session) insert(in *insertion, inserted func(acpv2.MessageId, error)) {
	id := "user-" + uuid.NewString()
	if in.command != nil {
		id = "command-" + uuid.NewString()
	}
	if su, ok := s.cl.enter(stateRunning, false); ok {
		s.cl.post(su)
	}
	s.cl.post(acpv2.SessionUpdate{UserMessage: &acpv2.UserMessage{MessageID: id, Content: acpv2.Some(in.prompt)}})
	// Answered before the turn is submitted, so that the answer comes
	// before the turn's work; the session's read-loop checks (content,
	// command) have passed, and what can still fail (the session closed
	// meanwhile) ends the turn with an error.
	inserted(id, nil)
	// The work is the session's, not the request's: it ends with
	// session/cancel or session/close.
	var err error
	if in.command != nil {
		err = s.hs.RunCommand(context.Background(), in.command, in.args, s.completed)
	} else {
		err = s.hs.SubmitCommand(context.Background(), id, in.typed, in.content, s.completed)
	}
	if err != nil {
		s.cl.setStop(&acpv2.IdleStateUpdate{StopReason: acpv2.StopReasonError,
			Error: &acpv2.Error{Code: acpv2.ErrorCodeInternalError, Message: acpagent.WireError(err).Error()}})
		s.cl.post(s.cl.idleUpdate(nil))
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
	}
}

// completed is a submitted turn's completion, on the session's worker
// before the turn's end update: it gives that update its stop reason.
func (s *v2Session) completed(res agent.PromptResult, err error) {
	idle := &acpv2.IdleStateUpdate{StopReason: acpv2.StopReason(res.StopReason)}
	switch {
	case err == nil:
		if idle.StopReason == "" {
			idle.StopReason = acpv2.StopReasonEndTurn
		}
	case errors.Is(err, context.Canceled) || errors.Is(err, agent.ErrSessionClosed):
		idle.StopReason = acpv2.StopReasonCancelled
	case llm.IsAuthFailure(err):
		// As v1 answers: the editor offers to log in.
		idle.StopReason, idle.Error = acpv2.StopReasonError, &acpv2.Error{Code: acpv2.ErrorCodeAuthRequired,
			Message: fmt.Sprintf("authentication required: model %s: %v (%s)", s.s.CurrentModel().Name, err, s.hs.KeyAdvice())}
	default:
		msg := err.Error()
		if !errors.Is(err, agent.ErrPromptTimedOut) && !errors.Is(err, agent.ErrNotSaved) {
			msg = fmt.Sprintf("model %s: %v", s.s.CurrentModel().Name, err)
		}
		idle.StopReason, idle.Error = acpv2.StopReasonError, &acpv2.Error{Code: acpv2.ErrorCodeInternalError, Message: msg}
	}
	s.cl.setStop(idle)
}

// turnEnded is called by the client when a turn has ended (its idle
// update queued): the first held prompt still wanted is inserted.
func (s *v2Session) turnEnded() {
	s.mu.Lock()
	s.busy = false
	var next *heldPrompt
	var gone []*heldPrompt // their ctx ended as they were taken
	for len(s.held) > 0 && next == nil && !s.closed {
		h := s.held[0]
		s.held = s.held[1:]
		if h.stop() {
			next = h
		} else {
			gone = append(gone, h) // withdraw no longer finds it
		}
	}
	if next != nil {
		s.busy = true
	}
	s.mu.Unlock()
	for _, h := range gone {
		h.inserted("", context.Cause(h.ctx))
	}
	if next != nil {
		s.insert(next.insert, next.inserted)
	}
}

// withdraw drops a held prompt whose ctx ended and answers it so.
func (s *v2Session) withdraw(h *heldPrompt) {
	s.mu.Lock()
	found := false
	for i, x := range s.held {
		if x == h {
			s.held = append(s.held[:i:i], s.held[i+1:]...)
			found = true
			break
		}
	}
	s.mu.Unlock()
	if found {
		h.inserted("", context.Cause(h.ctx))
	}
}

// foreground reports whether a turn runs (one the session did not
// submit, such as a follow-up an extension method queued, included).
func (c *v2Client) foreground() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state != stateIdle
}

// Cancel implements acp.SessionV2: the running turn stops (its idle
// update says cancelled); the server has withdrawn the held prompts.
func (s *v2Session) Cancel() { s.s.CancelActivePrompt() }

// Close implements acp.SessionV2: the session ends, with its subagents
// and MCP connections (host.Session.Close).
func (s *v2Session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.hs.Close()
}

// SetConfigOption implements acp.ConfigurableSessionV2: the "mode",
// "model" and "thought_level" options, which take value ids.
func (s *v2Session) SetConfigOption(_ context.Context, req *acpv2.SetSessionConfigOptionRequest) ([]acpv2.SessionConfigOption, error) {
	value, ok := req.ValueID()
	if !ok {
		return nil, fmt.Errorf("%w: value: option %q takes a value id (type \"id\")", acp.ErrInvalidParams, req.ConfigID)
	}
	opts, err := s.hs.SetOption(req.ConfigID, value)
	if err != nil {
		return nil, acpagent.WireError(err)
	}
	return configOptions(opts), nil
}

var (
	_ acp.ToolCallCancellerV2 = (*v2Session)(nil)
	_ acp.TerminalCancellerV2 = (*v2Session)(nil)
)

// CancelToolCall implements acp.ToolCallCancellerV2: one running tool
// call stops and the turn goes on, the model told the user cancelled it
// (agent.Session.CancelToolCall); its final tool_call_update says
// "cancelled".
func (s *v2Session) CancelToolCall(_ context.Context, id acpv2.ToolCallId) error {
	err := s.cl.cancelToolCall(id, s.s.CancelToolCall)
	if errors.Is(err, agent.ErrToolCallNotRunning) {
		return fmt.Errorf("%w: toolCallId: %q is not a running tool call of this session (unknown, waiting for permission, or finished)", acp.ErrInvalidParams, id)
	}
	return err
}

// CancelTerminal implements acp.TerminalCancellerV2: the command of one
// of the session's display-only terminals is killed; its tool call goes
// on with what the command printed.
func (s *v2Session) CancelTerminal(_ context.Context, id acpv2.TerminalId) error {
	return s.cl.terms.cancel(id)
}
