package acphttp_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acphttp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// TestClientRequestsReuseTheirConnection: over Streamable HTTP/1.1 an
// event stream holds its TCP connection while it is open. The client's
// streams must not take the connection its last POST left idle: then
// every request after session/new (the prompts) would dial a new
// connection and wait for the server to accept it, which is what 200
// first prompts at once queued on (issue 30). Here session/new and the
// prompts after it, one after another, all arrive on one connection.
func TestClientRequestsReuseTheirConnection(t *testing.T) {
	var mu sync.Mutex
	var posts []string // the remote address of each POST after initialize
	url := serveEchoV2(t, acphttp.Options{}, func(hs *httptest.Server) {
		h := hs.Config.Handler
		hs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.Header.Get(acphttp.HeaderConnectionID) != "" {
				mu.Lock()
				posts = append(posts, r.RemoteAddr)
				mu.Unlock()
			}
			h.ServeHTTP(w, r)
		})
	})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c, sid := dialSessionV2(t, url, tr)
	defer c.Close()
	for range 3 {
		var pr acpv2.PromptResponse
		require.NoError(t, c.Call(context.Background(), acpv2.MethodSessionPrompt,
			&acpv2.PromptRequest{SessionID: sid, Prompt: []acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: "ping"}}}}, &pr))
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, posts, 4)
	for i, addr := range posts[1:] {
		assert.Equal(t, posts[0], addr, "POST %d came on a new connection: an event stream took the idle one", i+2)
	}
}

// TestClientRefusedStreamLeavesNothing: a session stream the server
// refuses (here the limit of open event streams) fails the session's
// call with the refusal, and Close leaves no connection of the
// streams' own transport open (the refused GET's, idle after its answer
// was read): once the caller has closed its own idle connections, the
// server sees every connection closed.
func TestClientRefusedStreamLeavesNothing(t *testing.T) {
	var open atomic.Int64
	url := serveEchoV2(t, acphttp.Options{MaxStreams: 1}, func(hs *httptest.Server) {
		hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				open.Add(1)
			case http.StateClosed, http.StateHijacked:
				open.Add(-1)
			}
		}
	})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c, sid := dialSessionV2(t, url, tr)
	err := c.Call(context.Background(), acpv2.MethodSessionPrompt,
		&acpv2.PromptRequest{SessionID: sid, Prompt: []acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: "ping"}}}}, nil)
	var he *acphttp.HTTPError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, http.StatusServiceUnavailable, he.Status)
	require.NoError(t, c.Close())
	tr.CloseIdleConnections()
	assert.Eventually(t, func() bool { return open.Load() == 0 }, 5*time.Second, 10*time.Millisecond,
		"connections the client left open")
}

// dialSessionV2 opens a v2 connection to url over tr and a session on it.
func dialSessionV2(t *testing.T, url string, tr *http.Transport) (*acphttp.Client, string) {
	t.Helper()
	c, _, err := acphttp.Dial(context.Background(), acphttp.ClientOptions{URL: url, Token: "tok",
		HTTPClient: &http.Client{Transport: tr}},
		&acpv2.InitializeRequest{ProtocolVersion: 2, Info: acpv2.Implementation{Name: "t", Version: "1"}})
	require.NoError(t, err)
	var ns acpv2.NewSessionResponse
	if err := c.Call(context.Background(), acpv2.MethodSessionNew, &acpv2.NewSessionRequest{CWD: "/w"}, &ns); err != nil {
		c.Close()
		require.NoError(t, err)
	}
	return c, ns.SessionID
}

// serveEchoV2 serves acptest's v2 echo agent on a test server (opts with
// the token "tok"; setup, when not nil, configures the server before it
// starts) and returns the endpoint's URL.
// The server and the agent's connections end with the test.
func serveEchoV2(t *testing.T, opts acphttp.Options, setup func(*httptest.Server)) string {
	t.Helper()
	opts.Token = "tok"
	h, err := acphttp.NewHandler(opts)
	require.NoError(t, err)
	srv := acp.NewServer(nopAgent{}, acp.Options{V2: &acptest.EchoAgentV2{}})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, h) }()
	hs := httptest.NewUnstartedServer(h)
	if setup != nil {
		setup(hs)
	}
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		cancel()
		h.Close()
		<-served
	})
	return hs.URL + "/acp"
}
