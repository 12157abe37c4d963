//go:build linux

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

// One agent process, a session after another in the same workspace, the
// workspace changing between them: each session's system prompt says
// how it is when the session starts, not how an earlier session found
// it. The shell's PATH search and the git walk-up are not redone from
// scratch for every session (a dozen stats each; issue 30's burst of
// first prompts), so this pins that what they found is looked at again:
// the shell gone from the PATH, a repository made, its branch switched,
// the shell back, the repository gone.
func TestBinaryEachSessionDescribesTheWorkspaceAsItIsNow(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin, ws := t.TempDir(), t.TempDir()
	link := filepath.Join(bin, "bash")
	require.NoError(t, os.Symlink(bash, link))
	model := stepModel(t, says("ok"))
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--sandbox", "off")
	cmd.Env = []string{"PATH=" + bin, goraceEnv, "HOME=" + testHome(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	conn, first := startE2EWith(t, cmd, newToolClient(ws, "allow_once"), ws, sdk.ClientCapabilities{})

	steps := []struct {
		name   string
		change func()
		shell  string
		git    string
	}{
		{"as it starts", func() {}, "bash -c", ws + " (not a git repository)"},
		{"bash gone from the PATH, a repository made", func() {
			require.NoError(t, os.Remove(link))
			write(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/one\n")
		}, "sh -c", "in a git repository at " + ws + ", on branch one"},
		{"bash back, the branch switched", func() {
			require.NoError(t, os.Symlink(bash, link))
			write(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/two\n")
		}, "bash -c", "in a git repository at " + ws + ", on branch two"},
		{"the repository gone", func() {
			require.NoError(t, os.RemoveAll(filepath.Join(ws, ".git")))
		}, "bash -c", ws + " (not a git repository)"},
		{"bash gone again", func() {
			require.NoError(t, os.Remove(link))
		}, "sh -c", ws + " (not a git repository)"},
	}
	for i, step := range steps {
		step.change()
		sid := first
		if i > 0 {
			sess, err := conn.NewSession(waitCtx(t), sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{}})
			require.NoError(t, err)
			sid = sess.SessionId
		}
		assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "hi"))
		bodies := model.all()
		require.Len(t, bodies, i+1)
		sys := systemPrompt(t, bodies[i])
		assert.Contains(t, sys, "- Shell: run_command runs command lines with "+step.shell+"\n", step.name)
		assert.Contains(t, sys, step.git, step.name)
		assert.Contains(t, bodies[i], "Run a shell command line ("+step.shell+")", "%s: run_command's description", step.name)
	}
}
