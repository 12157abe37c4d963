package openai

import (
	"errors"
	"net/http"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// The environment variables the registered provider reads.
const (
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvBaseURL = "OPENAI_BASE_URL"
)

// Registered as "openai": any OpenAI-compatible Chat Completions server.
// Its reasoning models always reason (medium is the API's default level).
func init() {
	llm.RegisterProvider(llm.ProviderInfo{
		Name: providerName, Hint: "openai/MODEL",
		Open: func(_ string, getenv func(string) string, httpClient *http.Client) (llm.Model, error) {
			key := getenv(EnvAPIKey)
			if key == "" {
				return nil, errors.New(EnvAPIKey + " is not set; set it in the environment the editor starts acp-agent with (and " + EnvBaseURL + " for an OpenAI-compatible server such as Ollama), store one with `acp-agent login`, or run offline with --model replay/default")
			}
			return New(Config{BaseURL: getenv(EnvBaseURL), APIKey: key, HTTPClient: httpClient}), nil
		},
		APIKeyEnv: EnvAPIKey, BaseURLEnv: EnvBaseURL,
		Protocol: providerName, DefaultBaseURL: DefaultBaseURL,
		OpenEndpoint: func(_ string, e llm.Endpoint, httpClient *http.Client) (llm.Model, error) {
			return New(Config{BaseURL: e.BaseURL, Headers: e.Headers, HTTPClient: httpClient}), nil
		},
		Usage:                 llm.UsageDialectOpenAI,
		ReasoningLevels:       []string{llm.EffortLow, llm.EffortMedium, llm.EffortHigh},
		DefaultReasoningLevel: llm.EffortMedium,
	})
}
