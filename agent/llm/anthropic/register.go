package anthropic

import (
	"errors"
	"net/http"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// The environment variables the registered provider reads.
const (
	EnvAPIKey  = "ANTHROPIC_API_KEY"
	EnvBaseURL = "ANTHROPIC_BASE_URL"
)

// Registered as "anthropic". All of its models read images; extended
// thinking is opt-in (sessions start with it off).
func init() {
	llm.RegisterProvider(llm.ProviderInfo{
		Name: providerName, Hint: "anthropic/MODEL",
		Open: func(_ string, getenv func(string) string, httpClient *http.Client) (llm.Model, error) {
			key := getenv(EnvAPIKey)
			if key == "" {
				return nil, errors.New(EnvAPIKey + " is not set; set it in the environment the editor starts acp-agent with (and " + EnvBaseURL + " for a compatible gateway), store one with `acp-agent login`, or run offline with --model replay/default")
			}
			return New(Config{BaseURL: getenv(EnvBaseURL), APIKey: key, HTTPClient: httpClient}), nil
		},
		APIKeyEnv: EnvAPIKey, BaseURLEnv: EnvBaseURL,
		Protocol: providerName, DefaultBaseURL: DefaultBaseURL,
		OpenEndpoint: func(_ string, e llm.Endpoint, httpClient *http.Client) (llm.Model, error) {
			return New(Config{BaseURL: e.BaseURL, Headers: e.Headers, HTTPClient: httpClient}), nil
		},
		Usage:                 llm.UsageDialectAnthropic,
		Images:                true,
		ReasoningLevels:       []string{llm.EffortOff, llm.EffortLow, llm.EffortMedium, llm.EffortHigh},
		DefaultReasoningLevel: llm.EffortOff,
	})
}
