package providers_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/llm"
	_ "github.com/acp-agent/acp-agent/agent/llm/providers"
)

// What the rest of the program asks about each built-in provider: the
// answers the switches on provider names used to give.
func TestBuiltinProvidersAnswerWhatTheProgramAsks(t *testing.T) {
	tests := []struct {
		name           string
		usage          llm.UsageDialect
		images         bool
		levels         []string
		defLevel       string
		keyEnv, urlEnv string
	}{
		{"anthropic", llm.UsageDialectAnthropic, true, []string{"off", "low", "medium", "high"}, "off", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"},
		{"openai", llm.UsageDialectOpenAI, false, []string{"low", "medium", "high"}, "medium", "OPENAI_API_KEY", "OPENAI_BASE_URL"},
		{"replay", llm.UsageDialectOpenAI, false, nil, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := llm.LookupProvider(tt.name)
			require.True(t, ok)
			assert.Equal(t, tt.usage, p.Usage)
			assert.Equal(t, tt.images, p.Images)
			assert.Equal(t, tt.levels, p.ReasoningLevels)
			assert.Equal(t, tt.defLevel, p.DefaultReasoningLevel)
			assert.Equal(t, tt.keyEnv, p.APIKeyEnv)
			assert.Equal(t, tt.urlEnv, p.BaseURLEnv)
		})
	}
}

func TestBuiltinProvidersOpenFromTheirEnvironment(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	for _, name := range []string{"openai", "anthropic"} {
		p, _ := llm.LookupProvider(name)
		_, err := p.Open("some-model", getenv, nil)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), p.APIKeyEnv+" is not set", "the error says what to set")
		env[p.APIKeyEnv] = "k"
		m, err := p.Open("some-model", getenv, nil)
		require.NoError(t, err)
		assert.Equal(t, name, m.Name())
	}

	replay, _ := llm.LookupProvider("replay")
	m, err := replay.Open("default", getenv, nil)
	require.NoError(t, err)
	assert.Equal(t, "replay", m.Name())
	_, err = replay.Open(t.TempDir()+"/missing.json", getenv, nil)
	assert.ErrorContains(t, err, "replay script: ")
}
