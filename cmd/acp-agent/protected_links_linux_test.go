package main

import (
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBinaryProtectedPathsBehindSymlinks(t *testing.T) {
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) {
			home := userDir(t, m)
			write(t, filepath.Join(home, "dotfiles", "config", "fish", "config.fish"), "ORIGINAL-FISH\n")
			write(t, filepath.Join(home, ".bashrc"), "ORIGINAL-BASHRC\n")
			write(t, filepath.Join(home, "scratch", "x"), "x\n")
			require.NoError(t, os.Symlink("dotfiles/config", filepath.Join(home, ".config")))
			require.NoError(t, os.Symlink("dotfiles/bash_profile", filepath.Join(home, ".bash_profile")))
			script := `cd "$HOME"
try() { if (eval "$2") >/dev/null 2>&1; then echo "LANDED:$1"; fi; }
try git-through-config-link 'mkdir -p dotfiles/config/git && echo evil > dotfiles/config/git/config'
try autostart-through-config-link 'mkdir -p dotfiles/config/autostart && echo evil > dotfiles/config/autostart/e.desktop'
try dangling-bash-profile 'echo evil > dotfiles/bash_profile'
try hardlink-bashrc 'ln .bashrc scratch/hl && echo evil >> scratch/hl'
try proc-root 'echo evil >> /proc/self/root'"$HOME"'/.bashrc'
echo SCRIPT-DONE
`
			write(t, filepath.Join(home, "scratch", "attack.sh"), script)
			chownTree(t, m, home)
			files := []modelCall{
				{"write_file", map[string]any{"path": "dotfiles/config/git/config", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": "dotfiles/bash_profile", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": "dotfiles/config/autostart/e.desktop", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": "dotfiles/config/other/ok.txt", "content": "OK"}},
			}
			model := promptModel(t, map[string][]modelCall{
				"[attack]": {{"run_command", map[string]any{"command": "bash scratch/attack.sh", "timeout_seconds": 120}}},
				"[files]":  files,
			})
			conn, sid, _ := sandboxSessionAs(t, m, model, home, home, "--session-dir", userDir(t, m))
			assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[attack]"))
			out := lastToolResult(t, model.body(t, 1))
			require.Contains(t, out, "SCRIPT-DONE", "the script ran: %s", out)
			assert.NotContains(t, out, "LANDED:", "a protected file was changed: %s", out)

			assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[files]"))
			results := toolMessages(t, model.body(t, 3))
			require.GreaterOrEqual(t, len(results), len(files))
			results = results[len(results)-len(files):]
			for i, r := range results[:3] {
				assert.Contains(t, r, "protected start-up or configuration file", "%v: %s", files[i].Args["path"], r)
			}
			assert.NotContains(t, results[3], "Permission denied", "an unprotected directory under the linked ~/.config stays writable (control)")
			for _, p := range []string{"dotfiles/config/git", "dotfiles/bash_profile", "dotfiles/config/autostart", "scratch/hl"} {
				_, err := os.Lstat(filepath.Join(home, p))
				assert.True(t, os.IsNotExist(err), "%s was created", p)
			}
			data, err := os.ReadFile(filepath.Join(home, ".bashrc"))
			require.NoError(t, err)
			assert.Equal(t, "ORIGINAL-BASHRC\n", string(data))
		})
	}
}
