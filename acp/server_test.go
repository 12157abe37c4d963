package acp_test

import (
	"context"
	"encoding/json"
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

// capsText is how the prompts of these tests report the capabilities
// their session's ClientConn has.
func capsText(c *acp.ClientConn) string {
	caps := c.Capabilities()
	return fmt.Sprintf("fs.read=%v terminal=%v", caps.FS.ReadTextFile, caps.Terminal)
}

// streamingAgent's prompts report their capabilities, then stream the
// number of chunks their text asks for, then end the turn; a prompt
// "wait" streams until it is cancelled. The capabilities are a message of
// their own: the outbox never merges them into the streamed chunks.
func streamingAgent() *fakeAgent {
	return &fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, req *acp.PromptRequest) (*acp.PromptResponse, error) {
		caps := acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.TextBlock(capsText(c)), MessageID: "caps"}}
		if err := c.Update(ctx, caps); err != nil {
			return nil, err
		}
		text := req.Prompt[0].Text.Text
		if text == "wait" {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		n, _ := strconv.Atoi(text)
		for i := range n {
			if err := c.Update(ctx, acp.AgentMessageChunk(c.SessionID()+":"+strconv.Itoa(i))); err != nil {
				return nil, err
			}
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}}
}

// TestServerServesTwoConnectionsAtOnce serves two clients from one
// Server over in-memory pipes: each has its own capabilities and its own
// sessions, both stream at the same time, and neither sees nor reaches
// the other's sessions.
func TestServerServesTwoConnectionsAtOnce(t *testing.T) {
	srv := acp.NewServer(streamingAgent(), acp.Options{})
	a := acptest.Connect(t, srv)
	b := acptest.Connect(t, srv)
	a.Initialize(&acp.ClientCapabilities{FS: acp.FileSystemCapabilities{ReadTextFile: true}})
	b.Initialize(&acp.ClientCapabilities{Terminal: true})
	sa := a.NewSession("/tmp")
	sb := b.NewSession("/tmp")
	require.NotEqual(t, sa, sb)

	// Both connections stream a long turn at once; each client reads its
	// own connection on its own goroutine.
	const n = 5000
	type result struct {
		resp   acptest.Message
		before []acptest.Message
	}
	results := make([]result, 2)
	var wg sync.WaitGroup
	for i, c := range []*acptest.Client{a, b} {
		sid := []string{sa, sb}[i]
		id := c.Request(acp.MethodSessionPrompt, textPrompt(sid, strconv.Itoa(n)))
		wg.Go(func() {
			resp, before := c.Await(id)
			results[i] = result{resp, before}
		})
	}
	wg.Wait()
	for i, want := range []struct{ sid, caps string }{{sa, "fs.read=true terminal=false"}, {sb, "fs.read=false terminal=true"}} {
		r := results[i]
		acptest.MustResult(t, r.resp, nil)
		require.GreaterOrEqual(t, len(r.before), 2, "connection %d", i)
		assert.Equal(t, want.caps, chunkText(t, r.before[0]), "connection %d has its own capabilities", i)
		var wantText strings.Builder
		for j := range n {
			wantText.WriteString(want.sid + ":" + strconv.Itoa(j))
		}
		for _, m := range r.before[1:] {
			require.Equal(t, want.sid, m.Update(t).SessionID, "connection %d got another connection's update", i)
		}
		// Chunks that waited for the connection may come merged: the
		// text is whole and in order either way.
		require.Equal(t, wantText.String(), chunksText(t, r.before[1:]), "connection %d: chunks lost or out of order", i)
	}

	// b neither sees nor reaches a's session.
	running := a.Request(acp.MethodSessionPrompt, textPrompt(sa, "wait"))
	assert.Equal(t, "fs.read=true terminal=false", chunkText(t, a.Next()))
	for _, call := range []struct {
		method string
		params any
	}{
		{acp.MethodSessionPrompt, textPrompt(sa, "1")},
		{acp.MethodSessionClose, &acp.CloseSessionRequest{SessionID: sa}},
		{acp.MethodSessionSetMode, &acp.SetSessionModeRequest{SessionID: sa, ModeID: "x"}},
		{acp.MethodExtSessionStats, map[string]any{"sessionId": sa}},
	} {
		resp, before := b.Call(call.method, call.params)
		require.NotNil(t, resp.Error, "%s of the other connection's session: %s", call.method, resp.Raw)
		assert.Equal(t, acp.CodeResourceNotFound, resp.Error.Code, call.method)
		assert.Empty(t, before)
	}
	b.Notify(acp.MethodSessionCancel, &acp.CancelNotification{SessionID: sa})
	if m, ok := a.NextWithin(100 * time.Millisecond); ok {
		t.Fatalf("b's session/cancel reached a's turn: %s", m.Raw)
	}
	// a's own cancel ends it; nothing of it reaches b.
	a.Notify(acp.MethodSessionCancel, &acp.CancelNotification{SessionID: sa})
	resp, _ := a.Await(running)
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result))
	if m, ok := b.NextWithin(100 * time.Millisecond); ok {
		t.Fatalf("b received a message of a's session: %s", m.Raw)
	}

	// Ending one connection ends its sessions only.
	a.Stop()
	resp, before := b.Call(acp.MethodSessionPrompt, textPrompt(sb, "2"))
	acptest.MustResult(t, resp, nil)
	require.NotEmpty(t, before)
	assert.Equal(t, "fs.read=false terminal=true"+sb+":0"+sb+":1", chunksText(t, before))
}

// pipeListener is a Listener of in-memory LineStreams; dial makes one and
// returns the client's end.
type pipeListener struct {
	streams chan acp.Stream
}

func (l *pipeListener) Accept(ctx context.Context) (acp.Stream, error) {
	select {
	case s := <-l.streams:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pipeConn is the agent's end of a dialled connection: closing it closes
// both pipes, as closing a socket would.
type pipeConn struct {
	*io.PipeReader
	w *io.PipeWriter
}

func (c pipeConn) Close() error {
	c.w.Close()
	return c.PipeReader.Close()
}

func (l *pipeListener) dial(t *testing.T) *acptest.Client {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	l.streams <- acp.NewLineStream(pipeConn{inR, outW}, outW, 0)
	c := acptest.New(t, inW, outR)
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return c
}

// TestServeShutsEveryConnectionDownOnCancel: Serve serves what its
// listener accepts; cancelling its context cancels the turns of every
// connection, which answer "cancelled", and Serve returns once all have
// ended.
func TestServeShutsEveryConnectionDownOnCancel(t *testing.T) {
	l := &pipeListener{streams: make(chan acp.Stream)}
	srv := acp.NewServer(streamingAgent(), acp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()

	clients := []*acptest.Client{l.dial(t), l.dial(t)}
	var running []string
	for _, c := range clients {
		c.Initialize(nil)
		sid := c.NewSession("/tmp")
		running = append(running, c.Request(acp.MethodSessionPrompt, textPrompt(sid, "wait")))
		chunkText(t, c.Next())
	}
	cancel()
	for i, c := range clients {
		resp, _ := c.Await(running[i])
		assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result))
		c.ExpectEOF(2 * time.Second)
	}
	select {
	case err := <-served:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context was cancelled")
	}
}

// storeAgent is a fakeAgent whose sessions can be loaded by id, from any
// connection.
type storeAgent struct {
	*fakeAgent
}

func (a storeAgent) LoadSession(_ context.Context, req *acp.LoadRequest, c *acp.ClientConn) (acp.Session, *acp.LoadedSession, error) {
	return newFakeSession(a.fakeAgent, req.SessionID, c), &acp.LoadedSession{}, nil
}

func (a storeAgent) ListSessions(context.Context, *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	return &acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}, nil
}

func (a storeAgent) DeleteSession(context.Context, acp.SessionId) error { return nil }

// TestResumeTakesASessionOverFromAnotherConnection: a session is live on
// one connection at a time. Resuming it on another closes it on the first
// (its turn answers "cancelled" there) and moves it over.
func TestResumeTakesASessionOverFromAnotherConnection(t *testing.T) {
	fa := streamingAgent()
	srv := acp.NewServer(storeAgent{fa}, acp.Options{})
	a := acptest.Connect(t, srv)
	b := acptest.Connect(t, srv)
	a.Initialize(nil)
	b.Initialize(&acp.ClientCapabilities{Terminal: true})
	resume := &acp.ResumeSessionRequest{SessionID: "s9", CWD: "/tmp"}
	resp, _ := a.Call(acp.MethodSessionResume, resume)
	acptest.MustResult(t, resp, nil)
	running := a.Request(acp.MethodSessionPrompt, textPrompt("s9", "wait"))
	chunkText(t, a.Next())

	resp, _ = b.Call(acp.MethodSessionResume, resume)
	acptest.MustResult(t, resp, nil)
	resp, _ = a.Await(running)
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result), "the turn on the first connection ends")
	fa.mu.Lock()
	assert.Equal(t, []string{"s9"}, fa.closed, "the first connection's copy is closed")
	fa.mu.Unlock()

	resp, _ = a.Call(acp.MethodSessionPrompt, textPrompt("s9", "1"))
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeResourceNotFound, resp.Error.Code, "no longer live on the first connection")
	resp, before := b.Call(acp.MethodSessionPrompt, textPrompt("s9", "1"))
	acptest.MustResult(t, resp, nil)
	require.Len(t, before, 2)
	assert.Equal(t, "fs.read=false terminal=true", chunkText(t, before[0]), "it runs with the new connection's capabilities")
}

// logoutAgent is a fakeAgent that supports logout.
type logoutAgent struct {
	*fakeAgent
	logouts int
}

func (a *logoutAgent) Logout(context.Context, *acp.LogoutRequest) error {
	a.mu.Lock()
	a.logouts++
	a.mu.Unlock()
	return nil
}

// TestLogoutIsPerConnection: logout is advertised when the agent serves
// it; after it, this connection needs authenticate before it opens a
// session, other connections do not, and open sessions keep working.
func TestLogoutIsPerConnection(t *testing.T) {
	plain := acptest.Connect(t, acp.NewServer(&fakeAgent{}, acp.Options{}))
	init := plain.Initialize(nil)
	assert.Nil(t, init.AgentCapabilities.Auth.Logout, "not advertised by an agent without Logout")
	assert.NotNil(t, init.AgentCapabilities.SessionCapabilities.Close, "the service serves session/close itself")
	assert.False(t, init.AgentCapabilities.LoadSession)
	resp, _ := plain.Call(acp.MethodLogout, &acp.LogoutRequest{})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeMethodNotFound, resp.Error.Code)

	la := &logoutAgent{fakeAgent: &fakeAgent{}}
	srv := acp.NewServer(la, acp.Options{})
	a := acptest.Connect(t, srv)
	b := acptest.Connect(t, srv)
	init = a.Initialize(nil)
	assert.NotNil(t, init.AgentCapabilities.Auth.Logout)
	b.Initialize(nil)
	sid := a.NewSession("/tmp")

	resp, _ = a.Call(acp.MethodLogout, json.RawMessage(`{}`))
	acptest.MustResult(t, resp, nil)
	assert.JSONEq(t, `{}`, string(resp.Result))
	assert.Equal(t, 1, la.logouts)

	resp, _ = a.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: "/tmp", MCPServers: []acp.McpServer{}})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeAuthRequired, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "authenticate")
	resp, _ = a.Call(acp.MethodSessionPrompt, textPrompt(sid, "x"))
	acptest.MustResult(t, resp, nil) // open sessions stay open
	assert.NotEmpty(t, b.NewSession("/tmp"), "another connection is not logged out")

	resp, _ = a.Call(acp.MethodAuthenticate, &acp.AuthenticateRequest{MethodID: "any"})
	acptest.MustResult(t, resp, nil)
	assert.NotEmpty(t, a.NewSession("/tmp"))

	// Logout's params are optional, but must be an object when present.
	resp, _ = a.Call(acp.MethodLogout, nil)
	acptest.MustResult(t, resp, nil)
	resp, _ = a.Call(acp.MethodLogout, []int{1})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)
}

// chanStream is an in-memory Stream that keeps the SessionID of every
// message, as an HTTP transport would: the test sends on in (a message
// with nil Data stands for input the transport had to skip) and reads
// what the server wrote on out.
type chanStream struct {
	in     chan acp.Message
	out    chan acp.Message
	closed chan struct{}
	once   sync.Once
}

func newChanStream() *chanStream {
	return &chanStream{in: make(chan acp.Message), out: make(chan acp.Message, 100), closed: make(chan struct{})}
}

func (s *chanStream) Read(context.Context) (acp.Message, error) {
	select {
	case m, ok := <-s.in:
		if !ok {
			return acp.Message{}, io.EOF
		}
		if m.Data == nil {
			return acp.Message{SessionID: m.SessionID}, fmt.Errorf("%w: body too large", acp.ErrInvalidRequest)
		}
		return m, nil
	case <-s.closed:
		return acp.Message{}, acp.ErrClosed
	}
}

func (s *chanStream) Write(_ context.Context, msgs ...acp.Message) error {
	for _, m := range msgs {
		m.Data = append(json.RawMessage(nil), m.Data...) // Write must not keep Data
		s.out <- m
	}
	return nil
}

func (s *chanStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// next returns the next message the server wrote.
func (s *chanStream) next(t *testing.T) acp.Message {
	t.Helper()
	select {
	case m := <-s.out:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message from the server")
		return acp.Message{}
	}
}

// TestMessagesCarryTheirSession: what the server writes names the
// session it belongs to (a session's updates and requests to the client
// carry its id; a response carries the SessionID of its request), so a
// transport with a stream per session (Streamable HTTP) can route it
// without reading it. Skipped input is answered on the route it came by.
func TestMessagesCarryTheirSession(t *testing.T) {
	a := &fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
		if err := c.Update(ctx, acp.AgentMessageChunk("hi")); err != nil {
			return nil, err
		}
		if _, err := c.RequestPermission(ctx, &acp.RequestPermissionRequest{
			ToolCall: acp.ToolCallUpdate{ToolCallID: "call_1"},
			Options:  []acp.PermissionOption{{OptionID: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce}},
		}); err != nil {
			return nil, err
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}}
	s := newChanStream()
	served := make(chan error, 1)
	go func() { served <- acp.NewServer(a, acp.Options{}).ServeConn(context.Background(), s) }()

	s.in <- acp.Message{Data: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)}
	assert.Equal(t, "", s.next(t).SessionID)
	s.in <- acp.Message{Data: json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)}
	m := s.next(t)
	assert.Equal(t, "", m.SessionID, "session/new is answered on the connection")
	var created struct {
		Result acp.NewSessionResponse `json:"result"`
	}
	require.NoError(t, json.Unmarshal(m.Data, &created))
	sid := created.Result.SessionID

	s.in <- acp.Message{SessionID: sid, Data: json.RawMessage(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"x"}]}}`)}
	m = s.next(t)
	assert.Equal(t, sid, m.SessionID, "update")
	assert.Contains(t, string(m.Data), `"session/update"`)
	m = s.next(t)
	assert.Equal(t, sid, m.SessionID, "permission request")
	var call struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	require.NoError(t, json.Unmarshal(m.Data, &call))
	assert.Equal(t, acp.MethodSessionRequestPermission, call.Method)
	s.in <- acp.Message{SessionID: sid, Data: json.RawMessage(`{"jsonrpc":"2.0","id":` + string(call.ID) + `,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`)}
	m = s.next(t)
	assert.Equal(t, sid, m.SessionID, "prompt response")
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`, string(m.Data))

	s.in <- acp.Message{SessionID: "elsewhere"}
	m = s.next(t)
	assert.Equal(t, "elsewhere", m.SessionID)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: body too large"}}`, string(m.Data))

	close(s.in)
	select {
	case err := <-served:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("ServeConn did not return at the end of input")
	}
}
