package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// gateway is an OpenAI-compatible server a client routes the agent to:
// it records each chat request's Authorization header and body, and
// answers "All done.", or (reject) a 401 that echoes the key it got, as
// some servers do.
type gateway struct {
	*httptest.Server
	reject bool
	mu     sync.Mutex
	auths  []string
	bodies []string
}

func newGateway(t *testing.T, reject bool) *gateway {
	g := &gateway{reject: reject}
	g.Server = httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		g.auths = append(g.auths, r.Header.Get("Authorization"))
		g.bodies = append(g.bodies, string(body))
		g.mu.Unlock()
		if g.reject {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, openAIStream(nil, true))
	}))
	t.Cleanup(g.Close)
	return g
}

func (g *gateway) requests() (auths, bodies []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.auths...), append([]string(nil), g.bodies...)
}

// Issue 29: bring your own key. The agent has no key of its own; the
// editor routes the openai provider to its gateway with its key
// (providers/set), and sessions start; a later providers/set moves the
// live session's next request to another endpoint without a restart.
// The keys never come back: not in providers/list, auth/status, an
// error (the gateway echoes the key in its 401), the logs, the session
// file or the model's requests. The provider of the default model cannot
// be disabled; another can, and is listed without an endpoint.
func TestBinaryProvidersBringYourOwnKey(t *testing.T) {
	const key1, key2 = "sk-editor-FIRST-0123456789", "sk-editor-SECOND-9876543210"
	a, b := newGateway(t, false), newGateway(t, true)
	state, sessions, cwd := t.TempDir(), t.TempDir(), t.TempDir()
	p := startAgent(t, []string{"XDG_STATE_HOME=" + state}, "--model", "openai/test-model", "--session-dir", sessions, "--log-level", "debug")
	init := p.Initialize(nil)
	require.NotNil(t, init.AgentCapabilities.Providers, "providers/* advertised")
	require.NotNil(t, init.AgentCapabilities.Auth.Status, "auth/status advertised")

	var st acp.AuthStatusResponse
	resp, _ := p.Call(acp.MethodAuthStatus, map[string]any{})
	acptest.MustResult(t, resp, &st)
	assert.Equal(t, acp.AuthStateUnauthenticated, st.State, "no key yet")
	resp, _ = p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: cwd, MCPServers: []acp.McpServer{}})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeAuthRequired, resp.Error.Code)

	var list acp.ListProvidersResponse
	resp, _ = p.Call(acp.MethodProvidersList, map[string]any{})
	acptest.MustResult(t, resp, &list)
	byID := map[string]acp.ProviderInfo{}
	for _, pi := range list.Providers {
		byID[pi.ProviderID] = pi
	}
	require.Contains(t, byID, "openai")
	require.Contains(t, byID, "anthropic")
	assert.True(t, byID["openai"].Required, "the default model's provider")
	assert.Equal(t, &acp.ProviderCurrentConfig{APIType: "openai", BaseURL: "https://api.openai.com/v1"}, byID["openai"].Current)

	// The editor's key: sessions can start, and auth/status_update says so.
	resp, before := p.Call(acp.MethodProvidersSet, &acp.SetProviderRequest{ProviderID: "openai", APIType: "openai", BaseURL: a.URL + "/v1",
		Headers: map[string]string{"Authorization": "Bearer " + key1}})
	acptest.MustResult(t, resp, nil)
	require.Len(t, before, 1, "auth/status_update")
	assert.Equal(t, acp.MethodAuthStatusUpdate, before[0].Method)
	assert.Contains(t, string(before[0].Params), `"state":"authenticated"`)
	resp, _ = p.Call(acp.MethodProvidersList, map[string]any{})
	acptest.MustResult(t, resp, &list)
	assert.Contains(t, string(resp.Raw), a.URL+"/v1", "the endpoint is listed")
	resp, _ = p.Call(acp.MethodAuthStatus, map[string]any{})
	acptest.MustResult(t, resp, &st)
	assert.Equal(t, acp.AuthStateAuthenticated, st.State)

	sid := p.NewSession(cwd)
	promptOK(t, p, sid, "first question")
	auths, _ := a.requests()
	require.Len(t, auths, 1)
	assert.Equal(t, "Bearer "+key1, auths[0], "the editor's key went to its gateway")

	// At run time, the same session moves to another endpoint.
	resp, _ = p.Call(acp.MethodProvidersSet, &acp.SetProviderRequest{ProviderID: "openai", APIType: "openai", BaseURL: b.URL + "/v1",
		Headers: map[string]string{"Authorization": "Bearer " + key2}})
	acptest.MustResult(t, resp, nil)
	resp, _ = p.Call(acp.MethodSessionPrompt, promptReq(sid, "second question"))
	require.NotNil(t, resp.Error, "the second gateway refuses the key")
	assert.Contains(t, resp.Error.Message, "[redacted]", "its echo of the key is redacted: %s", resp.Error.Message)
	authsB, bodiesB := b.requests()
	require.NotEmpty(t, authsB, "the next request went to the new endpoint")
	assert.Equal(t, "Bearer "+key2, authsB[0])
	assert.Contains(t, bodiesB[0], "first question", "the conversation went on")
	assert.Len(t, func() []string { a, _ := a.requests(); return a }(), 1, "nothing more went to the old endpoint")

	resp, _ = p.Call(acp.MethodProvidersDisable, &acp.DisableProviderRequest{ProviderID: "openai"})
	require.NotNil(t, resp.Error, "the default model's provider cannot be disabled")
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)
	resp, _ = p.Call(acp.MethodProvidersDisable, &acp.DisableProviderRequest{ProviderID: "anthropic"})
	acptest.MustResult(t, resp, nil)
	resp, _ = p.Call(acp.MethodProvidersList, map[string]any{})
	acptest.MustResult(t, resp, &list)
	for _, pi := range list.Providers {
		if pi.ProviderID == "anthropic" {
			assert.Nil(t, pi.Current, "disabled")
		}
	}
	resp, _ = p.Call(acp.MethodProvidersSet, &acp.SetProviderRequest{ProviderID: "openai", APIType: "anthropic", BaseURL: a.URL})
	require.NotNil(t, resp.Error, "a protocol the provider does not speak")
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)
	resp, _ = p.Call(acp.MethodProvidersSet, &acp.SetProviderRequest{ProviderID: "nope", APIType: "openai", BaseURL: a.URL})
	require.NotNil(t, resp.Error, "an unknown provider")

	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))
	// Nothing the agent wrote holds a key: its logs (stderr at debug,
	// the state directory), the session files, the model's requests.
	_, bodiesA := a.requests()
	for _, key := range []string{key1, key2} {
		assert.NotContains(t, p.stderr.String(), key, "stderr")
		for _, body := range append(bodiesA, bodiesB...) {
			assert.NotContains(t, body, key, "a model request")
		}
		for _, dir := range []string{state, sessions} {
			require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.NotContains(t, string(data), key, path)
				return nil
			}))
		}
	}
	assert.Contains(t, p.stderr.String(), "model provider routed by the client", "the change itself is logged")
}

// Issue 29: the key the agent was started with never goes to a server the
// client chose: a route replaces it, and a route without headers sends
// no key at all.
func TestBinaryProvidersNeverSendTheConfiguredKeyElsewhere(t *testing.T) {
	const envKey = "sk-from-the-environment-0123456789"
	own, chosen := newGateway(t, false), newGateway(t, false)
	p := startAgent(t, []string{"OPENAI_API_KEY=" + envKey, "OPENAI_BASE_URL=" + own.URL + "/v1"}, "--model", "openai/test-model")
	p.Initialize(nil)
	var st acp.AuthStatusResponse
	resp, _ := p.Call(acp.MethodAuthStatus, map[string]any{})
	acptest.MustResult(t, resp, &st)
	assert.Equal(t, acp.AuthStateAuthenticated, st.State)
	require.Len(t, st.Accounts, 1)
	assert.Contains(t, st.Accounts[0].Label, "OPENAI_API_KEY", "where the key comes from")
	assert.NotContains(t, string(resp.Raw), envKey)

	sid := p.NewSession(t.TempDir())
	promptOK(t, p, sid, "hello")
	auths, _ := own.requests()
	require.Len(t, auths, 1)
	assert.Equal(t, "Bearer "+envKey, auths[0], "as configured")

	resp, _ = p.Call(acp.MethodProvidersSet, &acp.SetProviderRequest{ProviderID: "openai", APIType: "openai", BaseURL: chosen.URL + "/v1"})
	acptest.MustResult(t, resp, nil)
	promptOK(t, p, sid, "again")
	auths, _ = chosen.requests()
	require.Len(t, auths, 1)
	assert.Empty(t, auths[0], "no key: the configured one is not the chosen server's")
	var body map[string]any
	_, bodies := chosen.requests()
	require.NoError(t, json.Unmarshal([]byte(bodies[0]), &body))
}

// providers/set takes a base URL the provider's paths are appended to.
// A query or a fragment would let a client choose the exact path and
// query of the agent's requests (".../reset#" sends them to /reset, not
// /reset/chat/completions), and user information is a credential in a
// URL (the headers carry those): all are refused with -32602 naming
// baseUrl, the credential not echoed, the route unchanged and nothing
// sent. A plain base URL is taken, and its paths appended.
func TestBinaryProvidersSetRefusesQueryFragmentAndUserInfo(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.RequestURI())
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	p := startAgent(t, []string{"ACP_AGENT_MAX_RETRIES=0", "ACP_AGENT_DISCOVER_MODELS=false"}, "--model", "openai/test-model", "--log-level", "debug")
	p.Initialize(nil)
	for base, says := range map[string]string{
		srv.URL + "/admin/reset#":               "query or fragment",
		srv.URL + "/admin/reset#x":              "query or fragment",
		srv.URL + "/admin/reset?":               "query or fragment",
		srv.URL + "/v1?api-version=2024-10-21":  "query or fragment",
		srv.URL + "?":                           "query or fragment",
		"http://alice:SECRETPW@" + host + "/v1": "user information",
		"http://SECRETTOKEN@" + host + "/v1":    "user information",
		"http://:SECRETPW@" + host + "/v1":      "user information",
	} {
		resp, _ := p.Call(acp.MethodProvidersSet, &acp.SetProviderRequest{ProviderID: "openai", APIType: "openai", BaseURL: base})
		require.NotNil(t, resp.Error, base)
		assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code, base)
		assert.Contains(t, resp.Error.Message, "baseUrl", base)
		assert.Contains(t, resp.Error.Message, says, base)
		assert.NotContains(t, string(resp.Raw), "SECRET", base)
	}
	var list acp.ListProvidersResponse
	resp, _ := p.Call(acp.MethodProvidersList, map[string]any{})
	acptest.MustResult(t, resp, &list)
	assert.Contains(t, string(resp.Raw), `"baseUrl":"https://api.openai.com/v1"`, "the route is unchanged")
	mu.Lock()
	assert.Empty(t, got, "nothing was sent")
	mu.Unlock()

	resp, _ = p.Call(acp.MethodProvidersSet, &acp.SetProviderRequest{ProviderID: "openai", APIType: "openai", BaseURL: srv.URL + "/v1/"})
	acptest.MustResult(t, resp, nil)
	sid := p.NewSession(t.TempDir())
	resp, _ = p.Call(acp.MethodSessionPrompt, promptReq(sid, "hi"))
	require.NotNil(t, resp.Error, "the server answers 404")
	mu.Lock()
	assert.Equal(t, []string{"/v1/chat/completions"}, got)
	mu.Unlock()
	assert.NotContains(t, p.stderr.String(), "SECRET")
}
