package anthropic

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/llm/sse"
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

// Name returns "anthropic".
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
		return fmt.Errorf("anthropic: %w", context.Cause(ctx))
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
			return fmt.Errorf("anthropic: %w", context.Cause(ctx))
		}
		if errors.Is(context.Cause(reqCtx), errIdle) {
			return fmt.Errorf("%w (no data for %s)", ErrStreamIdle, p.idle)
		}
		return err
	}

	hreq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("anthropic: %s", p.redact(err.Error()))
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("Anthropic-Version", p.version)
	if p.apiKey != "" {
		hreq.Header.Set("X-Api-Key", p.apiKey)
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
		// A proxy answered 200 with an error, or ignored "stream": true.
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
				return fmt.Errorf("anthropic: stream ended without message_stop: %w", llm.ErrTruncatedStream)
			case errors.Is(err, sse.ErrTooLong):
				return fmt.Errorf("anthropic: reading stream: %w", err)
			}
			// A reset connection also cut the stream short.
			return fmt.Errorf("anthropic: reading stream: %s: %w", p.redact(err.Error()), llm.ErrTruncatedStream)
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

// activityReader resets the idle watchdog whenever bytes arrive, so pings
// and keep-alive comments count as activity.
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
// network stack. Keys shorter than 8 bytes are placeholders and are left
// alone, since scrubbing them would mangle messages.
func (p *Provider) redact(s string) string {
	if len(p.apiKey) < 8 {
		return s
	}
	return strings.ReplaceAll(s, p.apiKey, "[redacted]")
}
