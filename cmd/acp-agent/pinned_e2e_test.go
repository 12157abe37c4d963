package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// Behaviours issue 24 found unpinned, each tested at the user's level.

// awaitAnswering reads until the response to id, answering the agent's
// requests with answer (nil: leave them; the test fails on a request it
// does not expect), and returns the response and what came before it.
func awaitAnswering(t *testing.T, p *proc, id string, answer func(m acptest.Message)) (acptest.Message, []acptest.Message) {
	t.Helper()
	var before []acptest.Message
	for {
		m := p.Next()
		if m.IsResponse() && string(m.ID) == id {
			return m, before
		}
		before = append(before, m)
		if m.Method != "" && m.ID != nil {
			require.NotNil(t, answer, "unexpected request %s", m.Method)
			answer(m)
		}
	}
}

// A permission request that fails (the client answers with an error, or
// with an answer that cannot be read) rejects the tool call: permission
// fails closed, and the file is not written.
func TestBinaryPermissionThatFailsRejectsTheCall(t *testing.T) {
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[write]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "w1", "name": "write_file",
			"arguments": map[string]any{"path": "new.txt", "content": "should not be written"}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	for name, fail := range map[string]func(p *proc, m acptest.Message){
		"error":           func(p *proc, m acptest.Message) { p.RespondError(m.ID, -32603, "the editor failed") },
		"unreadable body": func(p *proc, m acptest.Message) { p.Respond(m.ID, map[string]any{"outcome": 42}) },
	} {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			p := startAgent(t, nil, "--model", "replay/"+script, "--sandbox", "off")
			p.Initialize(nil)
			sid := p.NewSession(ws)
			id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("[write]")}})
			asked := 0
			resp, before := awaitAnswering(t, p, id, func(m acptest.Message) {
				require.Equal(t, acp.MethodSessionRequestPermission, m.Method)
				asked++
				fail(p, m)
			})
			require.Nil(t, resp.Error)
			assert.Equal(t, 1, asked)
			_, err := os.Stat(filepath.Join(ws, "new.txt"))
			assert.True(t, os.IsNotExist(err), "the call was not run")
			text, status := toolResultText(t, before, "w1")
			assert.Equal(t, "failed", status)
			assert.Contains(t, text, "was not run")
		})
	}
}

// apply_patch puts back the files it already wrote when a write fails
// part-way: the editor writes the files (fs/write_text_file) and fails
// the second; the first is written back as it was.
func TestBinaryApplyPatchPutsBackWhatItWroteWhenAWriteFails(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "b.txt"), []byte("beta\n"), 0o644))
	patch := "*** Begin Patch\n*** Update File: a.txt\n-alpha\n+ALPHA\n*** Update File: b.txt\n-beta\n+BETA\n*** End Patch"
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[patch]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "p1", "name": "apply_patch",
			"arguments": map[string]any{"patch": patch}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	config := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"editTools": "all"}`), 0o600))
	p := startAgent(t, nil, "--model", "replay/"+script, "--mode", "full-access", "--sandbox", "off", "--config", config)
	p.Initialize(&acp.ClientCapabilities{FS: acp.FileSystemCapabilities{WriteTextFile: true}})
	sid := p.NewSession(ws)
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("[patch]")}})
	var writes []string
	resp, before := awaitAnswering(t, p, id, func(m acptest.Message) {
		require.Equal(t, acp.MethodFSWriteTextFile, m.Method)
		var req acp.WriteTextFileRequest
		require.NoError(t, json.Unmarshal(m.Params, &req))
		writes = append(writes, filepath.Base(req.Path)+"="+strings.TrimSpace(req.Content))
		if filepath.Base(req.Path) == "b.txt" {
			p.RespondError(m.ID, -32603, "disk full")
			return
		}
		require.NoError(t, os.WriteFile(req.Path, []byte(req.Content), 0o644))
		p.Respond(m.ID, map[string]any{})
	})
	require.Nil(t, resp.Error)
	assert.Equal(t, []string{"a.txt=ALPHA", "b.txt=BETA", "a.txt=alpha"}, writes, "a.txt written, b.txt failed, a.txt put back")
	assert.Equal(t, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"}, treeState(t, ws))
	text, status := toolResultText(t, before, "p1")
	assert.Equal(t, "failed", status)
	assert.Contains(t, text, "put back")
}

// Background commands die with the session also when the editor runs the
// other commands (the client advertises terminal/*): they run locally,
// and closing the session ends them.
func TestBinaryBackgroundCommandsDieWithTheSessionUnderAnEditorTerminal(t *testing.T) {
	ws := t.TempDir()
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[serve]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "b1", "name": "run_command",
			"arguments": map[string]any{"command": shLine("echo $$ > bg.pid; exec sleep 300", sleeperLine("bg.pid")), "background": true}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, nil, append([]string{"--model", "replay/" + script, "--mode", "full-access", "--sandbox", "off"}, shellArgs(t)...)...)
	p.Initialize(&acp.ClientCapabilities{Terminal: true})
	sid := p.NewSession(ws)
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("[serve]")}})
	resp, _ := awaitAnswering(t, p, id, nil)
	require.Nil(t, resp.Error)
	var pid int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(filepath.Join(ws, "bg.pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 1
	}, waitBudget(t), 10*time.Millisecond)
	require.True(t, processAlive(pid), "the background command runs")
	t.Cleanup(func() { killPID(pid) })

	resp, _ = p.Call(acp.MethodSessionClose, map[string]any{"sessionId": sid})
	require.Nil(t, resp.Error)
	assert.Eventually(t, func() bool { return !processAlive(pid) }, waitBudget(t), 10*time.Millisecond,
		"the background command ended with its session")
}

// A title the user sets while the model's title request is in flight is
// not overwritten by the model's: not in the list, not after a restart,
// and the client is not told the model's.
func TestBinaryUserTitleWinsOverAModelTitleInFlight(t *testing.T) {
	sessions := t.TempDir()
	model := newGatedModelTexts(t, nil, []string{"short title"}, nil, map[string]string{"short title": `{"title": "Model Title"}`})
	config := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"modelTitles": true}`), 0o600))
	args := []string{"--model", "openai/test-model", "--session-dir", sessions, "--config", config}
	env := []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	p := startAgent(t, env, args...)
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	promptOK(t, p, sid, "hello")
	model.awaitHeld(t, "short title") // the model is being asked for a title
	resp, _ := p.Call(acp.MethodSessionSetTitle, map[string]any{"sessionId": sid, "title": "User Title"})
	require.Nil(t, resp.Error)
	model.release <- struct{}{}
	// The next prompt runs after the title request has been answered.
	after := promptOK(t, p, sid, "again")
	for _, m := range after {
		if m.Method != acp.MethodSessionUpdate {
			continue
		}
		if u := m.Update(t).Update.SessionInfoUpdate; u != nil && u.Title.Present {
			assert.NotEqual(t, "Model Title", u.Title.Value, "the client is not told the model's title")
		}
	}
	assert.Equal(t, "User Title", listed(t, p, "")[sid].Title)
	p.stdin.Close()
	p.waitExit(t, 5*time.Second)
	q := startAgent(t, env, args...)
	q.Initialize(nil)
	assert.Equal(t, "User Title", listed(t, q, "")[sid].Title, "nor on disk")
}

// session/list with archived: "only" lists the archived sessions only,
// with unarchived ones present too.
func TestBinaryListArchivedOnly(t *testing.T) {
	script := writeScript(t, map[string]any{"turns": []any{map[string]any{"events": []any{map[string]any{"text": "ok"}}}}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--session-dir", t.TempDir())
	p.Initialize(nil)
	var archived, kept []string
	for i := range 4 {
		sid := p.NewSession(t.TempDir())
		promptOK(t, p, sid, "hello")
		if i%2 == 0 {
			resp, _ := p.Call(acp.MethodSessionArchive, map[string]any{"sessionId": sid})
			require.Nil(t, resp.Error)
			archived = append(archived, sid)
		} else {
			kept = append(kept, sid)
		}
	}
	only := listed(t, p, "only")
	assert.Len(t, only, len(archived))
	for _, id := range archived {
		require.Contains(t, only, id)
		assert.True(t, *only[id].Archived)
	}
	for _, id := range kept {
		assert.NotContains(t, only, id, "an unarchived session is not listed")
	}
	def := listed(t, p, "")
	assert.Len(t, def, len(kept))
	for _, id := range kept {
		assert.Contains(t, def, id)
	}
}

// ask_user with a client that advertises URL elicitation only (no form)
// falls back to ending the turn with the question, instead of failing
// or sending a form the client cannot show.
func TestBinaryAskUserWithURLElicitationOnlyEndsTheTurn(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+askScript(t))
	p.Initialize(&acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{URL: &acp.ElicitationUrlCapabilities{}}})
	sid := p.NewSession(t.TempDir())
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("which db?")}})
	resp, before := awaitAnswering(t, p, id, nil) // no elicitation/create may come
	var r acp.PromptResponse
	acptest.MustResult(t, resp, &r)
	assert.Equal(t, acp.StopReasonEndTurn, r.StopReason)
	text, status := toolResultText(t, before, "ask1")
	assert.Equal(t, "completed", status)
	assert.Contains(t, text, "the turn ends here")
	assert.Contains(t, textOf(t, before), "Which database should I use?", "the question is shown")
	assert.NotContains(t, textOf(t, before), "model went on", "the model is not called again in this turn")
}
