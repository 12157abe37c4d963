package mcpclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
)

const (
	testHeader = "X-Api-Key"
	testSecret = "s3cret"
)

// slowTool lets a test observe a call that blocks until cancelled.
type slowTool struct {
	started   chan struct{}
	cancelled chan struct{}
}

// newTestServer is an in-process MCP server whose echo answers with prefix.
func newTestServer(prefix string, slow *slowTool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{
		Name: "echo", Title: "Echo", Description: "Echoes the message.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in messageIn) (*mcp.CallToolResult, any, error) {
		return textResult(prefix + in.Message), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "image"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "a dot:"},
			&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
		}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "resource"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "alpha"}},
			&mcp.ResourceLink{URI: "file:///b.txt", Name: "b.txt"},
		}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("disk on fire")
	})
	if slow != nil {
		mcp.AddTool(srv, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			close(slow.started)
			<-ctx.Done()
			close(slow.cancelled)
			return nil, nil, ctx.Err()
		})
	}
	return srv
}

// serve serves srv over transport ("http" or "sse") on an httptest server
// that requires the test header, and returns the ACP configuration.
func serve(t *testing.T, name, transport string, srv *mcp.Server) Server {
	t.Helper()
	get := func(*http.Request) *mcp.Server { return srv }
	var h http.Handler
	switch transport {
	case "http":
		h = mcp.NewStreamableHTTPHandler(get, nil)
	case "sse":
		h = mcp.NewSSEHandler(get, nil)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(testHeader) != testSecret {
			http.Error(w, "missing key", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // runs after the Manager's Close, registered later
	headers := []HTTPHeader{{Name: testHeader, Value: testSecret}}
	if transport == "sse" {
		return Server{SSE: &HTTPServer{Name: name, URL: ts.URL, Headers: headers}}
	}
	return Server{HTTP: &HTTPServer{Name: name, URL: ts.URL, Headers: headers}}
}

func connect(t *testing.T, servers []Server, opts Options) (*Manager, []Failure) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, failures := Connect(ctx, servers, opts)
	require.NotNil(t, m)
	t.Cleanup(func() { _ = m.Close() })
	return m, failures
}

func toolNames(tools []Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.QualifiedName)
	}
	return out
}

func TestHTTPAndSSEServersListAndCallTools(t *testing.T) {
	for _, transport := range []string{"http", "sse"} {
		t.Run(transport, func(t *testing.T) {
			cfg := serve(t, "srv", transport, newTestServer("Echo: ", nil))
			m, failures := connect(t, []Server{cfg}, Options{})
			require.Empty(t, failures)

			tools := m.Tools()
			assert.Equal(t, []string{"mcp__srv__echo", "mcp__srv__fail", "mcp__srv__image", "mcp__srv__resource"}, toolNames(tools))
			echo := tools[0]
			assert.Equal(t, "srv", echo.Server)
			assert.Equal(t, "echo", echo.Name)
			assert.Equal(t, "Echo", echo.Title)
			assert.Equal(t, "Echoes the message.", echo.Description)
			assert.True(t, echo.ReadOnly)
			assert.JSONEq(t, `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"],"additionalProperties":false}`, string(echo.InputSchema))
			assert.Equal(t, "image", tools[2].Title, "the title falls back to the name")
			assert.False(t, tools[2].ReadOnly)

			ctx := context.Background()
			t.Run("text", func(t *testing.T) {
				res, err := m.Call(ctx, "mcp__srv__echo", json.RawMessage(`{"message":"hi"}`))
				require.NoError(t, err)
				assert.Equal(t, Result{Text: "Echo: hi", Content: []agent.ContentBlock{{Type: agent.BlockText, Text: "Echo: hi"}}}, res)
			})
			t.Run("image", func(t *testing.T) {
				res, err := m.Call(ctx, "mcp__srv__image", nil)
				require.NoError(t, err)
				assert.Equal(t, "a dot:\n[image: image/png, 4 bytes]", res.Text)
				require.Len(t, res.Content, 2)
				assert.Equal(t, agent.ContentBlock{Type: agent.BlockImage, Data: base64.StdEncoding.EncodeToString([]byte{0x89, 'P', 'N', 'G'}), MIMEType: "image/png"}, res.Content[1])
			})
			t.Run("resource", func(t *testing.T) {
				res, err := m.Call(ctx, "mcp__srv__resource", json.RawMessage(`{}`))
				require.NoError(t, err)
				assert.Equal(t, "alpha\n[resource: file:///b.txt]", res.Text)
				require.Len(t, res.Content, 2)
				assert.Equal(t, agent.ContentBlock{Type: agent.BlockResource, URI: "file:///a.txt", Text: "alpha", MIMEType: "text/plain"}, res.Content[0])
				assert.Equal(t, agent.ContentBlock{Type: agent.BlockResourceLink, URI: "file:///b.txt", Name: "b.txt"}, res.Content[1])
			})
			t.Run("tool error is a result, not an error", func(t *testing.T) {
				res, err := m.Call(ctx, "mcp__srv__fail", json.RawMessage(`null`))
				require.NoError(t, err)
				assert.True(t, res.IsError)
				assert.Contains(t, res.Text, "disk on fire")
			})
			t.Run("unknown tool is an error", func(t *testing.T) {
				_, err := m.Call(ctx, "mcp__srv__nope", nil)
				assert.ErrorIs(t, err, ErrUnknownTool)
			})
			t.Run("non-object arguments are an error", func(t *testing.T) {
				_, err := m.Call(ctx, "mcp__srv__echo", json.RawMessage(`["hi"]`))
				assert.ErrorIs(t, err, ErrInvalidArguments)
				assert.ErrorContains(t, err, `"srv"`)
			})

			assert.Equal(t, []ServerStatus{{Name: "srv", Transport: transport, Connected: true, Tools: 4}}, m.Servers())
			require.NoError(t, m.Close())
			require.NoError(t, m.Close(), "Close is idempotent")
			assert.Empty(t, m.Tools())
			_, err := m.Call(ctx, "mcp__srv__echo", nil)
			assert.ErrorIs(t, err, ErrClosed)
		})
	}
}

func TestServerWithoutTheConfiguredHeaderIsRejected(t *testing.T) {
	// Proves that the headers of the previous test really were sent: the
	// same server without them fails to connect.
	for _, transport := range []string{"http", "sse"} {
		t.Run(transport, func(t *testing.T) {
			cfg := serve(t, "srv", transport, newTestServer("", nil))
			if cfg.HTTP != nil {
				cfg.HTTP.Headers = nil
			} else {
				cfg.SSE.Headers = nil
			}
			m, failures := connect(t, []Server{cfg}, Options{})
			require.Len(t, failures, 1)
			assert.Empty(t, m.Tools())
		})
	}
}

var providerSafe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestSameToolNameOnSeveralServersGetsDistinctNamesAndRoutesRight(t *testing.T) {
	servers := []Server{
		serve(t, "alpha", "http", newTestServer("alpha: ", nil)),
		serve(t, "beta", "sse", newTestServer("beta: ", nil)),
		// These two sanitize to the same base name, mcp__my_srv__echo.
		serve(t, "my.srv", "http", newTestServer("dot: ", nil)),
		serve(t, "my srv", "http", newTestServer("space: ", nil)),
	}
	m, failures := connect(t, servers, Options{})
	require.Empty(t, failures)

	want := map[string]string{"alpha": "alpha: hi", "beta": "beta: hi", "my.srv": "dot: hi", "my srv": "space: hi"}
	seen := map[string]bool{}
	for _, tool := range m.Tools() {
		assert.Regexp(t, providerSafe, tool.QualifiedName)
		assert.False(t, seen[tool.QualifiedName], "duplicate %s", tool.QualifiedName)
		seen[tool.QualifiedName] = true
		if tool.Name != "echo" {
			continue
		}
		res, err := m.Call(context.Background(), tool.QualifiedName, json.RawMessage(`{"message":"hi"}`))
		require.NoError(t, err)
		assert.Equal(t, want[tool.Server], res.Text, tool.QualifiedName)
		delete(want, tool.Server)
	}
	assert.Empty(t, want, "every server's echo was reached")
	assert.True(t, seen["mcp__alpha__echo"])
	assert.True(t, seen["mcp__beta__echo"])
	assert.False(t, seen["mcp__my_srv__echo"], "colliding names get hash suffixes")
}

func TestFailingServersDoNotPreventTheOthers(t *testing.T) {
	refused := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		return "http://" + addr + "/mcp"
	}()
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body first: only then does net/http notice that the
		// client went away and end r.Context().
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done() // never answers
	}))
	t.Cleanup(hang.Close)

	servers := []Server{
		{HTTP: &HTTPServer{Name: "refused", URL: refused}},
		{SSE: &HTTPServer{Name: "refused-sse", URL: refused}},
		{HTTP: &HTTPServer{Name: "bad-url", URL: "::not a url"}},
		{HTTP: &HTTPServer{Name: "hangs", URL: hang.URL}},
		{Stdio: &StdioServer{Name: "no-such-command", Command: "/nonexistent/mcp-server"}},
		{Unknown: &UnknownServer{Name: "future", Tag: "acp"}},
		serve(t, "good", "http", newTestServer("Echo: ", nil)),
	}
	log, logs := newTestLogger()
	start := time.Now()
	m, failures := connect(t, servers, Options{Logger: log, ConnectTimeout: time.Second})
	assert.Less(t, time.Since(start), 3*time.Second, "ConnectTimeout bounds a server that never answers")

	failed := map[string]error{}
	for _, f := range failures {
		failed[f.Server] = f.Err
		assert.ErrorContains(t, f.Err, `mcp server "`+f.Server+`"`, "the error names the server")
	}
	assert.Len(t, failed, 6)
	assert.ErrorContains(t, failed["future"], `unsupported transport "acp"`)
	assert.ErrorContains(t, failed["hangs"], "timed out after 1s")
	assert.ErrorIs(t, failed["no-such-command"], os.ErrNotExist)
	assert.Equal(t, []string{"mcp__good__echo", "mcp__good__fail", "mcp__good__image", "mcp__good__resource"}, toolNames(m.Tools()))

	res, err := m.Call(context.Background(), "mcp__good__echo", json.RawMessage(`{"message":"still here"}`))
	require.NoError(t, err)
	assert.Equal(t, "Echo: still here", res.Text)

	var connected []string
	for _, s := range m.Servers() {
		if s.Connected {
			connected = append(connected, s.Name)
		} else {
			assert.Error(t, s.Err, s.Name)
		}
	}
	assert.Equal(t, []string{"good"}, connected)
	assert.Contains(t, logs.String(), "mcp server failed to connect")
}

func TestToolListChangeRelistsAndCallsOnToolsChanged(t *testing.T) {
	for _, transport := range []string{"http", "sse"} {
		t.Run(transport, func(t *testing.T) {
			srv := newTestServer("Echo: ", nil)
			cfg := serve(t, "srv", transport, srv)
			changed := make(chan struct{}, 10)
			m, failures := connect(t, []Server{cfg}, Options{OnToolsChanged: func() { changed <- struct{}{} }})
			require.Empty(t, failures)
			require.Len(t, m.Tools(), 4)

			mcp.AddTool(srv, &mcp.Tool{Name: "late", Description: "added later"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return textResult("late"), nil, nil
			})
			waitChanged(t, changed)
			assert.Contains(t, toolNames(m.Tools()), "mcp__srv__late")
			res, err := m.Call(context.Background(), "mcp__srv__late", nil)
			require.NoError(t, err)
			assert.Equal(t, "late", res.Text)

			srv.RemoveTools("echo", "late")
			waitChanged(t, changed)
			assert.Equal(t, []string{"mcp__srv__fail", "mcp__srv__image", "mcp__srv__resource"}, toolNames(m.Tools()))
			assert.Equal(t, 3, m.Servers()[0].Tools)
			_, err = m.Call(context.Background(), "mcp__srv__echo", nil)
			assert.ErrorIs(t, err, ErrUnknownTool)
		})
	}
}

func waitChanged(t *testing.T, changed <-chan struct{}) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("OnToolsChanged was not called")
	}
}

func TestCancellingCtxAbortsASlowToolCall(t *testing.T) {
	slow := &slowTool{started: make(chan struct{}), cancelled: make(chan struct{})}
	cfg := serve(t, "srv", "http", newTestServer("Echo: ", slow))
	m, failures := connect(t, []Server{cfg}, Options{})
	require.Empty(t, failures)

	err := cancelSlowCall(t, m, "mcp__srv__slow", slow)
	assert.ErrorContains(t, err, `mcp server "srv": calling tool "slow"`)

	res, err := m.Call(context.Background(), "mcp__srv__echo", json.RawMessage(`{"message":"after"}`))
	require.NoError(t, err)
	assert.Equal(t, "Echo: after", res.Text, "the session survives a cancelled call")
}

// cancelSlowCall calls the slow tool (qualified name), cancels the call
// once it started, and checks that Call returned context.Canceled and
// the server was told to cancel; it returns Call's error.
func cancelSlowCall(t *testing.T, m *Manager, name string, slow *slowTool) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var callErr atomic.Value
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := m.Call(ctx, name, nil)
		callErr.Store(err)
	}()
	select {
	case <-slow.started:
	case <-time.After(10 * time.Second):
		t.Fatal("slow tool did not start")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Call did not return after cancel")
	}
	err, _ := callErr.Load().(error)
	assert.ErrorIs(t, err, context.Canceled)
	select {
	case <-slow.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the server was not told to cancel")
	}
	return err
}

func TestConnectWithCancelledCtxFailsEveryServer(t *testing.T) {
	cfg := serve(t, "srv", "sse", newTestServer("", nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m, failures := Connect(ctx, []Server{cfg, childServer(t, "child", childServe)}, Options{})
	defer m.Close()
	require.Len(t, failures, 2)
	assert.ErrorIs(t, failures[0].Err, context.Canceled)
	assert.Empty(t, m.Tools())
}

func TestSessionOutlivesTheConnectCtx(t *testing.T) {
	// The SSE transport ties its stream to the ctx given to connect; ending
	// Connect's ctx right after it returned must not end the session.
	for _, transport := range []string{"http", "sse"} {
		t.Run(transport, func(t *testing.T) {
			cfg := serve(t, "srv", transport, newTestServer("Echo: ", nil))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			m, failures := Connect(ctx, []Server{cfg}, Options{})
			defer m.Close()
			require.Empty(t, failures)
			cancel()
			time.Sleep(50 * time.Millisecond)
			res, err := m.Call(context.Background(), "mcp__srv__echo", json.RawMessage(`{"message":"later"}`))
			require.NoError(t, err)
			assert.Equal(t, "Echo: later", res.Text)
		})
	}
}

func TestSupportsHTTPAndSSE(t *testing.T) {
	h, s := Supports()
	assert.True(t, h)
	assert.True(t, s)
}

func TestCloseIsBoundedWhenAnHTTPServerStopsAnswering(t *testing.T) {
	var mute atomic.Bool
	srv := newTestServer("Echo: ", nil)
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mute.Load() {
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	m, failures := connect(t, []Server{{HTTP: &HTTPServer{Name: "mute", URL: ts.URL}}}, Options{})
	require.Empty(t, failures)

	mute.Store(true)
	start := time.Now()
	_ = m.Close()
	assert.Less(t, time.Since(start), httpCloseGrace+2*time.Second)
	// The server never got the DELETE: end its side of the session here.
	for ss := range srv.Sessions() {
		_ = ss.Close()
	}
}

// Issue 13.4: an http or sse server that redirects to another origin is
// not followed: connecting fails with an error naming the target, and the
// other origin receives nothing (no configured header, no body). A
// redirect within the server's origin is followed, with the headers.
func TestRedirectsToAnotherOriginAreNotFollowed(t *testing.T) {
	for _, transport := range []string{"http", "sse"} {
		for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
			t.Run(fmt.Sprintf("%s/%d", transport, status), func(t *testing.T) {
				var mu sync.Mutex
				var stolen []string
				evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					mu.Lock()
					stolen = append(stolen, fmt.Sprintf("%s %v %s", r.Method, r.Header, body))
					mu.Unlock()
					http.Error(w, "no", http.StatusTeapot)
				}))
				t.Cleanup(evil.Close)
				front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, evil.URL+"/mcp", status)
				}))
				t.Cleanup(front.Close)
				headers := []HTTPHeader{{Name: testHeader, Value: testSecret}, {Name: "Authorization", Value: "Bearer " + testSecret}}
				cfg := Server{HTTP: &HTTPServer{Name: "r", URL: front.URL, Headers: headers}}
				if transport == "sse" {
					cfg = Server{SSE: &HTTPServer{Name: "r", URL: front.URL, Headers: headers}}
				}
				m, failures := connect(t, []Server{cfg}, Options{})
				require.Len(t, failures, 1)
				assert.ErrorIs(t, failures[0].Err, ErrCrossOriginRedirect)
				assert.ErrorContains(t, failures[0].Err, evil.URL+"/mcp")
				assert.Empty(t, m.Tools())
				mu.Lock()
				assert.Empty(t, stolen, "the other origin received nothing")
				mu.Unlock()
			})
		}
		t.Run(transport+"/same origin is followed", func(t *testing.T) {
			srv := newTestServer("Echo: ", nil)
			get := func(*http.Request) *mcp.Server { return srv }
			var h http.Handler = mcp.NewStreamableHTTPHandler(get, nil)
			if transport == "sse" {
				h = mcp.NewSSEHandler(get, nil)
			}
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get(testHeader) != testSecret {
					http.Error(w, "missing key", http.StatusUnauthorized)
					return
				}
				if r.URL.Path == "/old" {
					target := *r.URL
					target.Path = "/new"
					http.Redirect(w, r, target.String(), http.StatusTemporaryRedirect)
					return
				}
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(ts.Close)
			headers := []HTTPHeader{{Name: testHeader, Value: testSecret}}
			cfg := Server{HTTP: &HTTPServer{Name: "srv", URL: ts.URL + "/old", Headers: headers}}
			if transport == "sse" {
				cfg = Server{SSE: &HTTPServer{Name: "srv", URL: ts.URL + "/old", Headers: headers}}
			}
			m, failures := connect(t, []Server{cfg}, Options{})
			require.Empty(t, failures)
			res, err := m.Call(context.Background(), "mcp__srv__echo", json.RawMessage(`{"message":"hi"}`))
			require.NoError(t, err)
			assert.Equal(t, "Echo: hi", res.Text)
		})
	}
}

// An SSE server whose endpoint event names another origin gets no POST
// there: the client talks to its server's origin only.
func TestSSEEndpointOnAnotherOriginIsRefused(t *testing.T) {
	var hits atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	t.Cleanup(evil.Close)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/messages?sessionid=1\n\n", evil.URL)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(front.Close)
	cfg := Server{SSE: &HTTPServer{Name: "r", URL: front.URL,
		Headers: []HTTPHeader{{Name: testHeader, Value: testSecret}}}}
	_, failures := connect(t, []Server{cfg}, Options{})
	require.Len(t, failures, 1)
	// The SDK reports "connection closed", losing ErrOtherOrigin.
	assert.Zero(t, hits.Load(), "the other origin received nothing")
}
