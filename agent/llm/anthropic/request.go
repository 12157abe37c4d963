package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// ContinuationText is the user message put in front of a conversation that
// would otherwise start with an assistant turn, which Anthropic rejects.
const ContinuationText = "(conversation continues)"

// The request body, in the field order of Anthropic's documentation.
type messagesRequest struct {
	Model      string      `json:"model"`
	MaxTokens  int         `json:"max_tokens"`
	System     []block     `json:"system,omitempty"`
	Messages   []message   `json:"messages"`
	Tools      []tool      `json:"tools,omitempty"`
	ToolChoice *toolChoice `json:"tool_choice,omitempty"`
	Stream     bool        `json:"stream"`
	Thinking   *thinking   `json:"thinking,omitempty"`
}

type toolChoice struct {
	Type string `json:"type"`
}

// cacheControl marks the end of a prefix Anthropic caches (prompt
// caching): a later request that starts with the same prefix reads it
// from the cache, at a tenth of the input price.
type cacheControl struct {
	Type string `json:"type"`
}

// ephemeral is the (5-minute) cache breakpoint.
var ephemeral = &cacheControl{Type: "ephemeral"}

type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is one content block; Type tells which fields are set.
type block struct {
	Type string `json:"type"`
	// text
	Text string `json:"text,omitempty"`
	// thinking: Thinking is a pointer because "" is a valid (omitted
	// display) thinking text that must still be present.
	Thinking  *string `json:"thinking,omitempty"`
	Signature string  `json:"signature,omitempty"`
	// redacted_thinking
	Data string `json:"data,omitempty"`
	// image
	Source *imageSource `json:"source,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result: Content is a string or a []block of text and images.
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   any    `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	// CacheControl, on the last block of a cached prefix.
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// emptySchema is sent for a tool without parameters: Anthropic requires an
// object schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// emptyInput is the input of a tool call without (valid) arguments.
var emptyInput = json.RawMessage(`{}`)

// EffortBudgets are the extended-thinking budgets (tokens) of the
// reasoning effort levels. 1024 is the API's minimum budget.
var EffortBudgets = map[string]int{llm.EffortLow: 2048, llm.EffortMedium: 8192, llm.EffortHigh: 24576}

// thinkingBudget is the thinking budget for a request: its effort level
// if it names one, else the provider's configured budget.
func (p *Provider) thinkingBudget(effort string) int {
	switch effort {
	case "":
		return p.thinking
	case llm.EffortOff:
		return 0
	}
	return EffortBudgets[effort]
}

// requestBody encodes req as a streaming Messages request.
func (p *Provider) requestBody(req *llm.Request) ([]byte, error) {
	if req == nil {
		return nil, fmt.Errorf("anthropic: nil request")
	}
	mr := messagesRequest{
		Model:     req.Model,
		MaxTokens: req.MaxTokens,
		Stream:    true,
	}
	if mr.MaxTokens <= 0 {
		mr.MaxTokens = p.maxTokens
	}
	if budget := p.thinkingBudget(req.ReasoningEffort); budget > 0 {
		mr.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
		if mr.MaxTokens <= budget {
			// budget_tokens must be below max_tokens; keep the answer's
			// allowance on top of the thinking budget.
			mr.MaxTokens += budget
		}
	}
	var system []string
	if strings.TrimSpace(req.System) != "" {
		system = append(system, req.System)
	}
	for _, m := range req.Messages {
		if m.Role == llm.RoleSystem {
			if t := m.Text(); strings.TrimSpace(t) != "" {
				system = append(system, t)
			}
		}
	}
	if len(system) > 0 {
		mr.System = []block{{Type: "text", Text: strings.Join(system, "\n\n")}}
	}
	msgs, err := encodeMessages(req.Messages)
	if err != nil {
		return nil, err
	}
	mr.Messages = msgs
	for _, t := range req.Tools {
		schema := t.Parameters
		if trimmed := bytes.TrimSpace(schema); len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
			schema = emptySchema
		} else if !json.Valid(trimmed) {
			return nil, fmt.Errorf("anthropic: tool %q: parameters are not valid JSON", t.Name)
		}
		mr.Tools = append(mr.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if req.NoToolCalls && len(mr.Tools) > 0 {
		mr.ToolChoice = &toolChoice{Type: "none"}
	}
	markCache(&mr)
	data, err := json.Marshal(mr)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encoding request: %w", err)
	}
	return data, nil
}

// markCache sets Anthropic's prompt-cache breakpoints (at most 4 are
// allowed): after the tools and after the system prompt, which stay the
// same for a whole session (the order of a request is tools, system,
// messages, so the first covers the tools and the second both), and on
// the last block of the conversation, so each request of a tool-using
// turn reads everything before its newest message from the cache.
func markCache(mr *messagesRequest) {
	if n := len(mr.Tools); n > 0 {
		mr.Tools[n-1].CacheControl = ephemeral
	}
	if n := len(mr.System); n > 0 {
		mr.System[n-1].CacheControl = ephemeral
	}
	if n := len(mr.Messages); n > 0 {
		blocks := mr.Messages[n-1].Content
		for i := len(blocks) - 1; i >= 0; i-- {
			// Thinking blocks cannot carry a breakpoint; an empty text
			// block is never sent.
			if t := blocks[i].Type; t != "thinking" && t != "redacted_thinking" {
				blocks[i].CacheControl = ephemeral
				break
			}
		}
	}
}

// encodeMessages converts the conversation to Anthropic's strictly
// alternating user/assistant turns; see the package documentation for the
// rules.
func encodeMessages(msgs []llm.Message) ([]message, error) {
	out := make([]message, 0, len(msgs)+1)
	add := func(role string, blocks []block) {
		if len(blocks) == 0 {
			return // Anthropic rejects empty content
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, message{Role: role, Content: blocks})
	}
	for i, m := range msgs {
		switch m.Role {
		case llm.RoleSystem:
			// Folded into the system prompt by requestBody.
		case llm.RoleUser:
			add("user", contentBlocks(m.Content))
		case llm.RoleTool:
			add("user", []block{toolResult(m)})
		case llm.RoleAssistant:
			add("assistant", assistantBlocks(m))
		default:
			return nil, fmt.Errorf("anthropic: message %d: unknown role %q", i, m.Role)
		}
	}
	if len(out) > 0 && out[0].Role == "assistant" {
		out = append(out, message{})
		copy(out[1:], out)
		out[0] = message{Role: "user", Content: []block{{Type: "text", Text: ContinuationText}}}
	}
	for i := range out {
		if out[i].Role == "user" {
			toolResultsFirst(out[i].Content)
		}
	}
	return out, nil
}

// toolResultsFirst moves the tool_result blocks of a user message before
// its other blocks, keeping the order within each group: Anthropic requires
// a message answering tool calls to start with their results. (Merging puts
// text after results when the user wrote while tools ran.)
func toolResultsFirst(blocks []block) {
	var results, others []block
	for _, b := range blocks {
		if b.Type == "tool_result" {
			results = append(results, b)
		} else {
			others = append(others, b)
		}
	}
	if len(results) == 0 || len(others) == 0 {
		return
	}
	n := copy(blocks, results)
	copy(blocks[n:], others)
}

// contentBlocks converts user content: non-blank text and images.
func contentBlocks(parts []llm.Part) []block {
	var out []block
	for _, part := range parts {
		switch part.Type {
		case llm.PartText:
			if strings.TrimSpace(part.Text) != "" {
				out = append(out, block{Type: "text", Text: part.Text})
			}
		case llm.PartImage:
			out = append(out, imageBlock(part))
		}
	}
	return out
}

func imageBlock(part llm.Part) block {
	return block{Type: "image", Source: &imageSource{Type: "base64", MediaType: part.MIMEType, Data: part.Data}}
}

// toolResult converts a RoleTool message. Text-only content is sent as a
// string, content with images as blocks, and blank content not at all.
func toolResult(m llm.Message) block {
	b := block{Type: "tool_result", ToolUseID: sanitizeID(m.ToolCallID), IsError: m.IsError}
	hasImage := false
	for _, part := range m.Content {
		if part.Type == llm.PartImage {
			hasImage = true
			break
		}
	}
	if hasImage {
		b.Content = contentBlocks(m.Content)
	} else if text := m.Text(); strings.TrimSpace(text) != "" {
		b.Content = text
	}
	return b
}

// assistantBlocks converts an assistant message: its thinking (only when
// signed, since Anthropic verifies the signature), redacted thinking, text
// and tool calls, in that order.
func assistantBlocks(m llm.Message) []block {
	var out []block
	if m.ReasoningSignature != "" {
		reasoning := m.Reasoning
		out = append(out, block{Type: "thinking", Thinking: &reasoning, Signature: m.ReasoningSignature})
	}
	for _, data := range m.RedactedReasoning {
		if data != "" {
			out = append(out, block{Type: "redacted_thinking", Data: data})
		}
	}
	if text := m.Text(); strings.TrimSpace(text) != "" {
		out = append(out, block{Type: "text", Text: text})
	}
	for _, tc := range m.ToolCalls {
		out = append(out, block{Type: "tool_use", ID: sanitizeID(tc.ID), Name: tc.Name, Input: toolInput(tc.Arguments)})
	}
	return out
}

// toolInput is a call's arguments as the JSON object Anthropic requires:
// "" (a tool without parameters), invalid JSON (the model's mistake, which
// the tool result already reported) and non-objects become {}.
func toolInput(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" || trimmed[0] != '{' || !json.Valid([]byte(trimmed)) {
		return emptyInput
	}
	return json.RawMessage(trimmed)
}

// sanitizeID makes a tool call id acceptable to Anthropic, which requires
// ^[a-zA-Z0-9_-]+$, by replacing other bytes with '_'. Ids from another
// provider ("functions.read:0") then still pair tool_use with tool_result,
// since both go through this function.
func sanitizeID(id string) string {
	ok := true
	for i := 0; i < len(id); i++ {
		if !idByte(id[i]) {
			ok = false
			break
		}
	}
	if ok {
		return id
	}
	b := []byte(id)
	for i, c := range b {
		if !idByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
