package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/runtime"
)

// maxErrorBody caps how much of an error response is read.
const maxErrorBody = 64 << 10

// apiError is the error object of OpenAI and its imitators, found under
// "error" (OpenAI, SGLang, OpenRouter) or at the top level (vLLM).
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"` // a string or a number, depending on the server
}

// errorBody matches the error shapes servers send, in a body or a chunk.
type errorBody struct {
	Error   json.RawMessage `json:"error"`
	Object  string          `json:"object"`
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// parse returns the error the body describes, if any.
func (b *errorBody) parse() (apiError, bool) {
	if raw := bytes.TrimSpace(b.Error); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		var e apiError
		if raw[0] == '"' {
			// Ollama and some proxies send "error": "text".
			_ = json.Unmarshal(raw, &e.Message)
		} else if json.Unmarshal(raw, &e) != nil {
			e.Message = string(raw)
		}
		return e, true
	}
	if b.Object == "error" {
		return apiError{Message: b.Message, Type: b.Type, Code: b.Code}, true
	}
	return apiError{}, false
}

// code returns the error's code as text ("insufficient_quota", "502").
func (e apiError) code() string {
	raw := bytes.TrimSpace(e.Code)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// kind is what ProviderError.Type reports: the error type, else its code.
func (e apiError) kind() string {
	if e.Type != "" {
		return e.Type
	}
	return e.code()
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
		pe.Type = e.kind()
		pe.Message = e.Message
	} else if msg, page := llm.PageError(resp.StatusCode, resp.Header.Get("Content-Type"), data, EnvBaseURL); page {
		pe.Message = msg
	} else {
		pe.Message = strings.TrimSpace(string(data))
	}
	if pe.Message == "" {
		pe.Message = http.StatusText(resp.StatusCode)
	}
	pe.Message = llm.Truncate(p.redact(pe.Message), 2000)
	pe.Retryable = retryableStatus(resp.StatusCode, e.code(), e.Type)
	switch resp.Header.Get("x-should-retry") {
	case "true":
		pe.Retryable = true
	case "false":
		pe.Retryable = false
	}
	pe.RetryAfter = llm.RetryAfter(resp.Header, time.Now())
	pe.ContextOverflow = overflowStatus(resp.StatusCode) && llm.LooksLikeContextOverflow(pe.Type, pe.Message)
	return pe
}

// overflowStatus: the statuses servers refuse a too-long prompt with (a
// 429's "too many tokens" is a rate limit, not the window).
func overflowStatus(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity
}

// jsonInsteadOfStream handles a 2xx JSON answer to a streaming request:
// either an error some proxies send with status 200, or a server that
// does not stream.
func (p *Provider) jsonInsteadOfStream(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var body errorBody
	if json.Unmarshal(data, &body) == nil {
		if e, ok := body.parse(); ok {
			return &llm.ProviderError{
				Provider: providerName, StatusCode: resp.StatusCode, Type: e.kind(),
				Message: llm.Truncate(p.redact(e.Message), 2000),
			}
		}
	}
	return &llm.ProviderError{
		Provider: providerName, StatusCode: resp.StatusCode,
		Message: "server answered with JSON instead of an event stream; it may not support streaming",
	}
}

// streamError turns an error reported inside a 200 stream into a
// *llm.ProviderError. It is retryable only if nothing was emitted yet,
// since a retry would repeat output the consumer has already seen.
func (p *Provider) streamError(e apiError, emitted bool) error {
	msg := e.Message
	if msg == "" {
		msg = "unknown error in stream"
	}
	pe := &llm.ProviderError{Provider: providerName, Type: e.kind(), Message: llm.Truncate(p.redact(msg), 2000)}
	pe.ContextOverflow = llm.LooksLikeContextOverflow(pe.Type, pe.Message)
	if !emitted {
		// OpenRouter reports upstream failures as an error chunk with an
		// HTTP-like code, often before any content.
		if n, err := strconv.Atoi(e.code()); err == nil {
			pe.Retryable = retryableStatus(n, "", e.Type)
		}
	}
	return pe
}

// retryableStatus is the retry policy of the official SDKs: timeouts,
// conflicts, rate limits and server errors, but not an exhausted quota.
func retryableStatus(status int, code, typ string) bool {
	switch {
	case status == http.StatusTooManyRequests:
		return code != "insufficient_quota" && typ != "insufficient_quota"
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status >= 500:
		return true
	}
	return false
}
