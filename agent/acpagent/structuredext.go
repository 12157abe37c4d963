package acpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/structured"
)

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

// structuredExtension serves acp.MethodExtStructured on the session's worker,
// in order with prompts.
func (a *acpSession) structuredExtension(ctx context.Context, raw json.RawMessage) (any, error) {
	return Structured(ctx, a.s, raw, func(ctx context.Context, messageID, text string, meta json.RawMessage) {
		a.send(ctx, acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{
			Content: acp.TextBlock(text), MessageID: acp.MessageId(messageID), Meta: meta}})
	})
}

// Structured serves acp.MethodExtStructured for either protocol version,
// on the session's worker, in order with prompts: chunk sends each value
// parsed so far as an agent message chunk (its JSON text, with the
// _meta that says where it is).
func Structured(ctx context.Context, s *agent.Session, raw json.RawMessage, chunk func(ctx context.Context, messageID, text string, meta json.RawMessage)) (any, error) {
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
	_, err = s.PromptContent(ctx, nil, agent.PromptOptions{Behavior: agent.FollowUp, Run: func(ctx context.Context) (agent.PromptResult, error) {
		v, err := s.Structured(ctx, p.text(), node, func(e structured.Event) {
			var meta structuredChunkMeta
			meta.Agent.Path, meta.Agent.Complete = e.Path, e.Complete
			m, _ := json.Marshal(meta)
			data, _ := json.Marshal(e.Value)
			chunk(ctx, messageID, string(data), m)
		})
		value = v
		return agent.PromptResult{StopReason: agent.StopEndTurn}, err
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
