package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// startV2 serves the v1 fakeAgent and a (given) v2 agent on one stdio
// connection.
func startV2(t *testing.T, v2 acp.AgentV2) *acptest.Client {
	t.Helper()
	return acptest.Pipe(t, acp.NewAgentService(&fakeAgent{}, acp.Options{V2: v2}))
}

func textV2(text string) []acpv2.ContentBlock {
	return []acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: text}}}
}

// updateKinds names each v2 update of msgs: its tag, and for a state its
// state and stop reason ("state_update:idle:end_turn"); other messages are
// their method or "response".
func updateKinds(t *testing.T, msgs []acptest.Message) []string {
	t.Helper()
	var kinds []string
	for _, m := range msgs {
		switch {
		case m.Method == acpv2.MethodSessionUpdate:
			u := m.UpdateV2(t).Update
			kind := u.Tag()
			if s := u.StateUpdate; s != nil {
				kind += ":" + s.Tag()
				if s.Idle != nil && s.Idle.StopReason != "" {
					kind += ":" + string(s.Idle.StopReason)
				}
			}
			kinds = append(kinds, kind)
		case m.Method != "":
			kinds = append(kinds, m.Method)
		default:
			kinds = append(kinds, "response")
		}
	}
	return kinds
}

// TestInitializeChoosesTheVersion: the version a client asks for chooses
// the protocol of its connection: v1 below 2 (and always without a v2
// agent), v2 at 2 or above, where the answer is 2.
func TestInitializeChoosesTheVersion(t *testing.T) {
	for _, tc := range []struct {
		name      string
		v2        bool
		params    string
		want      int
		wantError int64
	}{
		{"v1 client", true, `{"protocolVersion":1}`, 1, 0},
		{"version 0 gets v1", true, `{"protocolVersion":0}`, 1, 0},
		{"v2 client", true, `{"protocolVersion":2,"info":{"name":"c","version":"1"}}`, 2, 0},
		{"a newer version gets v2", true, `{"protocolVersion":7,"info":{"name":"c","version":"1"}}`, 2, 0},
		{"a newer version may lack info", true, `{"protocolVersion":7,"capabilities":{"auth":"not an object"}}`, 2, 0},
		{"v2 needs info", true, `{"protocolVersion":2}`, 0, acp.CodeInvalidParams},
		{"no v2 agent: v1", false, `{"protocolVersion":2,"info":{"name":"c","version":"1"}}`, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v2 acp.AgentV2
			if tc.v2 {
				v2 = newFakeAgentV2()
			}
			c := startV2(t, v2)
			resp, _ := c.Call(acp.MethodInitialize, json.RawMessage(tc.params))
			if tc.wantError != 0 {
				require.NotNil(t, resp.Error, "%s", resp.Raw)
				assert.Equal(t, tc.wantError, resp.Error.Code)
				return
			}
			var r struct {
				ProtocolVersion int `json:"protocolVersion"`
			}
			acptest.MustResult(t, resp, &r)
			assert.Equal(t, tc.want, r.ProtocolVersion)
		})
	}
}

// TestV2InitializeAdvertisesTheTable: the capabilities of methods are the
// v2 table's: session: {} (the baseline), and nothing the agent does not
// serve; the agent's own (MCP transports) are kept.
func TestV2InitializeAdvertisesTheTable(t *testing.T) {
	c := startV2(t, newFakeAgentV2())
	r := c.InitializeV2(nil)
	caps, err := json.Marshal(r.Capabilities)
	require.NoError(t, err)
	assert.JSONEq(t, `{"session":{"mcp":{"stdio":{}}}}`, string(caps))
	assert.Empty(t, r.AuthMethods)

	resp, _ := c.Call(acpv2.MethodSessionDelete, map[string]any{"sessionId": "v2-1"})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeMethodNotFound, resp.Error.Code, "not served, not advertised")
	resp, _ = c.Call(acpv2.MethodAuthLogin, map[string]any{"methodId": "x"})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeMethodNotFound, resp.Error.Code, "no authMethods, no auth/login")
	resp, _ = c.Call(acp.MethodSessionLoad, map[string]any{"sessionId": "v2-1", "cwd": "/w", "mcpServers": []any{}})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeMethodNotFound, resp.Error.Code, "v2 has no session/load")
}

// TestV2InitializeMayBeRepeatedOnlyFirst: a v2 connection takes another
// initialize for v2 before any other request, and refuses one for v1 or
// after other requests; a v1 connection stays v1.
func TestV2InitializeMayBeRepeatedOnlyFirst(t *testing.T) {
	c := startV2(t, newFakeAgentV2())
	c.InitializeV2(nil)
	c.InitializeV2(nil)
	resp, _ := c.Call(acp.MethodInitialize, map[string]any{"protocolVersion": 1})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeInvalidRequest, resp.Error.Code)
	c.NewSessionV2("/w")
	resp, _ = c.Call(acp.MethodInitialize, map[string]any{"protocolVersion": 2, "info": map[string]string{"name": "c", "version": "1"}})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeInvalidRequest, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "before any other request")

	v1 := startV2(t, newFakeAgentV2())
	v1.Initialize(nil)
	resp, _ = v1.Call(acp.MethodInitialize, map[string]any{"protocolVersion": 2, "info": map[string]string{"name": "c", "version": "1"}})
	var r struct {
		ProtocolVersion int `json:"protocolVersion"`
	}
	acptest.MustResult(t, resp, &r)
	assert.Equal(t, 1, r.ProtocolVersion, "a connection never changes its version")
}

// TestV2PromptIsAnsweredWhenInsertedAndStateEndsTheTurn: session/prompt
// is answered with the inserted message's id, after its user_message;
// the turn's work follows, and an idle state_update ends it.
func TestV2PromptIsAnsweredWhenInsertedAndStateEndsTheTurn(t *testing.T) {
	a := newFakeAgentV2()
	release := make(chan struct{})
	a.turn = func(ctx context.Context, s *fakeSessionV2, msgID string, _ *acpv2.PromptRequest) acpv2.StopReason {
		<-release
		_ = s.c.Update(ctx, acpv2.SessionUpdate{AgentMessageChunk: &acpv2.ContentChunk{MessageID: "a" + msgID, Content: acpv2.ContentBlock{Text: &acpv2.TextContent{Text: "hi"}}}})
		return acpv2.StopReasonEndTurn
	}
	c := startV2(t, a)
	c.InitializeV2(nil)
	sid := c.NewSessionV2("/w")
	resp, before := c.Call(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: textV2("hello")})
	var r acpv2.PromptResponse
	acptest.MustResult(t, resp, &r)
	assert.Equal(t, []string{"state_update:running", "user_message"}, updateKinds(t, before), "answered before the turn's work")
	assert.Equal(t, r.MessageID, before[1].UpdateV2(t).Update.UserMessage.MessageID)
	close(release)
	assert.Equal(t, []string{"agent_message_chunk", "state_update:idle:end_turn"}, updateKinds(t, []acptest.Message{c.Next(), c.Next()}))
}

// TestV2CancelWithdrawsHeldPromptsAndEndsTheTurn: a prompt sent while a
// turn runs is held; session/cancel ends the turn (idle, cancelled) and
// withdraws the held prompt (-32800); a prompt sent after the cancel is
// not affected.
func TestV2CancelWithdrawsHeldPromptsAndEndsTheTurn(t *testing.T) {
	a := newFakeAgentV2()
	a.turn = func(ctx context.Context, s *fakeSessionV2, msgID string, req *acpv2.PromptRequest) acpv2.StopReason {
		if req.Prompt[0].Text.Text == "wait" {
			<-ctx.Done()
		}
		return acpv2.StopReasonEndTurn
	}
	c := startV2(t, a)
	c.InitializeV2(nil)
	sid := c.NewSessionV2("/w")
	first, updates := c.Call(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: textV2("wait")})
	acptest.MustResult(t, first, nil)
	held := c.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: textV2("held")})
	if m, ok := c.NextWithin(200 * time.Millisecond); ok {
		t.Fatalf("a held prompt is not answered while the turn runs: %s", m.Raw)
	}
	c.Notify(acpv2.MethodSessionCancel, &acpv2.CancelSessionNotification{SessionID: sid})
	after := c.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: textV2("after")})
	// The two answers, in either order; the updates around them.
	var heldResp, afterResp *acptest.Message
	for heldResp == nil || afterResp == nil {
		m := c.Next()
		switch {
		case m.IsResponse() && string(m.ID) == held:
			heldResp = &m
		case m.IsResponse() && string(m.ID) == after:
			afterResp = &m
		default:
			updates = append(updates, m)
		}
	}
	require.NotNil(t, heldResp.Error, "%s", heldResp.Raw)
	assert.Equal(t, acp.CodeRequestCancelled, heldResp.Error.Code)
	assert.Contains(t, heldResp.Error.Message, "session/cancel withdrew the prompt")
	acptest.MustResult(t, *afterResp, nil)
	kinds := updateKinds(t, updates)
	for len(kinds) < 6 { // the first turn's 2, its end, the next's 2 and its end
		kinds = append(kinds, updateKinds(t, []acptest.Message{c.Next()})...)
	}
	assert.Equal(t, []string{"state_update:running", "user_message", "state_update:idle:cancelled",
		"state_update:running", "user_message", "state_update:idle:end_turn"}, kinds,
		"the prompt after the cancel starts a turn of its own, after the cancelled one")
}

// TestV2ResumeReplaysThenStateThenAnswer: session/resume with replay
// sends the conversation, then the current state, then the answer; without
// replay only the state comes before the answer. The session is taken
// over from the connection it was live on.
func TestV2ResumeReplaysThenStateThenAnswer(t *testing.T) {
	a := newFakeAgentV2()
	a.turn = func(ctx context.Context, s *fakeSessionV2, msgID string, _ *acpv2.PromptRequest) acpv2.StopReason {
		s.say(ctx, msgID, "answer")
		return acpv2.StopReasonEndTurn
	}
	srv := acp.NewServer(&fakeAgent{}, acp.Options{V2: a})
	c1 := acptest.Connect(t, srv)
	c1.InitializeV2(nil)
	sid := c1.NewSessionV2("/w")
	resp, _ := c1.Call(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: textV2("q")})
	acptest.MustResult(t, resp, nil)
	for {
		if k := updateKinds(t, []acptest.Message{c1.Next()}); k[0] == "state_update:idle:end_turn" {
			break
		}
	}

	c2 := acptest.Connect(t, srv)
	c2.InitializeV2(nil)
	resp, before := c2.Call(acpv2.MethodSessionResume, &acpv2.ResumeSessionRequest{SessionID: sid, CWD: "/w", ReplayFrom: &acpv2.ReplayFrom{Start: &acpv2.ReplayFromStart{}}})
	acptest.MustResult(t, resp, nil)
	assert.Equal(t, []string{"user_message", "agent_message", "state_update:idle"}, updateKinds(t, before))

	resp, before = c2.Call(acpv2.MethodSessionResume, &acpv2.ResumeSessionRequest{SessionID: sid, CWD: "/w"})
	acptest.MustResult(t, resp, nil)
	assert.Equal(t, []string{"state_update:idle"}, updateKinds(t, before))

	// The first connection lost it.
	resp, _ = c1.Call(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: textV2("q")})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeResourceNotFound, resp.Error.Code)

	resp, _ = c2.Call(acpv2.MethodSessionResume, &acpv2.ResumeSessionRequest{SessionID: sid, CWD: "/w", ReplayFrom: &acpv2.ReplayFrom{Other: &acpv2.UnknownVariant{Tag: "_last", Raw: json.RawMessage(`{"type":"_last"}`)}}})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code, "an unsupported cursor is refused, not ignored")
}

// TestV2CloseCancelsTheSessionsRequests: session/close cancels the
// session's pending permission request ($/cancel_request) and withdraws
// its held prompts before it is answered.
func TestV2CloseCancelsTheSessionsRequests(t *testing.T) {
	a := newFakeAgentV2()
	asked := make(chan error, 1)
	a.turn = func(ctx context.Context, s *fakeSessionV2, msgID string, _ *acpv2.PromptRequest) acpv2.StopReason {
		_, err := s.c.RequestPermission(context.Background(), &acpv2.RequestPermissionRequest{Title: "run make",
			Options: []acpv2.PermissionOption{{OptionID: "ok", Name: "Allow", Kind: acpv2.PermissionOptionKindAllowOnce}}})
		asked <- err
		return acpv2.StopReasonEndTurn
	}
	c := startV2(t, a)
	c.InitializeV2(nil)
	sid := c.NewSessionV2("/w")
	c.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: textV2("go")})
	var permID json.RawMessage
	for permID == nil {
		if m := c.Next(); m.Method == acpv2.MethodSessionRequestPermission {
			permID = m.ID
		}
	}
	held := c.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: textV2("held")})
	closeID := c.Request(acpv2.MethodSessionClose, &acpv2.CloseSessionRequest{SessionID: sid})
	var kinds []string
	for {
		m := c.Next()
		if m.IsResponse() && string(m.ID) == held {
			require.NotNil(t, m.Error)
			assert.Equal(t, acp.CodeRequestCancelled, m.Error.Code)
			kinds = append(kinds, "held answered")
			continue
		}
		if m.Method == acp.MethodCancelRequest {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			require.NoError(t, json.Unmarshal(m.Params, &p))
			assert.JSONEq(t, string(permID), string(p.RequestID))
			kinds = append(kinds, "$/cancel_request")
			continue
		}
		if m.IsResponse() && string(m.ID) == closeID {
			acptest.MustResult(t, m, nil)
			kinds = append(kinds, "close answered")
			break
		}
	}
	assert.ElementsMatch(t, []string{"held answered", "$/cancel_request", "close answered"}, kinds)
	assert.Equal(t, "close answered", kinds[2])
	assert.Error(t, <-asked, "the permission request was cancelled")
}

// TestV2SessionIDsAreChecked: every v2 method that names a session
// refuses an id that could never be one before it reaches the agent.
func TestV2SessionIDsAreChecked(t *testing.T) {
	c := startV2(t, newFakeAgentV2())
	c.InitializeV2(nil)
	for _, m := range acp.MethodsV2() {
		if m.Direction&acp.ToAgent == 0 || m.Notification || m.Extension {
			continue
		}
		params := map[string]any{"sessionId": "../../etc/passwd", "cwd": "/w", "prompt": textV2("x"),
			"configId": "c", "type": "id", "value": "v", "toolCallId": "t", "terminalId": "t", "title": "t"}
		resp, _ := c.Call(m.Name, params)
		if resp.Error == nil || resp.Error.Code == acp.CodeMethodNotFound {
			continue // does not name a session, or not served
		}
		if strings.Contains(resp.Error.Message, "sessionId") || strings.Contains(resp.Error.Message, "session id") {
			assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code, m.Name)
		} else {
			assert.NotEqual(t, acp.CodeResourceNotFound, resp.Error.Code, "%s looked the id up: %s", m.Name, resp.Error.Message)
		}
	}
}

// TestV2MCPServersNeedAdvertisedTransports: a server whose transport
// initialize did not advertise is refused with its type in the data.
func TestV2MCPServersNeedAdvertisedTransports(t *testing.T) {
	c := startV2(t, newFakeAgentV2())
	c.InitializeV2(nil)
	resp, _ := c.Call(acpv2.MethodSessionNew, json.RawMessage(`{"cwd":"/w","mcpServers":[{"type":"http","name":"h","url":"http://127.0.0.1:1/mcp"}]}`))
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)
	assert.JSONEq(t, `{"type":"http"}`, string(resp.Error.Data))
	resp, _ = c.Call(acpv2.MethodSessionNew, json.RawMessage(`{"cwd":"/w","mcpServers":[{"type":"stdio","name":"s","command":"/bin/true"}]}`))
	acptest.MustResult(t, resp, nil)
}

// authAgentV2 advertises a login method.
type authAgentV2 struct {
	*fakeAgentV2
	logins int
}

func (a *authAgentV2) Initialize(ctx context.Context, req *acpv2.InitializeRequest) (*acpv2.InitializeResponse, error) {
	resp, err := a.fakeAgentV2.Initialize(ctx, req)
	resp.AuthMethods = []acpv2.AuthMethod{{Agent: &acpv2.AuthMethodAgent{MethodID: "key", Name: "API key"}}}
	return resp, err
}
func (a *authAgentV2) Login(context.Context, *acpv2.LoginAuthRequest) error   { a.logins++; return nil }
func (a *authAgentV2) Logout(context.Context, *acpv2.LogoutAuthRequest) error { return nil }

// TestV2LogoutIsPerConnection: after auth/logout, session/new answers
// -32000 on that connection until auth/login; authMethods are advertised
// only by an agent that serves both.
func TestV2LogoutIsPerConnection(t *testing.T) {
	a := &authAgentV2{fakeAgentV2: newFakeAgentV2()}
	srv := acp.NewServer(&fakeAgent{}, acp.Options{V2: a})
	c := acptest.Connect(t, srv)
	r := c.InitializeV2(nil)
	require.Len(t, r.AuthMethods, 1)
	other := acptest.Connect(t, srv)
	other.InitializeV2(nil)

	resp, _ := c.Call(acpv2.MethodAuthLogout, map[string]any{})
	acptest.MustResult(t, resp, nil)
	resp, _ = c.Call(acpv2.MethodSessionNew, &acpv2.NewSessionRequest{CWD: "/w"})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeAuthRequired, resp.Error.Code)
	other.NewSessionV2("/w")
	resp, _ = c.Call(acpv2.MethodAuthLogin, &acpv2.LoginAuthRequest{MethodID: "key"})
	acptest.MustResult(t, resp, nil)
	c.NewSessionV2("/w")
	assert.Equal(t, 1, a.logins)
}

// TestSessionsMoveBetweenVersions: a session is live on one connection
// at a time whatever its version: resuming it on a v2 connection closes it
// on the v1 one, and loading it on a v1 one closes it on the v2 one.
func TestSessionsMoveBetweenVersions(t *testing.T) {
	a2 := newFakeAgentV2()
	srv := acp.NewServer(storeAgent{&fakeAgent{}}, acp.Options{V2: a2})
	v2 := acptest.Connect(t, srv)
	v2.InitializeV2(nil)
	sid := v2.NewSessionV2("/w")
	v1 := acptest.Connect(t, srv)
	v1.Initialize(nil)
	resp, _ := v1.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: sid, CWD: "/w", MCPServers: []acp.McpServer{}})
	acptest.MustResult(t, resp, nil)
	assert.Eventually(t, func() bool {
		a2.mu.Lock()
		defer a2.mu.Unlock()
		return len(a2.closed) == 1 && a2.closed[0] == sid
	}, 5*time.Second, 10*time.Millisecond, "the v2 session was closed")
	resp, _ = v2.Call(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: textV2("q")})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeResourceNotFound, resp.Error.Code)

	resp, _ = v2.Call(acpv2.MethodSessionResume, &acpv2.ResumeSessionRequest{SessionID: sid, CWD: "/w"})
	acptest.MustResult(t, resp, nil)
	resp, _ = v1.Call(acp.MethodSessionPrompt, textPrompt(sid, "q"))
	require.NotNil(t, resp.Error, "the v1 connection lost it")
	assert.Equal(t, acp.CodeResourceNotFound, resp.Error.Code)
}

// TestV2EndOfInputEndsTheWork: when the input ends, a running turn is
// cancelled and its idle state_update written, held prompts are answered
// -32800, and the sessions are closed before the stream is.
func TestV2EndOfInputEndsTheWork(t *testing.T) {
	a := newFakeAgentV2()
	a.turn = func(ctx context.Context, s *fakeSessionV2, msgID string, _ *acpv2.PromptRequest) acpv2.StopReason {
		<-ctx.Done()
		return acpv2.StopReasonEndTurn
	}
	c := startV2(t, a)
	c.InitializeV2(nil)
	sid := c.NewSessionV2("/w")
	resp, _ := c.Call(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: textV2("wait")})
	acptest.MustResult(t, resp, nil)
	held := c.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: textV2("held")})
	time.Sleep(50 * time.Millisecond) // the held prompt is read before the input ends
	c.EndInput()                      // not Stop: it drains the messages this test reads
	var kinds []string
	for {
		m, ok := c.NextWithin(5 * time.Second)
		if !ok {
			t.Fatal("no end")
		}
		if m.IsResponse() && string(m.ID) == held {
			require.NotNil(t, m.Error)
			assert.Equal(t, acp.CodeRequestCancelled, m.Error.Code)
			kinds = append(kinds, "held answered")
			continue
		}
		kinds = append(kinds, updateKinds(t, []acptest.Message{m})...)
		if kinds[len(kinds)-1] == "state_update:idle:cancelled" {
			break
		}
	}
	assert.Contains(t, kinds, "held answered")
	// The session is closed after its last update is written: read under
	// the lock its Close takes, not while holding it.
	assert.Eventually(t, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.closed) == 1
	}, time.Second, 10*time.Millisecond)
}

// TestV2ToolCallCancelNeedsACanceller: a session that cancels no tool
// call answers tool_call/cancel -32602, as the SDK does.
func TestV2ToolCallCancelNeedsACanceller(t *testing.T) {
	c := startV2(t, newFakeAgentV2())
	c.InitializeV2(nil)
	sid := c.NewSessionV2("/w")
	for _, m := range []struct{ method, member string }{{acpv2.MethodToolCallCancel, "toolCallId"}, {acpv2.MethodTerminalCancel, "terminalId"}} {
		resp, _ := c.Call(m.method, map[string]string{"sessionId": sid, m.member: "t1"})
		require.NotNil(t, resp.Error, m.method)
		assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code, m.method)
		assert.Contains(t, resp.Error.Message, fmt.Sprintf("%s: ", m.member))
	}
}
