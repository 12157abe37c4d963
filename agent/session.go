package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// UpdateSink receives a session's updates in order. *acp.ClientConn is one.
type UpdateSink interface {
	Update(ctx context.Context, u acp.SessionUpdate) error
}

// Session is one conversation with the model.
type Session struct {
	id      string
	cwd     string
	model   Model
	spec    ModelSpec
	sink    UpdateSink
	log     *slog.Logger
	onClose func()

	mu      sync.Mutex
	history []llm.Message
}

func newSession(id, cwd string, model Model, spec ModelSpec, sink UpdateSink, log *slog.Logger) *Session {
	return &Session{id: id, cwd: cwd, model: model, spec: spec, sink: sink, log: log.With("session", id)}
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Close implements acp.Session.
func (s *Session) Close() error {
	if s.onClose != nil {
		s.onClose()
	}
	return nil
}

// Prompt implements acp.Session: it sends the conversation and the new user
// message to the model and streams the answer to the sink as
// agent_message_chunk and agent_thought_chunk updates.
func (s *Session) Prompt(ctx context.Context, req *acp.PromptRequest) (*acp.PromptResponse, error) {
	user, err := userMessage(req.Prompt)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
	}
	s.mu.Lock()
	msgs := append(slices.Clone(s.history), user)
	s.mu.Unlock()

	out := assistantStream{sink: s.sink, messageID: uuid.NewString()}
	finish, streamErr := out.run(ctx, s.model, &llm.Request{
		Model:    s.spec.Model,
		System:   systemPrompt(s.cwd),
		Messages: msgs,
	})

	// The transcript keeps what the user saw, even of an interrupted turn.
	s.mu.Lock()
	s.history = append(s.history, user)
	if a := out.message(); len(a.Content) > 0 || a.Reasoning != "" {
		s.history = append(s.history, a)
	}
	s.mu.Unlock()

	if ctx.Err() != nil {
		return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	if streamErr != nil {
		s.log.Warn("model call failed", "error", streamErr)
		return nil, fmt.Errorf("%w: model %s: %v", acp.ErrInternal, s.spec, streamErr)
	}
	return &acp.PromptResponse{StopReason: stopReason(finish)}, nil
}

// assistantStream turns a model's events into session updates and collects
// the assistant message.
type assistantStream struct {
	sink      UpdateSink
	messageID string
	text      strings.Builder
	reasoning strings.Builder
	usage     *llm.Usage
}

func (a *assistantStream) run(ctx context.Context, model Model, req *llm.Request) (llm.FinishReason, error) {
	var finish llm.FinishReason
	for ev, err := range model.Stream(ctx, req) {
		if err != nil {
			return "", err
		}
		switch ev.Kind {
		case llm.EventTextDelta:
			a.text.WriteString(ev.Text)
			if err := a.sink.Update(ctx, chunk(ev.Text, a.messageID, false)); err != nil {
				return "", err
			}
		case llm.EventReasoningDelta:
			a.reasoning.WriteString(ev.Text)
			if err := a.sink.Update(ctx, chunk(ev.Text, a.messageID, true)); err != nil {
				return "", err
			}
		case llm.EventUsage:
			a.usage = ev.Usage
		case llm.EventFinish:
			finish = ev.Finish
		}
	}
	if finish == "" {
		return "", llm.ErrTruncatedStream
	}
	return finish, nil
}

func (a *assistantStream) message() llm.Message {
	m := llm.Message{Role: llm.RoleAssistant, Reasoning: a.reasoning.String()}
	if a.text.Len() > 0 {
		m.Content = []llm.Part{llm.TextPart(a.text.String())}
	}
	return m
}

func chunk(text, messageID string, thought bool) acp.SessionUpdate {
	c := &acp.ContentChunk{Content: acp.TextBlock(text), MessageID: messageID}
	if thought {
		return acp.SessionUpdate{AgentThoughtChunk: c}
	}
	return acp.SessionUpdate{AgentMessageChunk: c}
}

// stopReason maps a model's finish reason to ACP.
func stopReason(f llm.FinishReason) acp.StopReason {
	switch f {
	case llm.FinishLength:
		return acp.StopReasonMaxTokens
	case llm.FinishContentFilter:
		return acp.StopReasonRefusal
	}
	return acp.StopReasonEndTurn
}

var errEmptyPrompt = errors.New("prompt: must contain at least one content block")

// userMessage turns ACP content blocks into the model's user message. Text
// and images pass through; resource links and embedded resources become
// text the model can read, naming their URI.
func userMessage(blocks []acp.ContentBlock) (llm.Message, error) {
	if len(blocks) == 0 {
		return llm.Message{}, errEmptyPrompt
	}
	m := llm.Message{Role: llm.RoleUser}
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			m.Content = append(m.Content, llm.TextPart(b.Text.Text))
		case b.Image != nil:
			m.Content = append(m.Content, llm.Part{Type: llm.PartImage, MIMEType: b.Image.MimeType, Data: b.Image.Data})
		case b.ResourceLink != nil:
			m.Content = append(m.Content, llm.TextPart(resourceLinkText(b.ResourceLink)))
		case b.Resource != nil:
			t, err := embeddedResourceText(b.Resource)
			if err != nil {
				return llm.Message{}, fmt.Errorf("prompt[%d]: %w", i, err)
			}
			m.Content = append(m.Content, llm.TextPart(t))
		case b.Audio != nil:
			return llm.Message{}, fmt.Errorf("prompt[%d]: audio content is not supported (promptCapabilities.audio is false)", i)
		default:
			return llm.Message{}, fmt.Errorf("prompt[%d]: unsupported content block type", i)
		}
	}
	return m, nil
}

func resourceLinkText(l *acp.ResourceLink) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Resource link: %s <%s>", l.Name, l.URI)
	if l.MimeType != "" {
		fmt.Fprintf(&b, " (%s)", l.MimeType)
	}
	if l.Description != "" {
		fmt.Fprintf(&b, ": %s", l.Description)
	}
	b.WriteString("]")
	return b.String()
}

func embeddedResourceText(r *acp.EmbeddedResource) (string, error) {
	switch {
	case r.Resource.Text != nil:
		return fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", r.Resource.Text.URI, r.Resource.Text.Text), nil
	case r.Resource.Blob != nil:
		mime := r.Resource.Blob.MimeType
		if mime == "" {
			mime = "application/octet-stream"
		}
		return fmt.Sprintf("[Binary resource %s (%s, %d base64 bytes) attached; its content is not shown]", r.Resource.Blob.URI, mime, len(r.Resource.Blob.Blob)), nil
	}
	return "", errors.New("resource: neither text nor blob is set")
}

func systemPrompt(cwd string) string {
	return "You are acp-agent, a coding assistant working inside the user's code editor through the Agent Client Protocol.\n" +
		"The workspace root is " + cwd + ". All file paths you mention should be absolute.\n" +
		"Answer concisely, in Markdown."
}
