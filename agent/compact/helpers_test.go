package compact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acp-agent/acp-agent/agent/llm"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func sys(s string) llm.Message {
	return llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart(s)}}
}

func user(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(s)}}
}

func asst(s string, calls ...llm.ToolCall) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}
	if s != "" {
		m.Content = []llm.Part{llm.TextPart(s)}
	}
	return m
}

func call(id string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: "read_file", Arguments: `{"path":"a.go"}`}
}

func callArgs(id, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: "read_file", Arguments: args}
}

func result(id, text string) llm.Message {
	return llm.Message{Role: llm.RoleTool, ToolCallID: id, ToolName: "read_file", Content: []llm.Part{llm.TextPart(text)}}
}

// shape renders a history compactly: u, s, a, a(c1,c2), t(c1).
func shape(msgs []llm.Message) string {
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			parts[i] = "u"
		case llm.RoleSystem:
			parts[i] = "s"
		case llm.RoleAssistant:
			parts[i] = "a"
			if len(m.ToolCalls) > 0 {
				ids := make([]string, len(m.ToolCalls))
				for k, c := range m.ToolCalls {
					ids[k] = c.ID
				}
				parts[i] += "(" + strings.Join(ids, ",") + ")"
			}
		case llm.RoleTool:
			parts[i] = "t(" + m.ToolCallID + ")"
		}
	}
	return strings.Join(parts, " ")
}

// protocolError checks what every provider requires of a replayed
// history: each assistant message with tool calls is followed directly by
// exactly one result per call, every call's arguments are a JSON object,
// and no result stands elsewhere. nil means a model request with this
// history would be accepted.
func protocolError(msgs []llm.Message) error {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch {
		case m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0:
			want := map[string]bool{}
			for _, c := range m.ToolCalls {
				if !isJSONObject(c.Arguments) {
					return fmt.Errorf("message %d: call %s arguments %q", i, c.ID, c.Arguments)
				}
				if want[c.ID] {
					return fmt.Errorf("message %d: duplicate id %s", i, c.ID)
				}
				want[c.ID] = true
			}
			for len(want) > 0 {
				i++
				if i >= len(msgs) || msgs[i].Role != llm.RoleTool || !want[msgs[i].ToolCallID] {
					return fmt.Errorf("message %d: missing results for %v", i, want)
				}
				delete(want, msgs[i].ToolCallID)
			}
		case m.Role == llm.RoleTool:
			return fmt.Errorf("message %d: orphaned result %s", i, m.ToolCallID)
		}
	}
	return nil
}

// snapshot deep-copies msgs so a test can check that a function did not
// modify its input.
func snapshot(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		m.Content = append([]llm.Part(nil), m.Content...)
		m.ToolCalls = append([]llm.ToolCall(nil), m.ToolCalls...)
		out[i] = m
	}
	return out
}
