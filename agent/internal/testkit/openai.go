package testkit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// An OpenAI-compatible streaming server for the tests (Chat Completions
// SSE): the same helpers as agent/acpagent's tests use.

const TestKey = "sk-test-SECRET-4f9a1c"

// OpenAIServer is an httptest server speaking the Chat Completions
// streaming format. handle writes the response to each request; requests
// records what the agent sent.
type OpenAIServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []RecordedRequest
}

type RecordedRequest struct {
	Auth string
	Body map[string]any
}

func NewOpenAIServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *OpenAIServer {
	s := &OpenAIServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var body map[string]any
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &body)
		s.mu.Lock()
		s.requests = append(s.requests, RecordedRequest{Auth: r.Header.Get("Authorization"), Body: body})
		n := len(s.requests)
		s.mu.Unlock()
		handle(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *OpenAIServer) Request(t *testing.T, i int) RecordedRequest {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Greater(t, len(s.requests), i, "the model server got %d requests", len(s.requests))
	return s.requests[i]
}

// SSE writes Chat Completions chunks and, if done, the [DONE] marker.
func SSE(w http.ResponseWriter, chunks []string, done bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range chunks {
		fmt.Fprintf(w, "data: %s\n\n", c)
	}
	if done {
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

func TextChunk(s string) string {
	b, _ := json.Marshal(s)
	return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}`
}

func ReasoningChunk(field, s string) string {
	b, _ := json.Marshal(s)
	return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"` + field + `":` + string(b) + `},"finish_reason":null}]}`
}

func FinishChunk(reason string) string {
	return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

const UsageChunk = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}`

// Count is the number of requests the server got so far.
func (s *OpenAIServer) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}
