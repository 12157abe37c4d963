package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// The Windows binary end to end, as an editor drives it: initialize,
// session/new in a folder with spaces in its path, a prompt with the
// replay model that edits a CRLF file and runs a command (which asks,
// says once that there is no sandbox, and offers to remember exactly
// that line), then a new agent process loads the session back. Every
// line the agent writes on stdout is checked as a schema-valid message.
//
// The shell is the default: PowerShell on Windows; under Wine, whose
// powershell.exe is a stub that runs nothing (TestMain takes it off
// PATH), the fallback, cmd.exe.
func TestBinaryWindowsSmoke(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "My Project")
	sessions := filepath.Join(base, "sessions dir")
	config := filepath.Join(base, "config.json")
	require.NoError(t, os.Mkdir(dir, 0o755))
	crlf := "line one\r\nTODO: fix\r\nline three\r\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(crlf), 0o644))
	require.NoError(t, os.WriteFile(config, []byte(`{}`), 0o600))

	call := func(id, name string, args map[string]any) map[string]any {
		a, _ := json.Marshal(args)
		return map[string]any{"toolCall": map[string]any{"id": id, "name": name, "arguments": json.RawMessage(a)}}
	}
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"events": []any{call("c1", "edit_file", map[string]any{"path": "notes.txt", "old_string": "TODO: fix", "new_string": "DONE: fixed"})}},
		map[string]any{"events": []any{call("c2", "run_command", map[string]any{"command": "echo hello-from-the-shell"})}},
		map[string]any{"events": []any{map[string]any{"text": "All done."}}},
	}})
	args := []string{"--model", "replay/" + script, "--session-dir", sessions, "--config", config}

	p := startAgent(t, nil, args...)
	init := p.Initialize(nil)
	require.True(t, init.AgentCapabilities.LoadSession)
	sid := p.NewSession(dir)

	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("fix the TODO")}})
	var text strings.Builder
	var options [][]acp.PermissionOption
	var commandOut string
	for {
		m := p.Next()
		if m.IsResponse() {
			require.Nil(t, m.Error)
			require.Equal(t, id, string(m.ID))
			break
		}
		switch m.Method {
		case acp.MethodSessionRequestPermission:
			var req acp.RequestPermissionRequest
			require.NoError(t, json.Unmarshal(m.Params, &req))
			options = append(options, req.Options)
			p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
		case acp.MethodSessionUpdate:
			u := m.Update(t).Update
			if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
				text.WriteString(u.AgentMessageChunk.Content.Text.Text)
			}
			if u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallID == "c2" {
				for _, c := range u.ToolCallUpdate.Content {
					if c.Content != nil && c.Content.Content.Text != nil {
						commandOut += c.Content.Content.Text.Text
					}
				}
			}
		}
	}
	assert.Contains(t, text.String(), "All done.")
	assert.Contains(t, text.String(), "commands run without a sandbox on Windows", "the first command says there is no sandbox")
	require.Len(t, options, 2, "the edit and the command ask in the default mode")
	var names []string
	for _, o := range options[1] {
		names = append(names, o.Name)
	}
	assert.Contains(t, strings.Join(names, "|"), "Always allow exactly `echo hello-from-the-shell`", "a command is remembered as its exact line")

	data, err := os.ReadFile(filepath.Join(dir, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, strings.Replace(crlf, "TODO: fix", "DONE: fixed", 1), string(data), "the edit kept every CRLF")
	assert.Contains(t, commandOut, "hello-from-the-shell")
	assert.Contains(t, commandOut, "[exit code 0]")

	// A new agent process loads the session from disk and replays it.
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 20e9))
	q := startAgent(t, nil, args...)
	q.Initialize(nil)
	resp, before := q.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: acp.SessionId(sid), CWD: dir})
	require.Nil(t, resp.Error)
	replayed := textOf(t, before)
	assert.Contains(t, replayed, "All done.", "the history came back")
}
