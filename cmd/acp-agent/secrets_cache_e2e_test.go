package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sandbox helpers keep their listing of a workspace's secrets files
// between processes (sandbox.Policy.SecretsCache, under the session
// directory). Every way of putting a .env where a kept listing has none,
// between two agent processes and right after the first one listed (the
// same second), is seen by the second: a .env created (also deep down),
// renamed in from outside, hard-linked in, a directory swapped for one
// holding a .env with its mtime set back to the old one's, and a
// directory given a .env and its mtime set back with touch -d. The
// directories are older than the racy window when the first process lists
// them, so their listings are kept and trusted by the second.
func TestBinaryKeptSecretsListingSeesEveryNewEnvFile(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	if _, err := exec.LookPath("touch"); err != nil {
		t.Skip("no touch")
	}
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			keptSecretsAttacks(t, m)
		})
	}
}

func keptSecretsAttacks(t *testing.T, m sandboxMode) {
	dir, home, outside := userDir(t, m), userDir(t, m), userDir(t, m)
	sessions := filepath.Join(home, "sessions")
	for _, d := range []string{"created", "deep/a/b", "renamed", "linked", "swapped", "backdated", "plain"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
		write(t, filepath.Join(dir, d, "file.txt"), "ordinary\n")
	}
	write(t, filepath.Join(outside, "to-rename"), "KEPT_RENAMED_SECRET\n")
	write(t, filepath.Join(outside, "to-link"), "KEPT_LINKED_SECRET\n")
	require.NoError(t, os.Mkdir(filepath.Join(outside, "swap-in"), 0o755))
	write(t, filepath.Join(outside, "swap-in", ".env"), "KEPT_SWAPPED_SECRET\n")
	chownTree(t, m, dir)
	chownTree(t, m, outside)
	chownTree(t, m, home)
	// Listed after the racy window: the listings are kept.
	time.Sleep(2200 * time.Millisecond)

	cat := "cat created/.env deep/a/b/.env renamed/.env linked/.env swapped/.env backdated/.env plain/file.txt; echo END"
	out := keptSecretsTurn(t, m, dir, home, sessions, cat)
	require.Contains(t, out, "END", "%s", out)
	require.Contains(t, out, "ordinary")
	if goruntime.GOOS == "linux" { // the helpers that keep a listing
		kept, _ := filepath.Glob(filepath.Join(sessions, ".secrets-cache", "*"))
		require.NotEmpty(t, kept, "the first process kept its listing")
	}

	mtime := func(p string) time.Time {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		return fi.ModTime()
	}
	touchBack := func(p string, to time.Time) {
		// touch -d, as a command would: the mtime exactly as it was.
		out, err := exec.Command("touch", "-m", "-d", fmt.Sprintf("@%d.%09d", to.Unix(), to.Nanosecond()), p).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Equal(t, to, mtime(p))
	}
	write(t, filepath.Join(dir, "created", ".env"), "KEPT_CREATED_SECRET\n")
	write(t, filepath.Join(dir, "deep/a/b", ".env"), "KEPT_DEEP_SECRET\n")
	require.NoError(t, os.Rename(filepath.Join(outside, "to-rename"), filepath.Join(dir, "renamed", ".env")))
	require.NoError(t, os.Link(filepath.Join(outside, "to-link"), filepath.Join(dir, "linked", ".env")))
	old := mtime(filepath.Join(dir, "swapped"))
	require.NoError(t, os.Rename(filepath.Join(dir, "swapped"), filepath.Join(outside, "swapped-out")))
	require.NoError(t, os.Rename(filepath.Join(outside, "swap-in"), filepath.Join(dir, "swapped")))
	touchBack(filepath.Join(dir, "swapped"), old)
	old = mtime(filepath.Join(dir, "backdated"))
	write(t, filepath.Join(dir, "backdated", ".env"), "KEPT_BACKDATED_SECRET\n")
	touchBack(filepath.Join(dir, "backdated"), old)
	chownTree(t, m, dir)

	out = keptSecretsTurn(t, m, dir, home, sessions, cat)
	require.Contains(t, out, "END", "%s", out)
	require.Contains(t, out, "ordinary", "the command ran and could read")
	for _, s := range []string{"KEPT_CREATED_SECRET", "KEPT_DEEP_SECRET", "KEPT_RENAMED_SECRET", "KEPT_LINKED_SECRET", "KEPT_SWAPPED_SECRET", "KEPT_BACKDATED_SECRET"} {
		assert.NotContains(t, out, s, "mode %s: a command read a .env the kept listing had not seen", m.name)
	}
}

// keptSecretsTurn runs one "acp-agent exec" turn (a new agent process,
// sandbox on) whose one tool call runs command in dir, and returns what
// it printed.
func keptSecretsTurn(t *testing.T, m sandboxMode, dir, home, sessions, command string) string {
	t.Helper()
	return sandboxedTurn(t, m, dir, home, command, "--session-dir", sessions)
}

// sandboxedTurn is keptSecretsTurn with the agent's flags (args) given.
func sandboxedTurn(t *testing.T, m sandboxMode, dir, home, command string, args ...string) string {
	t.Helper()
	call := map[string]any{"toolCall": map[string]any{"id": "c1", "name": "run_command", "arguments": map[string]any{"command": command}}}
	script, err := json.Marshal(map[string]any{"turns": []any{
		map[string]any{"events": []any{call}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	require.NoError(t, err)
	path := filepath.Join(home, "script.json")
	require.NoError(t, os.WriteFile(path, script, 0o644))
	chownTree(t, m, path)
	args = append([]string{"exec", "--mode", "full-access", "--sandbox", "on", "--sandbox-network=false"}, args...)
	cmd := exec.Command(agentBin, append(args, "--model", "replay/"+path, "run it")...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home}
	asUser(cmd, m)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return strings.ReplaceAll(string(out), "\r", "")
}
