package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// collect drains a stream, checking that an error is the last item.
func collect(t *testing.T, p *Provider, ctx context.Context, req *llm.Request) ([]string, error) {
	t.Helper()
	var got []string
	var err error
	for ev, e := range p.Stream(ctx, req) {
		if err != nil {
			t.Fatalf("item after the error %v: %s", err, ev.String())
		}
		if e != nil {
			err = e
			continue
		}
		got = append(got, ev.String())
	}
	if err == nil && (len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "finish:")) {
		t.Errorf("successful stream did not end with a finish: %q", got)
	}
	for i, s := range got[:max(len(got)-1, 0)] {
		if strings.HasPrefix(s, "finish:") {
			t.Errorf("finish at %d is not the last event: %q", i, got)
		}
	}
	return got, err
}

var simpleRequest = &llm.Request{
	Model:    "gpt-test",
	Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}}},
}

// verifyNoLeaks checks for leaked goroutines when t ends. It is a cleanup
// rather than a defer so that it runs after the cleanups registered later
// (LIFO), which close the test servers and their client connections.
func verifyNoLeaks(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

// newServer starts h and returns a Provider pointed at it; the server and
// its client's connections are closed when the test ends.
func newServer(t *testing.T, cfg Config, h http.HandlerFunc) *Provider {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Like a real server, read the whole body first: net/http only
		// notices a client hanging up (cancelling r.Context()) once it has.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading request body: %v", err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}))
	t.Cleanup(srv.Close) // also closes the idle connections of srv.Client()
	cfg.BaseURL = srv.URL + "/v1"
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = srv.Client()
	}
	return New(cfg)
}

// serveSSE writes body as an event stream, in pieces of size bytes (0 means
// at once) so that events straddle reads.
func serveSSE(body []byte, size int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rest, piece := body, size
		if piece <= 0 {
			piece = len(rest)
		}
		for len(rest) > 0 {
			n := min(piece, len(rest))
			w.Write(rest[:n])
			w.(http.Flusher).Flush()
			rest = rest[n:]
		}
	}
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestStreamFixtures(t *testing.T) {
	verifyNoLeaks(t)
	tests := []struct {
		fixture string
		want    []string
		// check inspects the error; nil means the stream must succeed.
		check func(t *testing.T, err error)
	}{
		{
			fixture: "text.sse",
			want: []string{
				"text:Hello", "text:, world", "text:!",
				"usage:in=12 out=4 cr=8 cw=0 r=0", "finish:stop",
			},
		},
		{
			fixture: "reasoning_content.sse",
			want: []string{
				"reasoning:The user greets.", "reasoning: Reply briefly.", "text:Hi!",
				"usage:in=20 out=9 cr=0 cw=0 r=6", "finish:stop",
			},
		},
		{
			fixture: "reasoning.sse",
			want: []string{
				"reasoning:Thinking", "reasoning: hard.", "text:Done.",
				"usage:in=30 out=5 cr=0 cw=0 r=0", "finish:stop",
			},
		},
		{
			fixture: "parallel_tool_calls.sse",
			want: []string{
				"text:Let me look.",
				"tool:0 id=call_a name=read_file args=",
				`tool:0 id= name= args={"path":`,
				`tool:0 id= name= args="a.go"}`,
				"tool:1 id=call_b name=read_file args=",
				`tool:1 id= name= args={"path":"b.go"}`,
				"usage:in=100 out=20 cr=64 cw=0 r=0", "finish:tool_calls",
			},
		},
		{
			fixture: "ollama_index0.sse",
			want: []string{
				`tool:0 id=call_x1 name=get_weather args={"city":"Paris"}`,
				`tool:1 id=call_x2 name=get_weather args={"city":"Rome"}`,
				"usage:in=150 out=40 cr=0 cw=0 r=0", "finish:tool_calls",
			},
		},
		{
			fixture: "missing_index.sse",
			want: []string{
				"tool:0 id=call_m1 name=ls args={}",
				"tool:1 id=call_m2 name=pwd args={}",
				"tool:2 id=call_m3 name=date args={}",
				"finish:tool_calls",
			},
		},
		{
			fixture: "lmstudio_empty_name.sse",
			want: []string{
				"tool:0 id=365174485 name=read_file args=",
				`tool:0 id= name= args={"path":`,
				`tool:0 id= name= args= "x"}`,
				"finish:tool_calls",
			},
		},
		{
			fixture: "openrouter_processing.sse",
			want: []string{
				"reasoning:Plan.", "text:Answer.",
				"usage:in=40 out=7 cr=32 cw=0 r=2", "finish:stop",
			},
		},
		{
			fixture: "crlf_continuous_usage.sse",
			want: []string{
				"text:a", "text:b", "text:c",
				"usage:in=5 out=3 cr=0 cw=0 r=0", "finish:length",
			},
		},
		{
			fixture: "openrouter_error.sse",
			want:    []string{"text:Partial"},
			check: wantProviderError(llm.ProviderError{
				Provider: "openai", Type: "502", Message: "Upstream provider disconnected",
				Retryable: false, // content was already streamed
			}),
		},
		{
			fixture: "openrouter_error_first.sse",
			check: wantProviderError(llm.ProviderError{
				Provider: "openai", Type: "502", Message: "Upstream provider disconnected",
				Retryable: true,
			}),
		},
		{
			fixture: "finish_error.sse",
			want:    []string{"text:Hm"},
			check: wantProviderError(llm.ProviderError{
				Provider: "openai", Message: `the server ended the stream with finish_reason "error"`,
			}),
		},
		{
			fixture: "vllm_error.sse",
			check: wantProviderError(llm.ProviderError{
				Provider: "openai", Type: "BadRequestError",
				Message: "The decoder prompt (length 40961) is longer than the maximum model length of 40960.",
			}),
		},
		{
			fixture: "openai_error.sse",
			want:    []string{"text:Work"},
			check: wantProviderError(llm.ProviderError{
				Provider: "openai", Type: "server_error",
				Message: "The server had an error while processing your request. Sorry about that!",
			}),
		},
		{
			fixture: "truncated.sse",
			want:    []string{"text:All"},
			check:   wantIs(llm.ErrTruncatedStream),
		},
		{
			fixture: "truncated_midline.sse",
			want:    []string{"text:All"},
			check:   wantIs(llm.ErrTruncatedStream),
		},
	}
	for _, tt := range tests {
		body := fixture(t, tt.fixture)
		for _, size := range []int{0, 7} {
			t.Run(fmt.Sprintf("%s/pieces=%d", strings.TrimSuffix(tt.fixture, ".sse"), size), func(t *testing.T) {
				p := newServer(t, Config{}, serveSSE(body, size))
				got, err := collect(t, p, context.Background(), simpleRequest)
				if !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
					t.Errorf("events:\n got %q\nwant %q", got, tt.want)
				}
				switch {
				case tt.check != nil:
					tt.check(t, err)
				case err != nil:
					t.Errorf("err = %v, want success", err)
				}
			})
		}
	}
}

func wantIs(target error) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, target) {
			t.Errorf("err = %v, want one wrapping %v", err, target)
		}
	}
}

func wantProviderError(want llm.ProviderError) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var pe *llm.ProviderError
		if !errors.As(err, &pe) {
			t.Fatalf("err = %#v, want *llm.ProviderError", err)
		}
		if *pe != want {
			t.Errorf("err = %+v, want %+v", *pe, want)
		}
	}
}

func TestStreamCompletesCallsWithoutIDOrArguments(t *testing.T) {
	verifyNoLeaks(t)
	p := newServer(t, Config{}, serveSSE(fixture(t, "tool_call_no_id.sse"), 0))
	var calls []llm.ToolCallDelta
	var last llm.Event
	for ev, err := range p.Stream(context.Background(), simpleRequest) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == llm.EventToolCallDelta {
			calls = append(calls, *ev.ToolCall)
		}
		last = ev
	}
	if len(calls) != 2 {
		t.Fatalf("got %d tool call deltas %+v, want 2", len(calls), calls)
	}
	if c := calls[0]; c.Index != 0 || c.ID != "" || c.Name != "list_sessions" || c.ArgumentsDelta != "" {
		t.Errorf("first delta = %+v", c)
	}
	if c := calls[1]; c.Index != 0 || !strings.HasPrefix(c.ID, "call_") || len(c.ID) < 12 || c.Name != "" || c.ArgumentsDelta != "{}" {
		t.Errorf("completing delta = %+v, want a synthetic id and {}", c)
	}
	if last.Kind != llm.EventFinish || last.Finish != llm.FinishToolCalls {
		t.Errorf("last event = %s, want finish:tool_calls", last.String())
	}
}

func TestRequestShape(t *testing.T) {
	verifyNoLeaks(t)
	// The handler's goroutine hands what it saw over a mutex, not the network.
	var (
		mu        sync.Mutex
		gotPath   string
		gotHeader http.Header
		gotBody   []byte
	)
	p := newServer(t, Config{
		APIKey:  "sk-shape",
		Headers: map[string]string{"X-Title": "acp-agent", "HTTP-Referer": "https://example.org"},
	}, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotPath, gotHeader = r.Method+" "+r.URL.Path, r.Header.Clone()
		gotBody, _ = io.ReadAll(r.Body)
		mu.Unlock()
		serveSSE(fixture(t, "text.sse"), 0)(w, r)
	})
	req := &llm.Request{
		Model:     "gpt-test",
		System:    "Be brief.",
		MaxTokens: 256,
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("Read "), llm.TextPart("a.go")}},
			{
				Role: llm.RoleAssistant, Reasoning: "Need the file.",
				ToolCalls: []llm.ToolCall{
					{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.go"}`},
					{ID: "call_b", Name: "list_sessions", Arguments: ""},
				},
			},
			{Role: llm.RoleTool, ToolCallID: "call_a", ToolName: "read_file", Content: []llm.Part{llm.TextPart("package a")}},
			{Role: llm.RoleTool, ToolCallID: "call_b", Content: []llm.Part{llm.TextPart("[]")}},
			{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("Done.")}},
			{Role: llm.RoleUser, Content: []llm.Part{
				llm.TextPart("What is this?"),
				{Type: llm.PartImage, MIMEType: "image/png", Data: "iVBORw0KGgo="},
			}},
		},
		Tools: []llm.ToolSpec{
			{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "list_sessions", Description: "List sessions."},
		},
	}
	if _, err := collect(t, p, context.Background(), req); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotPath != "POST /v1/chat/completions" {
		t.Errorf("request line = %q", gotPath)
	}
	for k, want := range map[string]string{
		"Authorization": "Bearer sk-shape",
		"Content-Type":  "application/json",
		"Accept":        "text/event-stream",
		"X-Title":       "acp-agent",
		"Http-Referer":  "https://example.org",
	} {
		if got := gotHeader.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}

	const want = `{
	  "model": "gpt-test",
	  "messages": [
	    {"role": "system", "content": "Be brief."},
	    {"role": "user", "content": "Read a.go"},
	    {"role": "assistant", "content": null, "reasoning_content": "Need the file.", "tool_calls": [
	      {"id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.go\"}"}},
	      {"id": "call_b", "type": "function", "function": {"name": "list_sessions", "arguments": "{}"}}
	    ]},
	    {"role": "tool", "tool_call_id": "call_a", "name": "read_file", "content": "package a"},
	    {"role": "tool", "tool_call_id": "call_b", "content": "[]"},
	    {"role": "assistant", "content": "Done."},
	    {"role": "user", "content": [
	      {"type": "text", "text": "What is this?"},
	      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
	    ]}
	  ],
	  "tools": [
	    {"type": "function", "function": {"name": "read_file", "description": "Read a file.",
	      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
	    {"type": "function", "function": {"name": "list_sessions", "description": "List sessions.",
	      "parameters": {"type": "object", "properties": {}}}}
	  ],
	  "stream": true,
	  "stream_options": {"include_usage": true},
	  "max_tokens": 256
	}`
	assertJSONEqual(t, gotBody, []byte(want))
}

func assertJSONEqual(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want invalid JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		gi, _ := json.MarshalIndent(g, "", "  ")
		wi, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("body:\n%s\nwant:\n%s", gi, wi)
	}
}

func TestRequestOmitsOptionalFields(t *testing.T) {
	var body map[string]any
	data, err := New(Config{}).requestBody(simpleRequest)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tools", "max_tokens", "max_completion_tokens"} {
		if _, ok := body[k]; ok {
			t.Errorf("body has %q: %s", k, data)
		}
	}
}

func TestMaxTokensField(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"OpenAI default uses max_completion_tokens", Config{}, "max_completion_tokens"},
		{"OpenAI explicit base URL", Config{BaseURL: "https://api.openai.com/v1/"}, "max_completion_tokens"},
		{"compatible server uses max_tokens", Config{BaseURL: "http://localhost:11434/v1"}, "max_tokens"},
		{"explicit field wins", Config{BaseURL: "http://localhost:8000/v1", MaxTokensField: "max_completion_tokens"}, "max_completion_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := *simpleRequest
			req.MaxTokens = 99
			data, err := New(tt.cfg).requestBody(&req)
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			json.Unmarshal(data, &body)
			if body[tt.want] != float64(99) {
				t.Errorf("body %s lacks %s: 99", data, tt.want)
			}
		})
	}
}

func TestRequestRejectsInvalidToolSchema(t *testing.T) {
	req := &llm.Request{Model: "m", Tools: []llm.ToolSpec{{Name: "bad", Parameters: json.RawMessage(`{"type":`)}}}
	for _, err := range New(Config{}).Stream(context.Background(), req) {
		if err == nil || !strings.Contains(err.Error(), `tool "bad"`) {
			t.Errorf("err = %v, want one naming the tool", err)
		}
	}
}

func TestHTTPErrors(t *testing.T) {
	verifyNoLeaks(t)
	tests := []struct {
		name    string
		status  int
		headers map[string]string
		body    string
		want    llm.ProviderError
	}{
		{
			name:   "401 invalid key is not retryable",
			status: 401,
			body:   `{"error":{"message":"Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			want: llm.ProviderError{StatusCode: 401, Type: "invalid_request_error",
				Message: "Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys."},
		},
		{
			name:    "429 rate limit with retry-after seconds",
			status:  429,
			headers: map[string]string{"Retry-After": "20", "X-Ratelimit-Reset-Requests": "6m0s"},
			body:    `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			want: llm.ProviderError{StatusCode: 429, Type: "requests", Message: "Rate limit reached for requests",
				Retryable: true, RetryAfter: 20 * time.Second},
		},
		{
			name:    "429 retry-after-ms wins over retry-after",
			status:  429,
			headers: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "20"},
			body:    `{"error":{"message":"slow down","type":"tokens","code":"rate_limit_exceeded"}}`,
			want: llm.ProviderError{StatusCode: 429, Type: "tokens", Message: "slow down",
				Retryable: true, RetryAfter: 1500 * time.Millisecond},
		},
		{
			name:   "429 insufficient quota is not retryable",
			status: 429,
			body:   `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			want:   llm.ProviderError{StatusCode: 429, Type: "insufficient_quota", Message: "You exceeded your current quota."},
		},
		{
			name:   "500 plain text body",
			status: 500,
			body:   "Internal Server Error\n",
			want:   llm.ProviderError{StatusCode: 500, Message: "Internal Server Error", Retryable: true},
		},
		{
			name:   "502 empty body uses the status text",
			status: 502,
			want:   llm.ProviderError{StatusCode: 502, Message: "Bad Gateway", Retryable: true},
		},
		{
			name:    "503 with x-should-retry false",
			status:  503,
			headers: map[string]string{"X-Should-Retry": "false"},
			body:    `{"error":{"message":"down for maintenance","type":"server_error"}}`,
			want:    llm.ProviderError{StatusCode: 503, Type: "server_error", Message: "down for maintenance"},
		},
		{
			name:    "400 with x-should-retry true",
			status:  400,
			headers: map[string]string{"X-Should-Retry": "true"},
			body:    `{"error":{"message":"try again","type":"invalid_request_error"}}`,
			want:    llm.ProviderError{StatusCode: 400, Type: "invalid_request_error", Message: "try again", Retryable: true},
		},
		{
			name:   "529 overloaded is retryable",
			status: 529,
			body:   `{"error":{"message":"Overloaded","type":"overloaded_error"}}`,
			want:   llm.ProviderError{StatusCode: 529, Type: "overloaded_error", Message: "Overloaded", Retryable: true},
		},
		{
			name:   "vLLM top-level error object",
			status: 400,
			body:   `{"object":"error","message":"This model's maximum context length is 8192 tokens.","type":"BadRequestError","param":null,"code":400}`,
			want:   llm.ProviderError{StatusCode: 400, Type: "BadRequestError", Message: "This model's maximum context length is 8192 tokens.", ContextOverflow: true},
		},
		{
			name:   "Ollama string error",
			status: 404,
			body:   `{"error":"model \"llama9\" not found, try pulling it first"}`,
			want:   llm.ProviderError{StatusCode: 404, Message: `model "llama9" not found, try pulling it first`},
		},
		{
			name:   "OpenRouter numeric code",
			status: 402,
			body:   `{"error":{"code":402,"message":"Insufficient credits"}}`,
			want:   llm.ProviderError{StatusCode: 402, Type: "402", Message: "Insufficient credits"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newServer(t, Config{APIKey: "sk-test"}, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.headers {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			got, err := collect(t, p, context.Background(), simpleRequest)
			if len(got) != 0 {
				t.Errorf("events before the error: %q", got)
			}
			want := tt.want
			want.Provider = "openai"
			wantProviderError(want)(t, err)
		})
	}
}

func TestStatus200WithJSONBody(t *testing.T) {
	verifyNoLeaks(t)
	tests := []struct {
		name, body string
		want       llm.ProviderError
	}{
		{
			name: "error object",
			body: `{"error":{"message":"model overloaded","type":"server_error"}}`,
			want: llm.ProviderError{Provider: "openai", StatusCode: 200, Type: "server_error", Message: "model overloaded"},
		},
		{
			name: "a non-streamed completion",
			body: `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`,
			want: llm.ProviderError{Provider: "openai", StatusCode: 200,
				Message: "server answered with JSON instead of an event stream; it may not support streaming"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newServer(t, Config{}, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tt.body)
			})
			_, err := collect(t, p, context.Background(), simpleRequest)
			wantProviderError(tt.want)(t, err)
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"milliseconds", map[string]string{"Retry-After-Ms": "250"}, 250 * time.Millisecond},
		{"bad milliseconds fall back to seconds", map[string]string{"Retry-After-Ms": "soon", "Retry-After": "3"}, 3 * time.Second},
		{"HTTP date", map[string]string{"Retry-After": "Thu, 01 Jan 2026 12:00:30 GMT"}, 30 * time.Second},
		{"HTTP date in the past", map[string]string{"Retry-After": "Thu, 01 Jan 2026 11:00:00 GMT"}, 0},
		{"negative", map[string]string{"Retry-After": "-5"}, 0},
		{"overflowing", map[string]string{"Retry-After": "1e300"}, 0},
		{"garbage", map[string]string{"Retry-After": "later"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			if got := llm.RetryAfter(h, now); got != tt.want {
				t.Errorf("retryAfter(%v) = %v, want %v", tt.headers, got, tt.want)
			}
		})
	}
}

// closedURL returns the URL of a port nothing listens on any more.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

func TestConnectionErrorIsRetryable(t *testing.T) {
	verifyNoLeaks(t)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	p := New(Config{BaseURL: closedURL(t), HTTPClient: client})
	_, err := collect(t, p, context.Background(), simpleRequest)
	var pe *llm.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %#v, want *llm.ProviderError", err)
	}
	if pe.StatusCode != 0 || !pe.Retryable || !strings.Contains(pe.Message, "connect") {
		t.Errorf("err = %+v, want a retryable status-0 error about connecting", *pe)
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	verifyNoLeaks(t)
	const key = "sk-proj-SECRET-9f8e7d6c5b4a"
	// echo plays a hostile or buggy server that reflects the Authorization
	// header into whatever it sends back.
	echo := func(format string) string {
		return strings.ReplaceAll(format, "KEY", "Bearer "+key)
	}
	handlers := map[string]http.HandlerFunc{
		"HTTP error body": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, "bad header "+r.Header.Get("Authorization"))
		},
		"HTTP error plain text": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			io.WriteString(w, echo("proxy failed; request had Authorization: KEY"))
		},
		"stream error":    serveSSE([]byte(echo(`data: {"error":{"message":"upstream rejected KEY"}}`+"\n\n")), 0),
		"malformed chunk": serveSSE([]byte(echo(`data: {"oops KEY`+"\n\n")), 0),
		"event error":     serveSSE([]byte(echo("event: error\ndata: KEY\n\n")), 0),
	}
	// The message is cut at 2000 bytes (a malformed chunk at 200): a key
	// across the cut was cut before it was looked for, and its first part
	// stayed.
	cut := func(n int) string { return strings.Repeat("x", n-14) + key }
	handlers["HTTP error body cut across the key"] = func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		io.WriteString(w, cut(2000))
	}
	handlers["malformed chunk cut across the key"] = serveSSE([]byte("data: "+cut(200)+"\n\n"), 0)
	check := func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		if all := err.Error() + fmt.Sprintf("%+v %#v", err, err); strings.Contains(all, key[:14]) {
			t.Errorf("error leaks the key: %v", err)
		}
	}
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			var sawKey atomic.Bool
			p := newServer(t, Config{APIKey: key}, func(w http.ResponseWriter, r *http.Request) {
				sawKey.Store(r.Header.Get("Authorization") == "Bearer "+key)
				h(w, r)
			})
			_, err := collect(t, p, context.Background(), simpleRequest)
			check(t, err)
			if !sawKey.Load() {
				t.Error("server did not receive the key")
			}
		})
	}
	t.Run("connection error", func(t *testing.T) {
		client := &http.Client{Transport: &http.Transport{}}
		defer client.CloseIdleConnections()
		// Some gateways take the key in the URL; it must not leak from there either.
		p := New(Config{BaseURL: closedURL(t) + "?key=" + key, APIKey: key, HTTPClient: client})
		_, err := collect(t, p, context.Background(), simpleRequest)
		check(t, err)
	})
}

// endlessServer streams text chunks until the client goes away, then
// closes gone.
func endlessServer(t *testing.T, cfg Config) (p *Provider, gone <-chan struct{}) {
	ch := make(chan struct{})
	p = newServer(t, cfg, func(w http.ResponseWriter, r *http.Request) {
		defer close(ch)
		w.Header().Set("Content-Type", "text/event-stream")
		const line = `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"more "},"finish_reason":null}]}` + "\n\n"
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if _, err := io.WriteString(w, line); err != nil {
				<-r.Context().Done()
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	})
	return p, ch
}

func TestCancelAbortsStream(t *testing.T) {
	verifyNoLeaks(t)
	cause := errors.New("user pressed stop")
	tests := []struct {
		name   string
		cancel func(context.CancelCauseFunc)
		want   error
	}{
		{"cancel", func(c context.CancelCauseFunc) { c(nil) }, context.Canceled},
		{"cancel with cause", func(c context.CancelCauseFunc) { c(cause) }, cause},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, gone := endlessServer(t, Config{})
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var n int
			var err error
			var cancelled time.Time
			for ev, e := range p.Stream(ctx, simpleRequest) {
				if e != nil {
					err = e
					break
				}
				if ev.Kind != llm.EventTextDelta {
					t.Fatalf("unexpected event %s", ev.String())
				}
				if n++; n == 3 {
					tt.cancel(cancel)
					cancelled = time.Now()
				}
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want one wrapping %v", err, tt.want)
			}
			if d := time.Since(cancelled); d > time.Second {
				t.Errorf("stream ended %v after the cancel", d)
			}
			if n != 3 {
				t.Errorf("got %d events, want none after the cancel at 3", n)
			}
			select {
			case <-gone:
			case <-time.After(5 * time.Second):
				t.Fatal("the server never saw the request end")
			}
		})
	}
}

func TestCancelWhileWaitingForResponse(t *testing.T) {
	verifyNoLeaks(t)
	gone := make(chan struct{})
	arrived := make(chan struct{})
	p := newServer(t, Config{}, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
		close(gone)
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := collect(t, p, ctx, simpleRequest)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		t.Errorf("a cancel must not look like a retryable provider error: %v", err)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the request end")
	}
}

func TestAlreadyCancelledContextSendsNothing(t *testing.T) {
	verifyNoLeaks(t)
	var requests atomic.Int32
	p := newServer(t, Config{}, func(w http.ResponseWriter, r *http.Request) { requests.Add(1) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := collect(t, p, ctx, simpleRequest); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("server got %d requests", n)
	}
}

func TestBreakReleasesConnection(t *testing.T) {
	verifyNoLeaks(t)
	p, gone := endlessServer(t, Config{})
	for _, err := range p.Stream(context.Background(), simpleRequest) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("breaking out of the loop left the request running")
	}
}

func TestIdleTimeout(t *testing.T) {
	verifyNoLeaks(t)
	const idle = 100 * time.Millisecond
	first := `data: {"choices":[{"index":0,"delta":{"content":"x"}}]}` + "\n\n"
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request)
		want    []string
	}{
		{
			name: "no response headers",
			handler: func(w http.ResponseWriter, r *http.Request) {
				<-r.Context().Done()
			},
		},
		{
			name: "silent after the first event",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, first)
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			},
			want: []string{"text:x"},
		},
		{
			name: "silent inside an HTTP error body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(500)
				io.WriteString(w, "partial")
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newServer(t, Config{IdleTimeout: idle}, tt.handler)
			start := time.Now()
			got, err := collect(t, p, context.Background(), simpleRequest)
			if !errors.Is(err, ErrStreamIdle) {
				t.Fatalf("err = %v, want ErrStreamIdle", err)
			}
			if d := time.Since(start); d > 20*idle {
				t.Errorf("took %v to notice %v of idleness", d, idle)
			}
			if !reflect.DeepEqual(got, tt.want) && len(got)+len(tt.want) > 0 {
				t.Errorf("events = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestActivityIsNotIdle(t *testing.T) {
	verifyNoLeaks(t)
	const idle = 300 * time.Millisecond
	t.Run("keep-alive comments", func(t *testing.T) {
		p := newServer(t, Config{IdleTimeout: idle}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for range 12 { // 12 × 50ms: well past the idle timeout in total
				io.WriteString(w, ": keep-alive\n\n")
				w.(http.Flusher).Flush()
				time.Sleep(50 * time.Millisecond)
			}
			io.WriteString(w, "data: [DONE]\n\n")
		})
		got, err := collect(t, p, context.Background(), simpleRequest)
		if err != nil || !reflect.DeepEqual(got, []string{"finish:stop"}) {
			t.Errorf("got %q, %v; want finish, nil", got, err)
		}
	})
	t.Run("slow consumer", func(t *testing.T) {
		// More than the reader buffers, so that reading goes on after the pause.
		var body bytes.Buffer
		for range 1000 {
			body.WriteString(`data: {"choices":[{"index":0,"delta":{"content":"more text, more text, more text"}}]}` + "\n\n")
		}
		body.WriteString("data: [DONE]\n\n")
		p := newServer(t, Config{IdleTimeout: idle}, serveSSE(body.Bytes(), 0))
		var got []string
		for ev, err := range p.Stream(context.Background(), simpleRequest) {
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				time.Sleep(2 * idle) // the consumer, not the server, is slow
			}
			got = append(got, ev.String())
		}
		if len(got) == 0 || got[len(got)-1] != "finish:stop" {
			t.Errorf("got %q", got)
		}
	})
}

func TestConcurrentStreams(t *testing.T) {
	verifyNoLeaks(t)
	p := newServer(t, Config{}, serveSSE(fixture(t, "parallel_tool_calls.sse"), 13))
	errs := make(chan error, 8)
	for range cap(errs) {
		go func() {
			var n int
			for _, err := range p.Stream(context.Background(), simpleRequest) {
				if err != nil {
					errs <- err
					return
				}
				n++
			}
			if n != 8 {
				errs <- fmt.Errorf("got %d events, want 8", n)
				return
			}
			errs <- nil
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func BenchmarkStreamTextChunks(b *testing.B) {
	const chunks = 10_000
	var sb strings.Builder
	for i := range chunks {
		fmt.Fprintf(&sb, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767225600,"model":"gpt-test","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"tok%d "},"logprobs":null,"finish_reason":null}],"obfuscation":"abcd"}`+"\n\n", i)
	}
	sb.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767225600,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	sb.WriteString("data: [DONE]\n\n")
	body := []byte(sb.String())

	srv := httptest.NewServer(serveSSE(body, 0))
	defer srv.Close()
	p := New(Config{BaseURL: srv.URL, HTTPClient: srv.Client()})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var n int
		for ev, err := range p.Stream(context.Background(), simpleRequest) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == llm.EventTextDelta {
				n++
			}
		}
		if n != chunks {
			b.Fatalf("got %d text events, want %d", n, chunks)
		}
	}
}

func TestConnectionDroppedMidStreamIsTruncated(t *testing.T) {
	verifyNoLeaks(t)
	p := newServer(t, Config{}, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		event := `data: {"choices":[{"index":0,"delta":{"content":"x"}}]}` + "\n\n"
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(event), event)
		buf.Flush()
	})
	got, err := collect(t, p, context.Background(), simpleRequest)
	if !errors.Is(err, llm.ErrTruncatedStream) {
		t.Errorf("err = %v, want ErrTruncatedStream", err)
	}
	if !reflect.DeepEqual(got, []string{"text:x"}) {
		t.Errorf("events = %q", got)
	}
}

func TestDefaultClientHasNoOverallTimeout(t *testing.T) {
	p := New(Config{})
	if p.client == nil || p.client.Timeout != 0 {
		t.Errorf("default client = %+v, want one without Timeout", p.client)
	}
	if p.idle != DefaultIdleTimeout || p.url != DefaultBaseURL+"/chat/completions" || p.Name() != "openai" {
		t.Errorf("defaults: idle %v, url %q, name %q", p.idle, p.url, p.Name())
	}
}

func TestReasoningEffortIsSentAsReasoningEffort(t *testing.T) {
	for effort, want := range map[string]any{"": nil, llm.EffortOff: nil, llm.EffortLow: "low", llm.EffortHigh: "high"} {
		req := *simpleRequest
		req.ReasoningEffort = effort
		data, err := New(Config{}).requestBody(&req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			t.Fatal(err)
		}
		if body["reasoning_effort"] != want {
			t.Errorf("effort %q: reasoning_effort = %v, want %v", effort, body["reasoning_effort"], want)
		}
	}
}
