package anthropic

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// DefaultBaseURL is Anthropic's own API.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultIdleTimeout is used when Config.IdleTimeout is 0. Thinking models
// can stay silent for minutes (Anthropic sends pings, which count as
// activity).
const DefaultIdleTimeout = 5 * time.Minute

// DefaultMaxTokens is used when neither Request.MaxTokens nor
// Config.MaxTokens is set; Anthropic requires max_tokens on every request.
const DefaultMaxTokens = 8192

// DefaultVersion is the anthropic-version header sent when Config.Version
// is "".
const DefaultVersion = "2023-06-01"

// providerName is the Provider field of the errors this package returns.
const providerName = "anthropic"

// ErrStreamIdle means the server sent nothing for longer than the idle
// timeout, so the request was aborted.
var ErrStreamIdle = errors.New("anthropic: stream was idle for too long")

// Config configures a Provider. The zero value talks to Anthropic without a
// key.
type Config struct {
	// BaseURL is the API root, without "/v1/messages"; "" means
	// DefaultBaseURL.
	BaseURL string
	// APIKey is sent as the x-api-key header; "" sends none (a gateway
	// may authenticate through Headers instead).
	APIKey string
	// HTTPClient sends the requests; nil means a client with no overall
	// Timeout (one would kill long streams; the idle watchdog and the
	// context bound them instead).
	HTTPClient *http.Client
	// Headers are extra request headers (anthropic-beta, a gateway's
	// Authorization). They are set last, so they may replace the defaults.
	Headers map[string]string
	// IdleTimeout aborts a request when no data arrives from the server for
	// this long, both while waiting for the response and between stream
	// bytes; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxTokens is max_tokens for requests whose Request.MaxTokens is 0;
	// 0 means DefaultMaxTokens.
	MaxTokens int
	// Version is the anthropic-version header; "" means DefaultVersion.
	Version string
	// ThinkingBudgetTokens enables extended thinking with this budget
	// ("thinking":{"type":"enabled","budget_tokens":N}); 0 leaves it off.
	// Anthropic requires at least 1024 and less than max_tokens; when
	// max_tokens is not larger, max_tokens is raised to budget + max_tokens
	// so the answer keeps its allowance.
	ThinkingBudgetTokens int
}

// Provider streams Anthropic Messages responses. It is safe for concurrent
// use.
type Provider struct {
	url       string
	apiKey    string
	client    *http.Client
	headers   map[string]string
	idle      time.Duration
	maxTokens int
	version   string
	thinking  int
}

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	p := &Provider{
		url:       base + "/v1/messages",
		apiKey:    cfg.APIKey,
		client:    cfg.HTTPClient,
		idle:      cfg.IdleTimeout,
		maxTokens: cfg.MaxTokens,
		version:   cfg.Version,
		thinking:  max(cfg.ThinkingBudgetTokens, 0),
	}
	if p.client == nil {
		p.client = &http.Client{}
	}
	if p.idle <= 0 {
		p.idle = DefaultIdleTimeout
	}
	if p.maxTokens <= 0 {
		p.maxTokens = DefaultMaxTokens
	}
	if p.version == "" {
		p.version = DefaultVersion
	}
	if len(cfg.Headers) > 0 {
		p.headers = make(map[string]string, len(cfg.Headers))
		for k, v := range cfg.Headers {
			p.headers[k] = v
		}
	}
	return p
}

// header is the headers of a request whose answer is accept: the API
// version and key, then the configured extra headers, which may replace
// the others.
func (p *Provider) header(accept string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {accept}, "Anthropic-Version": {p.version}}
	if p.apiKey != "" {
		h.Set("X-Api-Key", p.apiKey)
	}
	for k, v := range p.headers {
		h.Set(k, v)
	}
	return h
}

// Name returns "anthropic".
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
		Idle: p.idle, ErrIdle: ErrStreamIdle, EndMarker: "message_stop", Redact: p.redact,
		ConnectionError: p.connectionError, HTTPError: p.httpError, JSONInsteadOfStream: p.jsonInsteadOfStream,
	}
	d := decoder{s: s}
	return post.Run(ctx, d.handle, s.Stopped)
}

// redact removes the API key from text that came from the server or the
// network stack. Keys shorter than 8 bytes are placeholders and are left
// alone, since scrubbing them would mangle messages.
func (p *Provider) redact(s string) string {
	if len(p.apiKey) < 8 {
		return s
	}
	return strings.ReplaceAll(s, p.apiKey, "[redacted]")
}
