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

// Issue 30 (7): the note a command the sandbox stopped comes back with
// says what held that command, as it ran: with masks by mount .git is
// read-only and a rename(2) across a pinned directory's edge fails with
// EXDEV (said, with what to do instead); in the fallback without mounts
// nothing new can be made at the top of a git repository (said, where
// masks never say it); Go's lower-case errors are recognised; the
// network is said to be off or on as it was.
func TestBinarySandboxBlockedNoteSaysWhatHeld(t *testing.T) {
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) { blockedNote(t, m) })
	}
}

func blockedNote(t *testing.T, m sandboxMode) {
	dir, home := userDir(t, m), userDir(t, m)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", ".env"), []byte("TOKEN=x\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
	out, err := exec.Command("git", "init", "-q", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	chownTree(t, m, dir)
	// A Go program's error, as os.Rename words it (lower case).
	goStyle := `echo "rename a.txt .git/a.txt: read-only file system" >&2; exit 1`
	if !m.masks {
		goStyle = `echo "open new.txt: permission denied" >&2; exit 1`
	}
	model := promptModel(t, map[string][]modelCall{
		"[newtop]": {{"run_command", map[string]any{"command": "touch new-top.txt"}}},
		"[git]":    {{"run_command", map[string]any{"command": "touch .git/planted"}}},
		"[exdev]":  {{"run_command", map[string]any{"command": `perl -e 'rename("a.txt", "sub/a.txt") or die "rename: $!\n"'`}}},
		"[go]":     {{"run_command", map[string]any{"command": goStyle}}},
	})
	conn, sid, _ := sandboxSessionAs(t, m, model, dir, home)
	note := func(prompt string) string {
		promptE2E(t, conn, sid, prompt)
		bodies := model.all()
		return lastToolResult(t, bodies[len(bodies)-1])
	}
	const fallback = "cannot mask paths by mount"
	const exdev = "rename(2) cannot move a file into or out of it (EXDEV)"

	top := note("[newtop]")
	git := note("[git]")
	assert.Contains(t, git, "[blocked by the sandbox: ")
	assert.Contains(t, git, "(not its .git, which is read-only)")
	assert.Contains(t, git, "there is no network.", "--sandbox-network=false")
	assert.NotContains(t, git, "the network is on")
	rename := note("[exdev]")
	goErr := note("[go]")
	assert.Contains(t, goErr, "[blocked by the sandbox: ", "Go's lower-case errors are recognised")
	if m.masks {
		assert.FileExists(t, filepath.Join(dir, "new-top.txt"), "with masks a git root takes new files")
		assert.NotContains(t, top, "blocked by the sandbox")
		assert.Contains(t, git, "Read-only file system")
		assert.NotContains(t, git, fallback, "masks are not the fallback")
		assert.Contains(t, rename, "Invalid cross-device link")
		assert.Contains(t, rename, exdev)
		assert.Contains(t, rename, "copy the file and remove the original instead")
		assert.NoFileExists(t, filepath.Join(dir, "sub", "a.txt"))
	} else {
		assert.NoFileExists(t, filepath.Join(dir, "new-top.txt"))
		assert.Contains(t, top, "[blocked by the sandbox: ")
		assert.Contains(t, top, fallback, "the fallback says why a git root takes no new file")
		assert.Contains(t, git, fallback)
		assert.NotContains(t, rename, exdev, "no mounts, no EXDEV of the sandbox's")
		assert.Contains(t, goErr, fallback)
	}

	if m.uid < 0 && len(m.env) == 0 {
		// The network on (full-access without --sandbox-network=false).
		model := promptModel(t, map[string][]modelCall{
			"[git]": {{"run_command", map[string]any{"command": "touch .git/planted"}}},
		})
		client := newToolClient(dir, "allow_once")
		cmd := exec.Command(agentBin, "--model", "openai/test-model", "--mode", "full-access", "--sandbox", "on")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
		conn, sid := startE2E(t, cmd, client, sdk.ClientCapabilities{})
		promptE2E(t, conn, sid, "[git]")
		bodies := model.all()
		on := lastToolResult(t, bodies[len(bodies)-1])
		assert.Contains(t, on, "the network is on.")
		assert.NotContains(t, on, "there is no network")
	}
}
