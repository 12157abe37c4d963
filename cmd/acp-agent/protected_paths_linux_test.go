package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// The home directory's start-up and configuration files are protected
// from confined commands through the built binary, with the home
// directory itself as the workspace: a script run by run_command (full
// access: no question, only the sandbox in the way) appends to,
// truncates, removes, renames over and symlinks over them, creates the
// missing ones, renames their directory away and runs `git config
// --global`; none of it lands, in every sandbox mode (masked by mount as
// root and as nobody, and the fallback). They stay readable, and
// ~/notes.txt stays writable (the control). With every protected file
// present, the top of the home directory stays creatable where the
// sandbox mounts (the files are read-only bind mounts, not granted
// around); a missing one costs that (nothing can create it), and so does
// a missing denied path (~/.ssh, ...).
func TestBinarySandboxProtectsStartupFiles(t *testing.T) {
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		for _, all := range []bool{false, true} {
			name := m.name + "/some-missing"
			if all {
				name = m.name + "/all-present"
			}
			t.Run(name, func(t *testing.T) { protectedStartupFiles(t, m, all) })
		}
	}
}

func protectedStartupFiles(t *testing.T, m sandboxMode, allPresent bool) {
	home := userDir(t, m)
	w := func(rel, content string) {
		p := filepath.Join(home, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	files := map[string]string{
		".bashrc":                          "ORIGINAL-BASHRC\n",
		".profile":                         "ORIGINAL-PROFILE\n",
		".zshrc":                           "ORIGINAL-ZSHRC\n",
		".gitconfig":                       "[user]\n\tname = original\n",
		".config/systemd/user/x.service":   "ORIGINAL-UNIT\n",
		".config/fish/config.fish":         "ORIGINAL-FISH\n",
		".config/git/ignore":               "ORIGINAL-GITIGNORE\n",
		"scratch/evil":                     "EVIL\n",
		"notes.txt":                        "NOTES\n",
		".config/go/telemetry/mode":        "off",
		"dotfiles/zprofile":                "ORIGINAL-ZPROFILE\n",
		".config/autostart/keep.desktop":   "ORIGINAL-AUTOSTART\n",
		".config/environment.d/keep.conf":  "ORIGINAL-ENVD\n",
		"proj/readme.md":                   "ORDINARY\n",
		".config/unprotected/settings.ini": "SETTINGS\n",
	}
	missing := []string{".bash_profile", ".zshenv"}
	if allPresent {
		for _, p := range sandbox.DefaultProtectedPaths(home, "", "") {
			rel, err := filepath.Rel(home, p)
			require.NoError(t, err)
			if _, ok := files[rel]; !ok && !strings.HasPrefix(rel, ".config") {
				files[rel] = "ORIGINAL " + rel + "\n"
			} else if !ok && !slices.ContainsFunc(slices.Collect(maps.Keys(files)), func(f string) bool { return strings.HasPrefix(f, rel+"/") }) {
				files[rel+"/keep"] = "ORIGINAL " + rel + "\n" // ~/.config/nvim and the like, present
			}
		}
		// The denied paths too: a missing one keeps the top of its
		// directory from new entries, as a missing protected file does.
		for _, p := range append(sandbox.DefaultDeniedPaths(home), filepath.Join(home, ".config", "acp-agent", "keep")) {
			rel, err := filepath.Rel(home, p)
			require.NoError(t, err)
			files[rel] = "SECRET " + rel + "\n"
		}
		missing = nil
	} else {
		delete(files, ".config/autostart/keep.desktop")
		delete(files, ".config/git/ignore")
		missing = append(missing, ".config/autostart", ".config/git")
		require.NoError(t, os.Symlink("dotfiles/zprofile", filepath.Join(home, ".zprofile")))
	}
	for p, c := range files {
		w(p, c)
	}
	script := `cd "$HOME"
try() { if (eval "$2") >/dev/null 2>&1; then echo "LANDED:$1"; fi; }
try append-bashrc 'echo evil >> .bashrc'
try truncate-profile ': > .profile'
try remove-zshrc 'rm -f .zshrc && ! test -e .zshrc'
try rename-over-gitconfig 'cp scratch/evil scratch/evil2 && mv scratch/evil2 .gitconfig'
try symlink-over-bashrc 'ln -sfn scratch/evil .bashrc && test -L .bashrc'
try create-bash-profile 'echo evil > .bash_profile'
try create-zshenv 'echo evil > .zshenv'
try autostart 'mkdir -p .config/autostart && echo evil > .config/autostart/evil.desktop'
try git-dir 'mkdir -p .config/git && echo evil > .config/git/config'
try unit-append 'echo evil >> .config/systemd/user/x.service'
try unit-create 'echo evil > .config/systemd/user/evil.service'
try fish-append 'echo evil >> .config/fish/config.fish'
try fish-remove 'rm -rf .config/fish && ! test -e .config/fish'
try envd-create 'echo evil > .config/environment.d/evil.conf'
try rename-config-away 'mv .config .config-old'
try rename-fish-away 'mv .config/fish .config/fish-old'
try zprofile-through-link 'echo evil >> .zprofile'
try zprofile-target 'test -L .zprofile && echo evil >> dotfiles/zprofile'
try zprofile-relink 'ln -sfn scratch/evil .zprofile && test "$(readlink .zprofile)" = scratch/evil'
git config --global core.hooksPath "$HOME/scratch" >/dev/null 2>&1; echo "GIT-GLOBAL-EXIT=$?"
echo notes-ok >> notes.txt && echo NOTES-WRITTEN
echo x > proj/new.txt && echo PROJ-CREATED
echo x > .config/unprotected/settings.ini && echo CONFIG-WRITTEN
touch new-top.txt 2>/dev/null && echo TOP-CREATED
printf 'READ:%s\n' "$(cat .bashrc .gitconfig .config/fish/config.fish | tr '\n' ' ')"
echo SCRIPT-DONE
`
	w("scratch/attack.sh", script)
	chownTree(t, m, home)
	model := promptModel(t, map[string][]modelCall{"[attack]": {{"run_command", map[string]any{"command": "bash scratch/attack.sh", "timeout_seconds": 120}}}})
	conn, sid, _ := sandboxSessionAs(t, m, model, home, home, "--session-dir", userDir(t, m))
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[attack]"))
	out := lastToolResult(t, model.body(t, 1))
	require.Contains(t, out, "SCRIPT-DONE", "the script ran: %s", out)
	assert.NotContains(t, out, "LANDED:", "a protected file was changed: %s", out)
	assert.NotContains(t, out, "GIT-GLOBAL-EXIT=0", "git config --global worked")
	assert.Contains(t, out, "NOTES-WRITTEN", "~/notes.txt stays writable (control)")
	assert.Contains(t, out, "PROJ-CREATED", "a subdirectory of the home directory stays writable (control)")
	assert.Contains(t, out, "CONFIG-WRITTEN", "an unprotected file under ~/.config stays writable (control)")
	assert.Contains(t, out, "READ:ORIGINAL-BASHRC [user] \tname = original ORIGINAL-FISH", "protected files stay readable")
	if allPresent && m.masks {
		assert.Contains(t, out, "TOP-CREATED", "with masks and nothing missing, the home directory's top stays creatable")
	}
	if !allPresent {
		assert.NotContains(t, out, "TOP-CREATED", "a missing protected file keeps the top of its directory from new entries")
	}
	for p, c := range files {
		data, err := os.ReadFile(filepath.Join(home, p))
		require.NoError(t, err, p)
		switch p {
		case "notes.txt":
			assert.Equal(t, "NOTES\nnotes-ok\n", string(data))
		case "proj/readme.md", ".config/unprotected/settings.ini", "scratch/attack.sh":
		default:
			assert.Equal(t, c, string(data), "%s was changed", p)
		}
	}
	for _, p := range missing {
		_, err := os.Lstat(filepath.Join(home, p))
		assert.True(t, os.IsNotExist(err), "%s was created", p)
	}
	if !allPresent {
		target, err := os.Readlink(filepath.Join(home, ".zprofile"))
		require.NoError(t, err)
		assert.Equal(t, "dotfiles/zprofile", target, "~/.zprofile was relinked")
	}
	assert.NoFileExists(t, filepath.Join(home, ".config", "fish-old", "config.fish"))
	assert.DirExists(t, filepath.Join(home, ".config", "fish"))
}

// The file tools refuse to write, edit, create or delete the protected
// files (and through a symlink to one), with a message that says why,
// in accept-edits and full-access modes, sandbox on or off; reading them
// works, and ~/notes.txt is written (the control). sandbox.protectedPaths
// adds a path; sandbox.protectStartupFiles false gives the defaults up.
func TestBinaryFileToolsRefuseProtectedPaths(t *testing.T) {
	for _, v := range []struct {
		name   string
		args   []string
		config string
	}{
		{name: "accept-edits", args: []string{"--mode", "accept-edits"}},
		{name: "full-access", args: []string{"--mode", "full-access"}},
		{name: "full-access sandbox off", args: []string{"--mode", "full-access", "--sandbox", "off"}},
		{name: "configured", args: []string{"--mode", "full-access"}, config: `{"sandbox":{"protectedPaths":["HOME/proj/Makefile"]}}`},
		{name: "opted out", args: []string{"--mode", "full-access"}, config: `{"sandbox":{"protectStartupFiles":false}}`},
	} {
		t.Run(v.name, func(t *testing.T) {
			home := testHome(t)
			files := map[string]string{
				".bashrc":                  "ORIGINAL-BASHRC\n",
				".gitconfig":               "[user]\n\tname = original\n",
				".config/fish/config.fish": "ORIGINAL-FISH\n",
				".profile":                 "ORIGINAL-PROFILE\n",
				"notes.txt":                "NOTES\n",
				"proj/Makefile":            "all:\n",
				"dotfiles/zshrc":           "ORIGINAL-ZSHRC\n",
			}
			for p, c := range files {
				write(t, filepath.Join(home, p), c)
			}
			require.NoError(t, os.Symlink(filepath.Join(home, "dotfiles", "zshrc"), filepath.Join(home, ".zshrc")))
			if v.config != "" {
				// The config is where XDG_CONFIG_HOME (below) puts it.
				write(t, filepath.Join(home, "xdg", "acp-agent", "config.json"), strings.ReplaceAll(v.config, "HOME", home))
			}
			// Read first: write_file refuses to overwrite a file the
			// model has not read, whatever its path.
			cs := []modelCall{
				{"read_file", map[string]any{"path": ".bashrc"}},
				{"read_file", map[string]any{"path": ".gitconfig"}},
				{"write_file", map[string]any{"path": ".bashrc", "content": "PLANTED"}},
				{"edit_file", map[string]any{"path": ".gitconfig", "old_string": "original", "new_string": "PLANTED"}},
				{"write_file", map[string]any{"path": ".bash_profile", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": ".config/git/config", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": ".config/autostart/x.desktop", "content": "PLANTED"}},
				{"multi_edit", map[string]any{"path": ".profile", "edits": []map[string]any{{"old_string": "ORIGINAL", "new_string": "PLANTED"}}}},
				{"edit_file", map[string]any{"path": ".config/fish/config.fish", "old_string": "ORIGINAL", "new_string": "PLANTED"}},
				{"edit_file", map[string]any{"path": "dotfiles/zshrc", "old_string": "ORIGINAL", "new_string": "PLANTED"}},
				{"edit_file", map[string]any{"path": "proj/Makefile", "old_string": "all", "new_string": "PLANTED"}},
				{"edit_file", map[string]any{"path": "notes.txt", "old_string": "NOTES", "new_string": "NOTES-OK"}},
				{"read_file", map[string]any{"path": ".gitconfig"}},
				{"write_file", map[string]any{"path": "xdg/git/config", "content": "PLANTED"}},
			}
			model := stepModel(t, calls(cs...), says("done"))
			cmd := exec.Command(agentBin, append([]string{"--model", "openai/test-model"}, v.args...)...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "xdg"),
				"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
			conn, sid := startE2EWith(t, cmd, newToolClient(home, "allow_once"), home, sdk.ClientCapabilities{})
			assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[go]"))
			results := toolMessages(t, model.body(t, 1))
			require.Len(t, results, len(cs))
			assert.Contains(t, results[0], "ORIGINAL-BASHRC", "protected files stay readable")
			assert.Contains(t, results[1], "name = original", "protected files stay readable")
			for i := 2; i <= 10; i++ {
				refused := strings.Contains(results[i], "Permission denied") && strings.Contains(results[i], "protected start-up or configuration file")
				want := v.name != "opted out"
				if i == 10 { // proj/Makefile: protected only by the config
					want = v.name == "configured"
				}
				assert.Equal(t, want, refused, "%s %v: %s", cs[i].Name, cs[i].Args["path"], results[i])
			}
			assert.NotContains(t, results[11], "Permission denied", "~/notes.txt stays writable (control)")
			if v.name == "opted out" {
				assert.Contains(t, results[12], "name = PLANTED", "opted out: the edit landed")
			} else {
				assert.Contains(t, results[12], "name = original")
			}
			// $XDG_CONFIG_HOME's git directory, where git looks too.
			assert.Equal(t, v.name != "opted out", strings.Contains(results[13], "protected start-up or configuration file"), results[13])
			data, err := os.ReadFile(filepath.Join(home, "notes.txt"))
			require.NoError(t, err)
			assert.Equal(t, "NOTES-OK\n", string(data))
			if v.name == "opted out" {
				return
			}
			for p, c := range files {
				if p == "notes.txt" || p == "proj/Makefile" && v.name != "configured" {
					continue
				}
				data, err := os.ReadFile(filepath.Join(home, p))
				require.NoError(t, err, p)
				assert.Equal(t, c, string(data), "%s was changed", p)
			}
			for _, p := range []string{".bash_profile", ".config/git", ".config/autostart", "xdg/git"} {
				assert.NoFileExists(t, filepath.Join(home, p))
				assert.NoDirExists(t, filepath.Join(home, p))
			}
		})
	}
}

// A workspace opened inside a protected directory (~/.config/fish/
// functions) is read-only to commands, as it is to the file tools: the
// protected directory holds the root, so the root is protected whole.
func TestBinarySandboxKeepsAWorkspaceInsideAProtectedDirectoryReadOnly(t *testing.T) {
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) {
			home := userDir(t, m)
			dir := filepath.Join(home, ".config", "fish", "functions")
			write(t, filepath.Join(dir, "greet.fish"), "ORIGINAL\n")
			chownTree(t, m, home)
			model := promptModel(t, map[string][]modelCall{"[go]": {{"run_command", map[string]any{
				"command": "echo evil >> greet.fish; echo evil > new.fish; cat greet.fish; echo DONE"}}}})
			conn, sid, _ := sandboxSessionAs(t, m, model, dir, home, "--session-dir", userDir(t, m))
			assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[go]"))
			out := lastToolResult(t, model.body(t, 1))
			require.Contains(t, out, "DONE")
			assert.Contains(t, out, "ORIGINAL", "the files stay readable")
			data, err := os.ReadFile(filepath.Join(dir, "greet.fish"))
			require.NoError(t, err)
			assert.Equal(t, "ORIGINAL\n", string(data))
			assert.NoFileExists(t, filepath.Join(dir, "new.fish"))
		})
	}
}
