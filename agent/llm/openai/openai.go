package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/llm/sse"
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
		s := &stream{p: p, yield: yield}
		if err := s.run(ctx, req); err != nil && !s.stopped {
			yield(llm.Event{}, err)
		}
	}
}

// errIdle is the cancellation cause the watchdog sets.
var errIdle = errors.New("idle")

// stream is the state of one Stream call.
type stream struct {
	p       *Provider
	yield   func(llm.Event, error) bool
	stopped bool // the consumer returned false from yield
	emitted bool // an event was yielded, so the call must not be retried
}

// emit yields ev and reports whether the consumer wants more.
func (s *stream) emit(ev llm.Event) bool {
	if s.stopped {
		return false
	}
	s.emitted = true
	if !s.yield(ev, nil) {
		s.stopped = true
	}
	return !s.stopped
}

func (s *stream) run(ctx context.Context, req *llm.Request) error {
	p := s.p
	body, err := p.requestBody(req)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("openai: %w", context.Cause(ctx))
	}

	// reqCtx is cancelled by the watchdog, by the caller's ctx, and when the
	// stream is done (which also closes a connection left mid-stream).
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(p.idle, func() { cancel(errIdle) })
	defer watchdog.Stop()

	// abortErr explains a failure that happened because reqCtx ended.
	abortErr := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("openai: %w", context.Cause(ctx))
		}
		if errors.Is(context.Cause(reqCtx), errIdle) {
			return fmt.Errorf("%w (no data for %s)", ErrStreamIdle, p.idle)
		}
		return err
	}

	hreq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("openai: %s", p.redact(err.Error()))
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if p.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	for k, v := range p.headers {
		hreq.Header.Set(k, v)
	}

	resp, err := p.client.Do(hreq)
	if err != nil {
		return abortErr(p.connectionError(err))
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return abortErr(p.httpError(resp))
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		// The server ignored "stream": true or answered 200 with an error.
		return abortErr(p.jsonInsteadOfStream(resp))
	}

	sr := sse.NewReader(&activityReader{r: resp.Body, timer: watchdog, idle: p.idle}, 0)
	d := decoder{s: s}
	for {
		ev, err := sr.Next()
		if err == nil && ctx.Err() != nil {
			// Data already buffered must not delay the abort.
			err = ctx.Err()
		}
		if err != nil {
			if ctx.Err() != nil || reqCtx.Err() != nil {
				return abortErr(err)
			}
			switch {
			case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
				return fmt.Errorf("openai: stream ended without [DONE]: %w", llm.ErrTruncatedStream)
			case errors.Is(err, sse.ErrTooLong):
				return fmt.Errorf("openai: reading stream: %w", err)
			}
			// A reset connection also cut the stream short.
			return fmt.Errorf("openai: reading stream: %s: %w", p.redact(err.Error()), llm.ErrTruncatedStream)
		}
		// The consumer's time is not the server's idleness.
		watchdog.Stop()
		done, err := d.handle(ev)
		if err != nil || done || s.stopped {
			return err
		}
		watchdog.Reset(p.idle)
	}
}

// activityReader resets the idle watchdog whenever bytes arrive, so
// keep-alive comments, which the SSE reader swallows, count as activity.
type activityReader struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func (a *activityReader) Read(b []byte) (int, error) {
	n, err := a.r.Read(b)
	if n > 0 {
		a.timer.Reset(a.idle)
	}
	return n, err
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
