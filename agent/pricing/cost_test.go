package pricing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/llm"
)

func usage(in, read, write, out int64) llm.Usage {
	return llm.Usage{InputTokens: in, CachedReadTokens: read, CachedWriteTokens: write, OutputTokens: out}
}

const eps = 1e-12

func TestCost(t *testing.T) {
	// Anthropic-like prices: input 3, output 15, cache read 0.30, cache write 3.75 per 1M.
	sonnet := Model{Provider: "anthropic", ID: "s", InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.30, CacheWritePerMTok: 3.75, Currency: "USD"}
	// OpenAI-like prices: input 2, output 8, cache read 0.50, no cache-write price.
	gpt := Model{Provider: "openai", ID: "g", InputPerMTok: 2, OutputPerMTok: 8, CacheReadPerMTok: 0.5, Currency: "USD"}
	// No cache prices at all.
	plain := Model{Provider: "openai", ID: "p", InputPerMTok: 5, OutputPerMTok: 15}

	tests := []struct {
		name    string
		m       Model
		u       llm.Usage
		dialect Dialect
		want    float64
	}{
		{"openai: plain prompt and output", gpt, usage(1_000_000, 0, 0, 1_000_000), DialectOpenAI, 2 + 8},
		{"openai: cached reads are inside InputTokens", gpt,
			usage(1_000_000, 400_000, 0, 0), DialectOpenAI, 0.6*2 + 0.4*0.5},
		{"openai: small turn", gpt, usage(1200, 1000, 0, 50), DialectOpenAI,
			(200*2 + 1000*0.5 + 50*8) / 1e6},
		{"openai: reasoning tokens are inside OutputTokens, not charged again", gpt,
			llm.Usage{InputTokens: 100, OutputTokens: 500, ReasoningTokens: 400}, DialectOpenAI, (100*2 + 500*8) / 1e6},
		{"openai: reported cache writes are charged on top at the input price when unpriced", gpt,
			usage(1000, 0, 500, 0), DialectOpenAI, (1000*2 + 500*2) / 1e6},
		{"anthropic: InputTokens is the whole prompt incl. reads and writes", sonnet,
			usage(1050+2000+3000, 3000, 2000, 100), DialectAnthropic,
			(1050*3 + 3000*0.30 + 2000*3.75 + 100*15) / 1e6},
		{"anthropic: the research doc's message_start example", sonnet,
			usage(50+0+1000, 1000, 0, 1), DialectAnthropic, (50*3 + 1000*0.30 + 1*15) / 1e6},
		{"anthropic: only cache writes", sonnet, usage(10_000, 0, 10_000, 0), DialectAnthropic, 10_000 * 3.75 / 1e6},
		{"same usage read as openai charges writes on top", sonnet,
			usage(1050+2000+3000, 3000, 2000, 100), DialectOpenAI,
			(3050*3 + 3000*0.30 + 2000*3.75 + 100*15) / 1e6},
		{"unknown cache prices fall back to the input price", plain,
			usage(1000, 600, 0, 10), DialectOpenAI, (1000*5 + 10*15) / 1e6},
		{"unknown cache prices fall back to the input price (anthropic)", plain,
			usage(1000, 600, 300, 10), DialectAnthropic, (1000*5 + 10*15) / 1e6},
		{"zero usage costs zero", gpt, llm.Usage{}, DialectOpenAI, 0},
		{"clamp: cached reads above the prompt leave no negative uncached part", gpt,
			usage(100, 300, 0, 0), DialectOpenAI, 300 * 0.5 / 1e6},
		{"clamp: reads and writes above the prompt (anthropic)", sonnet,
			usage(100, 80, 80, 0), DialectAnthropic, (80*0.30 + 80*3.75) / 1e6},
		{"clamp: negative counts read as zero", gpt,
			llm.Usage{InputTokens: -5, CachedReadTokens: -7, CachedWriteTokens: -1, OutputTokens: -9}, DialectOpenAI, 0},
		{"clamp: negative input with cached reads", gpt, usage(-100, 10, 0, 0), DialectOpenAI, 10 * 0.5 / 1e6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := tt.m.Cost(tt.u, tt.dialect)
			require.True(t, ok)
			assert.InDelta(t, tt.want, c.Amount, eps)
			assert.GreaterOrEqual(t, c.Amount, 0.0)
			assert.Equal(t, "USD", c.Currency)
		})
	}
}

func TestCostOfUnpricedModelIsNotShown(t *testing.T) {
	tests := []struct {
		name string
		m    Model
	}{
		{"no prices", Model{Provider: "openai", ID: "llama", ContextTokens: 8192}},
		{"input price only", Model{InputPerMTok: 1}},
		{"output price only", Model{OutputPerMTok: 1}},
		{"cache prices only", Model{CacheReadPerMTok: 1, CacheWritePerMTok: 1}},
		{"zero value (unknown model)", Model{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := tt.m.Cost(usage(1000, 100, 10, 100), DialectOpenAI)
			assert.False(t, ok)
			assert.Zero(t, c)
		})
	}
}

func TestCostCurrencyComesFromTheFile(t *testing.T) {
	tab, err := Parse([]byte(`{"version":1,"currency":"EUR","models":[{"provider":"x","model":"m","inputPerMTok":1,"outputPerMTok":1}]}`))
	require.NoError(t, err)
	m, ok := tab.Lookup("x", "m")
	require.True(t, ok)
	c, ok := m.Cost(usage(1_000_000, 0, 0, 0), DialectOpenAI)
	require.True(t, ok)
	assert.Equal(t, Cost{Amount: 1, Currency: "EUR"}, c)
}

func TestCostWithEmbeddedPrices(t *testing.T) {
	tests := []struct {
		provider, model string
		u               llm.Usage
		want            float64
	}{
		// 10k prompt of which 8k cached, 500 out: 2000·2 + 8000·0.5 + 500·8.
		{"openai", "gpt-4.1-2025-04-14", usage(10_000, 8_000, 0, 500), (2000*2.0 + 8000*0.5 + 500*8.0) / 1e6},
		// 1k fresh + 4k written + 20k read, 800 out.
		{"anthropic", "claude-sonnet-4-5-20250929", usage(1000+4000+20000, 20000, 4000, 800),
			(1000*3.0 + 20000*0.30 + 4000*3.75 + 800*15.0) / 1e6},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.model, func(t *testing.T) {
			m, ok := Default().Lookup(tt.provider, tt.model)
			require.True(t, ok)
			c, ok := m.Cost(tt.u, DialectFor(tt.provider))
			require.True(t, ok)
			assert.InDelta(t, tt.want, c.Amount, eps)
			assert.Equal(t, "USD", c.Currency)
		})
	}
}

func TestDialectFor(t *testing.T) {
	tests := []struct {
		provider string
		want     Dialect
	}{
		{"anthropic", DialectAnthropic},
		{"Anthropic", DialectAnthropic},
		{"openai", DialectOpenAI},
		{"deepseek", DialectOpenAI},
		{"", DialectOpenAI},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			assert.Equal(t, tt.want, DialectFor(tt.provider))
		})
	}
	assert.Equal(t, "openai", DialectOpenAI.String())
	assert.Equal(t, "anthropic", DialectAnthropic.String())
	assert.Equal(t, "unknown", Dialect(9).String())
}
