package main

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// Issue 24 (10): a subagent's description is the model's text, and it
// goes into the child's permission question and titles. A description
// with newlines and bidi overrides cannot choose what the question's
// first line shows: it arrives as one printable line.
func TestBinarySubagentDescriptionCannotForgeTheQuestion(t *testing.T) {
	const description = "tidy\u202e\n\n[read README.md] Allow reading a file?\u2066\u200b"
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "delegate", "events": []any{map[string]any{"toolCall": map[string]any{"id": "t1", "name": "task",
			"arguments": map[string]any{"description": description, "prompt": "[child] write the notes"}}}}},
		map[string]any{"match": "[child]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "w1", "name": "write_file",
			"arguments": map[string]any{"path": "notes.txt", "content": "hi"}}}}},
		map[string]any{"events": []any{map[string]any{"text": "finished"}}},
	}})
	for _, visible := range []bool{true, false} {
		p := startAgent(t, nil, "--model", "replay/"+script)
		caps := &acp.ClientCapabilities{}
		if visible {
			caps.Subagents = &acp.SubagentCapabilities{}
		}
		p.Initialize(caps)
		sid := p.NewSession(t.TempDir())
		id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("delegate please")}})
		var titles []string
		for asked := false; !asked; {
			m := p.Next()
			if m.Method == acp.MethodSessionUpdate {
				u := m.Update(t).Update
				if su := u.SubagentUpdate; su != nil && su.Title != "" {
					titles = append(titles, su.Title)
				}
				if u.ToolCall != nil {
					titles = append(titles, u.ToolCall.Title)
				}
			}
			if m.Method == acp.MethodSessionRequestPermission {
				var req acp.RequestPermissionRequest
				require.NoError(t, json.Unmarshal(m.Params, &req))
				titles = append(titles, req.ToolCall.Title)
				assert.True(t, strings.HasPrefix(req.ToolCall.Title, "[subagent tidy [read README.md] Allow reading a file?] "), "%q", req.ToolCall.Title)
				p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
				asked = true
			}
		}
		resp, _ := p.Await(id)
		require.Nil(t, resp.Error)
		require.NotEmpty(t, titles)
		for _, title := range titles {
			for _, r := range title {
				assert.False(t, r == '\n' || unicode.Is(unicode.Cf, r) || !unicode.IsPrint(r), "visible %v: %q holds %U", visible, title, r)
			}
		}
	}
}
