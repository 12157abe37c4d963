package acphttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

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
	url := serveEchoV2(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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

	c, _, err := acphttp.Dial(context.Background(), acphttp.ClientOptions{URL: url, Token: "tok",
		HTTPClient: &http.Client{Transport: tr}},
		&acpv2.InitializeRequest{ProtocolVersion: 2, Info: acpv2.Implementation{Name: "t", Version: "1"}})
	require.NoError(t, err)
	defer c.Close()
	var ns acpv2.NewSessionResponse
	require.NoError(t, c.Call(context.Background(), acpv2.MethodSessionNew, &acpv2.NewSessionRequest{CWD: "/w"}, &ns))
	for range 3 {
		var pr acpv2.PromptResponse
		require.NoError(t, c.Call(context.Background(), acpv2.MethodSessionPrompt,
			&acpv2.PromptRequest{SessionID: ns.SessionID, Prompt: []acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: "ping"}}}}, &pr))
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, posts, 4)
	for i, addr := range posts[1:] {
		assert.Equal(t, posts[0], addr, "POST %d came on a new connection: an event stream took the idle one", i+2)
	}
}

// serveEchoV2 serves acptest's v2 echo agent on a test server, its
// handler wrapped by wrap (nil: none), and returns the endpoint's URL.
// The server and the agent's connections end with the test.
func serveEchoV2(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	h, err := acphttp.NewHandler(acphttp.Options{Token: "tok"})
	require.NoError(t, err)
	srv := acp.NewServer(nopAgent{}, acp.Options{V2: &acptest.EchoAgentV2{}})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, h) }()
	var hh http.Handler = h
	if wrap != nil {
		hh = wrap(h)
	}
	hs := httptest.NewServer(hh)
	t.Cleanup(func() {
		hs.Close()
		cancel()
		h.Close()
		<-served
	})
	return hs.URL + "/acp"
}
