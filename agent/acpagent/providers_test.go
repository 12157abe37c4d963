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
			assert.Contains(t, o.Description, "unavailable: ACME_KEY is not set", "the choice's key variable, unset, replaced the registered one")
		}
	}
}
