package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// sessionScript answers by the text of the last user message:
// "slow" streams two chunks 800 ms apart, "steered" answers a steer,
// anything else answers "ok: <n>".
func sessionScript(t *testing.T) string {
	return writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "slow", "events": []any{
			map[string]any{"text": "slow-1 "}, map[string]any{"text": "slow-2", "delayMs": 800},
		}},
		map[string]any{"match": "change course", "events": []any{map[string]any{"text": "steered answer"}}},
		map[string]any{"match": "second", "events": []any{map[string]any{"text": "second answer"}}},
		map[string]any{"events": []any{map[string]any{"text": "plain answer"}}},
	}})
}

func promptReq(sid, text string) *acp.PromptRequest {
	return &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}
}

type extResult map[string]any

// ext calls an extension method and decodes its result.
func ext(t *testing.T, p *proc, method string, params map[string]any) (extResult, *acptest.WireError) {
	t.Helper()
	resp, _ := p.Call(method, params)
	if resp.Error != nil {
		return nil, resp.Error
	}
	var r extResult
	require.NoError(t, json.Unmarshal(resp.Result, &r))
	return r, nil
}

func agentText(t *testing.T, msgs []acptest.Message) string { return textOf(t, msgs) }

func TestBinaryAdvertisesQueueingAndExtensions(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/default")
	init := p.Initialize(nil)
	var meta map[string]struct {
		PromptQueueing   bool     `json:"promptQueueing"`
		ExtensionMethods []string `json:"extensionMethods"`
	}
	require.NoError(t, json.Unmarshal(init.AgentCapabilities.Meta, &meta))
	assert.True(t, meta["acp-agent"].PromptQueueing)
	assert.Contains(t, meta["acp-agent"].ExtensionMethods, acp.MethodExtSessionSteer)
	assert.Contains(t, meta["acp-agent"].ExtensionMethods, acp.MethodExtSessionFork)
	assert.Equal(t, acp.ExtensionMethods(), meta["acp-agent"].ExtensionMethods, "every extension of the method table")
}

// TestBinaryQueuedPromptRunsAfterTheRunningOne: a session/prompt sent while
// a turn runs is queued as a follow-up, visible in pending, and answered
// after it has run; each response follows its own turn's updates.
func TestBinaryQueuedPromptRunsAfterTheRunningOne(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+sessionScript(t))
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	first := p.Request(acp.MethodSessionPrompt, promptReq(sid, "slow please"))
	assert.Equal(t, "slow-1 ", agentText(t, []acptest.Message{p.Next(), p.Next()}), "the title, then the text")
	second := p.Request(acp.MethodSessionPrompt, promptReq(sid, "second question"))

	pendingID := p.Request(acp.MethodExtSessionPending, map[string]any{"sessionId": sid})
	resp, before := p.Await(pendingID)
	assert.Empty(t, before)
	var pending struct {
		Count    int `json:"count"`
		Messages []struct {
			Source, Status, Preview string
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(resp.Result, &pending))
	require.Equal(t, 1, pending.Count)
	assert.Equal(t, "prompt_follow_up", pending.Messages[0].Source)
	assert.Equal(t, "queued", pending.Messages[0].Status)
	assert.Equal(t, "second question", pending.Messages[0].Preview)

	resp, before = p.Await(first)
	assert.JSONEq(t, `{"stopReason":"end_turn"}`, string(resp.Result))
	assert.Equal(t, "slow-2", agentText(t, before))
	resp, before = p.Await(second)
	assert.JSONEq(t, `{"stopReason":"end_turn"}`, string(resp.Result))
	assert.Equal(t, "second answer", agentText(t, before))
}

// TestBinaryCancelFailsQueuedPrompts: session/cancel ends the running turn
// and the queued prompt, both with "cancelled".
func TestBinaryCancelFailsQueuedPrompts(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+sessionScript(t))
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	first := p.Request(acp.MethodSessionPrompt, promptReq(sid, "slow please"))
	p.Next()
	second := p.Request(acp.MethodSessionPrompt, promptReq(sid, "second question"))
	p.Notify(acp.MethodSessionCancel, &acp.CancelNotification{SessionID: sid})
	// Both answer "cancelled"; their order is not defined (the queued one
	// has no updates, and JSON-RPC responses are matched by id).
	results := map[string]string{}
	for len(results) < 2 {
		if m := p.Next(); m.IsResponse() {
			results[string(m.ID)] = string(m.Result)
		}
	}
	for _, id := range []string{first, second} {
		assert.JSONEq(t, `{"stopReason":"cancelled"}`, results[id], "request %s", id)
	}
	// Nothing is left queued. (Whether the second prompt shows up as a
	// failed pending message depends on whether it reached the session
	// before the cancel did; the agent tests pin that down.)
	r, _ := ext(t, p, acp.MethodExtSessionPending, map[string]any{"sessionId": sid})
	assert.EqualValues(t, 0, r["count"])
}

// TestBinarySteerJoinsTheRunningTurn: a steer sent during a turn reaches
// the model inside that turn; the prompt's response comes after the
// steered answer.
func TestBinarySteerJoinsTheRunningTurn(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+sessionScript(t))
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	id := p.Request(acp.MethodSessionPrompt, promptReq(sid, "slow please"))
	// Steer once the turn streams (other updates may come first).
	for m := p.Next(); m.Method != acp.MethodSessionUpdate || m.Update(t).Update.AgentMessageChunk == nil; m = p.Next() {
	}
	// The steer may join the turn, and be shown, before it is answered.
	steer, early := p.Call(acp.MethodExtSessionSteer, map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "change course"}}})
	var r extResult
	acptest.MustResult(t, steer, &r)
	assert.EqualValues(t, 1, r["pendingMessages"])
	resp, before := p.Await(id)
	before = append(early, before...)
	assert.JSONEq(t, `{"stopReason":"end_turn"}`, string(resp.Result))
	var userEcho string
	for _, m := range before {
		if u := m.Update(t).Update.UserMessageChunk; u != nil {
			userEcho = u.Content.Text.Text
		}
	}
	assert.Equal(t, "change course", userEcho, "the steer message is shown to the client")
	assert.Equal(t, "slow-2steered answer", agentText(t, before))

	stats, _ := ext(t, p, acp.MethodExtSessionStats, map[string]any{"sessionId": sid})
	assert.EqualValues(t, 2, stats["userMessages"])
	assert.EqualValues(t, 2, stats["assistantMessages"])
	assert.EqualValues(t, 0, stats["pendingMessages"])
}

// TestBinaryIdleFollowUpRunsOnce: a follow-up sent while idle runs at once
// and appears exactly once in the transcript.
func TestBinaryIdleFollowUpRunsOnce(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+sessionScript(t))
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	// The follow-up's turn may stream before the follow-up is answered.
	followUp := p.Request(acp.MethodExtSessionFollowUp, map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hello there"}}})
	var got []string
	for answered := false; !answered || len(got) < 2; {
		m := p.Next()
		if m.IsResponse() && string(m.ID) == followUp {
			acptest.MustResult(t, m, nil)
			answered = true
			continue
		}
		u := m.Update(t).Update
		switch {
		case u.UserMessageChunk != nil:
			got = append(got, "user:"+u.UserMessageChunk.Content.Text.Text)
		case u.AgentMessageChunk != nil:
			got = append(got, "agent:"+u.AgentMessageChunk.Content.Text.Text)
		}
	}
	assert.Equal(t, []string{"user:hello there", "agent:plain answer"}, got)
	require.Eventually(t, func() bool {
		r, _ := ext(t, p, acp.MethodExtSessionPending, map[string]any{"sessionId": sid, "includeResolved": true})
		msgs := r["messages"].([]any)
		return len(msgs) == 1 && msgs[0].(map[string]any)["status"] == "resolved"
	}, waitBudget(t), 10*time.Millisecond)
	r, _ := ext(t, p, acp.MethodExtSessionForkable, map[string]any{"sessionId": sid})
	assert.Len(t, r["messages"], 1)
}

func TestBinaryInspectionMethods(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+sessionScript(t))
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	for _, q := range []string{"one", "two"} {
		resp, _ := p.Call(acp.MethodSessionPrompt, promptReq(sid, q))
		acptest.MustResult(t, resp, nil)
	}

	stats, _ := ext(t, p, acp.MethodExtSessionStats, map[string]any{"sessionId": sid})
	assert.Equal(t, sid, stats["sessionId"])
	assert.EqualValues(t, 2, stats["userMessages"])
	assert.EqualValues(t, 2, stats["assistantMessages"])
	assert.EqualValues(t, 4, stats["totalEntries"])
	assert.NotNil(t, stats["lastUpdatedAt"])
	assert.Equal(t, map[string]any{"prompt_follow_up": 0.0, "steer": 0.0, "follow_up": 0.0}, stats["pendingBreakdown"])

	events, _ := ext(t, p, acp.MethodExtSessionEvents, map[string]any{"sessionId": sid})
	evs := events["events"].([]any)
	require.Len(t, evs, 4)
	for i, e := range evs {
		ev := e.(map[string]any)
		assert.Equal(t, "message", ev["type"])
		assert.Equal(t, "transcript", ev["source"])
		assert.EqualValues(t, i, ev["entryIndex"])
	}

	forkable, _ := ext(t, p, acp.MethodExtSessionForkable, map[string]any{"sessionId": sid})
	assert.Equal(t, []any{
		map[string]any{"entryIndex": 0.0, "text": "one"},
		map[string]any{"entryIndex": 2.0, "text": "two"},
	}, forkable["messages"])

	tools, _ := ext(t, p, acp.MethodExtSessionTools, map[string]any{"sessionId": sid})
	assert.Equal(t, []any{"apply_patch", "ask_user", "background_command", "edit_file", "glob", "grep", "list_directory", "multi_edit", "read_file", "run_command", "task", "update_plan", "web_fetch", "write_file"},
		tools["activeToolNames"], "the built-in coding tools")
}

func TestBinaryForkExtension(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+sessionScript(t))
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	for _, q := range []string{"one", "two"} {
		resp, _ := p.Call(acp.MethodSessionPrompt, promptReq(sid, q))
		acptest.MustResult(t, resp, nil)
	}
	entries := func(id string) float64 {
		s, werr := ext(t, p, acp.MethodExtSessionStats, map[string]any{"sessionId": id})
		require.Nil(t, werr)
		return s["totalEntries"].(float64)
	}

	whole, werr := ext(t, p, acp.MethodExtSessionFork, map[string]any{"sessionId": sid})
	require.Nil(t, werr)
	wholeID := whole["sessionId"].(string)
	assert.NotEqual(t, sid, wholeID)
	assert.EqualValues(t, 4, entries(wholeID))

	part, werr := ext(t, p, acp.MethodExtSessionFork, map[string]any{"sessionId": sid, "fromUserEntryIndex": 2})
	require.Nil(t, werr)
	partID := part["sessionId"].(string)
	assert.EqualValues(t, 2, entries(partID), "only the context before the second user message")

	// The fork is a full session: it takes prompts, and the source is unchanged.
	resp, before := p.Call(acp.MethodSessionPrompt, promptReq(partID, "three"))
	acptest.MustResult(t, resp, nil)
	for _, m := range before {
		assert.Equal(t, partID, m.Update(t).SessionID)
	}
	assert.EqualValues(t, 4, entries(partID))
	assert.EqualValues(t, 4, entries(sid))

	_, werr = ext(t, p, acp.MethodExtSessionFork, map[string]any{"sessionId": sid, "fromUserEntryIndex": 1})
	require.NotNil(t, werr, "entry 1 is an assistant message")
	assert.Equal(t, acp.CodeInvalidParams, werr.Code)
	assert.JSONEq(t, `{"fromUserEntryIndex":1}`, string(werr.Data))
}

func TestBinaryExtensionErrors(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/default")
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	tests := []struct {
		name   string
		method string
		params map[string]any
		code   int64
		msg    string
	}{
		{"unknown session", acp.MethodExtSessionStats, map[string]any{"sessionId": "nope"}, acp.CodeResourceNotFound, "nope"},
		{"unknown session fork", acp.MethodExtSessionFork, map[string]any{"sessionId": "nope"}, acp.CodeResourceNotFound, "nope"},
		{"missing sessionId", acp.MethodExtSessionPending, map[string]any{}, acp.CodeInvalidParams, "sessionId"},
		{"unknown extension", "_acp-agent/session/bogus", map[string]any{"sessionId": sid}, acp.CodeMethodNotFound, "bogus"},
		{"steer without prompt", acp.MethodExtSessionSteer, map[string]any{"sessionId": sid}, acp.CodeInvalidParams, "prompt"},
		{"fork index out of range", acp.MethodExtSessionFork, map[string]any{"sessionId": sid, "fromUserEntryIndex": 7}, acp.CodeInvalidParams, "7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, werr := ext(t, p, tt.method, tt.params)
			require.NotNil(t, werr)
			assert.Equal(t, tt.code, werr.Code)
			assert.True(t, strings.Contains(werr.Message, tt.msg), "%q does not name %q", werr.Message, tt.msg)
		})
	}
}

func TestBinaryClearPendingCancelsQueueAndTurn(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+sessionScript(t))
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	first := p.Request(acp.MethodSessionPrompt, promptReq(sid, "slow please"))
	p.Next()
	second := p.Request(acp.MethodSessionPrompt, promptReq(sid, "second question"))
	clear := p.Request(acp.MethodExtSessionClearPending, map[string]any{"sessionId": sid, "cancelActivePrompt": true})
	results := map[string]string{}
	for len(results) < 3 {
		m := p.Next()
		if m.IsResponse() {
			results[string(m.ID)] = string(m.Result)
		}
	}
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, results[first])
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, results[second])
	assert.JSONEq(t, `{"queuedRemoved":1,"resolvedRemoved":0,"activePromptCancelled":true}`, results[clear])
}
