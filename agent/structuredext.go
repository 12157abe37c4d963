package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/structured"
)

// MethodExtStructured is the structured-output extension method: a prompt
// answered with a JSON value matching a schema, streamed as it is parsed.
const MethodExtStructured = acp.ExtPrefix + "structured"

type structuredParams struct {
	SessionID string             `json:"sessionId"`
	Prompt    json.RawMessage    `json:"prompt"` // a string or ContentBlock[]
	Output    json.RawMessage    `json:"output"` // a JSON Schema
	blocks    []acp.ContentBlock // decoded Prompt
}

func (p *structuredParams) text() string {
	var b strings.Builder
	for _, c := range p.blocks {
		if c.Text != nil {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(c.Text.Text)
		}
	}
	return b.String()
}

func decodeStructured(raw json.RawMessage) (*structuredParams, error) {
	var p structuredParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
	}
	var s string
	switch {
	case len(p.Prompt) == 0:
		return nil, fmt.Errorf("%w: prompt: required", acp.ErrInvalidParams)
	case json.Unmarshal(p.Prompt, &s) == nil:
		p.blocks = []acp.ContentBlock{acp.TextBlock(s)}
	default:
		if err := json.Unmarshal(p.Prompt, &p.blocks); err != nil {
			return nil, fmt.Errorf("%w: prompt: a string or an array of content blocks: %v", acp.ErrInvalidParams, err)
		}
	}
	if strings.TrimSpace(p.text()) == "" {
		return nil, fmt.Errorf("%w: prompt: no text", acp.ErrInvalidParams)
	}
	if len(p.Output) == 0 {
		return nil, fmt.Errorf("%w: output: a JSON Schema is required", acp.ErrInvalidParams)
	}
	return &p, nil
}

// structuredChunkMeta is the _meta of a streamed structured value.
type structuredChunkMeta struct {
	Agent struct {
		Path     string `json:"path"`
		Complete bool   `json:"complete"`
	} `json:"acp-agent"`
}

// Structured answers prompt with a value matching output (a JSON Schema):
// the model is asked with seed 004's prompt layout (output format json),
// its answer is parsed while it streams (each completed value is sent as
// an agent_message_chunk whose _meta names its JSON path), and the result
// is coerced and validated. The exchange joins the transcript.
func (s *Session) Structured(ctx context.Context, prompt string, output *structured.Node, onEvent func(structured.Event)) (any, error) {
	return s.structured(ctx, prompt, output, onEvent, true)
}

// structured is Structured; record says whether the exchange joins the
// transcript (the agent's own questions, such as titles, do not).
func (s *Session) structured(ctx context.Context, prompt string, output *structured.Node, onEvent func(structured.Event), record bool) (any, error) {
	om, err := structured.NewOutputModel(output)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	history := s.tr.messages()
	s.mu.Unlock()
	p := structured.Prompt{Input: prompt, Output: output}
	main, err := p.ToText()
	if err != nil {
		return nil, err
	}
	model := s.CurrentModel()
	msgs := append(history, llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(main)}})
	parser := structured.NewParser(structured.WithMode(structured.EmitComplete), structured.WithHandler(onEvent))
	var text strings.Builder
	for ev, err := range s.cfg.Retry.withRetries(ctx, model.Model, &llm.Request{Model: model.Name, System: s.systemPrompt(), Messages: msgs}, s.onRetry) {
		if err != nil {
			return nil, err
		}
		if ev.Kind == llm.EventTextDelta {
			text.WriteString(ev.Text)
			// A parse error is reported by Parse below, with the path.
			_, _ = parser.WriteString(ev.Text)
		}
	}
	_ = parser.Close()
	if record {
		s.appendEntry(Entry{Kind: EntryUser, Content: []llm.Part{llm.TextPart(prompt)}, Source: "structured"})
		s.appendEntry(Entry{Kind: EntryAssistant, Content: textContent(text.String())})
	}
	return om.Parse(text.String())
}

// structuredExtension serves MethodExtStructured on the session's worker,
// in order with prompts.
func (a acpSession) structuredExtension(ctx context.Context, raw json.RawMessage) (any, error) {
	p, err := decodeStructured(raw)
	if err != nil {
		return nil, err
	}
	node, err := structured.FromJSONSchema(p.Output)
	if err != nil {
		return nil, fmt.Errorf("%w: output: %v", acp.ErrInvalidParams, err)
	}
	var value any
	messageID := uuid.NewString()
	_, err = a.s.PromptContent(ctx, nil, PromptOptions{Behavior: FollowUp, Run: func(ctx context.Context) (PromptResult, error) {
		v, err := a.s.Structured(ctx, p.text(), node, func(e structured.Event) {
			var meta structuredChunkMeta
			meta.Agent.Path, meta.Agent.Complete = e.Path, e.Complete
			m, _ := json.Marshal(meta)
			data, _ := json.Marshal(e.Value)
			sendACP(ctx, a.s, acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{
				Content: acp.TextBlock(string(data)), MessageID: acp.MessageId(messageID), Meta: m}})
		})
		value = v
		return PromptResult{StopReason: StopEndTurn}, err
	}})
	var ve *structured.ValidationError
	switch {
	case errors.As(err, &ve):
		return nil, &acp.DataError{Err: fmt.Errorf("%w: the model's answer does not match the schema: %v", acp.ErrInternal, err), Data: ve.Problems}
	case err != nil:
		return nil, fmt.Errorf("%w: %v", acp.ErrInternal, err)
	}
	return map[string]any{"value": value}, nil
}

// titleOutput is what the model is asked for to title a session.
var titleOutput = structured.Object(structured.Req("title", structured.String("a title of at most 8 words for this conversation, no quotes")))

// titleFromModel asks the model for a title of the conversation so far
// (structured output) and gives it to the session: the header and the
// client (session_info_update). Failures are logged; the first-line title
// stays.
func (s *Session) titleFromModel(ctx context.Context) {
	v, err := s.structured(ctx, "Give this conversation a short title.", titleOutput, nil, false)
	if err != nil {
		s.log.Warn("asking the model for a session title", "error", err)
		return
	}
	title, _ := v.(map[string]any)["title"].(string)
	title = strings.TrimSpace(title)
	if title == "" {
		return
	}
	if r := []rune(title); len(r) > 80 {
		title = string(r[:79]) + "…"
	}
	s.mu.Lock()
	s.cfg.Title = title
	s.mu.Unlock()
	if s.cfg.journal != nil {
		s.cfg.journal.retitle(title)
	}
	s.update(ctx, Update{Kind: UpdateTitle, Title: &TitleChange{Title: title}})
}
