// Package anthropic streams model calls from Anthropic's Messages API
// (POST /v1/messages with "stream": true), and from gateways that speak it.
//
// It is written directly over net/http and the sse package rather than an
// SDK, like its twin, package openai.
//
// # Request
//
// Request.System, together with the text of any llm.RoleSystem messages
// (joined by blank lines), becomes the top-level "system"; it is omitted
// when blank. max_tokens, which Anthropic requires, is Request.MaxTokens,
// else Config.MaxTokens, else DefaultMaxTokens. Config.ThinkingBudgetTokens
// turns on extended thinking.
//
// Anthropic only accepts turns that alternate user, assistant, user...,
// starting with user, each with non-empty content. The conversation is
// converted by these rules:
//
//   - an llm.RoleTool message becomes a tool_result block (tool_use_id,
//     and its text as content, or text and image blocks if it has images)
//     in a user turn;
//   - consecutive messages that map to the same role are merged into one
//     turn, their blocks concatenated in order; within a user turn the
//     tool_result blocks are then moved before the other blocks (keeping
//     their order), as Anthropic requires of a turn answering tool calls;
//   - blank text (empty or whitespace only) is never sent, and a message
//     left without blocks is dropped before merging;
//   - if the first turn is the assistant's, a user turn with the text
//     ContinuationText is put in front of it;
//   - an assistant turn holds, in order: a thinking block when
//     ReasoningSignature is set (reasoning without a signature cannot be
//     verified by Anthropic, so it is dropped), one redacted_thinking block
//     per RedactedReasoning entry, the text, and one tool_use block per
//     tool call, whose input is the parsed Arguments, or {} when they are
//     empty, invalid JSON or not an object;
//   - tool call ids are made to match ^[a-zA-Z0-9_-]+$ (other bytes become
//     '_') in tool_use and tool_result alike, so that ids from other
//     providers still pair up;
//   - images become base64 image blocks.
//
// # Stream contract
//
// Provider.Stream yields deltas as they arrive: text, reasoning
// ("thinking"), llm.EventReasoningSignature when a signed thinking block
// ends, llm.EventRedactedReasoning for each redacted_thinking block, and
// tool call fragments whose Index is the content block index (a call
// without input gets ArgumentsDelta "{}" when its block ends). When the
// server sends message_stop it yields one llm.EventUsage (the latest,
// cumulative counts; InputTokens includes the cache reads and writes) and
// exactly one llm.EventFinish. stop_reason maps as end_turn, stop_sequence
// and pause_turn → FinishStop (pause_turn only pauses server tools, which
// this package never offers), max_tokens and
// model_context_window_exceeded → FinishLength, tool_use →
// FinishToolCalls, refusal → FinishContentFilter. A stream that ends
// without message_stop fails with an error wrapping llm.ErrTruncatedStream.
// On failure the iterator yields one (llm.Event{}, err) and stops. Pings,
// citations and unknown event, block and delta types are ignored.
//
// Errors: HTTP errors and "error" events inside the stream are
// *llm.ProviderError. For HTTP errors Retryable follows the status (408,
// 409, 429, 5xx; 529 overloaded always), overridden by x-should-retry
// except for 529, and RetryAfter comes from retry-after-ms or retry-after.
// An overloaded, rate-limit or internal error event is retryable only
// before any event was yielded. A failure to reach the server is a
// *llm.ProviderError with StatusCode 0 and Retryable true (unless a TLS
// certificate was rejected). Cancelling the context cancels the HTTP
// request at once, closing the connection, and the error wraps
// context.Cause(ctx). If no bytes arrive for Config.IdleTimeout (pings
// count), the request is aborted with an error wrapping ErrStreamIdle. No
// error text ever contains the API key: text from the server or the
// network is scrubbed of it.
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
package anthropic
