package acptest

import (
	"context"
	"strconv"
	"sync"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// EchoAgentV2 is an acp.AgentV2 for tests of transports: each prompt is
// inserted at once and answered with its own text, in v2's turn model
// (state running, the user_message, the agent_message, state idle with
// end_turn), synchronously, before Prompt returns. It keeps no store:
// session/resume answers -32002.
type EchoAgentV2 struct {
	mu sync.Mutex
	n  int
}

// Initialize advertises stdio MCP servers.
func (a *EchoAgentV2) Initialize(context.Context, *acpv2.InitializeRequest) (*acpv2.InitializeResponse, error) {
	return &acpv2.InitializeResponse{Info: acpv2.Implementation{Name: "echo", Version: "2"},
		Capabilities: acpv2.AgentCapabilities{Session: &acpv2.SessionCapabilities{MCP: &acpv2.McpCapabilities{Stdio: &acpv2.McpStdioCapabilities{}}}}}, nil
}

// NewSession makes an echo session.
func (a *EchoAgentV2) NewSession(_ context.Context, _ *acpv2.NewSessionRequest, c *acp.ClientConnV2) (acp.SessionV2, *acpv2.NewSessionResponse, error) {
	a.mu.Lock()
	a.n++
	id := "echo-" + strconv.Itoa(a.n)
	a.mu.Unlock()
	return &echoSessionV2{c: c}, &acpv2.NewSessionResponse{SessionID: id}, nil
}

// ResumeSession knows no stored session.
func (a *EchoAgentV2) ResumeSession(_ context.Context, req *acpv2.ResumeSessionRequest, _ *acp.ClientConnV2) (acp.SessionV2, *acp.ResumedSessionV2, error) {
	return nil, nil, acp.SessionNotFound(req.SessionID, "")
}

// ListSessions lists nothing.
func (a *EchoAgentV2) ListSessions(context.Context, *acpv2.ListSessionsRequest) (*acpv2.ListSessionsResponse, error) {
	return &acpv2.ListSessionsResponse{}, nil
}

type echoSessionV2 struct {
	c  *acp.ClientConnV2
	mu sync.Mutex
	n  int
}

func (s *echoSessionV2) Prompt(_ context.Context, req *acpv2.PromptRequest, inserted func(acpv2.MessageId, error)) error {
	s.mu.Lock()
	s.n++
	id := strconv.Itoa(s.n)
	s.mu.Unlock()
	for _, u := range []acpv2.SessionUpdate{
		{StateUpdate: &acpv2.StateUpdate{Running: &acpv2.RunningStateUpdate{}}},
		{UserMessage: &acpv2.UserMessage{MessageID: "u" + id, Content: acpv2.Some(req.Prompt)}},
	} {
		if err := s.c.Post(u); err != nil {
			return err
		}
	}
	inserted("u"+id, nil)
	for _, u := range []acpv2.SessionUpdate{
		{AgentMessage: &acpv2.AgentMessage{MessageID: "a" + id, Content: acpv2.Some(req.Prompt)}},
		{StateUpdate: &acpv2.StateUpdate{Idle: &acpv2.IdleStateUpdate{StopReason: acpv2.StopReasonEndTurn}}},
	} {
		_ = s.c.Post(u)
	}
	return nil
}

func (s *echoSessionV2) Cancel()      {}
func (s *echoSessionV2) Close() error { return nil }
