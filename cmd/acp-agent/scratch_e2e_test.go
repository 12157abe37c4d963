//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scratchAgent starts an agent (sandbox on) with TMPDIR tmp whose session
// runs one confined command that writes a file into its TMPDIR, and
// returns the agent and that TMPDIR, as the command saw it.
func scratchAgent(t *testing.T, tmp string) (*proc, string) {
	t.Helper()
	ws := t.TempDir()
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"events": []any{map[string]any{"toolCall": map[string]any{"id": "c1", "name": "run_command",
			"arguments": map[string]any{"command": `echo build-output > "$TMPDIR/out" && echo "$TMPDIR" > tmpdir.txt`}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, []string{"TMPDIR=" + tmp}, "--model", "replay/"+script, "--mode", "full-access", "--sandbox", "on")
	p.Initialize(nil)
	sid := p.NewSession(ws)
	resp, _ := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("build")}})
	require.Nil(t, resp.Error)
	data, err := os.ReadFile(filepath.Join(ws, "tmpdir.txt"))
	require.NoError(t, err, p.stderr.String())
	cmdTmp := strings.TrimSpace(string(data))
	require.FileExists(t, filepath.Join(cmdTmp, "out"), "the command wrote into its TMPDIR")
	// The command's TMPDIR is in the agent's own scratch directory,
	// named after its pid.
	parent := filepath.Dir(cmdTmp)
	require.Equal(t, tmp, filepath.Dir(parent))
	require.True(t, strings.HasPrefix(filepath.Base(parent), "acp-agent-run-"+strconv.Itoa(p.cmd.Process.Pid)+"-"), parent)
	return p, cmdTmp
}

// An agent killed with SIGKILL (an editor quitting hard, the OOM killer)
// cannot remove its commands' TMPDIRs, with what they wrote there; the
// next agent that starts does, in the background after its initialize
// answer, and never the directory of an agent still running, whose
// command's files stay.
func TestBinaryNextAgentRemovesTheTempDirsOfAKilledOne(t *testing.T) {
	requireSandbox(t)
	tmp := testTmp(t)
	killed, killedTmp := scratchAgent(t, tmp)
	live, liveTmp := scratchAgent(t, tmp)
	// Not ours to touch either: a link named like a scratch directory
	// (to a directory of the user's), and another version's directory.
	victim := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(victim, "keep"), nil, 0o600))
	require.NoError(t, os.Symlink(victim, filepath.Join(tmp, "acp-agent-run-1-link")))
	require.NoError(t, os.Mkdir(filepath.Join(tmp, "acp-agent-cmd-123"), 0o700))

	require.NoError(t, killed.cmd.Process.Kill())
	killed.waitExit(t, 0)
	require.DirExists(t, killedTmp, "kill -9 leaves the TMPDIR")

	next := startAgent(t, []string{"TMPDIR=" + tmp}, "--model", "replay/"+hangingScript(t))
	next.Initialize(nil)
	next.stdin.Close() // its exit waits for the start-up clean-up
	require.NoError(t, next.waitExit(t, 0))

	assert.NoDirExists(t, filepath.Dir(killedTmp), "the killed agent's scratch directory is gone")
	assert.FileExists(t, filepath.Join(liveTmp, "out"), "the running agent's command TMPDIR is kept")
	assert.FileExists(t, filepath.Join(victim, "keep"), "a link is not followed")
	assert.DirExists(t, filepath.Join(tmp, "acp-agent-cmd-123"))

	// The live one removes its own at exit.
	live.stdin.Close()
	require.NoError(t, live.waitExit(t, 0))
	assert.NoDirExists(t, filepath.Dir(liveTmp), "an agent that exits on stdin EOF removes its scratch directory")
}

// SIGTERM and SIGINT (an editor stopping the agent) remove the agent's
// scratch directory too.
func TestBinaryTermAndIntRemoveTheTempDirs(t *testing.T) {
	requireSandbox(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			p, cmdTmp := scratchAgent(t, testTmp(t))
			require.NoError(t, p.cmd.Process.Signal(sig))
			require.NoError(t, p.waitExit(t, 0))
			assert.NoDirExists(t, filepath.Dir(cmdTmp))
		})
	}
}
