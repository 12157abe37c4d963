package replay

import (
	"fmt"
	"net/http"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// Registered as "replay": replay/default plays the embedded demo script,
// replay/PATH the script at PATH.
func init() {
	llm.RegisterProvider(llm.ProviderInfo{
		Name: "replay", Hint: "replay/default (or replay/PATH-TO-SCRIPT)",
		Open: func(model string, _ func(string) string, _ *http.Client) (llm.Model, error) {
			if model == "default" {
				return Default(), nil
			}
			p, err := Load(model)
			if err != nil {
				return nil, fmt.Errorf("replay script: %w", err)
			}
			return p, nil
		},
	})
}
