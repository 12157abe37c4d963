package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// TestBinaryV2ServesTheExtensions: a v2 connection advertises and serves
// the acp-agent extension methods as v1 does: forkable messages, a
// rewind, stats, a fork from a user message, a follow-up with v2 content
// blocks (its turn reported by state_updates), and a structured answer
// streamed as v2 agent_message_chunks with their paths, between running
// and idle. Every message is checked against the v2 schema.
func TestBinaryV2ServesTheExtensions(t *testing.T) {
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[first]", "events": []any{map[string]any{"text": "first answer"}}},
		map[string]any{"match": "[second]", "events": []any{map[string]any{"text": "second answer"}}},
		map[string]any{"match": "[plan]", "events": []any{map[string]any{"text": "```json\n{\"title\": \"Fix it\", \"steps\": [\"vet\"]}\n```"}}},
		map[string]any{"events": []any{map[string]any{"text": "later answer"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script)
	init := p.InitializeV2(nil)
	var meta map[string]struct {
		PromptQueueing   bool     `json:"promptQueueing"`
		ExtensionMethods []string `json:"extensionMethods"`
	}
	require.NoError(t, json.Unmarshal(init.Meta, &meta))
	assert.True(t, meta["acp-agent"].PromptQueueing, "v2 initialize advertises prompt queueing")
	assert.Equal(t, acp.ExtensionMethodsV2(), meta["acp-agent"].ExtensionMethods)
	for _, m := range []string{acp.MethodExtSessionRewind, acp.MethodExtStructured, acp.MethodExtSessionFork, acp.MethodExtSessionSteer} {
		assert.Contains(t, meta["acp-agent"].ExtensionMethods, m)
	}
	cwd := t.TempDir()
	sid := p.NewSessionV2(cwd)
	promptV2(t, p, sid, "[first] go", false)
	promptV2(t, p, sid, "[second] go", false)

	r, werr := ext(t, p, acp.MethodExtSessionForkable, map[string]any{"sessionId": sid})
	require.Nil(t, werr)
	var forkable struct {
		Messages []struct {
			EntryIndex int    `json:"entryIndex"`
			Text       string `json:"text"`
		} `json:"messages"`
	}
	data, _ := json.Marshal(r)
	require.NoError(t, json.Unmarshal(data, &forkable))
	require.Len(t, forkable.Messages, 2)
	second := forkable.Messages[1].EntryIndex

	resp, _ := p.Call(acp.MethodExtSessionFork, map[string]any{"sessionId": sid, "fromUserEntryIndex": second})
	var fork acpv2.ForkSessionResponse
	acptest.MustResult(t, resp, &fork)
	r, werr = ext(t, p, acp.MethodExtSessionForkable, map[string]any{"sessionId": fork.SessionID})
	require.Nil(t, werr)
	data, _ = json.Marshal(r)
	require.NoError(t, json.Unmarshal(data, &forkable))
	require.Len(t, forkable.Messages, 1, "the fork keeps what came before the second message")

	r, werr = ext(t, p, acp.MethodExtSessionRewind, map[string]any{"sessionId": sid, "toUserEntryIndex": second})
	require.Nil(t, werr, "%v", werr)
	assert.Equal(t, "[second] go", r["prompt"])
	r, werr = ext(t, p, acp.MethodExtSessionStats, map[string]any{"sessionId": sid})
	require.Nil(t, werr)
	assert.NotEmpty(t, r)

	// A follow-up with v2 content blocks starts a turn of its own. Its
	// turn may run, even to its end, before the follow-up is answered:
	// the turn is read with the answer, in whatever order they come.
	followUp := p.Request(acp.MethodExtSessionFollowUp, map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "and later"}}})
	turn := readTurnV2(t, p, followUp, false, v2Turn{})
	assert.Equal(t, "later answer", turn.text)
	assert.Equal(t, "state_update:running", firstOf(turn.kinds, "state_update"))

	schema := json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"steps":{"type":"array","items":{"type":"string"}}},"required":["title","steps"]}`)
	resp, before := p.Call(acp.MethodExtStructured, map[string]any{"sessionId": sid, "prompt": "[plan] the fix", "output": schema})
	var res struct {
		Value map[string]any `json:"value"`
	}
	acptest.MustResult(t, resp, &res)
	assert.Equal(t, map[string]any{"title": "Fix it", "steps": []any{"vet"}}, res.Value)
	var kinds, paths []string
	for _, m := range before {
		kinds = append(kinds, v2Kind(t, m))
		if c := m.UpdateV2(t).Update.AgentMessageChunk; c != nil {
			var cm struct {
				Agent struct {
					Path string `json:"path"`
				} `json:"acp-agent"`
			}
			require.NoError(t, json.Unmarshal(c.Meta, &cm))
			paths = append(paths, cm.Agent.Path)
		}
	}
	assert.Equal(t, []string{"/title", "/steps/0", "/steps", ""}, paths)
	assert.Equal(t, "state_update:running", firstOf(kinds, "state_update"), "%v", kinds)
	if indexOf(kinds, "state_update:idle:end_turn") < 0 {
		// The idle update may follow the answer.
		m := p.Next()
		assert.Equal(t, "state_update:idle:end_turn", v2Kind(t, m))
	}

	_, werr = ext(t, p, acp.MethodExtSessionRewind, map[string]any{"sessionId": "nope", "toUserEntryIndex": 0})
	require.NotNil(t, werr)
	assert.Equal(t, int64(acp.CodeResourceNotFound), werr.Code)
}
