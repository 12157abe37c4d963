package pricing

import (
	"strings"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// Dialect says how a provider counts cached prompt tokens in llm.Usage;
// the constants are llm's (see llm.UsageDialectOpenAI and
// llm.UsageDialectAnthropic).
type Dialect = llm.UsageDialect

const (
	// DialectOpenAI: cached reads are part of InputTokens, cache writes
	// are not (llm.UsageDialectOpenAI). The zero value.
	DialectOpenAI = llm.UsageDialectOpenAI
	// DialectAnthropic: cached reads and writes are part of InputTokens
	// (llm.UsageDialectAnthropic).
	DialectAnthropic = llm.UsageDialectAnthropic
)

// DialectFor returns the dialect of a provider name (case-insensitive),
// as its registration with package llm says (llm.ProviderInfo.Usage):
// DialectOpenAI for a provider that is not registered.
func DialectFor(provider string) Dialect {
	if p, ok := llm.LookupProvider(strings.ToLower(provider)); ok {
		return p.Usage
	}
	return DialectOpenAI
}

// Cost is an amount of money.
type Cost struct {
	Amount   float64
	Currency string
}

// Cost prices one model call's usage:
//
//	(uncached·input + cachedRead·cacheRead + cachedWrite·cacheWrite + output·output) / 1e6
//
// with uncached computed per dialect (see the Dialect constants) and
// clamped at zero, negative counts read as zero, and an unknown (zero)
// cache price replaced by the input price. Reasoning tokens are inside
// OutputTokens and are not added again. ok is false, and the cost must not
// be shown, when the model is not Priced.
func (m Model) Cost(u llm.Usage, dialect Dialect) (c Cost, ok bool) {
	if !m.Priced() {
		return Cost{}, false
	}
	in := max(u.InputTokens, 0)
	read := max(u.CachedReadTokens, 0)
	write := max(u.CachedWriteTokens, 0)
	out := max(u.OutputTokens, 0)

	uncached := in - read
	if dialect == DialectAnthropic {
		uncached -= write
	}
	uncached = max(uncached, 0)

	readPrice := m.CacheReadPerMTok
	if readPrice == 0 {
		readPrice = m.InputPerMTok
	}
	writePrice := m.CacheWritePerMTok
	if writePrice == 0 {
		writePrice = m.InputPerMTok
	}
	amount := (float64(uncached)*m.InputPerMTok +
		float64(read)*readPrice +
		float64(write)*writePrice +
		float64(out)*m.OutputPerMTok) / 1e6

	currency := m.Currency
	if currency == "" {
		currency = DefaultCurrency
	}
	return Cost{Amount: max(amount, 0), Currency: currency}, true
}
