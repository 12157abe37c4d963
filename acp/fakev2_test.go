package acp_test

import (
	"context"
	"strconv"
	"sync"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// fakeAgentV2 is an acp.AgentV2 whose sessions follow v2's turn model:
// a prompt is inserted at once when the session is idle (running, the
// user_message, the answer) and held while a turn runs; each turn runs
// the test's turn function and ends with an idle state_update.
type fakeAgentV2 struct {
	turn func(ctx context.Context, s *fakeSessionV2, msgID string, req *acpv2.PromptRequest) acpv2.StopReason

	mu       sync.Mutex
	n        int
	sessions map[string]*fakeSessionV2 // every session made, by id
	closed   []string
}

func newFakeAgentV2() *fakeAgentV2 {
	return &fakeAgentV2{sessions: map[string]*fakeSessionV2{}}
}

func (a *fakeAgentV2) Initialize(context.Context, *acpv2.InitializeRequest) (*acpv2.InitializeResponse, error) {
	return &acpv2.InitializeResponse{
		Info:         acpv2.Implementation{Name: "fake", Version: "2"},
		Capabilities: acpv2.AgentCapabilities{Session: &acpv2.SessionCapabilities{MCP: &acpv2.McpCapabilities{Stdio: &acpv2.McpStdioCapabilities{}}}},
	}, nil
}

func (a *fakeAgentV2) NewSession(_ context.Context, _ *acpv2.NewSessionRequest, c *acp.ClientConnV2) (acp.SessionV2, *acpv2.NewSessionResponse, error) {
	a.mu.Lock()
	a.n++
	id := "v2-" + strconv.Itoa(a.n)
	a.mu.Unlock()
	s := a.open(id, c)
	return s, &acpv2.NewSessionResponse{SessionID: id}, nil
}

func (a *fakeAgentV2) open(id string, c *acp.ClientConnV2) *fakeSessionV2 {
	s := &fakeSessionV2{a: a, id: id, c: c}
	a.mu.Lock()
	if old := a.sessions[id]; old != nil {
		s.history = old.history // what a store would keep
	}
	a.sessions[id] = s
	a.mu.Unlock()
	return s
}

func (a *fakeAgentV2) ResumeSession(_ context.Context, req *acpv2.ResumeSessionRequest, c *acp.ClientConnV2) (acp.SessionV2, *acp.ResumedSessionV2, error) {
	a.mu.Lock()
	_, ok := a.sessions[req.SessionID]
	a.mu.Unlock()
	if !ok {
		return nil, nil, acp.SessionNotFound(req.SessionID, "")
	}
	s := a.open(req.SessionID, c)
	return s, &acp.ResumedSessionV2{Replay: func(ctx context.Context) {
		for _, u := range s.replay() {
			_ = c.Update(ctx, u)
		}
	}}, nil
}

func (a *fakeAgentV2) ListSessions(context.Context, *acpv2.ListSessionsRequest) (*acpv2.ListSessionsResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	resp := &acpv2.ListSessionsResponse{}
	for id := range a.sessions {
		resp.Sessions = append(resp.Sessions, acpv2.SessionInfo{SessionID: id, CWD: "/w"})
	}
	return resp, nil
}

// heldPrompt is a prompt waiting for the running turn to end.
type heldPrompt struct {
	ctx      context.Context
	req      *acpv2.PromptRequest
	inserted func(acpv2.MessageId, error)
	taken    chan struct{} // closed when the worker takes it
}

type fakeSessionV2 struct {
	a  *fakeAgentV2
	id string
	c  *acp.ClientConnV2

	mu      sync.Mutex
	running bool
	cancel  context.CancelFunc // the running turn's
	held    []*heldPrompt
	msgs    int
	history []acpv2.SessionUpdate // user and agent messages, for a replay
	wg      sync.WaitGroup
	closed  bool
}

func (s *fakeSessionV2) Prompt(ctx context.Context, req *acpv2.PromptRequest, inserted func(acpv2.MessageId, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return acp.ErrClosed
	}
	if !s.running {
		s.startLocked(req, inserted)
		return nil
	}
	h := &heldPrompt{ctx: ctx, req: req, inserted: inserted, taken: make(chan struct{})}
	s.held = append(s.held, h)
	s.wg.Add(1)
	go func() { // withdraws h when ctx ends first
		defer s.wg.Done()
		select {
		case <-h.taken:
		case <-ctx.Done():
			s.mu.Lock()
			for i, x := range s.held {
				if x == h {
					s.held = append(s.held[:i], s.held[i+1:]...)
					s.mu.Unlock()
					inserted("", ctx.Err())
					return
				}
			}
			s.mu.Unlock()
		}
	}()
	return nil
}

// startLocked inserts req and runs its turn on a goroutine the session
// owns.
func (s *fakeSessionV2) startLocked(req *acpv2.PromptRequest, inserted func(acpv2.MessageId, error)) {
	s.msgs++
	msgID := "u" + strconv.Itoa(s.msgs)
	ctx, cancel := context.WithCancel(context.Background())
	s.running, s.cancel = true, cancel
	user := acpv2.SessionUpdate{UserMessage: &acpv2.UserMessage{MessageID: msgID, Content: acpv2.Some(req.Prompt)}}
	s.history = append(s.history, user)
	_ = s.c.Post(acpv2.SessionUpdate{StateUpdate: &acpv2.StateUpdate{Running: &acpv2.RunningStateUpdate{}}})
	_ = s.c.Post(user)
	inserted(msgID, nil)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		reason := acpv2.StopReasonEndTurn
		if s.a.turn != nil {
			reason = s.a.turn(ctx, s, msgID, req)
		}
		if ctx.Err() != nil {
			reason = acpv2.StopReasonCancelled
		}
		_ = s.c.Update(context.Background(), acpv2.SessionUpdate{StateUpdate: &acpv2.StateUpdate{Idle: &acpv2.IdleStateUpdate{StopReason: reason}}})
		cancel()
		s.mu.Lock()
		s.running = false
		for i, next := range s.held {
			if s.closed || next.ctx.Err() != nil {
				continue // withdrawn: its own goroutine answers it
			}
			s.held = append(s.held[:i:i], s.held[i+1:]...)
			close(next.taken)
			s.startLocked(next.req, next.inserted)
			break
		}
		s.mu.Unlock()
	}()
}

// say sends an agent message of the turn (recorded for a replay).
func (s *fakeSessionV2) say(ctx context.Context, msgID, text string) {
	u := acpv2.SessionUpdate{AgentMessage: &acpv2.AgentMessage{MessageID: "a" + msgID, Content: acpv2.Some([]acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: text}}})}}
	s.mu.Lock()
	s.history = append(s.history, u)
	s.mu.Unlock()
	_ = s.c.Update(ctx, u)
}

func (s *fakeSessionV2) replay() []acpv2.SessionUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]acpv2.SessionUpdate(nil), s.history...)
}

func (s *fakeSessionV2) Cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
}

func (s *fakeSessionV2) Close() error {
	s.mu.Lock()
	s.closed = true
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.a.mu.Lock()
	s.a.closed = append(s.a.closed, s.id)
	s.a.mu.Unlock()
	return nil
}
