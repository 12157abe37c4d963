package main

import (
	"fmt"
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
	conn, sid := editingAgent(t, ws, model, "openai/test-model")

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
	conn, sid := editingAgent(t, ws, model, "openai/test-model")
	promptE2E(t, conn, sid, "[near]")
	model.mu.Lock()
	last := model.bodies[len(model.bodies)-1]
	model.mu.Unlock()
	assert.Contains(t, last, "old_string was not found")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.True(t, string(data) == orig, "nothing written")
}

// A patch's hunks of one file are capped (1000): each is sought from the
// previous one to the end of the file, so 20,000 one-line hunks against
// a file of a million lines took hours (the call never answered). Such a
// patch is refused at once, nothing written; 1000 hunks still apply.
func TestBinaryApplyPatchHunksAreCapped(t *testing.T) {
	ws := t.TempDir()
	var big, small strings.Builder
	for i := range 1_000_000 {
		fmt.Fprintf(&big, "l%d\n", i)
	}
	for i := range 2000 {
		fmt.Fprintf(&small, "s%d\n", i)
	}
	write(t, filepath.Join(ws, "big.txt"), big.String())
	write(t, filepath.Join(ws, "small.txt"), small.String())
	patch := func(name, prefix string, hunks, step int) string {
		var b strings.Builder
		b.WriteString("*** Begin Patch\n*** Update File: " + name + "\n")
		for i := range hunks {
			fmt.Fprintf(&b, "@@\n-%s%d\n+x%d\n", prefix, i*step, i)
		}
		b.WriteString("*** End Patch")
		return b.String()
	}
	model := promptModel(t, map[string][]modelCall{
		"[many]": {{"apply_patch", map[string]any{"patch": patch("big.txt", "l", 20_000, 50)}}},
		"[ok]":   {{"apply_patch", map[string]any{"patch": patch("small.txt", "s", 1000, 2)}}},
	})
	conn, sid := editingAgent(t, ws, model, "openai/gpt-5")

	promptE2E(t, conn, sid, "[many]")
	model.mu.Lock()
	last := model.bodies[len(model.bodies)-1]
	model.mu.Unlock()
	assert.Contains(t, last, "20000 hunks, more than the 1000")
	data, err := os.ReadFile(filepath.Join(ws, "big.txt"))
	require.NoError(t, err)
	assert.True(t, string(data) == big.String(), "nothing written")

	promptE2E(t, conn, sid, "[ok]")
	data, err = os.ReadFile(filepath.Join(ws, "small.txt"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "x0\ns1\nx1\ns3\n"), "1000 hunks apply: %.40q", data)
}

// editingAgent starts the agent on model (an OpenAI-format server, as
// modelName) in accept-edits mode, in ws, and opens a session.
func editingAgent(t *testing.T, ws string, model *scriptedModel, modelName string) (*sdk.ClientSideConnection, sdk.SessionId) {
	t.Helper()
	cmd := exec.Command(agentBin, "--model", modelName, "--mode", "accept-edits")
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
	return startE2EWith(t, cmd, newToolClient(ws, "allow_once"), ws, sdk.ClientCapabilities{})
}
