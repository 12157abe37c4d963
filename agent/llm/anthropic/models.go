package anthropic

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// maxModelPages bounds the pages of one listing.
const maxModelPages = 5

// ListModels asks Anthropic's models API which models the key can use
// (GET /v1/models, following has_more for a few pages). The names are
// the display names; limits are taken where the response carries them.
func (p *Provider) ListModels(ctx context.Context) ([]llm.ServerModel, error) {
	base := strings.TrimSuffix(p.url, "/messages")
	h := p.header("application/json")
	var out []llm.ServerModel
	after := ""
	for range maxModelPages {
		u := base + "/models?limit=1000"
		if after != "" {
			u += "&after_id=" + url.QueryEscape(after)
		}
		var page struct {
			Data []struct {
				ID             string `json:"id"`
				DisplayName    string `json:"display_name"`
				MaxInputTokens int    `json:"max_input_tokens"`
				MaxTokens      int    `json:"max_tokens"`
			} `json:"data"`
			HasMore bool   `json:"has_more"`
			LastID  string `json:"last_id"`
		}
		if err := llm.GetJSON(ctx, p.client, http.MethodGet, u, h.Clone(), nil, llm.MaxModelListBytes, &page, p.redact); err != nil {
			return nil, err
		}
		for _, d := range page.Data {
			if d.ID != "" {
				out = append(out, llm.ServerModel{ID: d.ID, Name: d.DisplayName, ContextWindow: d.MaxInputTokens, MaxOutputTokens: d.MaxTokens})
			}
		}
		if !page.HasMore || page.LastID == "" || page.LastID == after {
			break
		}
		after = page.LastID
	}
	return out, nil
}
