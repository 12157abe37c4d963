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

// Issue 16, project hooks, through the built binary: hooks a repository
// defines in .acp-agent/hooks.json run only after the user trusts them,
// through a permission request naming the file and its hash; a refusal
// runs nothing; a trust is remembered across sessions for that content,
// and a changed file asks again.
func TestBinaryProjectHooksRunOnlyOnceTrusted(t *testing.T) {
	needsBash(t)
	ws, home := t.TempDir(), t.TempDir()
	hooksFile := filepath.Join(ws, ".acp-agent", "hooks.json")
	write(t, hooksFile, `{"promptSubmit": [{"command": "cat > /dev/null; echo PROJECT-CONTEXT"}]}`)
	session := func(answer string) (asked []sdk.RequestPermissionRequest, firstPrompt string) {
		model := promptModel(t, nil)
		client := newToolClient(ws, answer)
		cmd := exec.Command(agentBin, "--model", "openai/test-model")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
		conn, sid := startE2EWith(t, cmd, client, ws, sdk.ClientCapabilities{})
		promptE2E(t, conn, sid, "hello")
		client.mu.Lock()
		defer client.mu.Unlock()
		return append([]sdk.RequestPermissionRequest(nil), client.permissions...), lastUserMessage(t, model.body(t, 0))
	}

	asked, prompt := session("reject_once")
	require.Len(t, asked, 1, "the first use asks")
	title := *asked[0].ToolCall.Title
	assert.Contains(t, title, hooksFile)
	assert.Contains(t, title, "sha256 ")
	assert.NotContains(t, prompt, "PROJECT-CONTEXT", "refused hooks do not run")

	asked, prompt = session("allow_always")
	require.Len(t, asked, 1, "a refusal is not remembered")
	assert.Contains(t, prompt, "PROJECT-CONTEXT")

	asked, prompt = session("reject_once")
	assert.Empty(t, asked, "the trust is remembered for this content")
	assert.Contains(t, prompt, "PROJECT-CONTEXT")

	write(t, hooksFile, `{"promptSubmit": [{"command": "cat > /dev/null; echo CHANGED-CONTEXT"}]}`)
	asked, prompt = session("reject_once")
	require.Len(t, asked, 1, "a changed file asks again")
	assert.False(t, strings.Contains(prompt, "CHANGED-CONTEXT") || strings.Contains(prompt, "PROJECT-CONTEXT"))

	// A hooks file that is a symlink is never read: nothing asks, nothing
	// runs.
	elsewhere := filepath.Join(t.TempDir(), "hooks.json")
	write(t, elsewhere, `{"promptSubmit": [{"command": "cat > /dev/null; echo LINKED-CONTEXT"}]}`)
	require.NoError(t, os.Remove(hooksFile))
	require.NoError(t, os.Symlink(elsewhere, hooksFile))
	asked, prompt = session("allow_always")
	assert.Empty(t, asked)
	assert.NotContains(t, prompt, "LINKED-CONTEXT")
}
