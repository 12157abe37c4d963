package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// A session id names the session's file (<id>.jsonl), its lock
// (<id>.lock) and its directory (<id>/). An id that is another session's
// file or lock name ("<uuid>.jsonl", "<uuid>.lock", "<uuid>.jsonl.broken",
// a temporary file, in any case) is refused (-32602): session/delete of
// such an id removed the other session's file of that name (its
// conversation, live and locked, or its lock, which keeps two agents off
// one session), and a Windows device name or a trailing dot ("x." is
// "x" there) would do the like. A file where a deleted session's
// directory would be is not the session's and stays.
func TestBinaryDeleteOfAnIdSpelledAsAnotherSessionsFileTouchesNothing(t *testing.T) {
	model := newCountingModel(t)
	dir, cwd := t.TempDir(), t.TempDir()
	p := storeAgent(t, model, dir)
	sid := p.NewSession(cwd)
	askText(t, p, sid, "keep me")
	data := filepath.Join(dir, sid+".jsonl")
	require.FileExists(t, data)
	before, err := os.ReadFile(data)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, sid+".jsonl.broken"), []byte("kept"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes"), []byte("kept"), 0o600))
	for _, id := range []string{sid + ".jsonl", sid + ".lock", sid + ".jsonl.broken", sid + ".jsonl.tmp1", sid + ".JSONL",
		"con", "NUL.jsonl", "com1", sid + "."} {
		resp, _ := p.Call(acp.MethodSessionDelete, &acp.DeleteSessionRequest{SessionID: acp.SessionId(id)})
		require.NotNil(t, resp.Error, "%s: %s", id, resp.Raw)
		assert.EqualValues(t, -32602, resp.Error.Code, id)
		assert.Contains(t, resp.Error.Message, "invalid session id", id)
	}
	resp, _ := p.Call(acp.MethodSessionDelete, &acp.DeleteSessionRequest{SessionID: "notes"})
	require.Nil(t, resp.Error, "%s", resp.Raw)
	assert.FileExists(t, filepath.Join(dir, "notes"), "a file where the directory of session \"notes\" would be is not the session's")
	after, err := os.ReadFile(data)
	require.NoError(t, err, "the session's file was removed")
	assert.Equal(t, before, after)
	assert.FileExists(t, filepath.Join(dir, sid+".jsonl.broken"))
	assert.FileExists(t, filepath.Join(dir, sid+".lock"), "the live session's lock")
	assert.Equal(t, "2 user messages", askText(t, p, sid, "still here"), "the session goes on")
}
