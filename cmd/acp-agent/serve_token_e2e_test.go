package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serve's bearer token is the agent's own: whoever has it drives the agent
// through serve and answers its permission questions, escalations out of
// the sandbox included. A confined command run by a serve session (a
// prompt-injected model) cannot read it, neither in the default file
// under the state directory nor in a --token-file elsewhere, nor the
// other files of the state directory (the trusted hooks); it still runs
// and reads the workspace.
func TestServeTokenIsDeniedToConfinedCommands(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	s := &served{root: t.TempDir(), state: t.TempDir()}
	s.root, _ = filepath.EvalSymlinks(s.root)
	write(t, filepath.Join(s.root, "file.txt"), "ordinary\n")
	// The token file serve is given, and the default one (startServe reads
	// that): the same token.
	const token = "SERVE_TOKEN_DENIED_0123456789abcdef"
	custom := filepath.Join(s.state, "tokens", "serve.token")
	stateDir := filepath.Join(s.state, "xdg", "acp-agent")
	for _, f := range []string{custom, filepath.Join(stateDir, "serve-token")} {
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o700))
		require.NoError(t, os.WriteFile(f, []byte(token+"\n"), 0o600))
	}
	write(t, filepath.Join(stateDir, "trusted-hooks.json"), `{"TRUSTED_HOOKS_MARKER":1}`)
	read := "cat file.txt " + shq(custom) + " " + shq(filepath.Join(stateDir, "serve-token")) + " " +
		shq(filepath.Join(stateDir, "trusted-hooks.json")) + "; ls " + shq(stateDir) + "; echo END"
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "read", "events": []any{map[string]any{"toolCall": map[string]any{
			"id": "r1", "name": "run_command", "arguments": map[string]any{"command": "(" + read + ") > out.txt 2>&1"}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	s.args = []string{"serve", "--listen", "127.0.0.1:0", "--root", s.root, "--model", "replay/" + script,
		"--session-dir", filepath.Join(s.state, "sessions"), "--token-file", custom,
		"--sandbox", "on", "--sandbox-network=false", "--mode", "full-access"}
	s = promptServedWithToken(t, s, token, "read")
	out, err := os.ReadFile(filepath.Join(s.root, "out.txt"))
	require.NoError(t, err, "the command ran")
	require.Contains(t, string(out), "ordinary", "%s", out)
	require.Contains(t, string(out), "END")
	assert.NotContains(t, string(out), token, "a confined command read serve's bearer token")
	assert.NotContains(t, string(out), "TRUSTED_HOOKS_MARKER", "a confined command read the state directory")
	assert.False(t, strings.Contains(string(out), "serve-token\n"), "a confined command listed the state directory: %s", out)
}

// The file tools of a serve session cannot read serve's --token-file
// either, even inside the session's workspace and with the sandbox off:
// the model is refused, and neither the session's file nor the agent's
// answers hold the token; an ordinary file is read (the control).
func TestServeTokenIsDeniedToTheFileTools(t *testing.T) {
	t.Parallel()
	s := &served{root: t.TempDir(), state: t.TempDir()}
	s.root, _ = filepath.EvalSymlinks(s.root)
	write(t, filepath.Join(s.root, "file.txt"), "ORDINARY_FILE_OK\n")
	const token = "SERVE_TOKEN_FILE_TOOLS_0123456789abcdef"
	custom := filepath.Join(s.root, "tok", "serve.token")
	for _, f := range []string{custom, filepath.Join(s.state, "xdg", "acp-agent", "serve-token")} {
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o700))
		require.NoError(t, os.WriteFile(f, []byte(token+"\n"), 0o600))
	}
	call := func(id, name string, args map[string]any) map[string]any {
		return map[string]any{"toolCall": map[string]any{"id": id, "name": name, "arguments": args}}
	}
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "read", "events": []any{
			call("r1", "read_file", map[string]any{"path": custom}),
			call("r2", "grep", map[string]any{"pattern": "SERVE_TOKEN|ORDINARY"}),
			call("r3", "list_directory", map[string]any{"path": "tok"}),
			call("r4", "read_file", map[string]any{"path": "file.txt"}),
		}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	s.args = []string{"serve", "--listen", "127.0.0.1:0", "--root", s.root, "--model", "replay/" + script,
		"--session-dir", filepath.Join(s.state, "sessions"), "--token-file", custom, "--sandbox", "off", "--mode", "full-access"}
	s = promptServedWithToken(t, s, token, "read")

	// The session's file holds every tool result the model was given.
	var journal strings.Builder
	require.NoError(t, filepath.WalkDir(filepath.Join(s.state, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			journal.Write(data)
		}
		return nil
	}))
	assert.Contains(t, journal.String(), "ORDINARY_FILE_OK", "the session's file holds the tool results (control)")
	assert.Contains(t, journal.String(), "Permission denied", "the read of the token is refused")
	assert.NotContains(t, journal.String(), token, "a file tool read serve's bearer token")
}

// promptServedWithToken starts serve as s says, checks it uses token,
// and runs one prompt of text in a new session in its root.
func promptServedWithToken(t *testing.T, s *served, token, text string) *served {
	t.Helper()
	s = startServe(t, s)
	require.Equal(t, token, s.token)
	c := dialServe(t, s, false)
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	sid := c.newSession(t, ctx, s.root)
	require.Equal(t, "end_turn", c.prompt(t, ctx, sid, text))
	return s
}
