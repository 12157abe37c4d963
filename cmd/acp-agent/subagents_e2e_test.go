package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// subagentScript: the parent delegates with task; the child answers; the
// parent then finishes.
// beyondWait is a child's delay (ms) longer than any wait of the test: a
// response that comes at all shows the child was cut short, without a
// wall-clock limit that load could break.
func beyondWait(t *testing.T) int { return int((waitBudget(t) + time.Minute).Milliseconds()) }

func subagentScript(t *testing.T, childDelay int) string {
	return writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "delegate", "events": []any{map[string]any{"toolCall": map[string]any{"id": "t1", "name": "task",
			"arguments": map[string]any{"description": "count files", "prompt": "[child] count the files"}}}}},
		map[string]any{"match": "[child]", "events": []any{map[string]any{"text": "child answer: 3 files", "delayMs": childDelay}}},
		map[string]any{"events": []any{map[string]any{"text": "parent done"}}},
	}})
}

// Issue 17: with subagents advertised, the task tool's child is
// announced on the parent (subagent_update, validated against the SDK
// 2.4.0 unstable schema) before any of its own traffic, which comes under
// the child's id; its answer goes back to the parent's model; it is
// stored (session/list shows it).
func TestBinarySubagentVisibleToTheClient(t *testing.T) {
	sessions, cwd := t.TempDir(), t.TempDir()
	script := subagentScript(t, 0)
	p := startAgent(t, nil, "--model", "replay/"+script, "--session-dir", sessions)
	p.Initialize(&acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}})
	sid := p.NewSession(cwd)
	resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("delegate please")}})
	require.Nil(t, resp.Error)
	var child string
	var states []string
	var childText strings.Builder
	for _, m := range before {
		if m.Method != acp.MethodSessionUpdate {
			continue
		}
		n := m.Update(t)
		if su := n.Update.SubagentUpdate; su != nil {
			require.Equal(t, sid, n.SessionID, "announced on the parent")
			child = su.SessionID
			if su.State != nil {
				states = append(states, su.State.State)
			}
			continue
		}
		if n.SessionID != sid {
			require.NotEmpty(t, child, "child traffic before its announcement")
			require.Equal(t, child, n.SessionID)
			if c := n.Update.AgentMessageChunk; c != nil {
				childText.WriteString(c.Content.Text.Text)
			}
		}
	}
	require.NotEmpty(t, child)
	assert.Equal(t, []string{"running", "idle"}, states)
	assert.Equal(t, "child answer: 3 files", childText.String(), "the child's own updates, under its id")
	text, status := toolResultText(t, before, "t1")
	assert.Equal(t, "completed", status)
	assert.Contains(t, text, "child answer: 3 files")
	assert.Contains(t, textOf(t, before), "parent done")

	r, _ := p.Call(acp.MethodSessionList, map[string]any{})
	var list acp.ListSessionsResponse
	acptest.MustResult(t, r, &list)
	var titles []string
	for _, s := range list.Sessions {
		titles = append(titles, s.Title)
	}
	assert.NotContains(t, titles, "Subagent: count files", "the list is the user's conversations, not their subagents")
	assert.Contains(t, titles, "delegate please")
	assert.FileExists(t, filepath.Join(sessions, child+".jsonl"), "the child is stored")

	// After a restart, loading the parent announces the child again, and
	// the child loads under its own id with its conversation.
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))
	q := startAgent(t, nil, "--model", "replay/"+script, "--session-dir", sessions)
	q.Initialize(&acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}})
	resp, before = q.Call(acp.MethodSessionLoad, map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}})
	require.Nil(t, resp.Error)
	announced := false
	for _, m := range before {
		if m.Method == acp.MethodSessionUpdate {
			if su := m.Update(t).Update.SubagentUpdate; su != nil && su.SessionID == child {
				announced = true
			}
		}
	}
	assert.True(t, announced, "the parent's load announces its child")
	resp, before = q.Call(acp.MethodSessionLoad, map[string]any{"sessionId": child, "cwd": cwd, "mcpServers": []any{}})
	require.Nil(t, resp.Error)
	assert.Contains(t, textOf(t, before), "child answer: 3 files", "the child's conversation came back")
}

// Issue 17: a client without subagents sees the child's progress inside
// the task's tool call, and nothing under another session id.
func TestBinarySubagentInsideTheToolCall(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+subagentScript(t, 0))
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("delegate please")}})
	require.Nil(t, resp.Error)
	var progress string
	for _, m := range before {
		if m.Method != acp.MethodSessionUpdate {
			continue
		}
		n := m.Update(t)
		require.Equal(t, sid, n.SessionID, "no update under another id")
		require.Nil(t, n.Update.SubagentUpdate, "not advertised")
		if u := n.Update.ToolCallUpdate; u != nil && u.ToolCallID == "t1" {
			raw, _ := json.Marshal(u.Content)
			progress += string(raw)
		}
	}
	assert.Contains(t, progress, "Subagent count files")
	assert.Contains(t, progress, "child answer: 3 files")
}

// Issue 17: cancelling the parent cancels its running child.
func TestBinaryCancellingTheParentCancelsTheChild(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+subagentScript(t, beyondWait(t)))
	p.Initialize(&acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}})
	sid := p.NewSession(t.TempDir())
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("delegate please")}})
	for {
		m := p.Next()
		if m.Method == acp.MethodSessionUpdate && m.Update(t).Update.SubagentUpdate != nil {
			break
		}
	}
	p.Notify(acp.MethodSessionCancel, &acp.CancelNotification{SessionID: sid})
	resp, _ := p.Await(id)
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result))
}

// Issue 17: a child's permission request reaches the user naming the
// child (in the title, and under the child's session id for a client
// that shows subagents).
func TestBinarySubagentPermissionNamesTheChild(t *testing.T) {
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "delegate", "events": []any{map[string]any{"toolCall": map[string]any{"id": "t1", "name": "task",
			"arguments": map[string]any{"description": "write notes", "prompt": "[child] write the notes"}}}}},
		map[string]any{"match": "[child]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "w1", "name": "write_file",
			"arguments": map[string]any{"path": "notes.txt", "content": "hi"}}}}},
		map[string]any{"events": []any{map[string]any{"text": "finished"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script)
	p.Initialize(&acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}})
	sid := p.NewSession(t.TempDir())
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("delegate please")}})
	var child string
	for {
		m := p.Next()
		if m.Method == acp.MethodSessionUpdate {
			if su := m.Update(t).Update.SubagentUpdate; su != nil {
				child = su.SessionID
			}
		}
		if m.Method == acp.MethodSessionRequestPermission {
			var req acp.RequestPermissionRequest
			require.NoError(t, json.Unmarshal(m.Params, &req))
			assert.Equal(t, child, req.SessionID, "asked under the child's id")
			assert.True(t, strings.HasPrefix(req.ToolCall.Title, "[subagent write notes] "), req.ToolCall.Title)
			p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
			break
		}
	}
	resp, _ := p.Await(id)
	require.Nil(t, resp.Error)
}

// Issue 17: a client may cancel a child alone (its subagent_update
// allows cancel): the child's work ends, the task reports the
// cancellation to the parent's model, and the parent's turn goes on.
func TestBinaryCancellingAChildEndsOnlyTheChild(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+subagentScript(t, beyondWait(t)))
	p.Initialize(&acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}})
	sid := p.NewSession(t.TempDir())
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("delegate please")}})
	var child string
	for child == "" {
		m := p.Next()
		if m.Method == acp.MethodSessionUpdate {
			if su := m.Update(t).Update.SubagentUpdate; su != nil {
				require.NotNil(t, su.Capabilities, "the child may be cancelled")
				require.NotNil(t, su.Capabilities.Cancel)
				child = su.SessionID
			}
		}
	}
	p.Notify(acp.MethodSessionCancel, &acp.CancelNotification{SessionID: child})
	resp, before := p.Await(id)
	assert.JSONEq(t, `{"stopReason":"end_turn"}`, string(resp.Result), "the parent's turn went on")
	text, status := toolResultText(t, before, "t1")
	assert.Equal(t, "failed", status)
	assert.Contains(t, text, "was cancelled")
	assert.Contains(t, textOf(t, before), "parent done")
}

// Issue 17: several task calls in one response run at the same time:
// both children are announced running before either is idle.
func TestBinarySubagentsRunInParallel(t *testing.T) {
	task := func(id, what string) map[string]any {
		return map[string]any{"toolCall": map[string]any{"id": id, "name": "task",
			"arguments": map[string]any{"description": what, "prompt": "[child] " + what}}}
	}
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "delegate", "events": []any{task("t1", "one"), task("t2", "two")}},
		map[string]any{"match": "[child]", "events": []any{map[string]any{"text": "child done", "delayMs": 700}}},
		map[string]any{"events": []any{map[string]any{"text": "parent done"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script)
	p.Initialize(&acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}})
	sid := p.NewSession(t.TempDir())
	resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("delegate please")}})
	require.Nil(t, resp.Error)
	var events []string
	for _, m := range before {
		if m.Method == acp.MethodSessionUpdate {
			if su := m.Update(t).Update.SubagentUpdate; su != nil && su.State != nil {
				events = append(events, su.State.State)
			}
		}
	}
	assert.Equal(t, []string{"running", "running", "idle", "idle"}, events, "both ran at once")
	for _, id := range []string{"t1", "t2"} {
		text, status := toolResultText(t, before, id)
		assert.Equal(t, "completed", status, id)
		assert.Contains(t, text, "child done", id)
	}
	assert.Contains(t, textOf(t, before), "parent done")
}

// Issue 17: a subagent gets only the tools asked for (and never task or
// ask_user); an unknown model or tool is an error for the parent's model.
func TestBinarySubagentToolSubsetAndModel(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "delegate", "events": []any{
			map[string]any{"toolCall": map[string]any{"id": "t1", "name": "task", "arguments": map[string]any{"description": "reader", "prompt": "[child] read only", "tools": []string{"read_file"}}}},
			map[string]any{"toolCall": map[string]any{"id": "t2", "name": "task", "arguments": map[string]any{"description": "nested", "prompt": "x", "tools": []string{"task"}}}},
			map[string]any{"toolCall": map[string]any{"id": "t3", "name": "task", "arguments": map[string]any{"description": "other model", "prompt": "x", "model": "openai/not-configured"}}},
		}},
		map[string]any{"match": "[child]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "w1", "name": "write_file",
			"arguments": map[string]any{"path": "sneaky.txt", "content": "x"}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--mode", "full-access")
	p.Initialize(nil)
	sid := p.NewSession(dir)
	resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("delegate please")}})
	require.Nil(t, resp.Error)
	_, err := os.Stat(filepath.Join(dir, "sneaky.txt"))
	assert.True(t, os.IsNotExist(err), "the read-only subagent could not write")
	text, status := toolResultText(t, before, "t2")
	assert.Equal(t, "failed", status)
	assert.Contains(t, text, `tool "task" cannot be given to a subagent`)
	text, status = toolResultText(t, before, "t3")
	assert.Equal(t, "failed", status)
	assert.Contains(t, text, "not a usable configured model")
}

// Issue 17: what a subagent changes is part of its parent's turn:
// rewinding the parent to before that message puts the files back.
func TestBinaryRewindUndoesASubagentsChanges(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("before\n"), 0o644))
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "delegate", "events": []any{map[string]any{"toolCall": map[string]any{"id": "t1", "name": "task",
			"arguments": map[string]any{"description": "writer", "prompt": "[child] write"}}}}},
		map[string]any{"match": "[child]", "events": []any{
			// write_file overwrites notes.txt only after a read (issue 26).
			map[string]any{"toolCall": map[string]any{"id": "r1", "name": "read_file", "arguments": map[string]any{"path": "notes.txt"}}},
			map[string]any{"toolCall": map[string]any{"id": "w1", "name": "write_file", "arguments": map[string]any{"path": "notes.txt", "content": "child was here\n"}}},
			map[string]any{"toolCall": map[string]any{"id": "w2", "name": "write_file", "arguments": map[string]any{"path": "new.txt", "content": "new\n"}}},
		}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--mode", "full-access", "--session-dir", t.TempDir())
	p.Initialize(nil)
	sid := p.NewSession(dir)
	promptOK(t, p, sid, "delegate please")
	require.Equal(t, "child was here\n", treeState(t, dir)["notes.txt"], "the subagent wrote")
	rewindTo(t, p, sid, map[string]any{"toUserEntryIndex": userIndexes(t, p, sid)[0], "files": true})
	assert.Equal(t, map[string]string{"notes.txt": "before\n"}, treeState(t, dir))
}

// Issue 30 review: a subagent uses the editor's fs/* under a session id
// the client knows: its parent's when the client does not show subagents
// (it sees the child inside the task's tool call), its own when it does
// (the id announced in subagent_update). Permission questions stay the
// parent's when the child is hidden.
func TestBinarySubagentUsesTheEditorUnderASessionTheClientKnows(t *testing.T) {
	for _, visible := range []bool{false, true} {
		t.Run(map[bool]string{false: "hidden", true: "visible"}[visible], func(t *testing.T) {
			cwd := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("on disk\n"), 0o600))
			script := writeScript(t, map[string]any{"turns": []any{
				map[string]any{"match": "delegate", "events": []any{map[string]any{"toolCall": map[string]any{"id": "t1", "name": "task",
					"arguments": map[string]any{"description": "edit notes", "prompt": "[child] read and write the notes"}}}}},
				map[string]any{"match": "[child]", "events": []any{
					map[string]any{"toolCall": map[string]any{"id": "r1", "name": "read_file", "arguments": map[string]any{"path": "notes.txt"}}},
					map[string]any{"toolCall": map[string]any{"id": "w1", "name": "write_file", "arguments": map[string]any{"path": "out.txt", "content": "from the child\n"}}},
				}},
				map[string]any{"events": []any{map[string]any{"text": "child done"}}},
				map[string]any{"events": []any{map[string]any{"text": "parent done"}}},
			}})
			p := startAgent(t, nil, "--model", "replay/"+script)
			caps := &acp.ClientCapabilities{FS: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}
			if visible {
				caps.Subagents = &acp.SubagentCapabilities{}
			}
			p.Initialize(caps)
			sid := p.NewSession(cwd)
			id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("delegate please")}})
			child := ""
			var asked []string // method and session id of each request to the editor
			for {
				m := p.Next()
				if m.IsResponse() && string(m.ID) == id {
					require.Nil(t, m.Error)
					break
				}
				if m.Method == acp.MethodSessionUpdate {
					if su := m.Update(t).Update.SubagentUpdate; su != nil {
						child = su.SessionID
					}
					continue
				}
				if m.ID == nil {
					continue
				}
				var req struct {
					SessionID string `json:"sessionId"`
				}
				require.NoError(t, json.Unmarshal(m.Params, &req))
				asked = append(asked, m.Method+" "+req.SessionID)
				switch m.Method {
				case acp.MethodFSReadTextFile:
					p.Respond(m.ID, map[string]any{"content": "from the editor's buffer\n"})
				case acp.MethodFSWriteTextFile:
					p.Respond(m.ID, map[string]any{})
				case acp.MethodSessionRequestPermission:
					p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
				default:
					t.Fatalf("unexpected request %s", m.Method)
				}
			}
			want := sid
			if visible {
				require.NotEmpty(t, child, "announced")
				want = child
			} else {
				assert.Empty(t, child, "not announced")
			}
			assert.Equal(t, []string{
				acp.MethodFSReadTextFile + " " + want,
				acp.MethodSessionRequestPermission + " " + want,
				acp.MethodFSWriteTextFile + " " + want,
			}, asked, "the child's editor requests name a session the client knows")
		})
	}
}

// Issue 29: the task and the answer travel as session_message between
// the parent and its child, each shown on both sessions (the sender's
// view naming the recipient's message, and the other way round): the
// task on the child before any of its work and on the parent after the
// announcement, the answer on the child before it goes idle and on the
// parent after. acptest validates them against the SDK 2.4.0 unstable
// schema and fails if they reach a client without subagents.
func TestBinarySubagentSessionMessages(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+subagentScript(t, 0))
	p.Initialize(&acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}})
	sid := p.NewSession(t.TempDir())
	resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("delegate please")}})
	require.Nil(t, resp.Error)

	type seen struct {
		session string
		kind    string // "announce", "idle", "message", "child"
		msg     *acp.SessionMessage
	}
	var events []seen
	child := ""
	for _, m := range before {
		if m.Method != acp.MethodSessionUpdate {
			continue
		}
		n := m.Update(t)
		switch u := n.Update; {
		case u.SubagentUpdate != nil && u.SubagentUpdate.State != nil && u.SubagentUpdate.State.State == "running":
			child = u.SubagentUpdate.SessionID
			events = append(events, seen{session: n.SessionID, kind: "announce"})
		case u.SubagentUpdate != nil && u.SubagentUpdate.State != nil:
			events = append(events, seen{session: n.SessionID, kind: "idle"})
		case u.SessionMessage != nil:
			events = append(events, seen{session: n.SessionID, kind: "message", msg: u.SessionMessage})
		case n.SessionID != sid:
			events = append(events, seen{session: n.SessionID, kind: "child"})
		}
	}
	require.NotEmpty(t, child)
	var kinds []string
	var msgs []*acp.SessionMessage
	for _, e := range events {
		k := e.kind
		if e.session == child {
			k = "child " + k
		}
		if k == "child child" {
			if len(kinds) > 0 && kinds[len(kinds)-1] == "child work" {
				continue
			}
			k = "child work"
		}
		kinds = append(kinds, k)
		if e.msg != nil {
			msgs = append(msgs, e.msg)
		}
	}
	// The parent's announcement comes first on the wire, then the held
	// child stream (its received task first, then its work), with the
	// parent's sent task somewhere after the announcement.
	require.Len(t, msgs, 4, "%v", kinds)
	assert.Equal(t, "announce", kinds[0], "%v", kinds)
	assert.Equal(t, []string{"child message", "child work", "child message"}, filterChild(kinds), "%v", kinds)
	assert.Equal(t, "message", kinds[len(kinds)-1], "the parent receives the answer last, after the child is idle: %v", kinds)
	assert.Equal(t, "idle", kinds[len(kinds)-2], "%v", kinds)

	byView := map[string]*acp.SessionMessage{}
	for _, m := range msgs {
		switch {
		case m.SenderSessionID == sid && m.RecipientMessageID != "":
			byView["task sent"] = m
		case m.SenderSessionID == sid && m.SenderMessageID != "":
			byView["task received"] = m
		case m.SenderSessionID == child && m.RecipientMessageID != "":
			byView["answer sent"] = m
		case m.SenderSessionID == child && m.SenderMessageID != "":
			byView["answer received"] = m
		}
	}
	require.Len(t, byView, 4, "each view once")
	for _, pair := range [][2]string{{"task sent", "task received"}, {"answer sent", "answer received"}} {
		out, in := byView[pair[0]], byView[pair[1]]
		assert.Equal(t, in.MessageID, out.RecipientMessageID, "%s names the other view", pair[0])
		assert.Equal(t, out.MessageID, in.SenderMessageID, "%s names the other view", pair[1])
		assert.Equal(t, out.Content, in.Content)
	}
	assert.Equal(t, child, byView["task sent"].RecipientSessionID)
	assert.Equal(t, sid, byView["answer sent"].RecipientSessionID)
	assert.Equal(t, "[child] count the files", byView["task received"].Content[0].Text.Text)
	assert.Equal(t, "child answer: 3 files", byView["answer received"].Content[0].Text.Text)
}

// filterChild keeps the child's events of kinds.
func filterChild(kinds []string) []string {
	var out []string
	for _, k := range kinds {
		if strings.HasPrefix(k, "child ") {
			out = append(out, k)
		}
	}
	return out
}
