package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// maxListedModels caps what one server's list contributes.
const maxListedModels = 500

// maxOllamaShows caps the Ollama show requests one listing makes.
const maxOllamaShows = 32

// modelList is GET /models of OpenAI and compatible servers. Beyond the
// id, servers add what they know: vLLM max_model_len, OpenRouter name,
// context_length and top_provider.max_completion_tokens.
type modelList struct {
	Data []struct {
		ID            string `json:"id"`
		Name          string `json:"name"`
		OwnedBy       string `json:"owned_by"`
		MaxModelLen   int    `json:"max_model_len"`
		ContextLength int    `json:"context_length"`
		TopProvider   *struct {
			MaxCompletionTokens int `json:"max_completion_tokens"`
		} `json:"top_provider"`
	} `json:"data"`
}

// ListModels asks the server which models it offers (GET /models under the
// base URL). Context windows come from the list where the server puts
// them there (vLLM, OpenRouter); an Ollama server (its models are owned by
// "library") is asked for each model's with POST /api/show.
func (p *Provider) ListModels(ctx context.Context) ([]llm.ServerModel, error) {
	base := strings.TrimSuffix(p.url, "/chat/completions")
	var list modelList
	if err := llm.GetJSON(ctx, p.client, http.MethodGet, base+"/models", p.header("application/json"), nil, llm.MaxModelListBytes, &list, p.redact); err != nil {
		return nil, err
	}
	var out []llm.ServerModel
	ollama := false
	for _, d := range list.Data {
		if d.ID == "" || len(out) == maxListedModels || !chatModel(d.ID) {
			continue
		}
		m := llm.ServerModel{ID: d.ID, Name: d.Name, ContextWindow: max(d.MaxModelLen, d.ContextLength)}
		if d.TopProvider != nil {
			m.MaxOutputTokens = d.TopProvider.MaxCompletionTokens
		}
		ollama = ollama || d.OwnedBy == "library"
		out = append(out, m)
	}
	if ollama {
		p.ollamaContextWindows(ctx, strings.TrimSuffix(base, "/v1"), out)
	}
	return out, nil
}

// nonChatNames are parts of the ids of models that cannot answer a chat
// (OpenAI's and local servers' embedding, speech, image and moderation
// models), left out of the picker.
var nonChatNames = []string{"embed", "whisper", "tts", "dall-e", "moderation", "transcribe", "realtime", "audio", "image", "babbage", "davinci", "sora", "rerank"}

func chatModel(id string) bool {
	id = strings.ToLower(id)
	for _, n := range nonChatNames {
		if strings.Contains(id, n) {
			return false
		}
	}
	return true
}

// ollamaContextWindows fills the context windows Ollama's show endpoint
// reports (model_info "<architecture>.context_length"), four requests at
// a time, for at most maxOllamaShows models; failures leave them unknown.
func (p *Provider) ollamaContextWindows(ctx context.Context, root string, models []llm.ServerModel) {
	if u, err := url.Parse(root); err != nil || u.Scheme == "" {
		return
	}
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range models[:min(len(models), maxOllamaShows)] {
		if models[i].ContextWindow > 0 {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			body, _ := json.Marshal(map[string]string{"model": models[i].ID})
			var show struct {
				ModelInfo map[string]any `json:"model_info"`
			}
			if llm.GetJSON(ctx, p.client, http.MethodPost, root+"/api/show", p.header("application/json"), bytes.NewReader(body), llm.MaxModelListBytes, &show, p.redact) != nil {
				return
			}
			for k, v := range show.ModelInfo {
				if n, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") && n > 0 && n < 1<<31 {
					models[i].ContextWindow = int(n)
				}
			}
		})
	}
	wg.Wait()
}

// header is the headers of a request whose answer is accept: the key, then
// the configured extra headers, which may replace the others.
func (p *Provider) header(accept string) http.Header {
	h := http.Header{"Accept": {accept}, "Content-Type": {"application/json"}}
	if p.apiKey != "" {
		h.Set("Authorization", "Bearer "+p.apiKey)
	}
	for k, v := range p.headers {
		h.Set(k, v)
	}
	return h
}
