package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

func promptText(t *testing.T, p *proc, sid, text string) []acptest.Message {
	t.Helper()
	resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	require.Nil(t, resp.Error, "prompt")
	return before
}

// listed returns the listed sessions by id.
func listed(t *testing.T, p *proc, archived string) map[string]acp.SessionInfo {
	t.Helper()
	resp, _ := p.Call(acp.MethodSessionList, map[string]any{"archived": archived})
	var r acp.ListSessionsResponse
	acptest.MustResult(t, resp, &r)
	out := map[string]acp.SessionInfo{}
	for _, s := range r.Sessions {
		require.NotNil(t, s.Archived, "archived is reported on every listed session")
		out[s.SessionID] = s
	}
	return out
}

func status(t *testing.T, p *proc, sid string) (string, *acptest.WireError) {
	t.Helper()
	resp, _ := p.Call(acp.MethodSessionStatus, map[string]any{"sessionId": sid})
	if resp.Error != nil {
		return "", resp.Error
	}
	var r acp.SessionStatusResponse
	acptest.MustResult(t, resp, &r)
	return r.Status, nil
}

// Issue 17: session/set_title, session/status and session/archive /
// unarchive, as the npm SDK 2.4.0 unstable schema has them (every result
// is validated against it): a title the user sets is stored, normalized,
// kept over the first-line title and across a restart; status says open
// or saved without opening anything; archived sessions leave the default
// list, and archiving a live one closes it.
func TestBinarySessionTitleStatusArchive(t *testing.T) {
	dir := t.TempDir()
	// With modelTitles, the model names each session after its first turn.
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "short title", "events": []any{map[string]any{"text": `{"title": "Model Title"}`}}},
		map[string]any{"events": []any{map[string]any{"text": "ok"}}},
	}})
	config := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"modelTitles": true}`), 0o600))
	args := []string{"--model", "replay/" + script, "--session-dir", dir, "--config", config}
	p := startAgent(t, nil, args...)
	init := p.Initialize(nil)
	sc := init.AgentCapabilities.SessionCapabilities
	require.NotNil(t, sc.Title)
	require.NotNil(t, sc.Status)
	require.NotNil(t, sc.Archive)
	assert.JSONEq(t, `{"steering":{"supported":true}}`, string(init.Meta))

	a := p.NewSession(t.TempDir())
	promptText(t, p, a, "first line of a\nmore")
	b := p.NewSession(t.TempDir())
	resp, _ := p.Call(acp.MethodSessionSetTitle, map[string]any{"sessionId": b, "title": "  Chosen \n  by   me  "})
	var tr acp.SetSessionTitleResponse
	acptest.MustResult(t, resp, &tr)
	assert.Equal(t, "Chosen by me", tr.Title, "normalized")
	promptText(t, p, b, "hello there")
	// A second prompt each: the model's title is asked for between turns.
	promptText(t, p, a, "again")
	promptText(t, p, b, "again")
	l := listed(t, p, "")
	assert.Equal(t, "Model Title", l[a].Title, "the agent titles a session the user did not")
	assert.Equal(t, "Chosen by me", l[b].Title, "the user's title is kept over the agent's")
	assert.False(t, *l[a].Archived)

	for name, params := range map[string]any{
		"empty title":    map[string]any{"sessionId": b, "title": " \n "},
		"null title":     map[string]any{"sessionId": b, "title": nil},
		"missing title":  map[string]any{"sessionId": b},
		"bad session id": map[string]any{"sessionId": "../x", "title": "t"},
	} {
		resp, _ := p.Call(acp.MethodSessionSetTitle, params)
		require.NotNil(t, resp.Error, name)
		assert.EqualValues(t, -32602, resp.Error.Code, name)
	}
	resp, _ = p.Call(acp.MethodSessionList, map[string]any{"archived": "bogus"})
	require.NotNil(t, resp.Error)
	assert.EqualValues(t, -32602, resp.Error.Code)

	// Status: open, saved after close, -32002 with the id for an unknown one.
	st, _ := status(t, p, a)
	assert.Equal(t, "open", st)
	resp, _ = p.Call(acp.MethodSessionClose, map[string]any{"sessionId": a})
	require.Nil(t, resp.Error)
	st, _ = status(t, p, a)
	assert.Equal(t, "saved", st)
	_, werr := status(t, p, "no-such-session")
	require.NotNil(t, werr)
	assert.EqualValues(t, -32002, werr.Code)
	assert.JSONEq(t, `{"sessionId":"no-such-session"}`, string(werr.Data))
	st, _ = status(t, p, a)
	assert.Equal(t, "saved", st, "status opened nothing")

	// A stored session can be retitled.
	resp, _ = p.Call(acp.MethodSessionSetTitle, map[string]any{"sessionId": a, "title": "Renamed while closed"})
	require.Nil(t, resp.Error)
	assert.Equal(t, "Renamed while closed", listed(t, p, "")[a].Title)

	// Archive: a stored one, and a live one (closed first).
	for _, id := range []string{a, b} {
		resp, _ = p.Call(acp.MethodSessionArchive, map[string]any{"sessionId": id})
		require.Nil(t, resp.Error)
	}
	st, _ = status(t, p, b)
	assert.Equal(t, "saved", st, "archiving a live session closes it")
	resp, _ = p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: b, Prompt: []acp.ContentBlock{acp.TextBlock("x")}})
	require.NotNil(t, resp.Error, "the archived session is no longer open")
	assert.Empty(t, listed(t, p, ""), "archived sessions are hidden by default")
	assert.Empty(t, listed(t, p, "exclude"))
	only := listed(t, p, "only")
	assert.Len(t, only, 2)
	assert.True(t, *only[a].Archived)
	assert.Len(t, listed(t, p, "include"), 2)
	resp, _ = p.Call(acp.MethodSessionArchive, map[string]any{"sessionId": a})
	require.Nil(t, resp.Error, "archiving an archived session succeeds")
	resp, _ = p.Call(acp.MethodSessionUnarchive, map[string]any{"sessionId": a})
	require.Nil(t, resp.Error)
	l = listed(t, p, "")
	require.Contains(t, l, a)
	assert.False(t, *l[a].Archived)
	resp, _ = p.Call(acp.MethodSessionArchive, map[string]any{"sessionId": "no-such-session"})
	require.NotNil(t, resp.Error)
	assert.EqualValues(t, -32002, resp.Error.Code)

	// After a restart, the user's title still stops the agent's titles.
	p.Stop()
	q := startAgent(t, nil, args...)
	q.Initialize(nil)
	resp, _ = q.Call(acp.MethodSessionResume, map[string]any{"sessionId": b, "cwd": t.TempDir(), "mcpServers": []any{}})
	require.Nil(t, resp.Error)
	promptText(t, q, b, "another prompt")
	promptText(t, q, b, "and another")
	assert.Equal(t, "Chosen by me", listed(t, q, "include")[b].Title, "the user's title stays after a restart")
}

// Issue 17: _session/steering, as claude-agent-acp and codex-acp answer
// it: idle, the client is told to prompt (or, asked to, a turn starts);
// during a turn the message joins it before its next model call.
func TestBinarySteeringExtension(t *testing.T) {
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"events": []any{map[string]any{"text": "slow first answer", "delayMs": 1500}}},
		map[string]any{"events": []any{map[string]any{"text": "answer after the steer"}}},
		map[string]any{"events": []any{map[string]any{"text": "a new turn"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script)
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	var beforeSteer []acptest.Message // what came before the last steer's answer
	steer := func(meta any) map[string]any {
		params := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "use tabs, not spaces"}}}
		if meta != nil {
			params["_meta"] = meta
		}
		resp, before := p.Call(acp.MethodSessionSteering, params)
		require.Nil(t, resp.Error)
		beforeSteer = before
		var out map[string]any
		require.NoError(t, json.Unmarshal(resp.Result, &out))
		return out
	}
	assert.Equal(t, map[string]any{"outcome": "promptRequired", "reason": "noRunningTurn"}, steer(nil))

	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("start")}})
	time.Sleep(300 * time.Millisecond) // the first answer takes 1.5 s
	assert.Equal(t, map[string]any{"outcome": "injected"}, steer(nil))
	resp, before := p.Await(id)
	require.Nil(t, resp.Error)
	text := textOf(t, before)
	assert.Contains(t, text, "slow first answer")
	assert.Contains(t, text, "answer after the steer", "the steer made the turn go on within the same prompt")

	assert.Equal(t, map[string]any{"outcome": "startedNewTurn"}, steer(map[string]any{"steering": map[string]any{"idleBehavior": "startNewTurn"}}))
	deadline := time.After(waitBudget(t))
	var got string
	for got == "" {
		// The new turn may speak before the steer is answered.
		m, ok := acptest.Message{}, false
		if len(beforeSteer) > 0 {
			m, ok, beforeSteer = beforeSteer[0], true, beforeSteer[1:]
		} else {
			m, ok = p.NextWithin(time.Second)
		}
		if ok && m.Method == acp.MethodSessionUpdate {
			if c := m.Update(t).Update.AgentMessageChunk; c != nil {
				got = c.Content.Text.Text
			}
		}
		select {
		case <-deadline:
			t.Fatal("the steer did not start a turn")
		default:
		}
	}
	assert.Equal(t, "a new turn", got)
}
