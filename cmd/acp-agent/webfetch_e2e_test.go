package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// Issue 16, web_fetch, through the built binary: HTML comes back as
// Markdown; fetching asks like a command; no credentials or cookies are
// sent and a URL carrying credentials is refused before anyone is asked;
// a redirect to another scheme is refused; the sandbox's network rule
// holds (off in the default mode, on in full-access).
func TestBinaryWebFetch(t *testing.T) {
	var mu sync.Mutex
	var headers []http.Header
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		headers = append(headers, r.Header.Clone())
		mu.Unlock()
		switch r.URL.Path {
		case "/page":
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "COOKIE-VALUE"})
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<html><body><h1>Release notes</h1><p>Version <b>2.0</b> adds <a href="/docs">docs</a>.</p></body></html>`)
		case "/again":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "plain text")
		case "/redirect":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		}
	}))
	defer site.Close()
	calls := map[string][]modelCall{
		"[page]":     {{"web_fetch", map[string]any{"url": site.URL + "/page"}}},
		"[again]":    {{"web_fetch", map[string]any{"url": site.URL + "/again"}}},
		"[redirect]": {{"web_fetch", map[string]any{"url": site.URL + "/redirect"}}},
		"[creds]":    {{"web_fetch", map[string]any{"url": "http://user:SECRETPW@" + site.Listener.Addr().String() + "/page"}}},
		"[meta]":     {{"web_fetch", map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}}},
	}
	lastTool := func(m *scriptedModel) string {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.bodies[len(m.bodies)-1]
	}
	start := func(args ...string) (*scriptedModel, *toolClient, *sdk.ClientSideConnection, sdk.SessionId) {
		model := promptModel(t, calls)
		ws := t.TempDir()
		client := newToolClient(ws, "allow_once")
		cmd := exec.Command(agentBin, append([]string{"--model", "openai/test-model"}, args...)...)
		cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
		conn, sid := startE2EWith(t, cmd, client, ws, sdk.ClientCapabilities{})
		return model, client, conn, sid
	}

	// Without a sandbox, in the default mode: asks, then fetches.
	model, client, conn, sid := start("--sandbox", "off")
	promptE2E(t, conn, sid, "[page]")
	body := lastTool(model)
	assert.Contains(t, body, "# Release notes")
	assert.Contains(t, body, "**2.0**")
	assert.Contains(t, body, site.URL+"/docs", "links are made absolute")
	client.mu.Lock()
	asked := len(client.permissions)
	client.mu.Unlock()
	assert.Equal(t, 1, asked, "network access asks like a command")
	promptE2E(t, conn, sid, "[again]")
	mu.Lock()
	require.Len(t, headers, 2)
	assert.Empty(t, headers[1].Get("Cookie"), "the cookie the site set is never sent back")
	assert.Empty(t, headers[1].Get("Authorization"))
	mu.Unlock()
	promptE2E(t, conn, sid, "[meta]")
	assert.Contains(t, lastTool(model), "link-local or cloud metadata address", "cloud metadata services are never reached")
	promptE2E(t, conn, sid, "[redirect]")
	assert.Contains(t, lastTool(model), "redirect to file:///etc/passwd refused")
	client.mu.Lock()
	asked = len(client.permissions)
	client.mu.Unlock()
	promptE2E(t, conn, sid, "[creds]")
	assert.Contains(t, lastTool(model), "carries credentials")
	client.mu.Lock()
	assert.Equal(t, asked, len(client.permissions), "refused before anyone is asked")
	client.mu.Unlock()

	if sandbox.Probe().Available {
		// With the sandbox: network off in the default mode...
		model, _, conn, sid = start()
		promptE2E(t, conn, sid, "[page]")
		assert.Contains(t, lastTool(model), "blocked by the sandbox")
		// ...and on in full-access.
		model, _, conn, sid = start("--mode", "full-access")
		promptE2E(t, conn, sid, "[page]")
		assert.Contains(t, lastTool(model), "# Release notes")
	}
}
