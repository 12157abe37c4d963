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

// Issue 16, multi_edit, through the built binary: several replacements in
// one file apply in order; if one fails nothing is written, and the model
// is told which edit failed.
func TestBinaryMultiEditIsAllOrNothing(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "main.go")
	const orig = "package main\n\nfunc a() {}\nfunc b() {}\n"
	require.NoError(t, os.WriteFile(file, []byte(orig), 0o644))
	model := promptModel(t, map[string][]modelCall{
		"[good]": {{"multi_edit", map[string]any{"path": "main.go", "edits": []any{
			map[string]any{"old_string": "func a() {}", "new_string": "func a2() {}"},
			map[string]any{"old_string": "func a2() {}\nfunc b() {}", "new_string": "func a2() {}\nfunc b2() {}"},
		}}}},
		"[bad]": {{"multi_edit", map[string]any{"path": "main.go", "edits": []any{
			map[string]any{"old_string": "func a2() {}", "new_string": "func a3() {}"},
			map[string]any{"old_string": "no such text", "new_string": "x"},
		}}}},
	})
	client := newToolClient(ws, "allow_once")
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--mode", "accept-edits")
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
	conn, sid := startE2EWith(t, cmd, client, ws, sdk.ClientCapabilities{})

	promptE2E(t, conn, sid, "[good]")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "package main\n\nfunc a2() {}\nfunc b2() {}\n", string(data), "the second edit saw the first one's result")

	promptE2E(t, conn, sid, "[bad]")
	data, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "package main\n\nfunc a2() {}\nfunc b2() {}\n", string(data), "a failed edit writes nothing, not even the edits before it")
	model.mu.Lock()
	last := model.bodies[len(model.bodies)-1]
	model.mu.Unlock()
	assert.Contains(t, last, "edit 2 of 2")
	assert.Contains(t, last, "nothing was written")
}
