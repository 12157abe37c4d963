package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
)

// A provider is one package and one registration: the core opens it,
// decides image input and prices its usage from the registration alone,
// with no switch on its name.
func TestARegisteredProviderIsAskedByTheCore(t *testing.T) {
	m := newFakeModel()
	llm.RegisterProvider(llm.ProviderInfo{
		Name: "registry-core-seeing", Hint: "registry-core-seeing/MODEL", Images: true, Usage: llm.UsageDialectAnthropic,
		Open: func(model string, getenv func(string) string, _ *http.Client) (llm.Model, error) {
			if getenv("SEEING_KEY") == "" {
				return nil, errors.New("SEEING_KEY is not set")
			}
			return m, nil
		},
	})
	llm.RegisterProvider(llm.ProviderInfo{Name: "registry-core-blind", Open: func(string, func(string) string, *http.Client) (llm.Model, error) { return m, nil }})

	spec, err := agent.ParseModelSpec("registry-core-seeing/eyes-1")
	require.NoError(t, err)
	_, err = agent.OpenModel(spec, func(string) string { return "" }, nil)
	require.ErrorIs(t, err, agent.ErrNoModel)
	assert.ErrorContains(t, err, "SEEING_KEY is not set", "the provider's own error says what to set")
	got, err := agent.OpenModel(spec, func(string) string { return "k" }, nil)
	require.NoError(t, err)
	assert.Same(t, m, got)

	_, err = agent.OpenModel(agent.ModelSpec{Provider: "registry-core-nobody", Model: "x"}, func(string) string { return "" }, nil)
	require.ErrorIs(t, err, agent.ErrNoModel)
	assert.ErrorContains(t, err, `unknown provider "registry-core-nobody"`)
	assert.ErrorContains(t, err, "registry-core-seeing/MODEL", "the message names the registered providers")

	assert.Equal(t, pricing.DialectAnthropic, pricing.DialectFor("registry-core-seeing"))
	assert.Equal(t, pricing.DialectAnthropic, pricing.DialectFor("Registry-Core-Seeing"), "pricing's provider names are case-insensitive")
	assert.Equal(t, pricing.DialectOpenAI, pricing.DialectFor("registry-core-blind"))

	yes, no := true, false
	for _, tt := range []struct {
		id   string
		info *pricing.Model
		want bool
	}{
		{"registry-core-seeing/eyes-1", nil, true},
		{"registry-core-blind/m", nil, false},
		{"registry-core-nobody/m", nil, false},
		{"registry-core-seeing/eyes-1", &pricing.Model{ImageInput: &no}, false},
		{"registry-core-blind/m", &pricing.Model{ImageInput: &yes}, true},
	} {
		assert.Equal(t, tt.want, agent.SessionModel{ID: tt.id, Info: tt.info}.AcceptsImages(), "%s with %v", tt.id, tt.info)
	}
}

// What the model is sent of a tool's image depends on the provider's
// registration: the image itself, or a note saying it is not shown.
func TestAToolImageReachesOnlyProvidersThatReadImages(t *testing.T) {
	open := func(string, func(string) string, *http.Client) (llm.Model, error) { return nil, errors.New("unused") }
	llm.RegisterProvider(llm.ProviderInfo{Name: "registry-image-yes", Open: open, Images: true})
	llm.RegisterProvider(llm.ProviderInfo{Name: "registry-image-no", Open: open})
	for _, tt := range []struct {
		provider string
		image    bool
	}{{"registry-image-yes", true}, {"registry-image-no", false}} {
		t.Run(tt.provider, func(t *testing.T) {
			m := newFakeModel(reply{Calls: []llm.ToolCall{{ID: "c1", Name: "snap", Arguments: `{}`}}}, reply{Text: []string{"seen"}})
			s := newSession(t, m, func(c *agent.SessionConfig) { c.ModelID = tt.provider + "/m" })
			require.NoError(t, s.Tools().Register(agent.Tool{Name: "snap", Run: func(context.Context, json.RawMessage) (agent.ToolResult, error) {
				return agent.ToolResult{Text: "a picture", Images: []llm.Part{{Type: llm.PartImage, MIMEType: "image/png", Data: "iVBORw0KGgo="}}}, nil
			}}))
			_, err := s.Prompt(context.Background(), "take a picture")
			require.NoError(t, err)
			second := m.Request(t, 1)
			var sawImage, sawNote bool
			for _, msg := range second.Messages {
				for _, p := range msg.Content {
					sawImage = sawImage || p.Type == llm.PartImage
					sawNote = sawNote || strings.Contains(p.Text, "does not accept image input")
				}
			}
			assert.Equal(t, tt.image, sawImage, "the image is sent")
			assert.Equal(t, !tt.image, sawNote, "a note replaces it")
		})
	}
}

// The core and the adapter ask the registry: neither imports a provider.
func TestNoProviderIsImportedByTheCoreOrTheAdapter(t *testing.T) {
	providers := []string{"agent/llm/openai", "agent/llm/anthropic", "agent/llm/replay", "agent/llm/providers"}
	out, err := exec.Command("go", "list", "-deps", "github.com/acp-agent/acp-agent/agent").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		for _, p := range providers {
			assert.NotEqual(t, "github.com/acp-agent/acp-agent/"+p, dep, "package agent depends on a provider")
		}
	}
	out, err = exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", "github.com/acp-agent/acp-agent/agent/acpagent").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, imp := range strings.Fields(string(out)) {
		for _, p := range providers[:3] {
			assert.NotEqual(t, "github.com/acp-agent/acp-agent/"+p, imp, "agent/acpagent imports a provider directly")
		}
	}
}
