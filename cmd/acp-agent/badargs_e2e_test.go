package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// TestBinaryToolCallWithInvalidArgumentsIsShownAsItsTool (editor review):
// a call the model made with arguments that do not fit the tool's schema
// never runs; the client's entry names the tool and says its arguments
// were invalid, under the tool's usual kind (read, edit, execute, not
// "other"), and ends failed.
func TestBinaryToolCallWithInvalidArgumentsIsShownAsItsTool(t *testing.T) {
	call := func(id, name string, args map[string]any) map[string]any {
		return map[string]any{"toolCall": map[string]any{"id": id, "name": name, "arguments": args}}
	}
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "go", "events": []any{
			call("r", "read_file", map[string]any{"path": "a.txt", "bogus": true}),
			call("e", "edit_file", map[string]any{"path": 3}),
			call("x", "run_command", map[string]any{})}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--sandbox", "off")
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("go")}})
	shown := map[string]string{}  // tool name → "kind title" as announced
	status := map[string]string{} // toolCallId → last status
	for {
		m := p.Next()
		if m.IsResponse() && string(m.ID) == id {
			require.Nil(t, m.Error, "%s", m.Raw)
			break
		}
		require.NotEqual(t, acp.MethodSessionRequestPermission, m.Method, "a call with invalid arguments asks nothing")
		if m.Method != acp.MethodSessionUpdate {
			continue
		}
		u := m.Update(t).Update
		if tc := u.ToolCall; tc != nil {
			shown[string(tc.ToolCallID)] = string(tc.Kind) + " " + tc.Title
		}
		if tu := u.ToolCallUpdate; tu != nil && tu.Status != "" {
			status[string(tu.ToolCallID)] = string(tu.Status)
		}
	}
	assert.Equal(t, map[string]string{
		"r": "read read_file: invalid arguments",
		"e": "edit edit_file: invalid arguments",
		"x": "execute run_command: invalid arguments",
	}, shown)
	assert.Equal(t, map[string]string{"r": "failed", "e": "failed", "x": "failed"}, status)
}
