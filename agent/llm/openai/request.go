package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// The request body. Field order follows OpenAI's documentation so that
// captured requests read naturally.
type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	Tools               []chatTool     `json:"tools,omitempty"`
	ToolChoice          string         `json:"tool_choice,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a string, a []contentPart, or nil (JSON null) for an
	// assistant message that only calls tools.
	Content any `json:"content"`
	// ReasoningContent echoes the assistant's reasoning; DeepSeek rejects
	// tool-using turns in thinking mode without it.
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
	Name             string         `json:"name,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string           `json:"type"`
	Function chatToolFunction `json:"function"`
}

type chatToolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema is sent for a tool without parameters: servers reject a
// missing or null schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// requestBody encodes req as a streaming Chat Completions request.
func (p *Provider) requestBody(req *llm.Request) ([]byte, error) {
	if req == nil {
		return nil, fmt.Errorf("openai: nil request")
	}
	cr := chatRequest{
		Model:         req.Model,
		Messages:      make([]chatMessage, 0, len(req.Messages)+1),
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
	}
	if req.MaxTokens > 0 {
		if p.maxTokensField == "max_completion_tokens" {
			cr.MaxCompletionTokens = req.MaxTokens
		} else {
			cr.MaxTokens = req.MaxTokens
		}
	}
	if req.ReasoningEffort != "" && req.ReasoningEffort != llm.EffortOff {
		cr.ReasoningEffort = req.ReasoningEffort
	}
	if req.System != "" {
		cr.Messages = append(cr.Messages, chatMessage{Role: "system", Content: req.System})
	}
	// Chat Completions tool messages carry text only. Images tools
	// returned follow the run of tool messages they belong to, in one user
	// message that names each image's call: tool messages must directly
	// follow the assistant message that made the calls.
	var toolImages []contentPart
	for i, m := range req.Messages {
		if m.Role != llm.RoleTool && len(toolImages) > 0 {
			cr.Messages = append(cr.Messages, chatMessage{Role: "user", Content: toolImages})
			toolImages = nil
		}
		cm, err := encodeMessage(m)
		if err != nil {
			return nil, fmt.Errorf("openai: message %d: %w", i, err)
		}
		cr.Messages = append(cr.Messages, cm)
		if m.Role == llm.RoleTool {
			toolImages = appendToolImages(toolImages, m)
		}
	}
	if len(toolImages) > 0 {
		cr.Messages = append(cr.Messages, chatMessage{Role: "user", Content: toolImages})
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if trimmed := bytes.TrimSpace(params); len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
			params = emptySchema
		} else if !json.Valid(trimmed) {
			return nil, fmt.Errorf("openai: tool %q: parameters are not valid JSON", t.Name)
		}
		cr.Tools = append(cr.Tools, chatTool{
			Type:     "function",
			Function: chatToolFunction{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	if req.NoToolCalls && len(cr.Tools) > 0 {
		cr.ToolChoice = "none"
	}
	data, err := json.Marshal(cr)
	if err != nil {
		return nil, fmt.Errorf("openai: encoding request: %w", err)
	}
	return data, nil
}

func encodeMessage(m llm.Message) (chatMessage, error) {
	switch m.Role {
	case llm.RoleSystem:
		return chatMessage{Role: "system", Content: m.Text()}, nil
	case llm.RoleUser:
		return chatMessage{Role: "user", Content: userContent(m.Content)}, nil
	case llm.RoleAssistant:
		cm := chatMessage{Role: "assistant", ReasoningContent: m.Reasoning}
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}" // servers reject "" arguments when replayed
			}
			cm.ToolCalls = append(cm.ToolCalls, chatToolCall{
				ID: tc.ID, Type: "function",
				Function: chatFunction{Name: tc.Name, Arguments: args},
			})
		}
		if text := m.Text(); text != "" || len(cm.ToolCalls) == 0 {
			cm.Content = text
		}
		return cm, nil
	case llm.RoleTool:
		// Chat Completions tool results carry text only; the images a tool
		// returned follow in a user message (see encodeRequest), and a note
		// here says so.
		var b strings.Builder
		for _, part := range m.Content {
			switch part.Type {
			case llm.PartText:
				b.WriteString(part.Text)
			case llm.PartImage:
				fmt.Fprintf(&b, "\n[%s image: in the next user message]", part.MIMEType)
			}
		}
		return chatMessage{Role: "tool", ToolCallID: m.ToolCallID, Name: m.ToolName, Content: b.String()}, nil
	}
	return chatMessage{}, fmt.Errorf("unknown role %q", m.Role)
}

// ToolImagesText introduces, in the user message after a run of tool
// messages, the images one tool call returned; %s is the call's id.
const ToolImagesText = "The image(s) returned by tool call %s:"

// appendToolImages adds the images of the tool message m, after a line
// naming its call, to parts.
func appendToolImages(parts []contentPart, m llm.Message) []contentPart {
	named := false
	for _, part := range m.Content {
		if part.Type != llm.PartImage {
			continue
		}
		if !named {
			parts = append(parts, contentPart{Type: "text", Text: fmt.Sprintf(ToolImagesText, m.ToolCallID)})
			named = true
		}
		parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{URL: "data:" + part.MIMEType + ";base64," + part.Data}})
	}
	return parts
}

// userContent is a plain string when parts are all text, which every
// server accepts, and an array of parts only when there are images.
func userContent(parts []llm.Part) any {
	textOnly := true
	for _, part := range parts {
		if part.Type != llm.PartText {
			textOnly = false
			break
		}
	}
	if textOnly {
		return llm.Message{Content: parts}.Text()
	}
	out := make([]contentPart, 0, len(parts))
	for _, part := range parts {
		switch part.Type {
		case llm.PartText:
			if part.Text != "" {
				out = append(out, contentPart{Type: "text", Text: part.Text})
			}
		case llm.PartImage:
			out = append(out, contentPart{Type: "image_url", ImageURL: &imageURL{
				URL: "data:" + part.MIMEType + ";base64," + part.Data,
			}})
		}
	}
	return out
}
