package anthropic

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
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// collect drains a stream, checking that an error is the last item and
// that a success ends with exactly one finish.
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
	Model:    "claude-test",
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
	cfg.BaseURL = srv.URL
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = srv.Client()
	}
	return New(cfg)
}

// serveSSE writes body as an event stream, in pieces of size bytes (0 means
// at once) so that events straddle reads.
func serveSSE(body []byte, size int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
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
				"usage:in=25 out=6 cr=0 cw=0 r=0", "finish:stop",
			},
		},
		{
			fixture: "thinking.sse",
			want: []string{
				"reasoning:The user greets.", "reasoning: Reply briefly.",
				"reasoning_signature:EqQBCkYIARgCKkBsigpart2==",
				"text:Hi!",
				"usage:in=40 out=30 cr=0 cw=0 r=0", "finish:stop",
			},
		},
		{
			fixture: "tool_use.sse",
			want: []string{
				"reasoning:Need file.", "reasoning_signature:EqQB...",
				"text:Reading it.",
				"tool:2 id=toolu_1 name=read_file args=",
				`tool:2 id= name= args={"path": "a`,
				`tool:2 id= name= args=.go"}`,
				"tool:3 id=toolu_2 name=read_file args=",
				`tool:3 id= name= args={"path":`,
				`tool:3 id= name= args= "b.go"}`,
				"usage:in=1050 out=42 cr=1000 cw=0 r=0", "finish:tool_calls",
			},
		},
		{
			fixture: "tool_use_empty_input.sse",
			want: []string{
				"tool:0 id=toolu_e name=list_sessions args=",
				"tool:0 id= name= args={}",
				"tool:1 id=toolu_f name=pwd args=",
				"tool:1 id= name= args={}",
				"usage:in=25 out=12 cr=0 cw=0 r=0", "finish:tool_calls",
			},
		},
		{
			fixture: "usage_cumulative.sse",
			want: []string{
				"text:a",
				"usage:in=1250 out=42 cr=1000 cw=200 r=0", "finish:stop",
			},
		},
		{
			fixture: "ping_unknown.sse",
			want: []string{
				"text:See ", "text:the docs.",
				"usage:in=25 out=9 cr=0 cw=0 r=0", "finish:stop",
			},
		},
		{
			fixture: "redacted_thinking.sse",
			want: []string{
				"redacted_reasoning:EmwKAhgBEgy3va3pzix/LafPsn4a",
				"tool:1 id=toolu_r name=pwd args=",
				"tool:1 id= name= args={}",
				"usage:in=25 out=7 cr=0 cw=0 r=0", "finish:tool_calls",
			},
		},
		{
			fixture: "refusal.sse",
			want:    []string{"text:I can", "usage:in=25 out=3 cr=0 cw=0 r=0", "finish:content_filter"},
		},
		{
			fixture: "max_tokens.sse",
			want:    []string{"text:Long", "usage:in=25 out=8192 cr=0 cw=0 r=0", "finish:length"},
		},
		{
			fixture: "error_midstream.sse",
			want:    []string{"text:Partial"},
			check: wantProviderError(llm.ProviderError{
				Provider: "anthropic", Type: "overloaded_error", Message: "Overloaded",
				Retryable: false, // text was already streamed
			}),
		},
		{
			fixture: "error_first.sse",
			check: wantProviderError(llm.ProviderError{
				Provider: "anthropic", Type: "overloaded_error", Message: "Overloaded",
				Retryable: true,
			}),
		},
		{
			fixture: "error_invalid.sse",
			check: wantProviderError(llm.ProviderError{
				Provider: "anthropic", Type: "invalid_request_error",
				Message: "prompt is too long: 210000 tokens > 200000 maximum", ContextOverflow: true,
			}),
		},
		{
			fixture: "truncated.sse",
			want:    []string{"text:All"},
			check:   wantIs(llm.ErrTruncatedStream),
		},
		{
			fixture: "truncated_midevent.sse",
			want:    []string{"text:All"},
			check:   wantIs(llm.ErrTruncatedStream),
		},
	}
	for _, tt := range tests {
		body := fixture(t, tt.fixture)
		for _, size := range []int{0, 7, 1} {
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

// assemble builds the assistant message a consumer would record from a
// stream, as the agent loop does.
func assemble(t *testing.T, p *Provider) (llm.Message, llm.FinishReason) {
	t.Helper()
	m := llm.Message{Role: llm.RoleAssistant}
	var text, reasoning strings.Builder
	byIndex := map[int]int{}
	var finish llm.FinishReason
	for ev, err := range p.Stream(context.Background(), simpleRequest) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case llm.EventTextDelta:
			text.WriteString(ev.Text)
		case llm.EventReasoningDelta:
			reasoning.WriteString(ev.Text)
		case llm.EventReasoningSignature:
			m.ReasoningSignature = ev.Text
		case llm.EventRedactedReasoning:
			m.RedactedReasoning = append(m.RedactedReasoning, ev.Text)
		case llm.EventToolCallDelta:
			d := ev.ToolCall
			i, ok := byIndex[d.Index]
			if !ok {
				i = len(m.ToolCalls)
				byIndex[d.Index] = i
				m.ToolCalls = append(m.ToolCalls, llm.ToolCall{})
			}
			c := &m.ToolCalls[i]
			if d.ID != "" {
				c.ID = d.ID
			}
			if d.Name != "" {
				c.Name = d.Name
			}
			c.Arguments += d.ArgumentsDelta
		case llm.EventFinish:
			finish = ev.Finish
		}
	}
	if text.Len() > 0 {
		m.Content = []llm.Part{llm.TextPart(text.String())}
	}
	m.Reasoning = reasoning.String()
	return m, finish
}

func TestAssembledCallsHaveValidArguments(t *testing.T) {
	verifyNoLeaks(t)
	for _, name := range []string{"tool_use.sse", "tool_use_empty_input.sse", "redacted_thinking.sse"} {
		t.Run(name, func(t *testing.T) {
			p := newServer(t, Config{}, serveSSE(fixture(t, name), 5))
			m, finish := assemble(t, p)
			if finish != llm.FinishToolCalls || len(m.ToolCalls) == 0 {
				t.Fatalf("finish %s with calls %+v", finish, m.ToolCalls)
			}
			for _, c := range m.ToolCalls {
				var v map[string]any
				if c.ID == "" || c.Name == "" || json.Unmarshal([]byte(c.Arguments), &v) != nil {
					t.Errorf("call %+v is incomplete or has arguments that are not a JSON object", c)
				}
			}
		})
	}
}

// TestThinkingRoundTrip records a streamed turn as the agent would and
// checks that the next request echoes its thinking block unchanged.
func TestThinkingRoundTrip(t *testing.T) {
	verifyNoLeaks(t)
	p := newServer(t, Config{}, serveSSE(fixture(t, "tool_use.sse"), 0))
	m, _ := assemble(t, p)
	req := &llm.Request{Model: "claude-test", Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("Read a.go and b.go")}},
		m,
		{Role: llm.RoleTool, ToolCallID: "toolu_1", Content: []llm.Part{llm.TextPart("package a")}},
		{Role: llm.RoleTool, ToolCallID: "toolu_2", Content: []llm.Part{llm.TextPart("package b")}},
	}}
	data, err := New(Config{ThinkingBudgetTokens: 2048}).requestBody(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatal(err)
	}
	assertJSONEqual(t, body.Messages, []byte(`[
	  {"role": "user", "content": [{"type": "text", "text": "Read a.go and b.go"}]},
	  {"role": "assistant", "content": [
	    {"type": "thinking", "thinking": "Need file.", "signature": "EqQB..."},
	    {"type": "text", "text": "Reading it."},
	    {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.go"}},
	    {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "b.go"}}
	  ]},
	  {"role": "user", "content": [
	    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "package a"},
	    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "package b", "cache_control": {"type": "ephemeral"}}
	  ]}
	]`))
}

func TestFinishReason(t *testing.T) {
	tests := []struct {
		stop  string
		calls bool
		want  llm.FinishReason
	}{
		{"end_turn", false, llm.FinishStop},
		{"stop_sequence", false, llm.FinishStop},
		{"pause_turn", false, llm.FinishStop},
		{"max_tokens", false, llm.FinishLength},
		{"max_tokens", true, llm.FinishLength},
		{"model_context_window_exceeded", false, llm.FinishLength},
		{"tool_use", true, llm.FinishToolCalls},
		{"refusal", false, llm.FinishContentFilter},
		{"", false, llm.FinishStop},
		{"", true, llm.FinishToolCalls},
		{"something_new", false, llm.FinishStop},
		{"something_new", true, llm.FinishToolCalls},
	}
	for _, tt := range tests {
		if got := finishReason(tt.stop, tt.calls); got != tt.want {
			t.Errorf("finishReason(%q, %v) = %s, want %s", tt.stop, tt.calls, got, tt.want)
		}
	}
}

func TestHTTPErrors(t *testing.T) {
	verifyNoLeaks(t)
	anthropicError := func(typ, msg string) string {
		return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`, typ, msg)
	}
	tests := []struct {
		name    string
		status  int
		headers map[string]string
		body    string
		want    llm.ProviderError
	}{
		{
			name:   "400 invalid request is not retryable",
			status: 400,
			body:   anthropicError("invalid_request_error", "messages: roles must alternate between \"user\" and \"assistant\""),
			want: llm.ProviderError{StatusCode: 400, Type: "invalid_request_error",
				Message: `messages: roles must alternate between "user" and "assistant"`},
		},
		{
			name:   "401 authentication error is not retryable",
			status: 401,
			body:   anthropicError("authentication_error", "invalid x-api-key"),
			want:   llm.ProviderError{StatusCode: 401, Type: "authentication_error", Message: "invalid x-api-key"},
		},
		{
			name:   "413 request too large",
			status: 413,
			body:   anthropicError("request_too_large", "Request exceeds the maximum allowed number of bytes."),
			want: llm.ProviderError{StatusCode: 413, Type: "request_too_large",
				Message: "Request exceeds the maximum allowed number of bytes.", ContextOverflow: true},
		},
		{
			name:   "413 from a proxy in front of the API is too large as well",
			status: 413,
			body:   "<html><head><title>413 Request Entity Too Large</title></head><body>nginx</body></html>",
			want: llm.ProviderError{StatusCode: 413, ContextOverflow: true,
				Message: "413 Request Entity Too Large (the server answered with an HTML page, not an API error)"},
		},
		{
			name:   "429 rate limit with retry-after seconds",
			status: 429,
			headers: map[string]string{
				"Retry-After": "20", "Anthropic-Ratelimit-Requests-Remaining": "0",
				"Anthropic-Ratelimit-Requests-Reset": "2026-01-01T12:00:20Z",
			},
			body: anthropicError("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
			want: llm.ProviderError{StatusCode: 429, Type: "rate_limit_error",
				Message:   "Number of request tokens has exceeded your per-minute rate limit",
				Retryable: true, RetryAfter: 20 * time.Second},
		},
		{
			name:    "429 retry-after-ms wins over retry-after",
			status:  429,
			headers: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "20"},
			body:    anthropicError("rate_limit_error", "slow down"),
			want: llm.ProviderError{StatusCode: 429, Type: "rate_limit_error", Message: "slow down",
				Retryable: true, RetryAfter: 1500 * time.Millisecond},
		},
		{
			name:   "529 overloaded is retryable without retry-after",
			status: 529,
			body:   anthropicError("overloaded_error", "Overloaded"),
			want:   llm.ProviderError{StatusCode: 529, Type: "overloaded_error", Message: "Overloaded", Retryable: true},
		},
		{
			name:    "529 stays retryable despite x-should-retry false",
			status:  529,
			headers: map[string]string{"X-Should-Retry": "false"},
			want:    llm.ProviderError{StatusCode: 529, Message: "Overloaded", Retryable: true},
		},
		{
			name:   "500 api error is retryable",
			status: 500,
			body:   anthropicError("api_error", "Internal server error"),
			want:   llm.ProviderError{StatusCode: 500, Type: "api_error", Message: "Internal server error", Retryable: true},
		},
		{
			name:   "500 plain text body",
			status: 500,
			body:   "upstream connect error\n",
			want:   llm.ProviderError{StatusCode: 500, Message: "upstream connect error", Retryable: true},
		},
		{
			name:   "502 empty body uses the status text",
			status: 502,
			want:   llm.ProviderError{StatusCode: 502, Message: "Bad Gateway", Retryable: true},
		},
		{
			name:   "504 timeout error",
			status: 504,
			body:   anthropicError("timeout_error", "Request timed out"),
			want:   llm.ProviderError{StatusCode: 504, Type: "timeout_error", Message: "Request timed out", Retryable: true},
		},
		{
			name:   "408 and 409 are retryable",
			status: 409,
			body:   anthropicError("conflict_error", "conflict"),
			want:   llm.ProviderError{StatusCode: 409, Type: "conflict_error", Message: "conflict", Retryable: true},
		},
		{
			name:    "503 with x-should-retry false",
			status:  503,
			headers: map[string]string{"X-Should-Retry": "false"},
			body:    anthropicError("api_error", "down for maintenance"),
			want:    llm.ProviderError{StatusCode: 503, Type: "api_error", Message: "down for maintenance"},
		},
		{
			name:    "400 with x-should-retry true",
			status:  400,
			headers: map[string]string{"X-Should-Retry": "true"},
			body:    anthropicError("invalid_request_error", "try again"),
			want:    llm.ProviderError{StatusCode: 400, Type: "invalid_request_error", Message: "try again", Retryable: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newServer(t, Config{APIKey: "sk-ant-test"}, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.headers {
					w.Header().Set(k, v)
				}
				w.Header().Set("Request-Id", "req_011CSHoEeqs5C35K2UUqR7Fy")
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			got, err := collect(t, p, context.Background(), simpleRequest)
			if len(got) != 0 {
				t.Errorf("events before the error: %q", got)
			}
			want := tt.want
			want.Provider = "anthropic"
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
			body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			want: llm.ProviderError{Provider: "anthropic", StatusCode: 200, Type: "overloaded_error", Message: "Overloaded"},
		},
		{
			name: "a non-streamed message",
			body: `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}`,
			want: llm.ProviderError{Provider: "anthropic", StatusCode: 200,
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
	return "http://" + addr
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
	if pe.Provider != "anthropic" || pe.StatusCode != 0 || !pe.Retryable || !strings.Contains(pe.Message, "connect") {
		t.Errorf("err = %+v, want a retryable status-0 error about connecting", *pe)
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	verifyNoLeaks(t)
	const key = "sk-ant-api03-SECRET-9f8e7d6c5b4a"
	// echo plays a hostile or buggy server that reflects the x-api-key
	// header into whatever it sends back.
	echo := func(s string) string { return strings.ReplaceAll(s, "KEY", key) }
	handlers := map[string]http.HandlerFunc{
		"HTTP error body": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"authentication_error","message":%q}}`, "invalid x-api-key "+r.Header.Get("X-Api-Key"))
		},
		"HTTP error plain text": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			io.WriteString(w, echo("proxy failed; request had x-api-key: KEY"))
		},
		"HTTP 429 with retry-after": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
			io.WriteString(w, echo(`{"type":"error","error":{"type":"rate_limit_error","message":"key KEY is limited"}}`))
		},
		"HTTP 529": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(529)
			io.WriteString(w, echo(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded for KEY"}}`))
		},
		"200 JSON error": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, echo(`{"type":"error","error":{"type":"api_error","message":"KEY"}}`))
		},
		"stream error":          serveSSE([]byte(echo(`event: error`+"\n"+`data: {"type":"error","error":{"type":"overloaded_error","message":"upstream rejected KEY"}}`+"\n\n")), 0),
		"stream error not JSON": serveSSE([]byte(echo("event: error\ndata: KEY\n\n")), 0),
		"stream error string":   serveSSE([]byte(echo(`event: error`+"\n"+`data: {"type":"error","error":"KEY"}`+"\n\n")), 0),
		"malformed event":       serveSSE([]byte(echo("event: content_block_delta\ndata: {\"oops KEY\n\n")), 0),
		"truncated":             serveSSE([]byte(echo("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"KEY\"}}\n\n")), 0),
	}
	// The message is cut at 2000 bytes (a malformed chunk at 200): a key
	// across the cut was cut before it was looked for, and its first part
	// stayed.
	cut := func(n int) string { return strings.Repeat("x", n-14) + key }
	handlers["HTTP error body cut across the key"] = func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		io.WriteString(w, cut(2000))
	}
	handlers["malformed chunk cut across the key"] = serveSSE([]byte("event: content_block_delta\ndata: "+cut(200)+"\n\n"), 0)
	check := func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		if all := err.Error() + fmt.Sprintf("%+v %#v", err, err); strings.Contains(all, key[:14]) {
			t.Errorf("error leaks the key: %v", err)
		}
		var pe *llm.ProviderError
		if errors.As(err, &pe) && strings.Contains(fmt.Sprintf("%+v", *pe), key) {
			t.Errorf("ProviderError leaks the key: %+v", *pe)
		}
	}
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			var sawKey atomic.Bool
			p := newServer(t, Config{APIKey: key}, func(w http.ResponseWriter, r *http.Request) {
				sawKey.Store(r.Header.Get("X-Api-Key") == key)
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
		p := New(Config{BaseURL: closedURL(t) + "/" + key, APIKey: key, HTTPClient: client})
		_, err := collect(t, p, context.Background(), simpleRequest)
		check(t, err)
	})
	t.Run("idle timeout", func(t *testing.T) {
		p := newServer(t, Config{APIKey: key, IdleTimeout: 50 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		})
		_, err := collect(t, p, context.Background(), simpleRequest)
		check(t, err)
	})
}

// endlessServer streams text deltas until the client goes away, then
// closes gone.
func endlessServer(t *testing.T, cfg Config) (p *Provider, gone <-chan struct{}) {
	ch := make(chan struct{})
	p = newServer(t, cfg, func(w http.ResponseWriter, r *http.Request) {
		defer close(ch)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\n"+`data: {"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}`+"\n\n"+
			"event: content_block_start\n"+`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`+"\n\n")
		const line = "event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"more "}}` + "\n\n"
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
			var pe *llm.ProviderError
			if errors.As(err, &pe) {
				t.Errorf("a cancel must not look like a provider error: %v", err)
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
	first := "event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}` + "\n\n"
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
				w.WriteHeader(529)
				io.WriteString(w, `{"type":"error",`)
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

func TestPingsAreActivity(t *testing.T) {
	verifyNoLeaks(t)
	const idle = 300 * time.Millisecond
	t.Run("pings", func(t *testing.T) {
		p := newServer(t, Config{IdleTimeout: idle}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for range 12 { // 12 × 50ms: well past the idle timeout in total
				io.WriteString(w, "event: ping\ndata: {\"type\": \"ping\"}\n\n")
				w.(http.Flusher).Flush()
				time.Sleep(50 * time.Millisecond)
			}
			io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		})
		got, err := collect(t, p, context.Background(), simpleRequest)
		if err != nil || !reflect.DeepEqual(got, []string{"finish:stop"}) {
			t.Errorf("got %q, %v; want finish, nil", got, err)
		}
	})
	t.Run("slow consumer", func(t *testing.T) {
		// More than the reader buffers, so that reading goes on after the pause.
		body := textStream(1000)
		p := newServer(t, Config{IdleTimeout: idle}, serveSSE(body, 0))
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
	p := newServer(t, Config{}, serveSSE(fixture(t, "tool_use.sse"), 13))
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
			if n != 11 {
				errs <- fmt.Errorf("got %d events, want 11", n)
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

func TestConnectionDroppedMidStreamIsTruncated(t *testing.T) {
	verifyNoLeaks(t)
	p := newServer(t, Config{}, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		event := "event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}` + "\n\n"
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

func TestDefaults(t *testing.T) {
	p := New(Config{})
	if p.client == nil || p.client.Timeout != 0 {
		t.Errorf("default client = %+v, want one without Timeout", p.client)
	}
	if p.idle != DefaultIdleTimeout || p.url != DefaultBaseURL+"/v1/messages" || p.Name() != "anthropic" ||
		p.maxTokens != DefaultMaxTokens || p.version != "2023-06-01" || p.thinking != 0 {
		t.Errorf("defaults: idle %v, url %q, name %q, max tokens %d, version %q, thinking %d",
			p.idle, p.url, p.Name(), p.maxTokens, p.version, p.thinking)
	}
	if got := New(Config{BaseURL: "https://gateway.example/anthropic/"}).url; got != "https://gateway.example/anthropic/v1/messages" {
		t.Errorf("url = %q", got)
	}
}

// textStream is a complete response of n text deltas.
func textStream(n int) []byte {
	var sb strings.Builder
	sb.WriteString("event: message_start\n" + `data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}` + "\n\n")
	sb.WriteString("event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n")
	for i := range n {
		fmt.Fprintf(&sb, "event: content_block_delta\n"+`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tok%d "}}`+"\n\n", i)
	}
	sb.WriteString("event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n")
	fmt.Fprintf(&sb, "event: message_delta\n"+`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`+"\n\n", n)
	sb.WriteString("event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n")
	return []byte(sb.String())
}

func BenchmarkStreamTextChunks(b *testing.B) {
	const chunks = 10_000
	body := textStream(chunks)
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
