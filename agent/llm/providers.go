package llm

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"sync"
)

// Model is a streaming model provider's client (see the package
// documentation for the event contract). It is safe for concurrent use by
// many sessions. A Model that can ask its server which models it offers
// also implements ModelLister.
type Model interface {
	Name() string
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]
}

// ProviderInfo is what the rest of the program knows of a provider
// besides its wire format: how to open it, where its settings come from,
// how its usage counts, and what its models can do. Every question that
// would otherwise be a switch on a provider's name is a field here.
type ProviderInfo struct {
	// Name is the PROVIDER of a "PROVIDER/MODEL" spec ("openai").
	Name string
	// Hint is how a model of it is named, for messages ("openai/MODEL").
	Hint string
	// Open returns the provider's client for model (the MODEL of the
	// spec), configured from getenv; httpClient may be nil. Its error says
	// what to set.
	Open func(model string, getenv func(string) string, httpClient *http.Client) (Model, error)
	// APIKeyEnv and BaseURLEnv name the environment variables Open reads
	// the API key and the server's base URL from ("" for none): a model
	// choice may take them from elsewhere, and servers are told apart by
	// them.
	APIKeyEnv, BaseURLEnv string
	// Usage says how its Usage counts cached prompt tokens (pricing).
	Usage UsageDialect
	// Images reports whether its models read images where the model
	// table does not say.
	Images bool
	// ReasoningLevels are the thought levels (EffortOff, ...) its
	// reasoning models take, DefaultReasoningLevel the one a session
	// starts at; nil when it has none.
	ReasoningLevels       []string
	DefaultReasoningLevel string
	// Protocol names its wire format as ACP's LlmProtocol does ("openai",
	// "anthropic"): a client may send its requests to another server of
	// that protocol (OpenEndpoint). "" for a provider with no server.
	Protocol string
	// DefaultBaseURL is the server it talks to when no base URL is set.
	DefaultBaseURL string
	// OpenEndpoint, if set, returns its client for model at an endpoint
	// the user's client chose: the base URL and headers, which carry any
	// key (nothing is read from the environment).
	OpenEndpoint func(model string, e Endpoint, httpClient *http.Client) (Model, error)
}

// Endpoint is a server a provider's requests go to, and the headers they
// carry (which may hold a key: they are never logged or shown).
type Endpoint struct {
	BaseURL string
	Headers map[string]string
}

// UsageDialect says how a provider counts cached prompt tokens in Usage.
type UsageDialect uint8

const (
	// UsageDialectOpenAI: InputTokens is the whole prompt including
	// CachedReadTokens (OpenAI's prompt_tokens with
	// prompt_tokens_details.cached_tokens, DeepSeek's cache hits). Uncached
	// prompt = InputTokens - CachedReadTokens. OpenAI reports no cache
	// writes; any CachedWriteTokens are charged on top, at the write price.
	// It is the zero value, and the dialect of every OpenAI-compatible
	// server.
	UsageDialectOpenAI UsageDialect = iota
	// UsageDialectAnthropic: InputTokens is the whole prompt as this
	// repository's Anthropic provider reports it: input_tokens +
	// cache_creation_input_tokens + cache_read_input_tokens. Uncached
	// prompt = InputTokens - CachedReadTokens - CachedWriteTokens.
	UsageDialectAnthropic
)

func (d UsageDialect) String() string {
	switch d {
	case UsageDialectOpenAI:
		return "openai"
	case UsageDialectAnthropic:
		return "anthropic"
	}
	return "unknown"
}

var providers struct {
	mu    sync.RWMutex
	infos map[string]ProviderInfo
}

// RegisterProvider makes p known by its name. Provider packages call it
// from init, so importing one (or agent/llm/providers, which imports the
// built-in ones) is what makes it usable. It panics if the name is empty
// or taken, or p has no Open: a mistake in the program.
func RegisterProvider(p ProviderInfo) {
	if p.Name == "" || p.Open == nil {
		panic("llm: RegisterProvider: a provider needs a name and Open")
	}
	providers.mu.Lock()
	defer providers.mu.Unlock()
	if _, dup := providers.infos[p.Name]; dup {
		panic(fmt.Sprintf("llm: RegisterProvider: provider %q registered twice", p.Name))
	}
	if providers.infos == nil {
		providers.infos = map[string]ProviderInfo{}
	}
	p.ReasoningLevels = slices.Clip(p.ReasoningLevels)
	providers.infos[p.Name] = p
}

// LookupProvider returns the registered provider called name (compared
// exactly, as specs are).
func LookupProvider(name string) (ProviderInfo, bool) {
	providers.mu.RLock()
	defer providers.mu.RUnlock()
	p, ok := providers.infos[name]
	return p, ok
}

// Providers lists the registered providers, sorted by name.
func Providers() []ProviderInfo {
	providers.mu.RLock()
	defer providers.mu.RUnlock()
	out := make([]ProviderInfo, 0, len(providers.infos))
	for _, p := range providers.infos {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b ProviderInfo) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
