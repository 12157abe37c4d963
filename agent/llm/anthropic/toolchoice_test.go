package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// A request that must be answered in text (the summary at a turn's
// request limit) still sends the tools, which the conversation's tool
// calls need, with tool_choice none.
func TestNoToolCallsSendsToolChoiceNone(t *testing.T) {
	req := &llm.Request{Model: "claude-test", NoToolCalls: true,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("sum up")}}},
		Tools:    []llm.ToolSpec{{Name: "read_file", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	data, err := New(Config{}).requestBody(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Tools      []json.RawMessage `json:"tools"`
		ToolChoice json.RawMessage   `json:"tool_choice"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Tools) != 1 {
		t.Errorf("tools = %d, want 1", len(body.Tools))
	}
	assertJSONEqual(t, body.ToolChoice, []byte(`{"type":"none"}`))
}
