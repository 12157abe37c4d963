package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// longAnswerScript answers every prompt at length, so that a handful of
// turns gives a compaction something to summarize.
func longAnswerScript(t *testing.T) string {
	t.Helper()
	return writeScript(t, map[string]any{"turns": []any{
		map[string]any{"events": []any{map[string]any{"text": "Answer. " + strings.Repeat("A long answer that fills the context. ", 60)}}},
	}})
}

// TestBinaryRewindAfterACompactionSaysWhereItReaches: after a day's work
// and a /compact, /rewind lists only the messages since the compaction
// (the ones it summarized are no longer in the conversation). It used to
// list them without a word, so the morning's messages were simply
// missing; now the list, and an empty one, say that the earlier messages
// were compacted and a rewind reaches back only to the messages since.
// The same holds after the session is loaded in a new process.
func TestBinaryRewindAfterACompactionSaysWhereItReaches(t *testing.T) {
	script, sessions, cwd := longAnswerScript(t), t.TempDir(), t.TempDir()
	start := func() *proc {
		p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + sessions}, "--model", "replay/"+script)
		p.Initialize(nil)
		return p
	}
	const horizon = "Your earlier messages were compacted into a summary: a rewind reaches back only to the messages since."
	p := start()
	sid := p.NewSession(cwd)
	for i := 1; i <= 6; i++ {
		askText(t, p, sid, fmt.Sprintf("question %d", i))
	}
	before := askText(t, p, sid, "/rewind")
	assert.Contains(t, before, "/rewind 1  question 1")
	assert.NotContains(t, before, horizon, "no compaction yet")
	require.Contains(t, askText(t, p, sid, "/compact"), "Compacted")

	list := askText(t, p, sid, "/rewind")
	assert.NotContains(t, list, "question 1", "a summarized message is no point")
	assert.Contains(t, list, "/rewind 1  question ")
	assert.Contains(t, list, horizon)
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 0))

	p = start()
	loadSession(t, p, sid, cwd)
	assert.Equal(t, list, askText(t, p, sid, "/rewind"), "the same points after a load in a new process")
	assert.Contains(t, askText(t, p, sid, "/rewind 1"), "Rewound")
	assert.Equal(t, "There is nothing to rewind to. "+horizon, askText(t, p, sid, "/rewind"))
	assert.Contains(t, askText(t, p, sid, "/rewind 1"), "there is nothing to rewind to. "+horizon)
}

// TestBinaryAnAutomaticCompactionIsToldToEveryClient: a long session
// compacts by itself at the context threshold. A client that shows
// compactions (session.compaction) gets compaction_update; the others
// (most editors) got nothing at all, so the user never learnt that the
// model now sees only a summary of the morning. They now get a note in
// the chat, once, in the turn it happened, and no note where the client
// shows compactions itself.
func TestBinaryAnAutomaticCompactionIsToldToEveryClient(t *testing.T) {
	script := longAnswerScript(t)
	cfg := filepath.Join(t.TempDir(), "config.json")
	data, err := json.Marshal(map[string]any{"models": []any{map[string]any{"model": "replay/" + script, "contextWindow": 8000}},
		"offloadThreshold": 4000})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, data, 0o600))
	const note = "Note: The conversation was compacted: "
	for _, tc := range []struct {
		name string
		caps *acp.ClientCapabilities
	}{
		{"a client that shows no compactions", nil},
		{"a client that shows compactions", &acp.ClientCapabilities{Session: &acp.ClientSessionCapabilities{Compaction: &acp.CompactionCapabilities{}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}, "--config", cfg, "--model", "replay/"+script)
			p.Initialize(tc.caps)
			sid := p.NewSession(t.TempDir())
			notes, updates := 0, 0
			for i := 1; i <= 10; i++ {
				resp, msgs := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(fmt.Sprintf("question %d", i))}})
				acptest.MustResult(t, resp, nil)
				text := textOf(t, msgs)
				if strings.Contains(text, note) {
					notes++
					assert.Contains(t, text, "older messages were summarized to stay within the model's context window; /rewind reaches back only to the messages since")
					assert.True(t, strings.HasPrefix(text, note), "the note comes before the answer: %q", text)
				}
				for _, m := range msgs {
					if strings.Contains(string(m.Raw), `"sessionUpdate":"compaction_update"`) {
						updates++
					}
				}
			}
			if tc.caps == nil {
				assert.Equal(t, 1, notes, "told once, in the turn it happened")
				assert.Zero(t, updates)
			} else {
				assert.Zero(t, notes, "the client shows the compaction itself")
				assert.NotZero(t, updates)
			}
		})
	}
}

// TestBinarySubagentProgressWithoutToolCalls: a client that shows no
// subagents sees a child's progress in the task's tool call. A child that
// answered without calling a tool showed its heading, two empty lines,
// then its answer; now one blank line parts them, as when it called tools.
func TestBinarySubagentProgressWithoutToolCalls(t *testing.T) {
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "delegate", "events": []any{map[string]any{"toolCall": map[string]any{"id": "t1", "name": "task",
			"arguments": map[string]any{"description": "summarize", "prompt": "[child] summarize the notes"}}}}},
		map[string]any{"match": "[child]", "events": []any{map[string]any{"text": "the notes say three things"}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script)
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	resp, msgs := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("delegate please")}})
	acptest.MustResult(t, resp, nil)
	var views []string
	for _, m := range msgs {
		if u := m.Update(t).Update.ToolCallUpdate; u != nil && u.ToolCallID == "t1" && u.Status == "" {
			for _, c := range u.Content {
				if c.Content != nil && c.Content.Content.Text != nil {
					views = append(views, c.Content.Content.Text.Text)
				}
			}
		}
	}
	assert.Contains(t, views, "Subagent summarize:\n\nthe notes say three things")
}

// TestBinaryFirstRunWithoutAKeyNamesLogin: the first run with no API key
// (an empty HOME, nothing in the environment) names every way out,
// `acp-agent login` too, which stores a key the agent reads where the
// environment sets none: the README's and the registry's way, which the
// message left out. In the editor (session/new) and in a terminal (exec).
func TestBinaryFirstRunWithoutAKeyNamesLogin(t *testing.T) {
	for _, model := range []string{"openai/gpt-4.1", "anthropic/claude-sonnet-4-5"} {
		t.Run(model, func(t *testing.T) {
			home := t.TempDir()
			cmd := exec.Command(agentBin, "exec", "--model", model, "say hi")
			cmd.Env, cmd.Dir = registryEnv(home), t.TempDir()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.Error(t, cmd.Run())
			assert.Contains(t, stderr.String(), "_API_KEY is not set")
			assert.Contains(t, stderr.String(), "store one with `acp-agent login`")

			p := startAgent(t, registryEnv(home), "--model", model)
			p.Initialize(nil)
			resp, _ := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
			require.NotNil(t, resp.Error)
			assert.EqualValues(t, -32000, resp.Error.Code)
			assert.Contains(t, resp.Error.Message, "store one with `acp-agent login`")
		})
	}
}

// TestBinaryALoadShowsACompactionAsOne: a compacted session, loaded the
// next morning, replayed its summary as a message from the user (the
// "[Compressed History]" entry only the model is meant to read), a wall
// of text in the user's own bubble. Now it replays as the compaction to
// clients that show compactions (v1's session.compaction, every v2
// client), and as the agent's message saying what it is to the others;
// never as the user's.
func TestBinaryALoadShowsACompactionAsOne(t *testing.T) {
	script, sessions, cwd := longAnswerScript(t), t.TempDir(), t.TempDir()
	env := []string{"ACP_AGENT_SESSION_DIR=" + sessions}
	p := startAgent(t, env, "--model", "replay/"+script)
	p.Initialize(nil)
	sid := p.NewSession(cwd)
	for i := 1; i <= 6; i++ {
		askText(t, p, sid, fmt.Sprintf("question %d", i))
	}
	require.Contains(t, askText(t, p, sid, "/compact"), "Compacted")
	askText(t, p, sid, "question 7")
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 0))

	notTheUsers := func(t *testing.T, replay []acptest.Message) {
		t.Helper()
		for _, m := range replay {
			assert.NotContains(t, string(m.Raw), "[Compressed History]", "the summary's marker is the model's")
		}
	}
	t.Run("v1, a client that shows no compactions", func(t *testing.T) {
		p := startAgent(t, env, "--model", "replay/"+script)
		p.Initialize(nil)
		resp, replay := p.Call(acp.MethodSessionLoad, map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}})
		acptest.MustResult(t, resp, nil)
		notTheUsers(t, replay)
		var users []string
		for _, m := range replay {
			if u := m.Update(t).Update.UserMessageChunk; u != nil {
				users = append(users, u.Content.Text.Text)
			}
		}
		assert.Equal(t, "question 7", users[len(users)-1])
		assert.NotContains(t, strings.Join(users, "\n"), "fills the context", "no summary among the user's messages")
		assert.Contains(t, textOf(t, replay), "Earlier messages were compacted into this summary:\n\n")
	})
	t.Run("v1, a client that shows compactions", func(t *testing.T) {
		p := startAgent(t, env, "--model", "replay/"+script)
		p.Initialize(&acp.ClientCapabilities{Session: &acp.ClientSessionCapabilities{Compaction: &acp.CompactionCapabilities{}}})
		resp, replay := p.Call(acp.MethodSessionLoad, map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}})
		acptest.MustResult(t, resp, nil)
		notTheUsers(t, replay)
		var summary, status string
		for _, m := range replay {
			u := m.Update(t).Update
			if c := u.CompactionSummaryChunk; c != nil {
				summary += c.Content.Text.Text
			}
			if c := u.CompactionUpdate; c != nil {
				status = string(c.Status)
			}
		}
		assert.Contains(t, summary, "fills the context")
		assert.Equal(t, "completed", status)
		assert.NotContains(t, textOf(t, replay), "Earlier messages were compacted")
	})
	t.Run("v2", func(t *testing.T) {
		p := startAgent(t, env, "--model", "replay/"+script)
		p.InitializeV2(nil)
		resp, replay := p.Call(acpv2.MethodSessionResume, &acpv2.ResumeSessionRequest{SessionID: sid, CWD: cwd, ReplayFrom: &acpv2.ReplayFrom{Start: &acpv2.ReplayFromStart{}}})
		acptest.MustResult(t, resp, nil)
		notTheUsers(t, replay)
		var compactions, users int
		for _, m := range replay {
			u := m.UpdateV2(t).Update
			if u.CompactionSummaryChunk != nil {
				compactions++
			}
			if u.UserMessage != nil {
				users++
			}
		}
		assert.Equal(t, 1, compactions)
		assert.Equal(t, 3, users, "the messages kept and the one after, not the summary: question 5, 6 and 7")
	})
}
