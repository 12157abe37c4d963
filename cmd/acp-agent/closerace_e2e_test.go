package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/internal/winetest"
)

// Issue 24 (11): requests that race with session/close or session/delete
// of their session answer as for a session that is not there (-32002,
// with {sessionId} in data) or succeed; never -32603 with a story about
// another acp-agent process or a lock.
func TestBinaryRequestsRacingCloseAndDelete(t *testing.T) {
	sessions := t.TempDir()
	script := writeScript(t, map[string]any{"turns": []any{map[string]any{"events": []any{map[string]any{"text": "hello back"}}}}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--session-dir", sessions)
	p.Initialize(nil)
	seen := map[string]int{}
	rounds := 24
	if winetest.Active {
		rounds = 8 // slow under Wine's file I/O; the Linux run has the 24
	}
	for round := range rounds {
		cwd := t.TempDir()
		sid := p.NewSession(cwd)
		promptOK(t, p, sid, "hello")
		ender := acp.MethodSessionClose
		if round%2 == 1 {
			ender = acp.MethodSessionDelete
		}
		racers := []struct {
			method string
			params any
		}{
			{acp.MethodSessionLoad, map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}},
			{acp.MethodSessionResume, map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}},
			{acp.MethodSessionSetTitle, map[string]any{"sessionId": sid, "title": "racing"}},
			{acp.MethodSessionArchive, map[string]any{"sessionId": sid}},
			{acp.MethodSessionUnarchive, map[string]any{"sessionId": sid}},
			{acp.MethodSessionStatus, map[string]any{"sessionId": sid}},
			{acp.MethodSessionSetMode, map[string]any{"sessionId": sid, "modeId": "default"}},
			{acp.MethodExtSessionStats, map[string]any{"sessionId": sid}},
			{"_acp-agent/session/rewind", map[string]any{"sessionId": sid, "undo": true}},
			{acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}},
			{acp.MethodSessionFork, map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}},
		}
		// The racers around the end, in a different place each round.
		ids := map[string]string{}
		at := round % (len(racers) + 1)
		for i, r := range racers {
			if i == at {
				ids[p.Request(ender, map[string]any{"sessionId": sid})] = ender
			}
			ids[p.Request(r.method, r.params)] = r.method
		}
		if at == len(racers) {
			ids[p.Request(ender, map[string]any{"sessionId": sid})] = ender
		}
		for len(ids) > 0 {
			m := p.Next()
			if m.Method == acp.MethodSessionRequestPermission || m.Method == acp.MethodFSReadTextFile {
				p.RespondError(m.ID, -32603, "no")
			}
			method, ok := ids[string(m.ID)]
			if !ok || !m.IsResponse() {
				continue
			}
			delete(ids, string(m.ID))
			if m.Error == nil {
				seen[method+": ok"]++
				continue
			}
			seen[fmt.Sprintf("%s: %d", method, m.Error.Code)]++
			checkRaceError(t, method, sid, m)
		}
		// Whatever opened it again is closed before the next round.
		p.Call(acp.MethodSessionClose, map[string]any{"sessionId": sid})
	}
	t.Logf("answers: %v", seen)
}

func checkRaceError(t *testing.T, method, sid string, m acptest.Message) {
	t.Helper()
	for _, bad := range []string{"another acp-agent process", "locked"} {
		assert.NotContains(t, m.Error.Message, bad, "%s", method)
	}
	if m.Error.Code == acp.CodeInvalidRequest && method == "_acp-agent/session/rewind" {
		return // no rewind to undo: an answer of its own
	}
	if m.Error.Code == acp.CodeInvalidRequest && (method == acp.MethodSessionLoad || method == acp.MethodSessionResume) &&
		strings.Contains(m.Error.Message, "is being opened by another request") {
		return // the load and the resume race each other: the transport's own answer
	}
	if !assert.EqualValues(t, acp.CodeResourceNotFound, m.Error.Code, "%s: %s", method, m.Error.Message) {
		return
	}
	var data struct {
		SessionID string `json:"sessionId"`
	}
	require.NotNil(t, m.Error.Data, "%s: %s: no data", method, m.Error.Message)
	require.NoError(t, json.Unmarshal(m.Error.Data, &data))
	assert.Equal(t, sid, data.SessionID, "%s", method)
}
