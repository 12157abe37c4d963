package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Role is the author of a Message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// PartType tells which fields of a Part are set.
type PartType string

const (
	PartText  PartType = "text"
	PartImage PartType = "image"
)

// Part is one piece of message content.
type Part struct {
	Type PartType
	// Text is set for PartText.
	Text string
	// MIMEType and Data (base64, as ACP carries it) are set for PartImage.
	MIMEType string
	Data     string
}

// TextPart returns a text Part.
func TextPart(s string) Part { return Part{Type: PartText, Text: s} }

// Message is one entry of the conversation sent to a model.
type Message struct {
	Role    Role
	Content []Part
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall
	// ToolCallID names the call a RoleTool message answers.
	ToolCallID string
	// ToolName is the tool a RoleTool message answers (some servers need it).
	ToolName string
	// IsError marks a RoleTool message whose tool call failed.
	IsError bool
	// Reasoning is the assistant's reasoning text; some providers require it
	// to be sent back (DeepSeek thinking mode with tools).
	Reasoning string
	// ReasoningSignature is an opaque provider token for the reasoning
	// (Anthropic thinking blocks); echoed back unchanged.
	ReasoningSignature string
	// RedactedReasoning holds the opaque data of reasoning blocks the
	// provider encrypted (Anthropic redacted_thinking), one entry per block,
	// in the order they arrived; echoed back unchanged.
	RedactedReasoning []string
}

// Text returns the concatenated text parts of m.
func (m Message) Text() string {
	var s string
	for _, p := range m.Content {
		if p.Type == PartText {
			s += p.Text
		}
	}
	return s
}

// ToolSpec describes a tool offered to the model.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the tool's arguments.
	Parameters json.RawMessage
}

// ToolCall is a complete tool call made by the model.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the raw JSON the model produced; it is untrusted and may
	// not even be valid JSON.
	Arguments string
}

// Request is one model call.
type Request struct {
	// Model is the provider's model name (the part after "provider/").
	Model    string
	System   string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens caps the output; 0 means the provider's default.
	MaxTokens int
	// NoToolCalls asks for a text answer: Tools are still sent (a
	// conversation holding tool calls needs their definitions) with the
	// tool choice "none".
	NoToolCalls bool
	// ReasoningEffort is the thought level: "" (the provider's and
	// model's default), "off", "low", "medium" or "high". OpenAI sends it
	// as reasoning_effort ("off" sends nothing); Anthropic turns it into
	// an extended-thinking budget ("off" disables thinking).
	ReasoningEffort string
}

// Reasoning effort levels (Request.ReasoningEffort).
const (
	EffortOff    = "off"
	EffortLow    = "low"
	EffortMedium = "medium"
	EffortHigh   = "high"
)

// EventKind tells which fields of an Event are set.
type EventKind uint8

const (
	// EventTextDelta: Text holds assistant text to append.
	EventTextDelta EventKind = iota + 1
	// EventReasoningDelta: Text holds reasoning ("thinking") text to append.
	EventReasoningDelta
	// EventToolCallDelta: ToolCall holds a fragment of a tool call.
	EventToolCallDelta
	// EventUsage: Usage holds token counts for this model call.
	EventUsage
	// EventFinish: Finish holds why the model stopped. It is the last event
	// of a successful stream.
	EventFinish
	// EventReasoningSignature: Text holds the opaque signature of the
	// reasoning block just finished (Anthropic thinking). Store it in
	// Message.ReasoningSignature so the reasoning can be echoed back. It
	// follows that block's EventReasoningDelta events.
	EventReasoningSignature
	// EventRedactedReasoning: Text holds the opaque data of one reasoning
	// block the provider encrypted (Anthropic redacted_thinking). Append it
	// to Message.RedactedReasoning so it can be echoed back.
	EventRedactedReasoning
)

// Event is one item of a model's streamed response.
type Event struct {
	Kind     EventKind
	Text     string
	ToolCall *ToolCallDelta
	Usage    *Usage
	Finish   FinishReason
}

// ToolCallDelta is a fragment of a streamed tool call. Fragments with the
// same Index belong to one call; ID and Name are set on the first fragment
// (and must be assigned, not appended, if repeated); ArgumentsDelta is raw
// JSON text to append.
type ToolCallDelta struct {
	Index          int
	ID             string
	Name           string
	ArgumentsDelta string
}

// Usage is the token accounting of one model call.
type Usage struct {
	InputTokens       int64
	OutputTokens      int64
	CachedReadTokens  int64
	CachedWriteTokens int64
	ReasoningTokens   int64
}

// FinishReason is why a model stopped, normalised across providers.
type FinishReason string

const (
	FinishStop          FinishReason = "stop"
	FinishLength        FinishReason = "length"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishContentFilter FinishReason = "content_filter"
)

// ErrTruncatedStream means the provider's stream ended before it said it was
// done (no [DONE], no message_stop). It is an error, never a success.
var ErrTruncatedStream = errors.New("llm: model stream ended before it was complete")

// ProviderError is an error reported by a model provider, over HTTP or in
// the stream. Message is the provider's own text; it never contains the API
// key.
type ProviderError struct {
	Provider   string
	StatusCode int    // HTTP status; 0 for an error inside a 200 stream
	Type       string // provider error type or code, if any
	Message    string
	// Retryable says whether the request may be retried (issue 4 policy).
	Retryable bool
	// RetryAfter is the server's requested delay, if it sent one.
	RetryAfter time.Duration
	// ContextOverflow: the request was refused because the prompt is
	// longer than the model's context window (the caller may shrink the
	// history and send it again).
	ContextOverflow bool
}

// IsContextOverflow reports whether err is a provider's refusal of a
// prompt longer than the model's context window.
func IsContextOverflow(err error) bool {
	var pe *ProviderError
	return errors.As(err, &pe) && pe.ContextOverflow
}

// IsAuthFailure reports whether err is a provider's refusal of the API
// key (HTTP 401, or an error type that says so, as OpenAI's
// invalid_api_key and Anthropic's authentication_error do): sending the
// request again cannot help; the user has to fix the key.
func IsAuthFailure(err error) bool {
	var pe *ProviderError
	if !errors.As(err, &pe) {
		return false
	}
	return pe.StatusCode == http.StatusUnauthorized || pe.Type == "invalid_api_key" || pe.Type == "authentication_error"
}

// contextOverflowMarkers are what servers say when the prompt does not
// fit: OpenAI ("context_length_exceeded", "maximum context length"),
// Anthropic ("prompt is too long"), vLLM and SGLang ("maximum context
// length", "longer than the model's context length"), llama.cpp
// ("exceed_context_size_error", "exceeds the available context size"),
// OpenRouter and LiteLLM (which pass the upstream's text on), Ollama
// ("input length exceeds the context length").
var contextOverflowMarkers = []string{
	"context_length_exceeded", "maximum context length", "prompt is too long", "context length",
	"exceed_context_size", "exceeds the available context size", "context window", "too many tokens",
	"reduce the length of the messages", "input is too long", "context_window_exceeded",
}

// LooksLikeContextOverflow reports whether a provider's error type or
// message says the prompt was too long for the model. Providers call it on
// their 4xx errors (and errors in a stream) to set ContextOverflow.
func LooksLikeContextOverflow(typ, message string) bool {
	s := strings.ToLower(typ + " " + message)
	for _, m := range contextOverflowMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func (e *ProviderError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.StatusCode, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Provider, e.Message)
}

// String renders an event compactly ("text:Hi", "finish:stop"), so test
// failures and debug logs read like the stream.
func (e Event) String() string {
	switch e.Kind {
	case EventTextDelta:
		return "text:" + e.Text
	case EventReasoningDelta:
		return "reasoning:" + e.Text
	case EventToolCallDelta:
		tc := e.ToolCall
		return fmt.Sprintf("tool:%d id=%s name=%s args=%s", tc.Index, tc.ID, tc.Name, tc.ArgumentsDelta)
	case EventUsage:
		u := e.Usage
		return fmt.Sprintf("usage:in=%d out=%d cr=%d cw=%d r=%d", u.InputTokens, u.OutputTokens, u.CachedReadTokens, u.CachedWriteTokens, u.ReasoningTokens)
	case EventFinish:
		return "finish:" + string(e.Finish)
	case EventReasoningSignature:
		return "reasoning_signature:" + e.Text
	case EventRedactedReasoning:
		return "redacted_reasoning:" + e.Text
	}
	return fmt.Sprintf("unknown:%d", e.Kind)
}
