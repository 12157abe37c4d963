package acpv2agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/llm"
)

var _ acp.ExtensionSession = (*v2Session)(nil)

// Extension implements acp.ExtensionSession: the acp-agent extension
// methods (docs/extensions.md), as v1 serves them. Their prompts are v2
// content blocks, and a structured answer streams as v2
// agent_message_chunks; the rest is acpagent's, shared with v1.
func (s *v2Session) Extension(ctx context.Context, method string, raw json.RawMessage) (any, error) {
	switch method {
	case acp.MethodExtStructured:
		s.startForeground()
		return acpagent.Structured(ctx, s.s, raw, func(ctx context.Context, messageID, text string, meta json.RawMessage) {
			s.send(ctx, acpv2.SessionUpdate{AgentMessageChunk: &acpv2.ContentChunk{MessageID: messageID, Content: textBlock(text), Meta: meta}})
		})
	case acp.MethodSessionSteering, acp.MethodExtSessionSteer, acp.MethodExtSessionFollowUp:
	default:
		return acpagent.SessionExtension(ctx, s.hs, method, raw)
	}
	var p struct {
		Prompt []acpv2.ContentBlock `json:"prompt"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
	}
	content := func() ([]llm.Part, error) {
		c, err := userContent(p.Prompt)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
		}
		return c, nil
	}
	if method == acp.MethodSessionSteering {
		return acpagent.Steering(s.s, raw, content)
	}
	c, err := content()
	if err != nil {
		return nil, err
	}
	return acpagent.Queue(s.s, method, c)
}

// startForeground sends running before work the session starts outside
// a prompt (a structured answer), when it is idle.
func (s *v2Session) startForeground() {
	if su, ok := s.cl.enter(stateRunning, false); ok {
		s.cl.post(su)
	}
}
