// Package openai streams model calls from any server that speaks the OpenAI
// Chat Completions API: OpenAI itself and the OpenAI-compatible servers
// users run or rent (Ollama, llama.cpp's llama-server, vLLM, SGLang,
// LM Studio, OpenRouter, DeepSeek, Gemini's compatibility endpoint).
//
// It is written directly over net/http and the sse package rather than an
// SDK, because what matters most are the servers' quirks, which a struct of
// pointer fields absorbs easily:
//
//   - reasoning arrives as delta.reasoning_content (DeepSeek, llama.cpp) or
//     delta.reasoning (Ollama, vLLM, OpenRouter); both are read;
//   - a tool call's index may be missing (old Ollama) or reused by parallel
//     calls with different ids (Ollama); calls are renumbered so that every
//     ToolCallDelta.Index is stable for its call and unique in the response;
//   - ids and names are assigned, never appended, and only when non-empty
//     (LM Studio repeats "name":"" on later fragments);
//   - a call without an id gets a synthetic one, and arguments "" become
//     "{}", both emitted just before the finish;
//   - an error can arrive inside an HTTP 200 stream in several shapes
//     (OpenAI/SGLang {"error":{...}}, vLLM {"object":"error"}, OpenRouter
//     error plus finish_reason "error"); each becomes a *llm.ProviderError;
//   - "stop" with tool calls present finishes as llm.FinishToolCalls.
//
// # Stream contract
//
// Provider.Stream yields deltas as they arrive, then the usage (the last one
// the server sent, once) and exactly one llm.EventFinish, when the server
// sends "data: [DONE]". A stream that ends without [DONE] fails with an
// error wrapping llm.ErrTruncatedStream, even if a finish_reason was seen.
// On failure the iterator yields one (llm.Event{}, err) and stops.
//
// Errors: HTTP errors and in-stream errors are *llm.ProviderError, with
// Retryable and RetryAfter set from the status, the error code and the
// retry-after-ms, retry-after and x-should-retry headers. A failure to
// reach the server is a *llm.ProviderError with StatusCode 0 and Retryable
// true (unless a TLS certificate was rejected). Cancelling the context
// cancels the HTTP request, closing the connection, and the error wraps
// context.Cause(ctx). If no bytes arrive for Config.IdleTimeout (keep-alive
// comments count), the request is aborted with an error wrapping
// ErrStreamIdle. No error text ever contains the API key: messages
// from the server are scrubbed of it.
//
// The Provider makes no retries itself; the caller owns the retry policy,
// which must only retry before it has consumed any event.
//
// # Concurrency
//
// A Provider is safe for concurrent use by multiple sessions; each Stream
// call is one independent HTTP request. A single iterator must be consumed
// by one goroutine. Stopping the iteration early (break) closes the
// response body and releases the connection.
package openai
