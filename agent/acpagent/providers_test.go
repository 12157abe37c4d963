package acpagent_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
)

// The model choices ask the provider registry, not the provider's name:
// a provider registered from outside gets its own thought levels and
// default level, and a choice's API key variable replaces the one its
// registration names.
func TestAModelChoiceTakesLevelsAndKeyFromTheProviderRegistration(t *testing.T) {
	llm.RegisterProvider(llm.ProviderInfo{
		Name: "registry-acme", Hint: "registry-acme/MODEL", APIKeyEnv: "ACME_KEY",
		ReasoningLevels: []string{llm.EffortLow, llm.EffortHigh}, DefaultReasoningLevel: llm.EffortHigh,
		Open: func(_ string, getenv func(string) string, _ *http.Client) (llm.Model, error) {
			if getenv("ACME_KEY") == "" {
				return nil, errors.New("ACME_KEY is not set")
			}
			return newFakeModel(), nil
		},
	})
	table, err := pricing.Parse([]byte(`{"version":1,"models":[{"provider":"registry-acme","model":"thinker","reasoning":true,"source":"test"}]}`))
	require.NoError(t, err)
	c := client(t, nil, map[string]string{"ACME_KEY": "k"}, func(cfg *acpagent.Config) {
		cfg.Model, cfg.Models = "registry-acme/thinker", table
		cfg.Choices = []acpagent.ModelChoice{{Spec: "registry-acme/thinker"}, {Spec: "registry-acme/elsewhere", APIKeyEnv: "OTHER_ACME_KEY"}}
	})
	c.Initialize(nil)
	resp, _ := c.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
	var ns acp.NewSessionResponse
	acptest.MustResult(t, resp, &ns)
	views := optionViews(ns.ConfigOptions)
	require.Len(t, views, 3)
	assert.Equal(t, optionView{"thought_level", "thought_level", "high", []string{"low", "high"}}, views[2])
	for _, o := range ns.ConfigOptions[1].Select.Options.Options {
		if o.Value == "registry-acme/elsewhere" {
			assert.Contains(t, o.Description, "unavailable: OTHER_ACME_KEY is not set", "the choice's key variable, unset, replaced the registered one (set)")
		}
	}
}

// Issue 29: the endpoints a client chose are its connection's. On an
// agent without a key of its own, the connection that routed openai to
// its gateway starts sessions that use it; another connection of the
// same server (serve's other editors) sees the configured endpoint, has
// no usable model, and never gets the first one's gateway or key.
func TestProvidersArePerConnection(t *testing.T) {
	srv := newOpenAIServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		sse(w, []string{textChunk("routed answer"), finishChunk("stop")}, true)
	})
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	a := acpagent.New(acpagent.Config{Config: host.Config{Model: "openai/test-model", Getenv: func(string) string { return "" },
		HTTPClient: &http.Client{Transport: transport}, Version: "test"}})
	server := acp.NewServer(a, acp.Options{})
	first, second := acptest.Connect(t, server), acptest.Connect(t, server)
	first.AnnouncesCommands, second.AnnouncesCommands = true, true
	first.Initialize(nil)
	second.Initialize(nil)

	resp, _ := first.Call(acp.MethodProvidersSet, &acp.SetProviderRequest{ProviderID: "openai", APIType: "openai", BaseURL: srv.URL + "/v1",
		Headers: map[string]string{"Authorization": "Bearer " + testKey}})
	acptest.MustResult(t, resp, nil)
	sid := first.NewSession(t.TempDir())
	resp, _ = first.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("hi")))
	acptest.MustResult(t, resp, nil)
	require.Equal(t, 1, srv.Count(), "the first connection's session used its route")
	assert.Equal(t, "Bearer "+testKey, srv.Request(t, 0).Auth)

	var list acp.ListProvidersResponse
	resp, _ = second.Call(acp.MethodProvidersList, map[string]any{})
	acptest.MustResult(t, resp, &list)
	assert.NotContains(t, string(resp.Raw), srv.URL, "the other connection does not see the route")
	resp, _ = second.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
	require.NotNil(t, resp.Error, "nor can it use it")
	assert.Equal(t, acp.CodeAuthRequired, resp.Error.Code)
	var st acp.AuthStatusResponse
	resp, _ = second.Call(acp.MethodAuthStatus, map[string]any{})
	acptest.MustResult(t, resp, &st)
	assert.Equal(t, acp.AuthStateUnauthenticated, st.State)
}
