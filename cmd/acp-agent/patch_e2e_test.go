package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 16, apply_patch, through the built binary: the permission request
// shows every file's diff; once allowed, every file changes; a patch one
// of whose hunks does not apply writes nothing (the model is told why),
// and a path outside the workspace is refused before anyone is asked.
func TestBinaryApplyPatchShowsEveryDiffAndIsAllOrNothing(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "a.go"), "package a\n\nfunc A() int { return 1 }\n")
	write(t, filepath.Join(ws, "b.go"), "package b\n\nfunc B() int { return 2 }\n")
	good := "*** Begin Patch\n*** Update File: a.go\n@@ package a\n-func A() int { return 1 }\n+func A() int { return 10 }\n" +
		"*** Add File: c.go\n+package c\n*** End Patch"
	bad := "*** Begin Patch\n*** Update File: b.go\n-func B() int { return 2 }\n+func B() int { return 20 }\n" +
		"*** Update File: a.go\n-no such line\n+x\n*** End Patch"
	outside := "*** Begin Patch\n*** Add File: ../escape.go\n+package x\n*** End Patch"
	model := promptModel(t, map[string][]modelCall{
		"[good]":    {{"apply_patch", map[string]any{"patch": good}}},
		"[bad]":     {{"apply_patch", map[string]any{"patch": bad}}},
		"[outside]": {{"apply_patch", map[string]any{"patch": outside}}},
	})
	client := newToolClient(ws, "allow_once")
	// A model trained on the patch format is offered apply_patch (issue 26).
	cmd := exec.Command(agentBin, "--model", "openai/gpt-5")
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
	conn, sid := startE2EWith(t, cmd, client, ws, sdk.ClientCapabilities{})

	promptE2E(t, conn, sid, "[good]")
	client.mu.Lock()
	require.Len(t, client.permissions, 1)
	var diffPaths []string
	for _, c := range client.permissions[0].ToolCall.Content {
		if c.Diff != nil {
			diffPaths = append(diffPaths, c.Diff.Path)
		}
	}
	client.mu.Unlock()
	assert.Equal(t, []string{filepath.Join(ws, "a.go"), filepath.Join(ws, "c.go")}, diffPaths, "the request shows every file's diff")
	data, err := os.ReadFile(filepath.Join(ws, "a.go"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "return 10")
	data, err = os.ReadFile(filepath.Join(ws, "c.go"))
	require.NoError(t, err)
	assert.Equal(t, "package c\n", string(data))

	promptE2E(t, conn, sid, "[bad]")
	data, err = os.ReadFile(filepath.Join(ws, "b.go"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "return 2 }", "the first file of a failing patch is not written")
	model.mu.Lock()
	last := model.bodies[len(model.bodies)-1]
	model.mu.Unlock()
	assert.Contains(t, last, "hunk 1: its context and removed lines were not found")

	client.mu.Lock()
	asked := len(client.permissions)
	client.mu.Unlock()
	promptE2E(t, conn, sid, "[outside]")
	client.mu.Lock()
	assert.Equal(t, asked, len(client.permissions), "a path outside the workspace is refused before anyone is asked")
	client.mu.Unlock()
	assert.NoFileExists(t, filepath.Join(filepath.Dir(ws), "escape.go"))
}
