package acpagent_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/persistence"
)

// _acp-agent/structured: the answer streams as completed values with their
// paths, and the result is coerced ("3" → 3) and validated.
func TestStructuredExtensionStreamsPathsAndValidates(t *testing.T) {
	answer := "Here you go:\n```json\n{\"title\": \"Fix the build\", \"steps\": [\"run go vet\", \"fix imports\"], \"estimate\": \"3\"}\n```"
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		// Stream it in small pieces, to exercise the incremental parse.
		var chunks []string
		for i := 0; i < len(answer); i += 7 {
			chunks = append(chunks, textChunk(answer[i:min(i+7, len(answer))]))
		}
		sse(w, append(chunks, finishChunk("stop")), true)
	})
	c := client(t, srv, nil)
	c.Initialize(nil)
	sid := c.NewSession(t.TempDir())
	schema := json.RawMessage(`{"type":"object","properties":{
		"title":{"type":"string","description":"a short title"},
		"steps":{"type":"array","items":{"type":"string"}},
		"estimate":{"type":"integer","description":"hours"}},"required":["title","steps","estimate"]}`)
	resp, updates := c.Call("_acp-agent/structured", map[string]any{"sessionId": sid, "prompt": "Plan the fix", "output": schema})
	var res struct {
		Value map[string]any `json:"value"`
	}
	require.Nil(t, resp.Error, "%s", resp.Raw)
	require.NoError(t, json.Unmarshal(resp.Result, &res))
	assert.Equal(t, map[string]any{"title": "Fix the build", "steps": []any{"run go vet", "fix imports"}, "estimate": float64(3)}, res.Value)

	var paths []string
	for _, m := range updates {
		u := m.Update(t).Update
		if u.AgentMessageChunk == nil {
			continue
		}
		var meta struct {
			Agent struct {
				Path     string `json:"path"`
				Complete bool   `json:"complete"`
			} `json:"acp-agent"`
		}
		require.NoError(t, json.Unmarshal(u.AgentMessageChunk.Meta, &meta))
		paths = append(paths, meta.Agent.Path)
	}
	assert.Equal(t, []string{"/title", "/steps/0", "/steps/1", "/steps", "/estimate", ""}, paths)
	body, _ := json.Marshal(srv.Request(t, 0).Body)
	assert.Contains(t, string(body), "[OUTPUT REQUIREMENT]", "seed 004's prompt layout")
	assert.Contains(t, string(body), "Data Format: JSON")

	// A bad schema is invalid params; an answer that does not match names
	// the path.
	resp, _ = c.Call("_acp-agent/structured", map[string]any{"sessionId": sid, "prompt": "x", "output": json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/x"}}}`)})
	require.NotNil(t, resp.Error)
	assert.Equal(t, int64(acp.CodeInvalidParams), resp.Error.Code)
}

// With ModelTitles, the model names the session after its first turn
// (structured output); the title reaches the client and the session list.
func TestModelTitlesUseStructuredOutput(t *testing.T) {
	var srv *openAIServer
	srv = newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		body, _ := json.Marshal(srv.Request(t, n-1).Body)
		if bytes.Contains(body, []byte("Give this conversation a short title")) {
			sse(w, []string{textChunk(`{"title": "Weather in Paris"}`), finishChunk("stop")}, true)
			return
		}
		sse(w, []string{textChunk("It is sunny."), finishChunk("stop")}, true)
	})
	store, err := persistence.OpenStore(t.TempDir())
	require.NoError(t, err)
	c := client(t, srv, nil, func(cfg *acpagent.Config) { cfg.ModelTitles, cfg.Store = true, store })
	c.Initialize(nil)
	sid := c.NewSession(t.TempDir())
	resp, _ := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("what's the weather like in paris today?")))
	acptest.MustResult(t, resp, nil)
	m := c.Next()
	u := m.Update(t).Update
	require.NotNil(t, u.SessionInfoUpdate, "%s", m.Raw)
	assert.Equal(t, "Weather in Paris", u.SessionInfoUpdate.Title.Value)
	list := listSessions(t, c, "", "")
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, "Weather in Paris", list.Sessions[0].Title)
	// The title question is not part of the conversation.
	resp, _ = c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("and tomorrow?")))
	acptest.MustResult(t, resp, nil)
	last, _ := json.Marshal(srv.Request(t, 2).Body)
	assert.NotContains(t, string(last), "short title")
}
