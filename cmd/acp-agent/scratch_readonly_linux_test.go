package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// A command may leave read-only directories in its TMPDIR (Go's module
// cache, `chmod -R a-w`), which a user other than root cannot empty as
// they are. The agent still removes its scratch directory at exit, and
// the next agent removes a killed one's, instead of leaving it (with what
// the commands wrote) for every later start to fail on. Run as nobody:
// root may unlink in a read-only directory.
func TestBinaryScratchDirectoriesWithReadOnlyDirectoriesAreRemoved(t *testing.T) {
	requireSandbox(t)
	var modes []sandboxMode
	for _, m := range sandboxModes(t) {
		if m.uid >= 0 || os.Geteuid() != 0 {
			modes = append(modes, m)
		}
	}
	if len(modes) == 0 {
		t.Skip("only root can run the agent here, and root removes read-only directories anyway")
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			tmp := modeTmp(t, m)
			start := func(script string) *proc {
				cmd := exec.Command(agentBin, "--model", "replay/"+script, "--mode", "full-access", "--sandbox", "on")
				asUser(cmd, m)
				return startAgentCmd(t, cmd, append(slicesClone(m.env), "HOME="+userDir(t, m), "TMPDIR="+tmp, "ACP_AGENT_SESSION_DIR="+userDir(t, m)))
			}
			// runReadOnly starts an agent whose command leaves read-only
			// directories in its TMPDIR, and returns the agent and its
			// scratch directory.
			runReadOnly := func() (*proc, string) {
				ws := userDir(t, m)
				script := readableScript(t, m, map[string]any{"turns": []any{
					map[string]any{"events": []any{map[string]any{"toolCall": map[string]any{"id": "c1", "name": "run_command",
						"arguments": map[string]any{"command": `mkdir -p "$TMPDIR/ro/sub" && echo x > "$TMPDIR/ro/sub/f" && chmod a-w "$TMPDIR/ro/sub" "$TMPDIR/ro" && echo "$TMPDIR" > tmpdir.txt`}}}}},
					map[string]any{"events": []any{map[string]any{"text": "done"}}},
				}})
				p := start(script)
				p.Initialize(nil)
				sid := p.NewSession(ws)
				resp, _ := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("build")}})
				require.Nil(t, resp.Error)
				data, err := os.ReadFile(filepath.Join(ws, "tmpdir.txt"))
				require.NoError(t, err, p.stderr.String())
				cmdTmp := strings.TrimSpace(string(data))
				require.FileExists(t, filepath.Join(cmdTmp, "ro", "sub", "f"))
				return p, filepath.Dir(cmdTmp)
			}

			// Its own, at exit (stdin closed).
			p, scratchDir := runReadOnly()
			p.stdin.Close()
			require.NoError(t, p.waitExit(t, 0))
			assert.NoDirExists(t, scratchDir, "the agent removes its scratch directory at exit: %s", p.stderr.String())

			// A killed agent's, by the next one.
			killed, killedDir := runReadOnly()
			require.NoError(t, killed.cmd.Process.Kill())
			killed.waitExit(t, 0)
			require.DirExists(t, killedDir)
			next := start(readableScript(t, m, map[string]any{"turns": []any{}}))
			next.Initialize(nil)
			next.stdin.Close() // its exit waits for the start-up clean-up
			require.NoError(t, next.waitExit(t, 0))
			assert.NoDirExists(t, killedDir, "the next agent removes a killed one's scratch directory: %s", next.stderr.String())
		})
	}
}

// readableScript writes a replay script where m's user can read it.
func readableScript(t *testing.T, m sandboxMode, script any) string {
	t.Helper()
	data, err := json.Marshal(script)
	require.NoError(t, err)
	path := filepath.Join(userDir(t, m), "script.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}
