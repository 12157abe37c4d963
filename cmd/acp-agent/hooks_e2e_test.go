package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 16, hooks, through the built binary: a before-tool hook that
// exits 2 blocks the call before anyone is asked, and the model gets its
// reason; an after-tool hook's output joins the result; a prompt hook adds
// context or blocks the prompt before the model sees it; the
// session-start hook runs once; each hook gets its event as JSON on stdin.
func TestBinaryHooksBlockAndAddContext(t *testing.T) {
	needsBash(t)
	ws, home := t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, "x.txt"), "keep me")
	write(t, filepath.Join(ws, "a.txt"), "alpha")
	log := filepath.Join(t.TempDir(), "hooks.log")
	before := `input=$(cat); echo "$input" >> ` + log + `; if echo "$input" | grep -q '"command":"rm '; then echo "no rm please" >&2; exit 2; fi`
	beforeJSON, err := json.Marshal(before)
	require.NoError(t, err)
	config := `{"hooks": {
		"beforeTool": [{"command": ` + string(beforeJSON) + `, "tools": ["run_command"]}],
		"afterTool": [{"command": "cat > /dev/null; echo AFTER-NOTE", "tools": ["read_file"]}],
		"promptSubmit": [{"command": "if grep -q forbidden; then echo 'prompt refused' >&2; exit 2; fi; echo PROMPT-CONTEXT"}],
		"sessionStart": [{"command": "cat > /dev/null; echo START >> ` + log + `; echo START-CONTEXT", "timeout": "5s"}]
	}}`
	write(t, filepath.Join(home, ".config", "acp-agent", "config.json"), config)
	model := promptModel(t, map[string][]modelCall{
		"[rm]":   {{"run_command", map[string]any{"command": "rm x.txt"}}},
		"[read]": {{"read_file", map[string]any{"path": "a.txt"}}},
	})
	client := &messageClient{toolClient: newToolClient(ws, "allow_once")}
	cmd := exec.Command(agentBin, "--model", "openai/test-model")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	conn, sid := startE2EWith(t, cmd, client, ws, sdk.ClientCapabilities{})
	bodies := func() []string {
		model.mu.Lock()
		defer model.mu.Unlock()
		return append([]string(nil), model.bodies...)
	}

	promptE2E(t, conn, sid, "[rm]")
	b := bodies()
	first := lastUserMessage(t, b[0])
	assert.Contains(t, first, "START-CONTEXT", "the session-start hook's context joins the first prompt")
	assert.Contains(t, first, "PROMPT-CONTEXT")
	assert.FileExists(t, filepath.Join(ws, "x.txt"), "the blocked rm never ran")
	assert.Contains(t, b[len(b)-1], "a hook blocked this tool call: no rm please")
	client.toolClient.mu.Lock()
	asked := len(client.toolClient.permissions)
	client.toolClient.mu.Unlock()
	assert.Zero(t, asked, "a blocked call is not put to the user")

	promptE2E(t, conn, sid, "[read]")
	b = bodies()
	assert.Contains(t, b[len(b)-1], "[hook] AFTER-NOTE")
	assert.NotContains(t, lastUserMessage(t, b[len(b)-2]), "START-CONTEXT", "the session-start hook runs once")

	n := len(bodies())
	promptE2E(t, conn, sid, "do the forbidden thing")
	assert.Equal(t, n, len(bodies()), "a blocked prompt never reaches the model")
	assert.Contains(t, client.said(), "Blocked by a hook: prompt refused")

	data, err := os.ReadFile(log)
	require.NoError(t, err)
	logged := string(data)
	assert.Equal(t, 1, strings.Count(logged, "START"))
	assert.Contains(t, logged, `"event":"before_tool"`)
	assert.Contains(t, logged, `"tool":"run_command"`)
	assert.Contains(t, logged, `"arguments":{"command":"rm x.txt"}`)
}
