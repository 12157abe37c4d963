package openai

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// DefaultBaseURL is OpenAI's own API.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultIdleTimeout is used when Config.IdleTimeout is 0. Thinking models
// and servers processing a long prompt can stay silent for minutes.
const DefaultIdleTimeout = 5 * time.Minute

// providerName is the Provider field of the errors this package returns.
const providerName = "openai"

// ErrStreamIdle means the server sent nothing for longer than the idle
// timeout, so the request was aborted.
var ErrStreamIdle = errors.New("openai: stream was idle for too long")

// Config configures a Provider. The zero value talks to OpenAI without a key.
type Config struct {
	// BaseURL is the API root, without "/chat/completions";
	// "" means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>"; "" sends no
	// Authorization header (local servers ignore it).
	APIKey string
	// HTTPClient sends the requests; nil means a client with no overall
	// Timeout (one would kill long streams; the idle watchdog and the
	// context bound them instead).
	HTTPClient *http.Client
	// Headers are extra request headers (OpenRouter's HTTP-Referer and
	// X-Title, Azure's api-key). They are set last, so they may replace the
	// defaults.
	Headers map[string]string
	// IdleTimeout aborts a request when no data arrives from the server for
	// this long, both while waiting for the response and between stream
	// bytes; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxTokensField names the body field that carries Request.MaxTokens:
	// "max_tokens" or "max_completion_tokens". "" picks
	// "max_completion_tokens" for OpenAI's own host, whose reasoning models
	// reject "max_tokens", and "max_tokens" elsewhere, since many
	// compatible servers know only the older name.
	MaxTokensField string
}

// Provider streams Chat Completions from one server. It is safe for
// concurrent use.
type Provider struct {
	url            string
	apiKey         string
	client         *http.Client
	headers        map[string]string
	idle           time.Duration
	maxTokensField string
}

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	p := &Provider{
		url:            base + "/chat/completions",
		apiKey:         cfg.APIKey,
		client:         cfg.HTTPClient,
		idle:           cfg.IdleTimeout,
		maxTokensField: cfg.MaxTokensField,
	}
	if p.client == nil {
		p.client = &http.Client{}
	}
	if p.idle <= 0 {
		p.idle = DefaultIdleTimeout
	}
	if p.maxTokensField == "" {
		p.maxTokensField = "max_tokens"
		if u, err := url.Parse(base); err == nil && u.Hostname() == "api.openai.com" {
			p.maxTokensField = "max_completion_tokens"
		}
	}
	if len(cfg.Headers) > 0 {
		p.headers = make(map[string]string, len(cfg.Headers))
		for k, v := range cfg.Headers {
			p.headers[k] = v
		}
	}
	return p
}

// Name returns "openai".
func (p *Provider) Name() string { return providerName }

// Stream sends req and yields the streamed response; see the package
// documentation for the contract.
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		s := &stream{p: p, Emitter: llm.NewEmitter(yield)}
		s.Fail(s.run(ctx, req))
	}
}

// stream is the state of one Stream call.
type stream struct {
	p *Provider
	*llm.Emitter
}

func (s *stream) run(ctx context.Context, req *llm.Request) error {
	p := s.p
	body, err := p.requestBody(req)
	if err != nil {
		return err
	}
	header := p.header("text/event-stream")
	post := &llm.SSEPost{
		Provider: providerName, Client: p.client, URL: p.url, Body: body, Header: header,
		Idle: p.idle, ErrIdle: ErrStreamIdle, EndMarker: "[DONE]", Redact: p.redact,
		ConnectionError: p.connectionError, HTTPError: p.httpError, JSONInsteadOfStream: p.jsonInsteadOfStream,
	}
	d := decoder{s: s}
	return post.Run(ctx, d.handle, s.Stopped)
}

// redact removes the API key from text that came from the server or the
// network stack. Keys shorter than 8 bytes are placeholders ("ollama",
// "x") and are left alone, since scrubbing them would mangle messages.
func (p *Provider) redact(s string) string {
	if len(p.apiKey) < 8 {
		return s
	}
	return strings.ReplaceAll(s, p.apiKey, "[redacted]")
}
