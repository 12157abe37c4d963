package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A model cannot make an edit's result grow without bound: replace_all
// of a text that occurs two million times by 4 MiB (8 TB; the agent died
// of it, "fatal error: runtime: out of memory", while showing the diff),
// and a multi_edit doubling the file a hundred times (2^100 times 4 MB),
// are refused once the result would pass the size cap of the files the
// agent writes (10 MiB): the model is told, nothing is written, and the
// agent goes on.
func TestBinaryEditsCannotGrowAFileWithoutBound(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "many.txt")
	orig := strings.Repeat("a\n", 2_000_000)
	require.NoError(t, os.WriteFile(file, []byte(orig), 0o644))
	doubling := make([]any, 100)
	for i := range doubling {
		doubling[i] = map[string]any{"old_string": "a", "new_string": "aa", "replace_all": true}
	}
	model := promptModel(t, map[string][]modelCall{
		"[all]":    {{"edit_file", map[string]any{"path": "many.txt", "old_string": "a", "new_string": strings.Repeat("b", 4<<20), "replace_all": true}}},
		"[double]": {{"multi_edit", map[string]any{"path": "many.txt", "edits": doubling}}},
		"[small]":  {{"edit_file", map[string]any{"path": "small.txt", "old_string": "x", "new_string": "y"}}},
	})
	require.NoError(t, os.WriteFile(filepath.Join(ws, "small.txt"), []byte("x\n"), 0o644))
	client := newToolClient(ws, "allow_once")
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--mode", "accept-edits")
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
	conn, sid := startE2EWith(t, cmd, client, ws, sdk.ClientCapabilities{})

	for _, key := range []string{"[all]", "[double]"} {
		promptE2E(t, conn, sid, key)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.True(t, string(data) == orig, "%s: nothing written", key)
		model.mu.Lock()
		last := model.bodies[len(model.bodies)-1]
		model.mu.Unlock()
		assert.Contains(t, last, "the edited file would pass", key)
	}
	promptE2E(t, conn, sid, "[small]")
	data, err := os.ReadFile(filepath.Join(ws, "small.txt"))
	require.NoError(t, err)
	assert.Equal(t, "y\n", string(data), "the agent goes on")
}

// An old_string that almost matches everywhere costs time linear in the
// file and the text, not their product: 200,000 lines of "a" then "b"
// against a file of 2,000,000 lines of "a" compared 4*10^11 lines at each
// loose level (the call never answered). It answers "not found" at once.
func TestBinaryLooseEditMatchingIsLinear(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "many.txt")
	orig := strings.Repeat("a\n", 2_000_000)
	require.NoError(t, os.WriteFile(file, []byte(orig), 0o644))
	model := promptModel(t, map[string][]modelCall{
		"[near]": {{"edit_file", map[string]any{"path": "many.txt", "old_string": strings.Repeat("a\n", 200_000) + "b", "new_string": "c"}}},
	})
	client := newToolClient(ws, "allow_once")
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--mode", "accept-edits")
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
	conn, sid := startE2EWith(t, cmd, client, ws, sdk.ClientCapabilities{})
	promptE2E(t, conn, sid, "[near]")
	model.mu.Lock()
	last := model.bodies[len(model.bodies)-1]
	model.mu.Unlock()
	assert.Contains(t, last, "old_string was not found")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.True(t, string(data) == orig, "nothing written")
}
