package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/llm/anthropic"
	"github.com/acp-agent/acp-agent/agent/llm/openai"
	"github.com/acp-agent/acp-agent/agent/llm/replay"
)

// Model is a streaming model provider (see package llm for the event
// contract). Providers are safe for concurrent use by many sessions.
type Model interface {
	Name() string
	Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error]
}

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

// OpenModel returns the provider for spec. getenv supplies the provider's
// settings (OPENAI_API_KEY, OPENAI_BASE_URL); httpClient may be nil.
func OpenModel(spec ModelSpec, getenv func(string) string, httpClient *http.Client) (Model, error) {
	switch spec.Provider {
	case "openai":
		key := getenv("OPENAI_API_KEY")
		if key == "" {
			return nil, fmt.Errorf("%w: OPENAI_API_KEY is not set; set it in the environment the editor starts acp-agent with (and OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama), or run offline with --model replay/default", ErrNoModel)
		}
		return openai.New(openai.Config{BaseURL: getenv("OPENAI_BASE_URL"), APIKey: key, HTTPClient: httpClient}), nil
	case "anthropic":
		key := getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, fmt.Errorf("%w: ANTHROPIC_API_KEY is not set; set it in the environment the editor starts acp-agent with (and ANTHROPIC_BASE_URL for a compatible gateway), or run offline with --model replay/default", ErrNoModel)
		}
		return anthropic.New(anthropic.Config{BaseURL: getenv("ANTHROPIC_BASE_URL"), APIKey: key, HTTPClient: httpClient}), nil
	case "replay":
		if spec.Model == "default" {
			return replay.Default(), nil
		}
		p, err := replay.Load(spec.Model)
		if err != nil {
			return nil, fmt.Errorf("%w: replay script: %v", ErrNoModel, err)
		}
		return p, nil
	}
	return nil, fmt.Errorf("%w: unknown provider %q in --model %s; use openai/MODEL, anthropic/MODEL or replay/default (or replay/PATH-TO-SCRIPT)", ErrNoModel, spec.Provider, spec)
}
