package acpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// acpSession adapts a host.Session to acp.Session and serves the
// acp-agent extension methods (docs/extensions.md) for its connection.
type acpSession struct {
	hs   *host.Session
	s    *agent.Session // hs.Core()
	a    *Agent
	conn *acp.ClientConn
	log  *slog.Logger
}

var (
	_ acp.Session             = (*acpSession)(nil)
	_ acp.ExtensionSession    = (*acpSession)(nil)
	_ acp.ConfigurableSession = (*acpSession)(nil)
	_ acp.ModalSession        = (*acpSession)(nil)
)

// wrap adapts hs for its connection.
func (a *Agent) wrap(hs *host.Session, conn *acp.ClientConn) *acpSession {
	return &acpSession{hs: hs, s: hs.Core(), a: a, conn: conn, log: a.log.With("session", hs.ID())}
}

// send sends an update only ACP has (a structured-output chunk with its
// _meta) from the session's worker, in order with the session's updates.
func (a *acpSession) send(ctx context.Context, u acp.SessionUpdate) {
	if err := a.conn.Update(ctx, u); err != nil && ctx.Err() == nil {
		a.log.Debug("sending update", "error", err)
	}
}

// SetMode implements acp.ModalSession: the client is told the mode and
// the options (acpClient.ModeChanged, OptionsChanged).
func (a *acpSession) SetMode(_ context.Context, mode acp.SessionModeId) error {
	return wireError(a.hs.SetMode(string(mode)))
}

// SetConfigOption implements acp.ConfigurableSession: the "mode", "model"
// and "thought_level" options.
func (a *acpSession) SetConfigOption(_ context.Context, req *acp.SetSessionConfigOptionRequest) ([]acp.SessionConfigOption, error) {
	if req.Value.ValueID == nil {
		return nil, fmt.Errorf("%w: value: option %q takes a value id, not a boolean", acp.ErrInvalidParams, req.ConfigID)
	}
	opts, err := a.hs.SetOption(string(req.ConfigID), string(*req.Value.ValueID))
	if err != nil {
		return nil, wireError(err)
	}
	return configOptions(opts), nil
}

// Prompt implements acp.Session: it queues the prompt and returns. A
// prompt that arrives while the session is busy is queued as a follow-up
// and answered when it has run. A slash command runs in its place.
func (a *acpSession) Prompt(ctx context.Context, req *acp.PromptRequest, finish func(*acp.PromptResponse, error)) error {
	var first string
	if len(req.Prompt) > 0 && req.Prompt[0].Text != nil {
		first = req.Prompt[0].Text.Text
	}
	c, args := a.hs.PromptCommand(first)
	if c != nil && c.Runs() {
		return a.hs.RunCommand(ctx, c, args, func(res agent.PromptResult, err error) {
			if err != nil {
				finish(&acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil)
				return
			}
			finish(&acp.PromptResponse{StopReason: acp.StopReason(res.StopReason)}, nil)
		})
	}
	content, err := userContent(req.Prompt)
	if err != nil {
		return fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
	}
	var typed string // a command's line titles the session, not its prompt
	if c != nil {
		typed = first
		text, err := c.Expand(args)
		if err != nil {
			return fmt.Errorf("%w: /%s: %v", acp.ErrInvalidParams, c.Name, err)
		}
		// The command's prompt replaces the first block ("/name args");
		// anything else the user attached goes with it.
		content = append([]llm.Part{llm.TextPart(text)}, content[1:]...)
	}
	err = a.hs.SubmitCommand(ctx, "", typed, content, func(res agent.PromptResult, err error) {
		switch {
		case err == nil:
			finish(&acp.PromptResponse{StopReason: acp.StopReason(res.StopReason), Usage: promptUsage(res.Usage)}, nil)
		case errors.Is(err, agent.ErrPromptTimedOut):
			finish(nil, fmt.Errorf("%w: %v", acp.ErrInternal, err))
		case errors.Is(err, context.Canceled) || errors.Is(err, agent.ErrSessionClosed):
			finish(&acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil)
		case errors.Is(err, agent.ErrNotSaved):
			// The storage's failure (a full disk), not the model's.
			finish(nil, fmt.Errorf("%w: %v", acp.ErrInternal, err))
		case llm.IsAuthFailure(err):
			// A wrong or revoked key: auth_required, so the editor offers
			// to log in instead of showing an internal error.
			finish(nil, fmt.Errorf("%w: model %s: %v (%s)", acp.ErrAuthRequired, a.s.CurrentModel().Name, err, a.hs.KeyAdvice()))
		default:
			finish(nil, fmt.Errorf("%w: model %s: %v", acp.ErrInternal, a.s.CurrentModel().Name, err))
		}
	})
	return wireError(err)
}

// promptUsage is the turn's token usage for PromptResponse.usage (an
// unstable ACP field; clients that do not know it ignore it, and the
// stable schema allows it). Nil when the provider reported none.
func promptUsage(u llm.Usage) *acp.Usage {
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return nil
	}
	out := &acp.Usage{
		InputTokens:  uint64(max(u.InputTokens, 0)),
		OutputTokens: uint64(max(u.OutputTokens, 0)),
	}
	out.TotalTokens = out.InputTokens + out.OutputTokens
	opt := func(n int64) *uint64 {
		if n <= 0 {
			return nil
		}
		v := uint64(n)
		return &v
	}
	out.ThoughtTokens = opt(u.ReasoningTokens)
	out.CachedReadTokens = opt(u.CachedReadTokens)
	out.CachedWriteTokens = opt(u.CachedWriteTokens)
	return out
}

// Cancel implements acp.Session: session/cancel stops the running turn
// and fails what is queued.
func (a *acpSession) Cancel() { a.s.CancelActivePrompt() }

// Close implements acp.Session: the session ends, with its subagents and
// MCP connections (host.Session.Close).
func (a *acpSession) Close() error { return a.hs.Close() }

// extParams are the params of the extension methods that carry a prompt.
type extParams struct {
	SessionID string             `json:"sessionId"`
	Prompt    []acp.ContentBlock `json:"prompt"`
}

// Extension implements acp.ExtensionSession.
func (a *acpSession) Extension(ctx context.Context, method string, raw json.RawMessage) (any, error) {
	switch method {
	case acp.MethodExtStructured:
		return a.structuredExtension(ctx, raw)
	case acp.MethodSessionSteering, acp.MethodExtSessionSteer, acp.MethodExtSessionFollowUp:
	default:
		return SessionExtension(ctx, a.hs, method, raw)
	}
	var p extParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
	}
	if method == acp.MethodSessionSteering {
		return Steering(a.s, raw, func() ([]llm.Part, error) {
			if len(p.Prompt) == 0 {
				return nil, fmt.Errorf("%w: prompt: required, with at least one content block", acp.ErrInvalidParams)
			}
			content, err := userContent(p.Prompt)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
			}
			return content, nil
		})
	}
	content, err := userContent(p.Prompt)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
	}
	return Queue(a.s, method, content)
}

// Queue serves _acp-agent/session/steer and follow_up (method) with the
// prompt's content, for either protocol version.
func Queue(s *agent.Session, method string, content []llm.Part) (any, error) {
	source := agent.SourceFollowUp
	if method == acp.MethodExtSessionSteer {
		source = agent.SourceSteer
	}
	if err := s.Queue(source, content); err != nil {
		return nil, err
	}
	return map[string]any{"pendingMessages": s.PendingMessageCount()}, nil
}

// sessionExtParams are the params of the extension methods that carry no
// content.
type sessionExtParams struct {
	MaxLength       *int `json:"maxLength"` // absent: DefaultPreviewLength
	IncludeResolved bool `json:"includeResolved"`
	CancelActive    bool `json:"cancelActivePrompt"`
}

// SessionExtension serves the extension methods that carry no content
// blocks, the same for either protocol version: rewind, pending, stats,
// tools, events, forkable messages and clear_pending. Any other method is
// -32601.
func SessionExtension(ctx context.Context, hs *host.Session, method string, raw json.RawMessage) (any, error) {
	if method == acp.MethodExtSessionRewind {
		var p host.RewindRequest
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
		}
		res, err := hs.Rewind(ctx, p)
		if _, ok := errors.AsType[*host.NotAUserMessageError](err); ok {
			err = fmt.Errorf("%w (see %s)", err, acp.MethodExtSessionForkable)
		}
		if err != nil {
			return nil, wireError(err)
		}
		return res, nil
	}
	var p sessionExtParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
	}
	s := hs.Core()
	switch method {
	case acp.MethodExtSessionPending:
		maxLength := agent.DefaultPreviewLength
		if p.MaxLength != nil {
			maxLength = *p.MaxLength
		}
		msgs := s.PendingMessages(maxLength, p.IncludeResolved)
		if msgs == nil {
			msgs = []agent.PendingMessage{}
		}
		return map[string]any{"messages": msgs, "count": s.PendingMessageCount()}, nil
	case acp.MethodExtSessionStats:
		return s.Stats(), nil
	case acp.MethodExtSessionTools:
		tools := s.ToolDescriptors()
		active := s.ActiveToolNames()
		if active == nil {
			active = []string{}
		}
		return map[string]any{"tools": tools, "activeToolNames": active}, nil
	case acp.MethodExtSessionEvents:
		ev := s.Events()
		if ev == nil {
			ev = []agent.Event{}
		}
		return map[string]any{"events": ev}, nil
	case acp.MethodExtSessionForkable:
		msgs := s.ForkableUserMessages()
		if msgs == nil {
			msgs = []agent.ForkableMessage{}
		}
		return map[string]any{"messages": msgs}, nil
	case acp.MethodExtSessionClearPending:
		return s.ClearPendingState(p.CancelActive), nil
	}
	return nil, fmt.Errorf("%w: %q", acp.ErrMethodNotFound, method)
}

// steeringResult is the answer to _session/steering.
type steeringResult struct {
	Outcome string `json:"outcome"` // injected, promptRequired, startedNewTurn
	Reason  string `json:"reason,omitempty"`
}

// Steering answers _session/steering, the extension claude-agent-acp and
// codex-acp share, for either protocol version: the message joins the
// running turn at its next model call ("injected"). With no turn running,
// _meta.steering.idleBehavior "startNewTurn" starts one with it
// ("startedNewTurn"); otherwise the client is told to send it as a prompt
// ("promptRequired"). content is the prompt's, decoded by the caller (its
// error is the answer).
func Steering(s *agent.Session, raw json.RawMessage, content func() ([]llm.Part, error)) (any, error) {
	var p struct {
		Meta struct {
			Steering struct {
				IdleBehavior string `json:"idleBehavior"`
			} `json:"steering"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: _meta: %v", acp.ErrInvalidParams, err)
	}
	parts, err := content()
	if err != nil {
		return nil, err
	}
	queued, err := s.QueueIfBusy(agent.SourceSteer, parts)
	switch {
	case err != nil:
		return nil, err
	case queued:
		return steeringResult{Outcome: "injected"}, nil
	case p.Meta.Steering.IdleBehavior == "startNewTurn":
		if err := s.Queue(agent.SourceFollowUp, parts); err != nil {
			return nil, err
		}
		return steeringResult{Outcome: "startedNewTurn"}, nil
	}
	return steeringResult{Outcome: "promptRequired", Reason: "noRunningTurn"}, nil
}

// userContent turns ACP content blocks into the model's user message.
// Text and images pass through; resource links and embedded resources
// become text the model can read, naming their URI.
func userContent(blocks []acp.ContentBlock) ([]llm.Part, error) {
	if len(blocks) == 0 {
		return nil, errors.New("prompt: must contain at least one content block")
	}
	var parts []llm.Part
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, llm.TextPart(b.Text.Text))
		case b.Image != nil:
			parts = append(parts, llm.Part{Type: llm.PartImage, MIMEType: b.Image.MimeType, Data: b.Image.Data})
		case b.ResourceLink != nil:
			parts = append(parts, llm.TextPart(resourceLinkText(b.ResourceLink)))
		case b.Resource != nil:
			t, err := embeddedResourceText(b.Resource)
			if err != nil {
				return nil, fmt.Errorf("prompt[%d]: %w", i, err)
			}
			parts = append(parts, llm.TextPart(t))
		case b.Audio != nil:
			return nil, fmt.Errorf("prompt[%d]: audio content is not supported (promptCapabilities.audio is false)", i)
		default:
			return nil, fmt.Errorf("prompt[%d]: unsupported content block type", i)
		}
	}
	return parts, nil
}

func resourceLinkText(l *acp.ResourceLink) string {
	return host.ResourceLinkText(l.Name, l.URI, l.MimeType, l.Description)
}

func embeddedResourceText(r *acp.EmbeddedResource) (string, error) {
	switch {
	case r.Resource.Text != nil:
		return host.ResourceText(r.Resource.Text.URI, r.Resource.Text.Text), nil
	case r.Resource.Blob != nil:
		return host.BinaryResourceText(r.Resource.Blob.URI, r.Resource.Blob.MimeType, len(r.Resource.Blob.Blob)), nil
	}
	return "", errors.New("resource: neither text nor blob is set")
}
