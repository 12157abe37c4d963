package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// dirState maps every path under root to its contents (directories to
// "<dir>"), to show that a request left the filesystem alone.
func dirState(t *testing.T, root string) map[string]string {
	t.Helper()
	state := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			state[rel] = "<dir>"
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		state[rel] = string(data)
		return nil
	}))
	return state
}

// Issue 13.9: every method that takes a session id answers -32602 for an
// id that cannot name a session, and touches nothing on disk: not the
// session directory, not the files a path-shaped id points at.
func TestBinaryInvalidSessionIDsAreInvalidParams(t *testing.T) {
	model := newCountingModel(t)
	root := t.TempDir()
	dir, cwd := filepath.Join(root, "sessions"), t.TempDir()
	require.NoError(t, os.Mkdir(dir, 0o700))
	p := storeAgent(t, model, dir)
	sid := p.NewSession(cwd)
	askText(t, p, sid, "hello")

	// Bait: a real session file one level up ("../x") and at an absolute
	// path, copies of the live one, so a path-shaped id would find them.
	data, err := os.ReadFile(filepath.Join(dir, sid+".jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "x.jsonl"), data, 0o600))
	abs := filepath.Join(root, "abs")
	require.NoError(t, os.WriteFile(abs+".jsonl", data, 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(root, "abs"), 0o700)) // RemoveAll bait
	before := dirState(t, root)

	ids := []string{
		"../x", "..", ".", "../" + filepath.Base(root) + "/x", abs, "/etc/passwd", "a\x00b", sid + "\x00",
		"a/b", `a\b`, ".hidden", "x..y", "sess id", "é", "\u2028", strings.Repeat("a", 129),
		"../sessions/" + sid, // even one that resolves to a real session
	}
	methods := map[string]func(id string) any{
		acp.MethodSessionLoad: func(id string) any {
			return map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}
		},
		acp.MethodSessionResume: func(id string) any { return map[string]any{"sessionId": id, "cwd": cwd} },
		acp.MethodSessionFork:   func(id string) any { return map[string]any{"sessionId": id, "cwd": cwd} },
		acp.MethodSessionClose:  func(id string) any { return map[string]any{"sessionId": id} },
		acp.MethodSessionDelete: func(id string) any { return map[string]any{"sessionId": id} },
		acp.MethodSessionPrompt: func(id string) any {
			return map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}
		},
		acp.MethodSessionSetMode: func(id string) any { return map[string]any{"sessionId": id, "modeId": "default"} },
		acp.MethodSessionSetConfigOption: func(id string) any {
			return map[string]any{"sessionId": id, "configId": "mode", "value": "default"}
		},
		acp.MethodExtSessionStats: func(id string) any { return map[string]any{"sessionId": id} },
		acp.MethodExtSessionFork:  func(id string) any { return map[string]any{"sessionId": id} },
		acp.MethodExtSessionSteer: func(id string) any { return map[string]any{"sessionId": id, "text": "x"} },
	}
	names := make([]string, 0, len(methods))
	for m := range methods {
		names = append(names, m)
	}
	sort.Strings(names)
	cases := 0
	for _, method := range names {
		for _, id := range ids {
			// session/cancel is a notification: nothing answers, nothing
			// may happen either.
			p.Notify(acp.MethodSessionCancel, map[string]any{"sessionId": id})
			resp, _ := p.Call(method, methods[method](id))
			cases++
			if assert.NotNil(t, resp.Error, "%s %q: %s", method, id, resp.Raw) {
				assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code, "%s %q: %s", method, id, resp.Raw)
				assert.Contains(t, resp.Error.Message, "invalid session id", "%s %q", method, id)
			}
		}
	}
	t.Logf("%d method × id cases, all -32602", cases)
	assert.Equal(t, before, dirState(t, root), "invalid ids left the filesystem alone")
	// The live session is untouched and still answers.
	assert.Equal(t, "2 user messages", askText(t, p, sid, "still here"))
	resp, _ := p.Call(acp.MethodSessionList, map[string]any{})
	var list acp.ListSessionsResponse
	acptest.MustResult(t, resp, &list)
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, sid, string(list.Sessions[0].SessionID))
}

// Issue 13.7: a request whose id cannot be echoed exactly (invalid UTF-8,
// a lone surrogate escape) is answered -32600 with id null and never run;
// nothing the binary writes is invalid UTF-8 (acptest checks every line).
func TestBinaryRefusesIDsThatCannotBeEchoed(t *testing.T) {
	model := newCountingModel(t)
	dir, cwd := t.TempDir(), t.TempDir()
	p := storeAgent(t, model, dir)
	sid := p.NewSession(cwd)
	cwdJSON, err := json.Marshal(cwd)
	require.NoError(t, err)
	ids := []string{`"\ud800"`, `"\udfff"`, `"x\ud83d"`, `"\ud83d\u0041"`, "\"\xff\"", "\"\xed\xa0\x80\"", "\"a\xc3\""}
	for _, id := range ids {
		lines := []string{
			`{"jsonrpc":"2.0","id":` + id + `,"method":"session/new","params":{"cwd":` + string(cwdJSON) + `,"mcpServers":[]}}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"session/delete","params":{"sessionId":"` + sid + `"}}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"run me"}]}}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":` + id + `}`, // the id echoed in an error message
		}
		for _, line := range lines {
			p.SendLine(line)
			m := p.Next()
			require.True(t, m.IsResponse(), "%q answered by %s", line, m.Raw)
			assert.Equal(t, "null", string(m.ID), "%q: %s", line, m.Raw)
			if assert.NotNil(t, m.Error, "%q: %s", line, m.Raw) {
				assert.Equal(t, acp.CodeInvalidRequest, m.Error.Code, "%q", line)
			}
		}
	}
	// Nothing ran: still one session, still there, and the model was
	// asked nothing.
	resp, _ := p.Call(acp.MethodSessionList, map[string]any{})
	var list acp.ListSessionsResponse
	acptest.MustResult(t, resp, &list)
	require.Len(t, list.Sessions, 1, "no session/new ran")
	assert.Equal(t, sid, string(list.Sessions[0].SessionID), "no session/delete ran")
	model.mu.Lock()
	assert.Empty(t, model.bodies, "no session/prompt ran")
	model.mu.Unlock()
	// The connection is still up.
	assert.Equal(t, "1 user messages", askText(t, p, sid, "hello"))
}
