package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// fakeModelServer is an OpenAI-compatible or Anthropic server for model
// discovery: it serves a model list, Ollama's show endpoint, and chat
// answers with usage, and records every request line and header.
type fakeModelServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "METHOD PATH auth-header"
}

func (f *fakeModelServer) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func newFakeModelServer(t *testing.T, routes map[string]http.HandlerFunc) *fakeModelServer {
	f := &fakeModelServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, fmt.Sprintf("%s %s %s%s", r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")))
		f.mu.Unlock()
		if h, ok := routes[r.Method+" "+r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// chatWithUsage answers a Chat Completions request with "ok" and usage.
func chatWithUsage(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\n")
	io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105}}`+"\n\n")
	io.WriteString(w, "data: [DONE]\n\n")
}

func jsonHandler(v any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
}

// modelOptions returns the model option's values and names in a
// config option list.
func modelOptions(opts []acp.SessionConfigOption) map[string]string {
	out := map[string]string{}
	for _, o := range opts {
		if o.ID == "model" && o.Select != nil {
			for _, v := range o.Select.Options.Options {
				out[string(v.Value)] = v.Name
			}
		}
	}
	return out
}

// awaitConfigOptions reads messages until a config_option_update of sid.
func awaitConfigOptions(t *testing.T, p *proc, sid string) []acp.SessionConfigOption {
	t.Helper()
	for {
		m, ok := p.NextWithin(15 * time.Second)
		require.True(t, ok, "no config_option_update")
		if m.Method != acp.MethodSessionUpdate {
			continue
		}
		if n := m.Update(t); n.SessionID == sid && n.Update.ConfigOptionUpdate != nil {
			return n.Update.ConfigOptionUpdate.ConfigOptions
		}
	}
}

// usageSize prompts and returns the context size of the turn's
// usage_update (0 without one).
func usageSize(t *testing.T, p *proc, sid string) uint64 {
	t.Helper()
	resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
	require.Nil(t, resp.Error)
	var size uint64
	for _, m := range before {
		if m.Method == acp.MethodSessionUpdate {
			if u := m.Update(t).Update.UsageUpdate; u != nil {
				size = u.Size
			}
		}
	}
	return size
}

func setModel(t *testing.T, p *proc, sid, model string) {
	t.Helper()
	v := acp.SessionConfigValueId(model)
	resp, _ := p.Call(acp.MethodSessionSetConfigOption, &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "model",
		Value: acp.SessionConfigOptionValue{ValueID: &v}})
	require.Nil(t, resp.Error, "switching to %s", model)
}

// Issue 16: the model picker lists what the configured servers offer
// (a vLLM-style server, an Ollama server, Anthropic's models API), merged
// with the config file, fetched in the background after session/new
// (which a slow server does not hold up), then sent as
// config_option_update; context windows the servers report make
// usage_update work for models the table does not know. Non-chat models
// are left out, keys go only to their own server, and a redirect is
// not followed.
func TestBinaryModelDiscovery(t *testing.T) {
	release := make(chan struct{})
	vllm := newFakeModelServer(t, map[string]http.HandlerFunc{
		"GET /v1/models": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			jsonHandler(map[string]any{"object": "list", "data": []any{
				map[string]any{"id": "test-model", "object": "model", "max_model_len": 32768},
				map[string]any{"id": "qwen-coder", "object": "model", "max_model_len": 131072},
				map[string]any{"id": "text-embedding-3-small", "object": "model"},
				map[string]any{"id": "evil\nmodel\u001b[2J", "object": "model"},
				map[string]any{"id": strings.Repeat("x", 300), "object": "model"},
			}})(w, r)
		},
		"POST /v1/chat/completions": chatWithUsage,
	})
	ollama := newFakeModelServer(t, map[string]http.HandlerFunc{
		"GET /v1/models": jsonHandler(map[string]any{"object": "list", "data": []any{
			map[string]any{"id": "llama3:8b", "object": "model", "owned_by": "library"},
			map[string]any{"id": "nomic-embed-text:latest", "object": "model", "owned_by": "library"},
		}}),
		"POST /api/show":            jsonHandler(map[string]any{"model_info": map[string]any{"general.architecture": "llama", "llama.context_length": 8192}}),
		"POST /v1/chat/completions": chatWithUsage,
	})
	anthropic := newFakeModelServer(t, map[string]http.HandlerFunc{
		"GET /v1/models": func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Api-Key") != "sk-ant-test" || r.Header.Get("Anthropic-Version") == "" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			jsonHandler(map[string]any{"data": []any{
				map[string]any{"type": "model", "id": "claude-test", "display_name": "Claude Test"},
				map[string]any{"type": "model", "id": "claude-new", "display_name": "Claude New"},
			}, "has_more": false})(w, r)
		},
	})
	evil := newFakeModelServer(t, nil)
	redirector := newFakeModelServer(t, map[string]http.HandlerFunc{
		"GET /v1/models": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, evil.URL+"/v1/models", http.StatusTemporaryRedirect)
		},
	})
	config := map[string]any{"model": "openai/test-model", "models": []any{
		map[string]any{"model": "openai/test-model"},
		map[string]any{"model": "openai/local", "baseUrl": ollama.URL + "/v1", "apiKeyEnv": "OLLAMA_KEY"},
		map[string]any{"model": "anthropic/claude-test", "name": "Claude (configured)"},
		map[string]any{"model": "openai/elsewhere", "baseUrl": redirector.URL + "/v1", "apiKeyEnv": "REDIRECTED_KEY"},
	}}
	data, err := json.Marshal(config)
	require.NoError(t, err)
	configPath := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(configPath, data, 0o600))

	p := startAgent(t, []string{"OPENAI_API_KEY=sk-openai-test", "OPENAI_BASE_URL=" + vllm.URL + "/v1",
		"ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL=" + anthropic.URL,
		"OLLAMA_KEY=ollama", "REDIRECTED_KEY=sk-redirected-secret"}, "--config", configPath)
	p.Initialize(nil)
	// session/new answers while the vLLM server still holds its list.
	sid := p.NewSession(t.TempDir())
	close(release)

	opts := modelOptions(awaitConfigOptions(t, p, sid))
	for spec, name := range map[string]string{
		"openai/test-model": "openai/test-model", "openai/local": "openai/local", "openai/elsewhere": "openai/elsewhere",
		"anthropic/claude-test": "Claude (configured)", // the config file's name wins
		"openai/qwen-coder":     "openai/qwen-coder", "openai/llama3:8b": "openai/llama3:8b", "anthropic/claude-new": "Claude New",
	} {
		assert.Equal(t, name, opts[spec], "%s in the picker", spec)
	}
	assert.Len(t, opts, 7, "embedding models, and ids with control characters or of 300 bytes, are left out: %v", opts)

	// Context windows from the servers.
	assert.EqualValues(t, 32768, usageSize(t, p, sid), "the current model's window, learnt after the session started")
	setModel(t, p, sid, "openai/qwen-coder")
	assert.EqualValues(t, 131072, usageSize(t, p, sid))
	setModel(t, p, sid, "openai/llama3:8b")
	assert.EqualValues(t, 8192, usageSize(t, p, sid), "Ollama's show endpoint")
	assert.Contains(t, ollama.requests(), "POST /v1/chat/completions Bearer ollama", "a discovered model talks to its own server")

	assert.Contains(t, vllm.requests(), "GET /v1/models Bearer sk-openai-test")
	for _, r := range append(append(vllm.requests(), ollama.requests()...), anthropic.requests()...) {
		assert.NotContains(t, r, "sk-redirected-secret", "a key goes only to its own server")
	}
	assert.Empty(t, evil.requests(), "the redirect was not followed")
	assert.Contains(t, redirector.requests(), "GET /v1/models Bearer sk-redirected-secret")
}

// Issue 16: --discover-models=false asks no server for its models.
func TestBinaryModelDiscoveryCanBeTurnedOff(t *testing.T) {
	srv := newFakeModelServer(t, map[string]http.HandlerFunc{
		"GET /v1/models":            jsonHandler(map[string]any{"data": []any{map[string]any{"id": "other"}}}),
		"POST /v1/chat/completions": chatWithUsage,
	})
	p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + srv.URL + "/v1"}, "--model", "openai/test-model", "--discover-models=false")
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	usageSize(t, p, sid)
	for _, r := range srv.requests() {
		assert.False(t, strings.HasPrefix(r, "GET"), "discovery ran: %s", r)
	}
	assert.NotEmpty(t, srv.requests())
}
