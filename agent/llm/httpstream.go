package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm/sse"
)

// Emitter yields a stream's events to its consumer (the yield of an
// iter.Seq2) and remembers whether the consumer stopped and whether any
// event went out (after which a failed call must not be retried).
type Emitter struct {
	yield            func(Event, error) bool
	stopped, emitted bool
}

// NewEmitter returns an Emitter for yield.
func NewEmitter(yield func(Event, error) bool) *Emitter { return &Emitter{yield: yield} }

// Emit yields ev and reports whether the consumer wants more.
func (e *Emitter) Emit(ev Event) bool {
	if e.stopped {
		return false
	}
	e.emitted = true
	if !e.yield(ev, nil) {
		e.stopped = true
	}
	return !e.stopped
}

// Stopped reports whether the consumer asked for no more events.
func (e *Emitter) Stopped() bool { return e.stopped }

// Emitted reports whether any event was yielded.
func (e *Emitter) Emitted() bool { return e.emitted }

// Fail yields err as the stream's last element, unless it is nil or the
// consumer stopped.
func (e *Emitter) Fail(err error) {
	if err != nil && !e.stopped {
		e.yield(Event{}, err)
	}
}

// SSEPost is one streaming POST whose answer is server-sent events: the
// part of a provider's Stream that is the same for every provider (the
// idle watchdog, cancellation, HTTP errors, truncation).
type SSEPost struct {
	// Provider names the provider in messages ("openai").
	Provider string
	Client   *http.Client
	URL      string
	Body     []byte
	Header   http.Header
	// Idle aborts the request when the server sends nothing for that
	// long; ErrIdle is then wrapped.
	Idle    time.Duration
	ErrIdle error
	// EndMarker is what a complete stream ends with, for the message of a
	// stream that ends early ("[DONE]", "message_stop").
	EndMarker string
	// Redact removes secrets from text that came from the network.
	Redact func(string) string
	// ConnectionError, HTTPError and JSONInsteadOfStream turn failures
	// into the provider's errors (*ProviderError, retryable or not).
	ConnectionError     func(error) error
	HTTPError           func(*http.Response) error
	JSONInsteadOfStream func(*http.Response) error
}

// ErrRedirect is wrapped by the error of a model request the server
// redirected: redirects are not followed (see SSEPost.Run).
var ErrRedirect = errors.New("redirects of model requests are not followed")

// redirectError names where the server wanted the request to go. Not
// retryable: the same request gets the same answer.
func (p *SSEPost) redirectError(resp *http.Response) error {
	target := resp.Header.Get("Location")
	if u, err := resp.Location(); err == nil {
		u.User = nil // never repeat credentials
		target = u.String()
	}
	return &redirectErr{provider: p.Provider, status: resp.StatusCode,
		target: p.Redact(Truncate(target, 500))}
}

type redirectErr struct {
	provider, target string
	status           int
}

func (e *redirectErr) Error() string {
	return fmt.Sprintf("%s: HTTP %d: the server redirected the request to %s; %v "+
		"(they would carry the API key and the conversation): set the provider's base URL to the final address",
		e.provider, e.status, e.target, ErrRedirect)
}

func (e *redirectErr) Unwrap() error { return ErrRedirect }

// errIdle is the cancellation cause the watchdog sets.
var errIdle = errors.New("idle")

// Run sends the request and calls handle with each event until handle
// reports done, fails, or stopped() holds. The consumer's time inside
// handle does not count as the server's idleness.
func (p *SSEPost) Run(ctx context.Context, handle func(sse.Event) (done bool, err error), stopped func() bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", p.Provider, context.Cause(ctx))
	}
	// reqCtx is cancelled by the watchdog, by the caller's ctx, and when the
	// stream is done (which also closes a connection left mid-stream).
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(p.Idle, func() { cancel(errIdle) })
	defer watchdog.Stop()

	// abortErr explains a failure that happened because reqCtx ended.
	abortErr := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", p.Provider, context.Cause(ctx))
		}
		if errors.Is(context.Cause(reqCtx), errIdle) {
			return fmt.Errorf("%w (no data for %s)", p.ErrIdle, p.Idle)
		}
		return err
	}

	hreq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, p.URL, bytes.NewReader(p.Body))
	if err != nil {
		return fmt.Errorf("%s: %s", p.Provider, p.Redact(err.Error()))
	}
	for k, v := range p.Header {
		hreq.Header[k] = v
	}
	// Redirects are never followed: a 307/308 would re-send the API key
	// and the whole conversation to wherever the Location points (another
	// origin included), and 301-303 would turn the POST into a GET. A copy
	// of the client, so the caller's CheckRedirect is not changed.
	client := *p.Client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(hreq)
	if err != nil {
		return abortErr(p.ConnectionError(err))
	}
	defer resp.Body.Close()

	if resp.StatusCode >= 300 && resp.StatusCode <= 399 && resp.Header.Get("Location") != "" {
		return p.redirectError(resp)
	}

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return abortErr(p.HTTPError(resp))
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		// The server ignored "stream": true, or a proxy answered 200 with
		// an error.
		return abortErr(p.JSONInsteadOfStream(resp))
	}

	sr := sse.NewReader(&activityReader{r: resp.Body, timer: watchdog, idle: p.Idle}, 0)
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
				return fmt.Errorf("%s: stream ended without %s: %w", p.Provider, p.EndMarker, ErrTruncatedStream)
			case errors.Is(err, sse.ErrTooLong):
				return fmt.Errorf("%s: reading stream: %w", p.Provider, err)
			}
			// A reset connection also cut the stream short.
			return fmt.Errorf("%s: reading stream: %s: %w", p.Provider, p.Redact(err.Error()), ErrTruncatedStream)
		}
		// The consumer's time is not the server's idleness.
		watchdog.Stop()
		done, err := handle(ev)
		if err != nil || done || stopped() {
			return err
		}
		watchdog.Reset(p.Idle)
	}
}

// activityReader resets the idle watchdog whenever bytes arrive, so
// keep-alive comments and pings, which the SSE reader swallows, count as
// activity.
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
