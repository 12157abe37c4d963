package llm_test

import (
	"context"
	"iter"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/llm"
)

type nullModel struct{}

func (nullModel) Name() string { return "null" }
func (nullModel) Stream(context.Context, *llm.Request) iter.Seq2[llm.Event, error] {
	return func(func(llm.Event, error) bool) {}
}

func openNull(string, func(string) string, *http.Client) (llm.Model, error) { return nullModel{}, nil }

func TestRegisteredProvidersAreFoundByExactName(t *testing.T) {
	llm.RegisterProvider(llm.ProviderInfo{Name: "registry-test-b", Open: openNull, Images: true})
	llm.RegisterProvider(llm.ProviderInfo{Name: "registry-test-a", Open: openNull, Usage: llm.UsageDialectAnthropic})

	p, ok := llm.LookupProvider("registry-test-b")
	require.True(t, ok)
	assert.True(t, p.Images)
	_, ok = llm.LookupProvider("Registry-Test-B")
	assert.False(t, ok, "names are compared exactly, as specs are")
	_, ok = llm.LookupProvider("registry-test-c")
	assert.False(t, ok)

	var names []string
	for _, p := range llm.Providers() {
		names = append(names, p.Name)
	}
	assert.True(t, slices.IsSorted(names), "Providers is sorted by name: %v", names)
	assert.Subset(t, names, []string{"registry-test-a", "registry-test-b"})
}

func TestRegisteringABrokenOrDuplicateProviderPanics(t *testing.T) {
	llm.RegisterProvider(llm.ProviderInfo{Name: "registry-test-dup", Open: openNull})
	assert.PanicsWithValue(t, `llm: RegisterProvider: provider "registry-test-dup" registered twice`, func() {
		llm.RegisterProvider(llm.ProviderInfo{Name: "registry-test-dup", Open: openNull})
	})
	assert.Panics(t, func() { llm.RegisterProvider(llm.ProviderInfo{Name: "registry-test-no-open"}) })
	assert.Panics(t, func() { llm.RegisterProvider(llm.ProviderInfo{Open: openNull}) })
}

func TestUsageDialectNames(t *testing.T) {
	assert.Equal(t, "openai", llm.UsageDialectOpenAI.String())
	assert.Equal(t, "anthropic", llm.UsageDialectAnthropic.String())
	assert.Equal(t, "unknown", llm.UsageDialect(7).String())
}
