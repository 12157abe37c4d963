package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// replayedIDs resumes sid with a replay and returns the ids of its user
// messages and of its agent messages, in order.
func replayedIDs(t *testing.T, p *proc, sid, cwd string) (users, agents []string) {
	t.Helper()
	resp, replay := p.Call(acpv2.MethodSessionResume, &acpv2.ResumeSessionRequest{SessionID: sid, CWD: cwd, ReplayFrom: &acpv2.ReplayFrom{Start: &acpv2.ReplayFromStart{}}})
	acptest.MustResult(t, resp, nil)
	for _, m := range replay {
		u := m.UpdateV2(t).Update
		switch {
		case u.UserMessage != nil:
			users = append(users, u.UserMessage.MessageID)
		case u.AgentMessage != nil:
			agents = append(agents, u.AgentMessage.MessageID)
		}
	}
	resp, _ = p.Call(acpv2.MethodSessionClose, &acpv2.CloseSessionRequest{SessionID: sid})
	acptest.MustResult(t, resp, nil)
	return users, agents
}

// TestBinaryV2MessageIDsAreStable: a message keeps its id: a prompt's
// (its answer's), a follow-up's (its user_message_chunks') and the
// model's (its agent_message_chunks') are the ids a replay after a
// restart sends them with, every time; a rewound message's place taken
// by a new one does not give the new one its id. A session file written
// before ids were kept replays with the same ids every time.
func TestBinaryV2MessageIDsAreStable(t *testing.T) {
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[greet]", "events": []any{map[string]any{"text": "Hello."}}},
		map[string]any{"events": []any{map[string]any{"text": "Later."}}},
	}})
	home, cwd := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home}
	p := startAgent(t, env, "--model", "replay/"+script)
	p.InitializeV2(nil)
	sid := p.NewSessionV2(cwd)
	chunkIDs := func(turn v2Turn) (user, agent string) {
		for _, m := range turn.msgs {
			if m.Method != acpv2.MethodSessionUpdate {
				continue
			}
			u := m.UpdateV2(t).Update
			if c := u.UserMessageChunk; c != nil {
				user = c.MessageID
			}
			if c := u.AgentMessageChunk; c != nil {
				agent = c.MessageID
			}
		}
		return user, agent
	}
	greet := promptV2(t, p, sid, "[greet] hi", false)
	_, greetAgent := chunkIDs(greet)
	// The follow-up's turn may run before the follow-up is answered.
	followUp := p.Request(acp.MethodExtSessionFollowUp, map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "and then"}}})
	later := readTurnV2(t, p, followUp, false, v2Turn{})
	laterUser, laterAgent := chunkIDs(later)
	require.NotEmpty(t, laterUser, "the follow-up is shown as user_message_chunks")
	require.NotEmpty(t, greetAgent)
	want := []string{greet.messageID, laterUser}
	wantAgents := []string{greetAgent, laterAgent}
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))

	for range 2 {
		p = startAgent(t, env, "--model", "replay/"+script)
		p.InitializeV2(nil)
		users, agents := replayedIDs(t, p, sid, cwd)
		assert.Equal(t, want, users)
		assert.Equal(t, wantAgents, agents)
		p.stdin.Close()
		require.NoError(t, p.waitExit(t, 10*time.Second))
	}

	// A rewind to before the follow-up, and a new prompt in its place.
	p = startAgent(t, env, "--model", "replay/"+script)
	p.InitializeV2(nil)
	resp, _ := p.Call(acpv2.MethodSessionResume, &acpv2.ResumeSessionRequest{SessionID: sid, CWD: cwd})
	acptest.MustResult(t, resp, nil)
	r, werr := ext(t, p, acp.MethodExtSessionForkable, map[string]any{"sessionId": sid})
	require.Nil(t, werr)
	msgs := r["messages"].([]any)
	require.Len(t, msgs, 2)
	_, werr = ext(t, p, acp.MethodExtSessionRewind, map[string]any{"sessionId": sid, "toUserEntryIndex": msgs[1].(map[string]any)["entryIndex"]})
	require.Nil(t, werr)
	again := promptV2(t, p, sid, "something else", false)
	assert.NotEqual(t, laterUser, again.messageID)
	resp, _ = p.Call(acpv2.MethodSessionClose, &acpv2.CloseSessionRequest{SessionID: sid})
	acptest.MustResult(t, resp, nil)
	users, _ := replayedIDs(t, p, sid, cwd)
	assert.Equal(t, []string{greet.messageID, again.messageID}, users)
}

// TestBinaryV2OldSessionFilesReplayWithTheSameIDs: the golden session
// files, written before message ids were kept, open under v2 and replay
// with the same ids at every resume.
func TestBinaryV2OldSessionFilesReplayWithTheSameIDs(t *testing.T) {
	dir := filepath.Join(goldenSessions, "conversation")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	sessions := t.TempDir()
	var sid string
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".jsonl" {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(sessions, e.Name()), data, 0o600))
			sid = e.Name()[:len(e.Name())-len(".jsonl")]
		}
	}
	p := startAgent(t, []string{"OPENAI_API_KEY=k", "ANTHROPIC_API_KEY=k"}, append(goldenConfig(t), "--session-dir", sessions)...)
	p.InitializeV2(nil)
	cwd := t.TempDir()
	users1, agents1 := replayedIDs(t, p, sid, cwd)
	users2, agents2 := replayedIDs(t, p, sid, cwd)
	require.NotEmpty(t, users1)
	require.NotEmpty(t, agents1)
	assert.Equal(t, users1, users2)
	assert.Equal(t, agents1, agents2)
}
