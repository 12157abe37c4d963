package anthropic

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/runtime"
)

// maxErrorBody caps how much of an error response is read.
const maxErrorBody = 64 << 10

// statusOverloaded is Anthropic's own "overloaded" status.
const statusOverloaded = 529

// apiError is Anthropic's error object.
type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// errorBody is the body of an HTTP error and the data of an "error" event:
// {"type":"error","error":{"type":T,"message":M},"request_id":"req_…"}.
type errorBody struct {
	Type  string          `json:"type"`
	Error json.RawMessage `json:"error"`
}

// parse returns the error the body describes, if any.
func (b *errorBody) parse() (apiError, bool) {
	raw := bytes.TrimSpace(b.Error)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return apiError{}, false
	}
	var e apiError
	if raw[0] == '"' {
		// Some proxies send "error": "text".
		_ = json.Unmarshal(raw, &e.Message)
	} else if json.Unmarshal(raw, &e) != nil {
		e.Message = string(raw)
	}
	return e, true
}

// connectionError describes a request that got no response.
func (p *Provider) connectionError(err error) error {
	return &llm.ProviderError{
		Provider: providerName,
		Message:  p.redact(err.Error()) + llm.ConnectionHint(err, runtime.ConnectionRefused(err), EnvBaseURL),
		// Refused, reset and timed-out connections are transient; a
		// rejected certificate will be rejected again.
		Retryable: !llm.IsCertificateError(err),
	}
}

// httpError turns a non-2xx response into a *llm.ProviderError.
func (p *Provider) httpError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	pe := &llm.ProviderError{Provider: providerName, StatusCode: resp.StatusCode}
	var body errorBody
	var e apiError
	ok := json.Unmarshal(data, &body) == nil
	if ok {
		e, ok = body.parse()
	}
	if ok {
		pe.Type = e.Type
		pe.Message = e.Message
	} else if msg, page := llm.PageError(resp.StatusCode, resp.Header.Get("Content-Type"), data, EnvBaseURL); page {
		pe.Message = msg
	} else {
		pe.Message = strings.TrimSpace(string(data))
	}
	if pe.Message == "" {
		pe.Message = http.StatusText(resp.StatusCode)
	}
	if pe.Message == "" && resp.StatusCode == statusOverloaded {
		pe.Message = "Overloaded"
	}
	pe.Message = llm.Truncate(p.redact(pe.Message), 2000)
	pe.Retryable = retryableStatus(resp.StatusCode)
	switch resp.Header.Get("x-should-retry") {
	case "true":
		pe.Retryable = true
	case "false":
		pe.Retryable = false
	}
	if resp.StatusCode == statusOverloaded {
		// Overloaded is always transient, whatever else the server says.
		pe.Retryable = true
	}
	pe.RetryAfter = llm.RetryAfter(resp.Header, time.Now())
	// A 413 (request_too_large: more bytes than the API takes, from the
	// API or a proxy before it, whatever the body) is a history too large
	// to send, as a prompt over the window is: compacting it is the cure.
	pe.ContextOverflow = resp.StatusCode == http.StatusRequestEntityTooLarge ||
		overflowStatus(resp.StatusCode) && llm.LooksLikeContextOverflow(pe.Type, pe.Message)
	return pe
}

// overflowStatus: the statuses servers refuse a too-long prompt with (a
// 429's "too many tokens" is a rate limit, not the window).
func overflowStatus(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity
}

// jsonInsteadOfStream handles a 2xx JSON answer to a streaming request:
// either an error a proxy sent with status 200, or a server that does not
// stream.
func (p *Provider) jsonInsteadOfStream(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var body errorBody
	if json.Unmarshal(data, &body) == nil {
		if e, ok := body.parse(); ok {
			return &llm.ProviderError{
				Provider: providerName, StatusCode: resp.StatusCode, Type: e.Type,
				Message: llm.Truncate(p.redact(e.Message), 2000),
			}
		}
	}
	return &llm.ProviderError{
		Provider: providerName, StatusCode: resp.StatusCode,
		Message: "server answered with JSON instead of an event stream; it may not support streaming",
	}
}

// streamError turns an "error" event inside a 200 stream into a
// *llm.ProviderError. A transient error (overloaded, rate limit, internal
// error) is retryable only if nothing was emitted yet, since a retry would
// repeat output the consumer has already seen.
func (p *Provider) streamError(e apiError, emitted bool) error {
	msg := e.Message
	if msg == "" {
		msg = "unknown error in stream"
	}
	pe := &llm.ProviderError{Provider: providerName, Type: e.Type, Message: llm.Truncate(p.redact(msg), 2000)}
	pe.ContextOverflow = llm.LooksLikeContextOverflow(pe.Type, pe.Message)
	if !emitted {
		switch e.Type {
		case "overloaded_error", "api_error", "rate_limit_error", "timeout_error":
			pe.Retryable = true
		}
	}
	return pe
}

// retryableStatus is the retry policy of the official SDKs: timeouts,
// conflicts, rate limits, server errors and 529 overloaded.
func retryableStatus(status int) bool {
	switch {
	case status == http.StatusRequestTimeout, status == http.StatusConflict,
		status == http.StatusTooManyRequests, status >= 500:
		return true
	}
	return false
}
