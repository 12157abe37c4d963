package agent

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// Model is a streaming model provider (see package llm for the event
// contract). Providers are safe for concurrent use by many sessions.
type Model = llm.Model

// DefaultModel is used when neither --model nor ACP_AGENT_MODEL is set.
const DefaultModel = "openai/gpt-4.1"

// ErrNoModel means the configured model cannot be used; the message says
// exactly what to set.
var ErrNoModel = errors.New("no usable model")

// ModelSpec is a parsed "provider/model" string.
type ModelSpec struct {
	Provider string
	Model    string
}

// ParseModelSpec splits s at the first "/": "openai/gpt-4.1",
// "openai/meta-llama/Llama-3" (the model keeps its slashes), "replay/default".
func ParseModelSpec(s string) (ModelSpec, error) {
	provider, model, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || provider == "" || model == "" {
		return ModelSpec{}, fmt.Errorf("%w: model %q must look like PROVIDER/MODEL, for example openai/gpt-4.1 or replay/default", ErrNoModel, s)
	}
	return ModelSpec{Provider: provider, Model: model}, nil
}

func (m ModelSpec) String() string { return m.Provider + "/" + m.Model }

// OpenModel returns the client of spec's provider, which must be
// registered with package llm (import agent/llm/providers for the
// built-in ones). getenv supplies the provider's settings
// (OPENAI_API_KEY, OPENAI_BASE_URL); httpClient may be nil.
func OpenModel(spec ModelSpec, getenv func(string) string, httpClient *http.Client) (Model, error) {
	p, ok := llm.LookupProvider(spec.Provider)
	if !ok {
		return nil, fmt.Errorf("%w: unknown provider %q in --model %s; use %s", ErrNoModel, spec.Provider, spec, providerHints())
	}
	m, err := p.Open(spec.Model, getenv, httpClient)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoModel, err)
	}
	return m, nil
}

// providerHints names the registered providers' models for a message:
// the default model's provider first, "a, b or c".
func providerHints() string {
	def, _, _ := strings.Cut(DefaultModel, "/")
	var first, rest []string
	for _, p := range llm.Providers() {
		if p.Name == def {
			first = append(first, p.Hint)
		} else {
			rest = append(rest, p.Hint)
		}
	}
	hints := append(first, rest...)
	if len(hints) < 2 {
		return strings.Join(hints, "")
	}
	return strings.Join(hints[:len(hints)-1], ", ") + " or " + hints[len(hints)-1]
}
