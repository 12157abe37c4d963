package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// TestBinaryToolCallIDsStayUniqueWhenTheModelRepeatsThem: ACP's
// toolCallId names one tool call within the session, and a client keys
// its entries (and the permission question it shows) by it. A model (a
// hostile one, or a local one that numbers every response's calls from
// call_0) that gives two calls the same id, in one response or in a later
// turn, must not make a permission question land on another call's entry
// nor one call's updates overwrite another's: the agent gives a repeated
// id a fresh one, for the client and the transcript alike.
func TestBinaryToolCallIDsStayUniqueWhenTheModelRepeatsThem(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("AAA\n"), 0o644))
	call := func(name string, args map[string]any) map[string]any {
		return map[string]any{"toolCall": map[string]any{"id": "dup", "name": name, "arguments": args}}
	}
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[one]", "events": []any{
			call("read_file", map[string]any{"path": "a.txt"}),
			call("write_file", map[string]any{"path": "b.txt", "content": "BBB\n"})}},
		map[string]any{"match": "[two]", "events": []any{call("read_file", map[string]any{"path": "a.txt"})}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--sandbox", "off")
	p.Initialize(nil)
	sid := p.NewSession(ws)

	titles := map[string][]string{} // tool_call id → titles announced with it
	var asked []string              // the toolCallIds of permission questions
	run := func(text string) { promptNotingToolCalls(t, p, sid, text, titles, &asked) }
	run("[one]")
	run("[two]")

	assert.Len(t, titles, 3, "three calls, three ids: %v", titles)
	for id, ts := range titles {
		assert.Len(t, ts, 1, "one tool call announced as %s: %v", id, ts)
	}
	require.Len(t, asked, 1)
	assert.Len(t, titles[asked[0]], 1)
	if ts := titles[asked[0]]; len(ts) == 1 {
		assert.Contains(t, ts[0], "b.txt", "the question is about the write, on its own entry")
	}
	data, err := os.ReadFile(filepath.Join(ws, "b.txt"))
	require.NoError(t, err)
	assert.Equal(t, "BBB\n", string(data))
}

// TestBinaryToolCallIDsStayUniqueAcrossAClear: a /clear empties the
// context, not the client's view of the session: a call of the next turn
// that repeats an id of a call before the /clear gets a fresh one too.
func TestBinaryToolCallIDsStayUniqueAcrossAClear(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("AAA\n"), 0o644))
	read := map[string]any{"toolCall": map[string]any{"id": "dup", "name": "read_file", "arguments": map[string]any{"path": "a.txt"}}}
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[one]", "events": []any{read}},
		map[string]any{"match": "[two]", "events": []any{read}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--sandbox", "off")
	p.Initialize(nil)
	sid := p.NewSession(ws)
	titles := map[string][]string{}
	var asked []string
	for _, text := range []string{"[one]", "/clear", "[two]"} {
		promptNotingToolCalls(t, p, sid, text, titles, &asked)
	}
	assert.Len(t, titles, 2, "two calls, two ids: %v", titles)
}

// promptNotingToolCalls sends text as a prompt and waits for its
// response, noting the titles each tool call id was announced with and
// the ids of the permission questions (each allowed once).
func promptNotingToolCalls(t *testing.T, p *proc, sid string, text string, titles map[string][]string, asked *[]string) {
	t.Helper()
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	for {
		m := p.Next()
		if m.IsResponse() && string(m.ID) == id {
			require.Nil(t, m.Error, "%s", m.Raw)
			return
		}
		switch m.Method {
		case acp.MethodSessionUpdate:
			if tc := m.Update(t).Update.ToolCall; tc != nil {
				titles[string(tc.ToolCallID)] = append(titles[string(tc.ToolCallID)], tc.Title)
			}
		case acp.MethodSessionRequestPermission:
			var req acp.RequestPermissionRequest
			require.NoError(t, json.Unmarshal(m.Params, &req))
			*asked = append(*asked, string(req.ToolCall.ToolCallID))
			p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
		}
	}
}
