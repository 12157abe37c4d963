package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// fakeAgent is an acp.Agent whose sessions run the test's prompt function.
type fakeAgent struct {
	prompt func(ctx context.Context, c *acp.ClientConn, req *acp.PromptRequest) (*acp.PromptResponse, error)

	mu     sync.Mutex
	n      int
	closed []string
}

func (a *fakeAgent) Initialize(context.Context, *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	return &acp.InitializeResponse{AgentInfo: &acp.Implementation{Name: "fake", Version: "1"}}, nil
}

func (a *fakeAgent) Authenticate(context.Context, *acp.AuthenticateRequest) error { return nil }

func (a *fakeAgent) NewSession(_ context.Context, _ *acp.NewSessionRequest, c *acp.ClientConn) (acp.Session, *acp.NewSessionResponse, error) {
	a.mu.Lock()
	a.n++
	id := "s" + strconv.Itoa(a.n)
	a.mu.Unlock()
	return newFakeSession(a, id, c), &acp.NewSessionResponse{SessionID: id}, nil
}

// fakeSession runs its prompts one at a time, in the order they were
// queued, on its own goroutine (as a real session's worker does).
type fakeSession struct {
	a    *fakeAgent
	id   string
	c    *acp.ClientConn
	jobs chan func()
	done chan struct{}
}

func newFakeSession(a *fakeAgent, id string, c *acp.ClientConn) *fakeSession {
	s := &fakeSession{a: a, id: id, c: c, jobs: make(chan func(), 64), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for job := range s.jobs {
			job()
		}
	}()
	return s
}

func (s *fakeSession) Prompt(ctx context.Context, req *acp.PromptRequest, finish func(*acp.PromptResponse, error)) error {
	s.jobs <- func() {
		if s.a.prompt == nil {
			finish(&acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil)
			return
		}
		finish(s.a.prompt(ctx, s.c, req))
	}
	return nil
}

func (s *fakeSession) Cancel() {}

func (s *fakeSession) Close() error {
	close(s.jobs)
	<-s.done
	s.a.mu.Lock()
	s.a.closed = append(s.a.closed, s.id)
	s.a.mu.Unlock()
	return nil
}

func textPrompt(sessionID, text string) *acp.PromptRequest {
	return &acp.PromptRequest{SessionID: sessionID, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}
}

func chunkText(t testing.TB, m acptest.Message) string {
	t.Helper()
	u := m.Update(t).Update
	require.NotNil(t, u.AgentMessageChunk, "expected agent_message_chunk, got %s", m.Raw)
	require.NotNil(t, u.AgentMessageChunk.Content.Text)
	return u.AgentMessageChunk.Content.Text.Text
}

// chunksText is the text of agent_message_chunk notifications, joined.
func chunksText(t testing.TB, ms []acptest.Message) string {
	t.Helper()
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(chunkText(t, m))
	}
	return b.String()
}

func start(t *testing.T, a acp.Agent, opts acp.Options) *acptest.Client {
	return acptest.Pipe(t, acp.NewAgentService(a, opts))
}

// TestBadInputKeepsConnection sends each kind of bad line, checks the error
// reply, and then checks that a good request is still answered.
func TestBadInputKeepsConnection(t *testing.T) {
	longLine := `{"jsonrpc":"2.0","id":99,"method":"initialize","params":{"protocolVersion":1,"pad":"` + strings.Repeat("x", 70000) + `"}}`
	tests := []struct {
		name     string
		line     string
		wantCode int64  // 0: no reply expected
		wantID   string // JSON of the reply's id
		wantMsg  string // substring of the error message
	}{
		{"not JSON", `hello`, acp.CodeParseError, "null", "parse error"},
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,"method":`, acp.CodeParseError, "null", "parse error"},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"initialize"} x`, acp.CodeParseError, "null", "parse error"},
		{"empty batch", `[]`, acp.CodeInvalidRequest, "null", "batch"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}]`, acp.CodeInvalidRequest, "null", "batch"},
		{"number", `42`, acp.CodeInvalidRequest, "null", "JSON object"},
		{"string", `"x"`, acp.CodeInvalidRequest, "null", "JSON object"},
		{"missing jsonrpc", `{"id":3,"method":"initialize","params":{"protocolVersion":1}}`, acp.CodeInvalidRequest, "3", `"jsonrpc"`},
		{"wrong jsonrpc version", `{"jsonrpc":"1.0","id":3,"method":"initialize","params":{"protocolVersion":1}}`, acp.CodeInvalidRequest, "3", `"jsonrpc"`},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{"protocolVersion":1}}`, acp.CodeInvalidRequest, "null", `"id"`},
		{"negative id", `{"jsonrpc":"2.0","id":-1,"method":"initialize","params":{"protocolVersion":1}}`, acp.CodeInvalidRequest, "null", `"id"`},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"initialize","params":{"protocolVersion":1}}`, acp.CodeInvalidRequest, "null", `"id"`},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"initialize","params":{"protocolVersion":1}}`, acp.CodeInvalidRequest, "null", `"id"`},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"initialize","params":{"protocolVersion":1}}`, acp.CodeInvalidRequest, "null", `"id"`},
		{"huge id", `{"jsonrpc":"2.0","id":1e400,"method":"initialize","params":{"protocolVersion":1}}`, acp.CodeInvalidRequest, "null", `"id"`},
		{"method not a string", `{"jsonrpc":"2.0","id":4,"method":7}`, acp.CodeInvalidRequest, "4", `"method"`},
		{"case-folded key", `{"jsonrpc":"2.0","id":4,"METHOD":"initialize"}`, acp.CodeInvalidRequest, "4", "case-sensitive"},
		{"unicode-folded key", `{"jsonrpc":"2.0","id":4,"method":"initialize","paramſ":{}}`, acp.CodeInvalidRequest, "4", "case-sensitive"},
		{"duplicate method", `{"jsonrpc":"2.0","id":4,"method":"session/new","method":"initialize","params":{"protocolVersion":1}}`, acp.CodeInvalidRequest, "4", "duplicate"},
		{"request and response", `{"jsonrpc":"2.0","id":4,"method":"initialize","result":{}}`, acp.CodeInvalidRequest, "4", "both"},
		{"neither request nor response", `{"jsonrpc":"2.0","id":4}`, acp.CodeInvalidRequest, "4", "neither"},
		{"params not an object", `{"jsonrpc":"2.0","id":4,"method":"initialize","params":5}`, acp.CodeInvalidRequest, "4", `"params"`},
		{"line over the limit", longLine, acp.CodeInvalidRequest, "null", "longer than"},
		{"deep nesting", strings.Repeat("[", 10001) + strings.Repeat("]", 10001), acp.CodeParseError, "null", "parse error"},
		{"blank line", `   `, 0, "", ""},
		{"unknown method", `{"jsonrpc":"2.0","id":5,"method":"no/such/method","params":{}}`, acp.CodeMethodNotFound, "5", "no/such/method"},
		{"unknown extension method", `{"jsonrpc":"2.0","id":5,"method":"_vendor/thing","params":{}}`, acp.CodeMethodNotFound, "5", "_vendor/thing"},
		{"unknown notification", `{"jsonrpc":"2.0","method":"_vendor/ping","params":{}}`, 0, "", ""},
		{"response to nothing we sent", `{"jsonrpc":"2.0","id":12345,"result":{}}`, 0, "", ""},
		{"missing params", `{"jsonrpc":"2.0","id":6,"method":"session/new"}`, acp.CodeInvalidParams, "6", "params"},
		{"null params", `{"jsonrpc":"2.0","id":6,"method":"session/new","params":null}`, acp.CodeInvalidParams, "6", "params"},
		{"relative cwd", `{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"rel/dir","mcpServers":[]}}`, acp.CodeInvalidParams, "6", "cwd"},
		{"cwd of wrong type", `{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":5,"mcpServers":[]}}`, acp.CodeInvalidParams, "6", "cwd"},
		{"missing mcpServers", `{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"/tmp"}}`, acp.CodeInvalidParams, "6", "mcpServers"},
		{"unknown session", `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}`, acp.CodeResourceNotFound, "7", "nope"},
		{"prompt without sessionId", `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"prompt":[]}}`, acp.CodeInvalidParams, "7", "sessionId"},
		{"cancel sent as a request", `{"jsonrpc":"2.0","id":8,"method":"session/cancel","params":{"sessionId":"x"}}`, acp.CodeInvalidRequest, "8", "notification"},
		{"cancel for unknown session", `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"x"}}`, 0, "", ""},
		{"string id", `{"jsonrpc":"2.0","id":"abc","method":"no/such","params":{}}`, acp.CodeMethodNotFound, `"abc"`, "no/such"},
	}
	c := start(t, &fakeAgent{}, acp.Options{MaxMessageBytes: 64 << 10})
	c.Initialize(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.SendLine(tt.line)
			if tt.wantCode != 0 {
				m := c.Next()
				require.NotNil(t, m.Error, "expected an error reply, got %s", m.Raw)
				assert.Equal(t, tt.wantCode, m.Error.Code, "reply %s", m.Raw)
				assert.JSONEq(t, tt.wantID, string(m.ID), "reply id")
				assert.Contains(t, m.Error.Message, tt.wantMsg)
			}
			// The connection is still up: a good request is answered, and
			// nothing else was written before it.
			resp, before := c.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: "/tmp", MCPServers: []acp.McpServer{}})
			assert.Empty(t, before, "unexpected messages before the good response")
			acptest.MustResult(t, resp, nil)
		})
	}
}

func TestRequestBeforeInitializeIsInvalid(t *testing.T) {
	c := start(t, &fakeAgent{}, acp.Options{})
	resp, _ := c.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: "/tmp", MCPServers: []acp.McpServer{}})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeInvalidRequest, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "initialize")

	init := c.Initialize(nil)
	assert.Equal(t, acp.ProtocolVersionV1, init.ProtocolVersion)
	assert.NotEmpty(t, c.NewSession("/tmp"))
}

func TestInitializeAnswersVersionOne(t *testing.T) {
	for _, requested := range []int{1, 0, 2, 65535} {
		t.Run(strconv.Itoa(requested), func(t *testing.T) {
			c := start(t, &fakeAgent{}, acp.Options{})
			resp, _ := c.Call(acp.MethodInitialize, map[string]any{"protocolVersion": requested, "clientCapabilities": map[string]any{}})
			var r acp.InitializeResponse
			acptest.MustResult(t, resp, &r)
			assert.Equal(t, acp.ProtocolVersionV1, r.ProtocolVersion)
		})
	}
}

func TestDuplicateInflightIDIsRejected(t *testing.T) {
	release := make(chan struct{})
	a := &fakeAgent{prompt: func(ctx context.Context, _ *acp.ClientConn, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
		<-release
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}}
	c := start(t, a, acp.Options{})
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":"dup","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"x"}]}}`, sid)
	c.SendLine(line)
	c.SendLine(line)
	m := c.Next()
	require.NotNil(t, m.Error, "%s", m.Raw)
	assert.Equal(t, acp.CodeInvalidRequest, m.Error.Code)
	assert.Contains(t, m.Error.Message, "already in use")
	close(release)
	m = c.Next()
	assert.JSONEq(t, `{"stopReason":"end_turn"}`, string(m.Result))
}

// TestUpdatesArriveInOrderBeforeResponse streams 10,000 chunks and checks
// that they arrive strictly in order and that the response comes last.
func TestUpdatesArriveInOrderBeforeResponse(t *testing.T) {
	const n = 10000
	a := &fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
		for i := range n {
			if err := c.Update(ctx, acp.AgentMessageChunk(strconv.Itoa(i))); err != nil {
				return nil, err
			}
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}}
	c := start(t, a, acp.Options{})
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	resp, before := c.Call(acp.MethodSessionPrompt, textPrompt(sid, "go"))
	acptest.MustResult(t, resp, nil)
	require.NotEmpty(t, before)
	require.LessOrEqual(t, len(before), n)
	var want strings.Builder
	for i := range n {
		want.WriteString(strconv.Itoa(i))
	}
	for _, m := range before {
		require.Equal(t, sid, m.Update(t).SessionID)
	}
	// Chunks that waited for the connection may come merged: the text is
	// whole and in order either way.
	require.Equal(t, want.String(), chunksText(t, before), "chunks lost or out of order")
	// Nothing of the turn follows the response.
	if m, ok := c.NextWithin(100 * time.Millisecond); ok {
		t.Fatalf("message after the prompt response: %s", m.Raw)
	}
}

// TestCancelEndsTurnWithCancelled cancels a turn that streams without end.
func TestCancelEndsTurnWithCancelled(t *testing.T) {
	stopped := make(chan error, 1)
	a := &fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
		for i := 0; ; i++ {
			if err := c.Update(ctx, acp.AgentMessageChunk(strconv.Itoa(i))); err != nil {
				stopped <- err
				// An agent that reports cancellation as an error still
				// gets a "cancelled" result on the wire.
				return nil, fmt.Errorf("streaming: %w", err)
			}
			time.Sleep(time.Millisecond)
		}
	}}
	c := start(t, a, acp.Options{})
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	id := c.Request(acp.MethodSessionPrompt, textPrompt(sid, "go"))
	for range 5 {
		chunkText(t, c.Next())
	}
	c.Notify(acp.MethodSessionCancel, &acp.CancelNotification{SessionID: sid})
	resp, _ := c.Await(id)
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result))
	select {
	case err := <-stopped:
		assert.Error(t, err)
	case <-time.After(time.Second):
		t.Fatal("the turn's context was not cancelled")
	}
	if m, ok := c.NextWithin(100 * time.Millisecond); ok {
		t.Fatalf("message after the cancelled response: %s", m.Raw)
	}
	// The session takes a new prompt afterwards.
	a.prompt = nil
	resp, _ = c.Call(acp.MethodSessionPrompt, textPrompt(sid, "again"))
	assert.JSONEq(t, `{"stopReason":"end_turn"}`, string(resp.Result))
}

// TestSecondPromptIsQueued: a prompt sent while the session's turn runs
// is not rejected; it runs after the first and is answered after it.
func TestSecondPromptIsQueued(t *testing.T) {
	release := make(chan struct{})
	a := &fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, req *acp.PromptRequest) (*acp.PromptResponse, error) {
		if req.Prompt[0].Text.Text == "one" {
			<-release
		}
		if err := c.Update(ctx, acp.AgentMessageChunk("answer to "+req.Prompt[0].Text.Text)); err != nil {
			return nil, err
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}}
	c := start(t, a, acp.Options{})
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	first := c.Request(acp.MethodSessionPrompt, textPrompt(sid, "one"))
	second := c.Request(acp.MethodSessionPrompt, textPrompt(sid, "two"))
	if m, ok := c.NextWithin(50 * time.Millisecond); ok {
		t.Fatalf("nothing may be written while the first turn waits: %s", m.Raw)
	}
	close(release)
	resp, before := c.Await(first)
	assert.JSONEq(t, `{"stopReason":"end_turn"}`, string(resp.Result))
	require.Len(t, before, 1)
	assert.Equal(t, "answer to one", chunkText(t, before[0]))
	resp, before = c.Await(second)
	assert.JSONEq(t, `{"stopReason":"end_turn"}`, string(resp.Result))
	require.Len(t, before, 1)
	assert.Equal(t, "answer to two", chunkText(t, before[0]))
}

// TestPromptAwaitsClientRequest checks that a running prompt can call the
// client and get the answer (the read loop is never blocked by a handler).
func TestPromptAwaitsClientRequest(t *testing.T) {
	a := &fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
		resp, err := c.RequestPermission(ctx, &acp.RequestPermissionRequest{
			ToolCall: acp.ToolCallUpdate{ToolCallID: "call_1"},
			Options: []acp.PermissionOption{
				{OptionID: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
				{OptionID: "reject", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
			},
		})
		if err != nil {
			return nil, err
		}
		if resp.Outcome.Selected == nil {
			return nil, errors.New("no option selected")
		}
		if err := c.Update(ctx, acp.AgentMessageChunk("chose "+resp.Outcome.Selected.OptionID)); err != nil {
			return nil, err
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}}
	c := start(t, a, acp.Options{})
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	id := c.Request(acp.MethodSessionPrompt, textPrompt(sid, "go"))
	req := c.Next()
	require.Equal(t, acp.MethodSessionRequestPermission, req.Method, "%s", req.Raw)
	var p acp.RequestPermissionRequest
	require.NoError(t, json.Unmarshal(req.Params, &p))
	assert.Equal(t, sid, p.SessionID)
	c.Respond(req.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}})
	resp, before := c.Await(id)
	assert.JSONEq(t, `{"stopReason":"end_turn"}`, string(resp.Result))
	require.Len(t, before, 1)
	assert.Equal(t, "chose allow", chunkText(t, before[0]))
}

// TestCancelDuringClientRequestSendsCancelRequest: a turn waiting on the
// client is cancelled; the agent tells the client with $/cancel_request and
// answers the prompt with "cancelled".
func TestCancelDuringClientRequestSendsCancelRequest(t *testing.T) {
	a := &fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
		_, err := c.RequestPermission(ctx, &acp.RequestPermissionRequest{
			ToolCall: acp.ToolCallUpdate{ToolCallID: "call_1"},
			Options:  []acp.PermissionOption{{OptionID: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce}},
		})
		return nil, err
	}}
	c := start(t, a, acp.Options{})
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	id := c.Request(acp.MethodSessionPrompt, textPrompt(sid, "go"))
	req := c.Next()
	require.Equal(t, acp.MethodSessionRequestPermission, req.Method)
	c.Notify(acp.MethodSessionCancel, &acp.CancelNotification{SessionID: sid})
	cancelReq := c.Next()
	require.Equal(t, acp.MethodCancelRequest, cancelReq.Method, "%s", cancelReq.Raw)
	assert.JSONEq(t, `{"requestId":`+string(req.ID)+`}`, string(cancelReq.Params))
	resp, _ := c.Await(id)
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result))
	// The client's late answer to the cancelled request is harmless.
	c.RespondError(req.ID, acp.CodeRequestCancelled, "cancelled")
	c.Initialize(nil)
}

// serveRaw serves a on pipes under ctx, leaving the shutdown to the test:
// it returns the client, the agent's input and Serve's result.
func serveRaw(t *testing.T, ctx context.Context, a acp.Agent) (*acptest.Client, io.WriteCloser, <-chan error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- acp.NewAgentService(a, acp.Options{}).Serve(ctx, inR, outW); outW.Close() }()
	return acptest.New(t, inW, outR), inW, done
}

// TestEOFCancelsRunningTurns closes the agent's input during a turn: Serve
// cancels the turn, writes its response and returns promptly.
func TestEOFCancelsRunningTurns(t *testing.T) {
	started := make(chan struct{})
	a := &fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	c, inW, done := serveRaw(t, context.Background(), a)
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	id := c.Request(acp.MethodSessionPrompt, textPrompt(sid, "go"))
	<-started
	inW.Close()
	resp, _ := c.Await(id)
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("Serve did not return within 2s of EOF")
	}
	c.ExpectEOF(time.Second)
	assert.Equal(t, []string{sid}, a.closed, "sessions are closed at shutdown")
}

// TestContextCancelShutsDown is the SIGTERM path: the ctx given to Serve is
// cancelled during a turn.
func TestContextCancelShutsDown(t *testing.T) {
	started := make(chan struct{})
	a := &fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	c, inW, done := serveRaw(t, ctx, a)
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	id := c.Request(acp.MethodSessionPrompt, textPrompt(sid, "go"))
	<-started
	cancel()
	resp, _ := c.Await(id)
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("Serve did not return within 2s of cancellation")
	}
	inW.Close()
	c.ExpectEOF(time.Second)
}

// A $/cancel_request whose requestId cannot be read exactly ("\ud800",
// which encoding/json reads as U+FFFD) cancels nothing, not even the
// request whose id is U+FFFD.
func TestCancelRequestWithAnInexactIDCancelsNothing(t *testing.T) {
	a := &fakeAgent{prompt: func(ctx context.Context, _ *acp.ClientConn, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	c := start(t, a, acp.Options{})
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	c.SendLine(`{"jsonrpc":"2.0","id":"\ufffd","method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[]}}`)
	c.SendLine(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"\ud800"}}`)
	if m, ok := c.NextWithin(200 * time.Millisecond); ok {
		t.Fatalf("the prompt was cancelled by another id: %s", m.Raw)
	}
	c.SendLine(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"\ufffd"}}`)
	m := c.Next()
	var id string
	require.NoError(t, json.Unmarshal(m.ID, &id))
	assert.Equal(t, "\ufffd", id)
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(m.Result))
}

// TestIDMayBeReusedOnceAnswered: JSON-RPC asks ids to be unique among the
// requests in flight only, so a client may send the next request with the
// id of one it has the response to. The id must be free by then.
func TestIDMayBeReusedOnceAnswered(t *testing.T) {
	c := start(t, &fakeAgent{}, acp.Options{})
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	prompt := fmt.Sprintf(`{"jsonrpc":"2.0","id":"again","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"x"}]}}`, sid)
	newSession := `{"jsonrpc":"2.0","id":"again","method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`
	for i := range 300 {
		for _, line := range []string{prompt, newSession} {
			c.SendLine(line)
			m := c.Next()
			require.Nil(t, m.Error, "round %d: %s", i, m.Raw)
		}
	}
}
