package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// askScript calls ask_user, then answers "ok" after the tool result.
func askScript(t *testing.T) string {
	return writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "which db", "events": []any{map[string]any{"toolCall": map[string]any{"id": "ask1", "name": "ask_user",
			"arguments": map[string]any{"question": "Which database should I use?", "choices": []string{"postgres", "sqlite"}, "allow_other": true}}}}},
		map[string]any{"events": []any{map[string]any{"text": "model went on"}}},
	}})
}

var formCaps = &acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{Form: &acp.ElicitationFormCapabilities{}}}

// awaitElicitation reads until the agent's elicitation/create.
func awaitElicitation(t *testing.T, p *proc) acptest.Message {
	t.Helper()
	for {
		if m := p.Next(); m.Method == acp.MethodElicitationCreate {
			return m
		}
	}
}

// toolResultText returns the final text content of tool call id among msgs.
func toolResultText(t *testing.T, msgs []acptest.Message, id string) (string, string) {
	t.Helper()
	var text, status string
	for _, m := range msgs {
		if m.Method != acp.MethodSessionUpdate {
			continue
		}
		u := m.Update(t).Update.ToolCallUpdate
		if u == nil || string(u.ToolCallID) != id {
			continue
		}
		if u.Status != "" {
			status = string(u.Status)
		}
		for _, c := range u.Content {
			if c.Content != nil && c.Content.Content.Text != nil {
				text = c.Content.Content.Text.Text
			}
		}
	}
	return text, status
}

// Issue 17: ask_user with a client that advertises form elicitation: the
// agent sends elicitation/create (form mode, tied to the session and the
// tool call, a schema built from the question and its choices; validated
// against the SDK 2.4.0 unstable schema) and gives the model the answer,
// the decline or the cancel.
func TestBinaryAskUserWithAForm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer any
		want   string
	}{
		{"accept", map[string]any{"action": "accept", "content": map[string]any{"answer": "sqlite", "other": "with WAL"}}, "The user answered: sqlite; with WAL"},
		{"decline", map[string]any{"action": "decline"}, "The user declined to answer"},
		{"cancel", map[string]any{"action": "cancel"}, "dismissed the question"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startAgent(t, nil, "--model", "replay/"+askScript(t))
			p.Initialize(formCaps)
			sid := p.NewSession(t.TempDir())
			id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("which db?")}})
			m := awaitElicitation(t, p)
			var req map[string]any
			require.NoError(t, json.Unmarshal(m.Params, &req))
			assert.Equal(t, "form", req["mode"])
			assert.Equal(t, sid, req["sessionId"])
			assert.Equal(t, "ask1", req["toolCallId"])
			assert.Equal(t, "Which database should I use?", req["message"])
			schema := req["requestedSchema"].(map[string]any)
			props := schema["properties"].(map[string]any)
			assert.Equal(t, []any{"postgres", "sqlite"}, props["answer"].(map[string]any)["enum"])
			assert.Contains(t, props, "other", "allow_other adds a free answer")
			p.Respond(m.ID, tc.answer)
			resp, before := p.Await(id)
			require.Nil(t, resp.Error)
			text, status := toolResultText(t, before, "ask1")
			assert.Equal(t, "completed", status)
			assert.Contains(t, text, tc.want)
			assert.Contains(t, textOf(t, before), "model went on", "the model got the answer and went on")
		})
	}
}

// Issue 17: cancelling the turn cancels the question: the agent sends
// $/cancel_request for its elicitation/create, and the prompt ends
// "cancelled".
func TestBinaryCancellingTheTurnCancelsTheQuestion(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+askScript(t))
	p.Initialize(formCaps)
	sid := p.NewSession(t.TempDir())
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("which db?")}})
	m := awaitElicitation(t, p)
	p.Notify(acp.MethodSessionCancel, &acp.CancelNotification{SessionID: sid})
	var cancelled bool
	for {
		n := p.Next()
		if n.Method == acp.MethodCancelRequest {
			var c struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			require.NoError(t, json.Unmarshal(n.Params, &c))
			assert.JSONEq(t, string(m.ID), string(c.RequestID), "the question's request is cancelled")
			cancelled = true
		}
		if n.IsResponse() && string(n.ID) == id {
			assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(n.Result))
			break
		}
	}
	assert.True(t, cancelled)
}

// Issue 17: without form elicitation, ask_user shows the question (and
// its choices) as the agent's message and ends the turn without calling
// the model again; the user's next prompt is the answer.
func TestBinaryAskUserWithoutAFormEndsTheTurn(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+askScript(t))
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("which db?")}})
	require.Nil(t, resp.Error)
	assert.JSONEq(t, `{"stopReason":"end_turn"}`, string(resp.Result))
	for _, m := range before {
		assert.NotEqual(t, acp.MethodElicitationCreate, m.Method, "nothing the client did not advertise")
	}
	text := textOf(t, before)
	assert.Contains(t, text, "Which database should I use?\n\n1. postgres\n2. sqlite")
	assert.NotContains(t, text, "model went on", "the model is not called again in this turn")
	_, status := toolResultText(t, before, "ask1")
	assert.Equal(t, "completed", status)

	resp, before = p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("sqlite")}})
	require.Nil(t, resp.Error)
	assert.Contains(t, textOf(t, before), "model went on")
	events, _ := ext(t, p, acp.MethodExtSessionEvents, map[string]any{"sessionId": sid})
	found := false
	for _, e := range events["events"].([]any) {
		e := e.(map[string]any)
		if e["role"] == "assistant" && strings.HasPrefix(e["text"].(string), "Which database should I use?") {
			found = true
		}
	}
	assert.True(t, found, "the question is part of the conversation")
}

// Issue 17: an MCP server's elicitation request (server-everything's
// trigger-elicitation-request, form mode) reaches the user as
// elicitation/create naming the server, with the server's schema; the
// answer goes back to the server, whose tool result shows it.
func TestBinaryMCPElicitationReachesTheUser(t *testing.T) {
	node, index := everything(t)
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "elicit", "events": []any{map[string]any{"toolCall": map[string]any{"id": "m1", "name": "mcp__everything__trigger-elicitation-request", "arguments": map[string]any{}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--mode", "full-access")
	p.Initialize(formCaps)
	resp, _ := p.Call(acp.MethodSessionNew, map[string]any{"cwd": t.TempDir(), "mcpServers": []any{
		map[string]any{"name": "everything", "command": node, "args": []string{index, "stdio"}, "env": []any{}}}})
	var ns acp.NewSessionResponse
	acptest.MustResult(t, resp, &ns)
	p.TakeCommands(ns.SessionID)
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: ns.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock("elicit something")}})
	m := awaitElicitation(t, p)
	var req map[string]any
	require.NoError(t, json.Unmarshal(m.Params, &req))
	assert.Equal(t, "form", req["mode"])
	assert.Equal(t, ns.SessionID, req["sessionId"])
	assert.True(t, strings.HasPrefix(req["message"].(string), `The MCP server "everything" asks: `), req["message"])
	props := req["requestedSchema"].(map[string]any)["properties"].(map[string]any)
	assert.Contains(t, props, "name")
	assert.Contains(t, props, "untitledMultipleSelectEnum")
	p.Respond(m.ID, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada Lovelace", "check": true, "integer": 7}})
	resp, before := p.Await(id)
	require.Nil(t, resp.Error)
	var result string
	for _, b := range before {
		if b.Method == acp.MethodSessionUpdate {
			if u := b.Update(t).Update.ToolCallUpdate; u != nil && u.ToolCallID == "m1" {
				raw, _ := json.Marshal(u.Content)
				result += string(raw)
			}
		}
	}
	assert.Contains(t, result, "Name: Ada Lovelace")
	assert.Contains(t, result, "Agreed to terms: true")
	assert.Contains(t, result, "Favorite Integer: 7")
}

// Issue 17: a server's URL-mode elicitation reaches a client that
// advertises URL elicitation as elicitation/create in URL mode, with the
// server's URL and elicitation id; a non-http(s) URL never reaches it.
func TestBinaryMCPURLElicitation(t *testing.T) {
	node, index := everything(t)
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "open link", "events": []any{map[string]any{"toolCall": map[string]any{"id": "u1", "name": "mcp__everything__trigger-url-elicitation",
			"arguments": map[string]any{"url": "https://example.com/authorize?x=1", "message": "Authorize me", "elicitationId": "el-42"}}}}},
		map[string]any{"match": "bad link", "events": []any{map[string]any{"toolCall": map[string]any{"id": "u2", "name": "mcp__everything__trigger-url-elicitation",
			"arguments": map[string]any{"url": "javascript:alert(1)", "elicitationId": "el-43"}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--mode", "full-access")
	p.Initialize(&acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{URL: &acp.ElicitationUrlCapabilities{}}})
	resp, _ := p.Call(acp.MethodSessionNew, map[string]any{"cwd": t.TempDir(), "mcpServers": []any{
		map[string]any{"name": "everything", "command": node, "args": []string{index, "stdio"}, "env": []any{}}}})
	var ns acp.NewSessionResponse
	acptest.MustResult(t, resp, &ns)
	p.TakeCommands(ns.SessionID)
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: ns.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock("open link")}})
	m := awaitElicitation(t, p)
	var req map[string]any
	require.NoError(t, json.Unmarshal(m.Params, &req))
	assert.Equal(t, "url", req["mode"])
	assert.Equal(t, "https://example.com/authorize?x=1", req["url"])
	assert.Equal(t, "el-42", req["elicitationId"])
	assert.Contains(t, req["message"], `The MCP server "everything" asks: Authorize me`)
	p.Respond(m.ID, map[string]any{"action": "accept"})
	resp, _ = p.Await(id)
	require.Nil(t, resp.Error)

	resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: ns.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock("bad link")}})
	require.Nil(t, resp.Error)
	for _, b := range before {
		assert.NotEqual(t, acp.MethodElicitationCreate, b.Method, "a javascript: URL is not shown to the user")
	}
}
