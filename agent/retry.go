package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// RetryPolicy decides how transient model failures are retried.
type RetryPolicy struct {
	// MaxRetries is how many times a failed model call is retried; 0 means
	// the default (2), a negative value disables retries.
	MaxRetries int
	// BaseDelay is the first back-off delay (doubled each retry, capped
	// at MaxDelay, minus up to 25% jitter); 0 means 500 ms.
	BaseDelay time.Duration
	// MaxDelay caps the back-off; 0 means 8 s.
	MaxDelay time.Duration
}

// DefaultMaxRetries is the number of retries when none is configured.
const DefaultMaxRetries = 2

func (p RetryPolicy) maxRetries() int {
	switch {
	case p.MaxRetries < 0:
		return 0
	case p.MaxRetries == 0:
		return DefaultMaxRetries
	}
	return p.MaxRetries
}

// MaxServerRetryDelay is the longest wait a server may ask for
// (retry-after) that a retry honours; past it the call fails at once, as
// the OpenAI and Anthropic SDKs stop honouring it past a minute.
const MaxServerRetryDelay = time.Minute

// serverDelay is the wait the server asked for, 0 if none.
func serverDelay(err error) time.Duration {
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		return pe.RetryAfter
	}
	return 0
}

// delay is the wait before retry number attempt (1-based): the server's
// requested delay if it sent one, else exponential back-off with jitter.
func (p RetryPolicy) delay(attempt int, err error) time.Duration {
	var pe *llm.ProviderError
	if errors.As(err, &pe) && pe.RetryAfter > 0 {
		return pe.RetryAfter
	}
	base, maxDelay := p.BaseDelay, p.MaxDelay
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	if maxDelay <= 0 {
		maxDelay = 8 * time.Second
	}
	d := base << (attempt - 1)
	if d > maxDelay || d <= 0 {
		d = maxDelay
	}
	return d - time.Duration(rand.Float64()*0.25*float64(d))
}

// retryable reports whether err is a transient provider failure: a
// connection error or HTTP 408/409/429/5xx/529, as the provider classified
// it. Cancellation and timeouts never are.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *llm.ProviderError
	return errors.As(err, &pe) && pe.Retryable
}

// RetryNotice describes a retry about to happen.
type RetryNotice struct {
	Attempt     int // 1 for the first retry
	MaxAttempts int // retries + 1
	Err         error
	Delay       time.Duration
}

// withRetries streams req from model, retrying a failed call while nothing
// of it has been streamed yet (so the client never sees output twice).
// onRetry is called before each wait.
func (p RetryPolicy) withRetries(ctx context.Context, model Model, req *llm.Request, onRetry func(RetryNotice)) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		max := p.maxRetries()
		for attempt := 0; ; attempt++ {
			emitted := false
			var failed error
			for ev, err := range model.Stream(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				emitted = true
				if !yield(ev, nil) {
					return
				}
			}
			if failed == nil {
				return
			}
			if emitted || attempt >= max || !retryable(ctx, failed) {
				yield(llm.Event{}, failed)
				return
			}
			if wait := serverDelay(failed); wait > MaxServerRetryDelay {
				// Minutes or hours (a quota's reset): the user, who sees
				// nothing of a back-off, decides, not a silent wait.
				yield(llm.Event{}, fmt.Errorf("%w (the server asks to wait %s before trying again, too long to wait for: not retried)", failed, wait.Round(time.Second)))
				return
			}
			n := RetryNotice{Attempt: attempt + 1, MaxAttempts: max + 1, Err: failed, Delay: p.delay(attempt+1, failed)}
			if onRetry != nil {
				onRetry(n)
			}
			timer := time.NewTimer(n.Delay)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				yield(llm.Event{}, context.Cause(ctx))
				return
			}
		}
	}
}
