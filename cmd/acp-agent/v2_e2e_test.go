package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// v2Turn is what a client saw of one v2 turn: its messages, what they
// were, the text of its agent messages and the prompt's answer.
type v2Turn struct {
	msgs      []acptest.Message
	kinds     []string
	text      string
	messageID string
	stop      acpv2.StopReason
}

// v2Kind names a v2 message: an update's tag (a state's with its state
// and stop reason), a request's method, or "response".
func v2Kind(t *testing.T, m acptest.Message) string {
	switch {
	case m.Method == acpv2.MethodSessionUpdate:
		u := m.UpdateV2(t).Update
		kind := u.Tag()
		if s := u.StateUpdate; s != nil {
			kind += ":" + s.Tag()
			if s.Idle != nil && s.Idle.StopReason != "" {
				kind += ":" + string(s.Idle.StopReason)
			}
		}
		return kind
	case m.Method != "":
		return m.Method
	}
	return "response"
}

// promptV2 sends a prompt and reads until the turn's idle state_update
// (and the prompt's answer), answering permission requests with the
// option of kind allow (or reject, with reject set).
func promptV2(t *testing.T, p *proc, sid, text string, reject bool) v2Turn {
	t.Helper()
	id := p.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: []acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: text}}}})
	return readTurnV2(t, p, id, reject, v2Turn{})
}

// readTurnV2 reads the rest of a turn, what turn has of it so far.
func readTurnV2(t *testing.T, p *proc, promptID string, reject bool, turn v2Turn) v2Turn {
	t.Helper()
	answered, idle := turn.messageID != "", false
	for !answered || !idle {
		m := p.Next()
		turn.msgs = append(turn.msgs, m)
		kind := v2Kind(t, m)
		switch {
		case m.IsResponse() && string(m.ID) == promptID:
			var r acpv2.PromptResponse
			acptest.MustResult(t, m, &r)
			turn.messageID, answered = r.MessageID, true
		case m.Method == acpv2.MethodSessionRequestPermission:
			var req acpv2.RequestPermissionRequest
			require.NoError(t, json.Unmarshal(m.Params, &req))
			want := acpv2.PermissionOptionKindAllowOnce
			if reject {
				want = acpv2.PermissionOptionKindRejectOnce
			}
			choice := ""
			for _, o := range req.Options {
				if o.Kind == want {
					choice = o.OptionID
				}
			}
			require.NotEmpty(t, choice, "no %s option in %s", want, m.Raw)
			p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": choice}})
		case m.Method == acpv2.MethodSessionUpdate:
			u := m.UpdateV2(t).Update
			if c := u.AgentMessageChunk; c != nil && c.Content.Text != nil {
				turn.text += c.Content.Text.Text
			}
			if s := u.StateUpdate; s != nil && s.Idle != nil && s.Idle.StopReason != "" {
				turn.stop, idle = s.Idle.StopReason, true
			}
		}
		turn.kinds = append(turn.kinds, kind)
	}
	return turn
}

// TestBinaryV2Session drives one session through the built binary in ACP
// v2, every message checked against the SDK 2.4.0 v2 schema: initialize
// asking for 2, session/new, a prompt answered on insertion and ended by
// an idle state_update, a tool call asking permission (requires_action
// while it waits), a cancelled turn, session/close; then, after a
// restart, session/resume with the conversation replayed under the ids
// the prompts were answered with, and the same session file loaded by a
// v1 client.
func TestBinaryV2Session(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	script := writeScript(t, v2Script())
	env := []string{"HOME=" + home}
	p := startAgent(t, env, "--model", "replay/"+script)
	init := p.InitializeV2(nil)
	assert.Equal(t, "acp-agent", init.Info.Name)
	require.NotNil(t, init.Capabilities.Session)
	assert.NotNil(t, init.Capabilities.Session.Delete, "a store: session/delete")
	sid := p.NewSessionV2(cwd)

	greet := promptV2(t, p, sid, "[greet] say hello", false)
	assert.Equal(t, "Hello there.", greet.text)
	assert.Equal(t, acpv2.StopReasonEndTurn, greet.stop)
	assert.Equal(t, "state_update:running", firstOf(greet.kinds, "state_update"), "the turn starts running: %v", greet.kinds)
	assert.Less(t, indexOf(greet.kinds, "user_message"), indexOf(greet.kinds, "agent_message_chunk"))

	write := promptV2(t, p, sid, "[write] write the notes", false)
	assert.Equal(t, acpv2.StopReasonEndTurn, write.stop)
	assert.NotEqual(t, greet.messageID, write.messageID)
	ra := indexOf(write.kinds, "state_update:requires_action")
	perm := indexOf(write.kinds, acpv2.MethodSessionRequestPermission)
	require.GreaterOrEqual(t, ra, 0, "requires_action while the permission waits: %v", write.kinds)
	assert.Less(t, ra, perm)
	assert.Equal(t, "state_update:running", write.kinds[indexAfter(write.kinds, perm, "state_update")], "running again once answered")
	data, err := os.ReadFile(filepath.Join(cwd, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "written over v2\n", string(data))
	assert.Equal(t, "Done.", write.text)

	id := p.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: []acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: "[wait] take your time"}}}})
	var started v2Turn
	for {
		m := p.Next()
		if m.IsResponse() && string(m.ID) == id {
			var r acpv2.PromptResponse
			acptest.MustResult(t, m, &r)
			started.messageID = r.MessageID
		}
		if m.Method == acpv2.MethodSessionUpdate && m.UpdateV2(t).Update.AgentMessageChunk != nil {
			break
		}
	}
	require.NotEmpty(t, started.messageID, "answered before the turn's work")
	p.Notify(acpv2.MethodSessionCancel, &acpv2.CancelSessionNotification{SessionID: sid})
	cancelled := readTurnV2(t, p, id, false, started)
	assert.Equal(t, acpv2.StopReasonCancelled, cancelled.stop)

	resp, _ := p.Call(acpv2.MethodSessionClose, &acpv2.CloseSessionRequest{SessionID: sid})
	acptest.MustResult(t, resp, nil)
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))

	// A restart: the session is resumed and replayed in v2.
	p = startAgent(t, env, "--model", "replay/"+script)
	p.InitializeV2(nil)
	resp, replay := p.Call(acpv2.MethodSessionResume, &acpv2.ResumeSessionRequest{SessionID: sid, CWD: cwd, ReplayFrom: &acpv2.ReplayFrom{Start: &acpv2.ReplayFromStart{}}})
	acptest.MustResult(t, resp, nil)
	var users []string
	var texts []string
	var tools []string
	for _, m := range replay {
		u := m.UpdateV2(t).Update
		switch {
		case u.UserMessage != nil:
			users = append(users, u.UserMessage.MessageID)
		case u.AgentMessage != nil:
			c, _ := u.AgentMessage.Content.Get()
			for _, b := range c {
				texts = append(texts, b.Text.Text)
			}
		case u.ToolCallUpdate != nil:
			st, _ := u.ToolCallUpdate.Status.Get()
			tools = append(tools, u.ToolCallUpdate.ToolCallID+":"+string(st))
		}
	}
	assert.Equal(t, []string{greet.messageID, write.messageID, cancelled.messageID}, users, "replayed with the ids the prompts were answered with")
	assert.Contains(t, texts, "Hello there.")
	assert.Contains(t, tools, "call_w:completed")
	assert.Equal(t, "state_update:idle", v2Kind(t, replay[len(replay)-1]), "the current state comes after the replay")
	resp, _ = p.Call(acpv2.MethodSessionClose, &acpv2.CloseSessionRequest{SessionID: sid})
	acptest.MustResult(t, resp, nil)
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))

	// The same file opens in v1.
	p = startAgent(t, env, "--model", "replay/"+script)
	p.Initialize(nil)
	resp, loaded := p.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: sid, CWD: cwd, MCPServers: []acp.McpServer{}})
	acptest.MustResult(t, resp, nil)
	var v1text strings.Builder
	for _, m := range loaded {
		if u := m.Update(t).Update; u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			v1text.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	assert.Contains(t, v1text.String(), "Hello there.")
}

func indexOf(kinds []string, kind string) int {
	for i, k := range kinds {
		if k == kind {
			return i
		}
	}
	return -1
}

// indexAfter is the index of the first kind starting with prefix after i.
func indexAfter(kinds []string, i int, prefix string) int {
	for j := i + 1; j < len(kinds); j++ {
		if strings.HasPrefix(kinds[j], prefix) {
			return j
		}
	}
	return -1
}

func firstOf(kinds []string, prefix string) string {
	if i := indexAfter(kinds, -1, prefix); i >= 0 {
		return kinds[i]
	}
	return ""
}

// TestBinaryV2TypeScriptSDK: the official TypeScript SDK's v2 client (a
// client nobody here wrote, which checks what it reads against its own
// schema) drives a session through the binary: initialize with version
// 2, session/new, prompts answered on insertion whose turns idle
// state_updates end, a tool call with permission, session/cancel,
// session/close, and after a restart session/resume with the replay.
func TestBinaryV2TypeScriptSDK(t *testing.T) {
	modules, err := filepath.Abs(filepath.Join("..", "..", ".ci", "node_modules"))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(modules, "@agentclientprotocol", "sdk", "dist", "v2", "stable", "acp.js")); err != nil {
		t.Skipf("the ACP TypeScript SDK is not installed (%v); run `npm ci --prefix .ci` in the repository root", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("the TypeScript SDK is installed but node is not on PATH: %v", err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "v2", "sdk_v2_client.mjs"))
	require.NoError(t, err)
	home, cwd := t.TempDir(), t.TempDir()
	model := writeScript(t, v2Script())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, modules, agentBin, cwd, "--model", "replay/"+model)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node:\n%s", stderr.String())
	var r struct {
		ProtocolVersion                            int
		Agent, SessionID                           string
		GreetMessageID, WriteMessageID             string
		WaitMessageID, CommandMessageID            string
		GreetText, GreetStop, WriteText, WriteStop string
		CancelStop                                 string
		ConfigOptions, ResumedConfigOptions        []string
		Permissions                                []struct{ Title, Subject, ToolCallID string }
		Updates                                    map[string][]string
		ReplayedUsers, ReplayedTools               []string
		RunExit, ResumeExit                        int
		TerminalOutput, ShownTerminal              string
		ExitedTerminal                             string
	}
	require.NoError(t, json.Unmarshal(out, &r), "%s", out)
	assert.Equal(t, 2, r.ProtocolVersion)
	assert.Equal(t, "acp-agent", r.Agent)
	assert.Contains(t, r.ConfigOptions, "mode", "v2's modes are a config option")
	assert.Equal(t, "Hello there.", r.GreetText)
	assert.Equal(t, "end_turn", r.GreetStop)
	assert.Equal(t, "end_turn", r.WriteStop)
	assert.Equal(t, "Done.", r.WriteText)
	require.NotEmpty(t, r.Permissions)
	assert.Equal(t, "tool_call", r.Permissions[0].Subject)
	assert.Equal(t, "call_w", r.Permissions[0].ToolCallID)
	assert.Equal(t, "cancelled", r.CancelStop)
	assert.Contains(t, r.Updates["write"], "state_update:requires_action")
	// The command's terminal, read by the SDK's own schema.
	for _, kind := range []string{"terminal_update", "tool_call_content_chunk", "terminal_output_chunk"} {
		assert.Contains(t, r.Updates["command"], kind)
	}
	assert.Equal(t, "from the sdk\n", r.TerminalOutput)
	assert.NotEmpty(t, r.ShownTerminal)
	assert.Equal(t, r.ShownTerminal, r.ExitedTerminal)
	data, err := os.ReadFile(filepath.Join(cwd, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "written over v2\n", string(data))
	assert.Equal(t, []string{r.GreetMessageID, r.WriteMessageID, r.CommandMessageID, r.WaitMessageID}, r.ReplayedUsers)
	assert.Contains(t, r.ReplayedTools, "call_w:completed")
	resumed := r.Updates["resume"]
	require.NotEmpty(t, resumed)
	assert.Equal(t, "state_update:idle", resumed[len(resumed)-1], "the state after the replay")
	assert.Contains(t, r.ResumedConfigOptions, "model")
	assert.Zero(t, r.RunExit)
	assert.Zero(t, r.ResumeExit)
}

// v2Script is the replay model of the v2 sessions: a greeting, a file
// write (which asks permission), a turn that waits to be cancelled, and
// "Done." after a tool call.
func v2Script() map[string]any {
	return map[string]any{"turns": []any{
		map[string]any{"match": "[greet]", "events": []any{map[string]any{"text": "Hello "}, map[string]any{"text": "there."}}},
		map[string]any{"match": "[write]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "call_w", "name": "write_file",
			"arguments": map[string]any{"path": "notes.txt", "content": "written over v2\n"}}}}},
		map[string]any{"match": "[command]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "call_c", "name": "run_command",
			"arguments": map[string]any{"command": "printf 'from the sdk\\n'"}}}}},
		map[string]any{"match": "[wait]", "events": []any{map[string]any{"text": "working"}, map[string]any{"hang": true}}},
		map[string]any{"events": []any{map[string]any{"text": "Done."}}},
	}}
}

// TestBinaryV2HoldsPromptsWhileATurnRuns: a prompt sent while a turn runs
// is answered only once that turn has ended, and its turn follows;
// session/cancel withdraws a held prompt (-32800) and ends the running
// turn; a model error ends a turn with stop reason "error" and the error.
func TestBinaryV2HoldsPromptsWhileATurnRuns(t *testing.T) {
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[slow]", "events": []any{map[string]any{"text": "slowly", "delayMs": 300}}},
		map[string]any{"match": "[wait]", "events": []any{map[string]any{"text": "working"}, map[string]any{"hang": true}}},
		map[string]any{"match": "[fail]", "events": []any{map[string]any{"error": "the model broke"}}},
		map[string]any{"events": []any{map[string]any{"text": "quick"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--max-retries", "0")
	p.InitializeV2(nil)
	sid := p.NewSessionV2(t.TempDir())
	text := func(s string) []acpv2.ContentBlock { return []acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: s}}} }

	slow := p.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: text("[slow] take a while")})
	held := p.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: text("then this")})
	var kinds []string
	var heldID string
	var userIDs []string
	for heldID == "" || !strings.HasSuffix(kinds[len(kinds)-1], "idle:end_turn") || strings.Count(strings.Join(kinds, " "), "idle:end_turn") < 2 {
		m := p.Next()
		kind := v2Kind(t, m)
		switch {
		case m.IsResponse() && string(m.ID) == slow:
			kind = "answer:slow"
		case m.IsResponse() && string(m.ID) == held:
			var r acpv2.PromptResponse
			acptest.MustResult(t, m, &r)
			heldID, kind = r.MessageID, "answer:held"
		case m.Method == acpv2.MethodSessionUpdate && m.UpdateV2(t).Update.UserMessage != nil:
			userIDs = append(userIDs, m.UpdateV2(t).Update.UserMessage.MessageID)
		}
		kinds = append(kinds, kind)
	}
	assert.Less(t, indexOf(kinds, "answer:slow"), indexOf(kinds, "agent_message_chunk"))
	assert.Greater(t, indexOf(kinds, "answer:held"), indexOf(kinds, "state_update:idle:end_turn"), "held until the turn ended: %v", kinds)
	require.Len(t, userIDs, 2)
	assert.Equal(t, userIDs[1], heldID, "answered with its user_message's id")
	assert.NotEqual(t, userIDs[0], heldID)

	wait := p.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: text("[wait] hang on")})
	withdrawn := p.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: text("never")})
	for {
		if m := p.Next(); m.Method == acpv2.MethodSessionUpdate && m.UpdateV2(t).Update.AgentMessageChunk != nil {
			break
		}
	}
	p.Notify(acpv2.MethodSessionCancel, &acpv2.CancelSessionNotification{SessionID: sid})
	resp, before := p.Await(withdrawn)
	require.NotNil(t, resp.Error, "%s", resp.Raw)
	assert.Equal(t, acp.CodeRequestCancelled, resp.Error.Code)
	_ = wait
	// The idle update may come before or after the withdrawn prompt's
	// answer.
	if kinds := func() (k []string) {
		for _, m := range before {
			k = append(k, v2Kind(t, m))
		}
		return k
	}(); !slices.Contains(kinds, "state_update:idle:cancelled") {
		turn := readTurnV2(t, p, wait, false, v2Turn{messageID: "answered above"})
		assert.Equal(t, acpv2.StopReasonCancelled, turn.stop)
	}

	fail := promptV2(t, p, sid, "[fail] go", false)
	assert.Equal(t, acpv2.StopReasonError, fail.stop)
	last := fail.msgs[len(fail.msgs)-1]
	if last.Method != acpv2.MethodSessionUpdate {
		last = fail.msgs[len(fail.msgs)-2]
	}
	idle := last.UpdateV2(t).Update.StateUpdate.Idle
	require.NotNil(t, idle.Error)
	assert.Contains(t, idle.Error.Message, "the model broke")
}

// TestBinaryV2ManagesSessions: the mode is a config option; a session is
// titled, reported open (with its state), listed, forked, archived and
// deleted through v2's methods.
func TestBinaryV2ManagesSessions(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+writeScript(t, v2Script()))
	p.InitializeV2(nil)
	cwd := t.TempDir()
	sid := p.NewSessionV2(cwd)
	promptV2(t, p, sid, "[greet] hi", false)

	resp, _ := p.Call(acpv2.MethodSessionSetConfigOption, map[string]any{"sessionId": sid, "configId": "mode", "type": "id", "value": "read-only"})
	var set acpv2.SetSessionConfigOptionResponse
	acptest.MustResult(t, resp, &set)
	assert.Equal(t, "mode", set.ConfigOptions[0].ConfigID)
	assert.Equal(t, "read-only", set.ConfigOptions[0].Select.CurrentValue)
	resp, _ = p.Call(acpv2.MethodSessionSetConfigOption, map[string]any{"sessionId": sid, "configId": "mode", "type": "boolean", "value": true})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)

	resp, _ = p.Call(acpv2.MethodSessionSetTitle, map[string]any{"sessionId": sid, "title": "  My   notes "})
	var title acpv2.SetSessionTitleResponse
	acptest.MustResult(t, resp, &title)
	assert.Equal(t, "My notes", title.Title)
	resp, _ = p.Call(acpv2.MethodSessionStatus, map[string]any{"sessionId": sid})
	var status acpv2.SessionStatusResponse
	acptest.MustResult(t, resp, &status)
	assert.Equal(t, acpv2.SessionStatusOpen, status.Status)
	require.NotNil(t, status.State)
	assert.NotNil(t, status.State.Idle, "its last state")

	resp, _ = p.Call(acpv2.MethodSessionList, map[string]any{})
	var list acpv2.ListSessionsResponse
	acptest.MustResult(t, resp, &list)
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, "My notes", list.Sessions[0].Title)

	resp, _ = p.Call(acpv2.MethodSessionFork, map[string]any{"sessionId": sid, "cwd": cwd})
	var fork acpv2.ForkSessionResponse
	acptest.MustResult(t, resp, &fork)
	assert.NotEqual(t, sid, fork.SessionID)
	promptV2(t, p, fork.SessionID, "[greet] again", false)

	resp, _ = p.Call(acpv2.MethodSessionArchive, map[string]any{"sessionId": sid})
	acptest.MustResult(t, resp, nil)
	resp, _ = p.Call(acpv2.MethodSessionStatus, map[string]any{"sessionId": sid})
	acptest.MustResult(t, resp, &status)
	assert.Equal(t, acpv2.SessionStatusSaved, status.Status, "archiving closed it")
	resp, _ = p.Call(acpv2.MethodSessionDelete, map[string]any{"sessionId": sid})
	acptest.MustResult(t, resp, nil)
	resp, _ = p.Call(acpv2.MethodSessionList, map[string]any{"archived": "include"})
	acptest.MustResult(t, resp, &list)
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, fork.SessionID, list.Sessions[0].SessionID)
}

// TestBinaryV2MCPServerEverything: a v2 session connects the real
// server-everything over stdio; its echo tool is called through a
// permission request, and its elicitation reaches the client as a v2
// elicitation/create (checked against the v2 schema) scoped to the
// session.
func TestBinaryV2MCPServerEverything(t *testing.T) {
	node, index := everything(t)
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[mcp]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "call_echo",
			"name": "mcp__everything__echo", "arguments": map[string]any{"message": "hi from v2"}}}}},
		map[string]any{"events": []any{map[string]any{"toolCall": map[string]any{"id": "call_elicit",
			"name": "mcp__everything__trigger-elicitation-request", "arguments": map[string]any{}}}}},
		map[string]any{"events": []any{map[string]any{"text": "Done."}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script)
	p.InitializeV2(&acpv2.ClientCapabilities{Elicitation: &acpv2.ElicitationCapabilities{Form: &acpv2.ElicitationFormCapabilities{}}})
	resp, _ := p.Call(acpv2.MethodSessionNew, map[string]any{"cwd": t.TempDir(),
		"mcpServers": []any{map[string]any{"type": "stdio", "name": "everything", "command": node, "args": []string{index, "stdio"}}}})
	var ns acpv2.NewSessionResponse
	acptest.MustResult(t, resp, &ns)

	id := p.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: ns.SessionID, Prompt: []acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: "[mcp] echo and ask"}}}})
	var elicited *acpv2.CreateElicitationRequest
	echoed := false
	for done := false; !done; {
		m := p.Next()
		switch m.Method {
		case acpv2.MethodSessionRequestPermission:
			var req acpv2.RequestPermissionRequest
			require.NoError(t, json.Unmarshal(m.Params, &req))
			p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": req.Options[0].OptionID}})
		case acpv2.MethodElicitationCreate:
			elicited = new(acpv2.CreateElicitationRequest)
			require.NoError(t, json.Unmarshal(m.Params, elicited))
			p.Respond(m.ID, map[string]any{"action": "decline"})
		case acpv2.MethodSessionUpdate:
			u := m.UpdateV2(t).Update
			if tc := u.ToolCallUpdate; tc != nil && tc.ToolCallID == "call_echo" {
				if c, ok := tc.Content.Get(); ok {
					for _, item := range c {
						if item.Content != nil && item.Content.Content.Text != nil && strings.Contains(item.Content.Content.Text.Text, "Echo: hi from v2") {
							echoed = true
						}
					}
				}
			}
			if s := u.StateUpdate; s != nil && s.Idle != nil && s.Idle.StopReason != "" {
				done = true
				assert.Equal(t, acpv2.StopReasonEndTurn, s.Idle.StopReason)
			}
		}
		_ = id
	}
	assert.True(t, echoed, "the echo tool's result is shown")
	require.NotNil(t, elicited, "the server's question reached the client")
	require.NotNil(t, elicited.Form)
	assert.Equal(t, ns.SessionID, elicited.SessionID)
	assert.Contains(t, elicited.Message, "everything")
}
