package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 13 item 2 through the built binary: a model that plants a bare
// repository layout (plain names: HEAD, config, objects/, refs/) whose
// config names an fsmonitor command, then runs git status there, never
// gets that command run, through the local terminal or the editor's; and
// a nested .git (a hostile cloned repository) cannot run its fsmonitor
// either. The model cannot write .git at any depth.
func TestBinaryPlantedGitLayoutsNeverRunTheirCommands(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, editorTerminal := range []bool{false, true} {
		t.Run(fmt.Sprintf("editor terminal %v", editorTerminal), func(t *testing.T) {
			dir := t.TempDir()
			markers := t.TempDir()
			marker := func(name string) string { return filepath.Join(markers, name) }
			config := func(name string) string {
				return "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"touch " + marker(name) + "; false\"\n"
			}
			// A hostile clone: sub/nested is a real repository with an fsmonitor.
			nested := filepath.Join(dir, "nested")
			require.NoError(t, os.MkdirAll(nested, 0o755))
			git := exec.Command("git", "init", "-q", ".")
			git.Dir = nested
			require.NoError(t, git.Run())
			git = exec.Command("git", "config", "core.fsmonitor", "touch "+marker("nested")+"; false")
			git.Dir = nested
			require.NoError(t, git.Run())

			calls := map[string][]modelCall{
				"[plant-root]": {
					{"write_file", map[string]any{"path": "HEAD", "content": "ref: refs/heads/main\n"}},
					{"write_file", map[string]any{"path": "config", "content": config("root")}},
					{"write_file", map[string]any{"path": "objects/.keep", "content": ""}},
					{"write_file", map[string]any{"path": "refs/.keep", "content": ""}},
				},
				"[plant-sub]": {
					{"write_file", map[string]any{"path": "sub/HEAD", "content": "ref: refs/heads/main\n"}},
					{"write_file", map[string]any{"path": "sub/config", "content": config("sub")}},
					{"write_file", map[string]any{"path": "sub/objects/.keep", "content": ""}},
					{"write_file", map[string]any{"path": "sub/refs/.keep", "content": ""}},
				},
				"[plant-dotgit]": {
					{"write_file", map[string]any{"path": "deep/er/.git/config", "content": config("dotgit")}},
					{"write_file", map[string]any{"path": "deep/er/.git/HEAD", "content": "ref: refs/heads/main\n"}},
					{"write_file", map[string]any{"path": "x/.GIT/hooks/pre-commit", "content": "#!/bin/sh\ntouch " + marker("hook")}},
				},
				"[status-root]":   {{"run_command", map[string]any{"command": "git status"}}},
				"[status-sub]":    {{"run_command", map[string]any{"command": "git status", "cwd": "sub"}}},
				"[status-nested]": {{"run_command", map[string]any{"command": "git status", "cwd": "nested"}}},
				"[status-deep]":   {{"run_command", map[string]any{"command": "git status", "cwd": "deep/er"}}},
			}
			model := promptModel(t, calls)
			client := newToolClient(dir, "allow_once")
			var caps sdk.ClientCapabilities
			caps.Terminal = editorTerminal
			conn, sid := e2eSession(t, "openai", model, client, caps, "--mode", "full-access")
			for _, p := range []string{"[plant-root]", "[plant-sub]", "[plant-dotgit]", "[status-root]", "[status-sub]", "[status-nested]", "[status-deep]"} {
				assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, p))
			}
			require.FileExists(t, filepath.Join(dir, "config"), "the layout was planted")
			require.FileExists(t, filepath.Join(dir, "sub", "config"))
			for _, p := range []string{"deep/er/.git/config", "deep/er/.git/HEAD", "x/.GIT/hooks/pre-commit"} {
				assert.NoFileExists(t, filepath.Join(dir, p), "the model wrote %s", p)
			}
			for _, m := range []string{"root", "sub", "nested", "dotgit", "hook"} {
				assert.NoFileExists(t, marker(m), "the %s fsmonitor ran", m)
			}
			if editorTerminal {
				assert.Contains(t, client.recorded(), "terminal/create", "the commands ran in the editor's terminal")
			}
		})
	}
}

// Issue 13 item 2, names at every depth, through the built binary: every
// tool refuses .git (directory or file), .env and .env.* at any depth and
// in any case spelling, and listings, globs and greps do not reveal them;
// committed templates (.env.example) stay readable.
func TestBinaryDeniedNamesAtEveryDepth(t *testing.T) {
	dir := t.TempDir()
	secrets := map[string]string{
		"a/.env":             "SECRET_A",
		"a/b/.env.local":     "SECRET_B",
		"c/.git/config":      "SECRET_C",
		"d/.ENV.production":  "SECRET_D",
		"e/f/g/.git/refs/x":  "SECRET_E",
		"h/.git":             "gitdir: SECRET_F",
		"i/.env.development": "SECRET_G",
	}
	for p, c := range secrets {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(c+"\n"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a", ".env.example"), []byte("TEMPLATE_OK\n"), 0o644))
	var cs []modelCall
	for p := range secrets {
		cs = append(cs, modelCall{"read_file", map[string]any{"path": p}})
	}
	cs = append(cs,
		modelCall{"read_file", map[string]any{"path": "a/b/../.env"}},
		modelCall{"read_file", map[string]any{"path": filepath.Join(dir, "c/.Git/config")}},
		modelCall{"read_file", map[string]any{"path": "a/.env."}},
		modelCall{"read_file", map[string]any{"path": "a/.env.example"}},
		modelCall{"list_directory", map[string]any{"path": "c/.git"}},
		modelCall{"list_directory", map[string]any{"path": "e/f/g/.git/refs"}},
		modelCall{"glob", map[string]any{"pattern": "**/.env*"}},
		modelCall{"glob", map[string]any{"pattern": "**/.git/**"}},
		modelCall{"grep", map[string]any{"pattern": "SECRET"}},
		modelCall{"grep", map[string]any{"pattern": "SECRET", "path": "c/.git"}},
		modelCall{"edit_file", map[string]any{"path": "a/.env", "old_string": "A", "new_string": "B"}},
	)
	writes := []string{"sub/.git/HEAD", "sub/.git/config", "a/b/.git/hooks/post-checkout", "x/.env", "x/y/.env.local",
		"X/.GiT/config", "w/.env.prod", "h/.git"}
	for _, p := range writes {
		cs = append(cs, modelCall{"write_file", map[string]any{"path": p, "content": "planted"}})
	}
	model := promptModel(t, map[string][]modelCall{"[go]": cs})
	client := newToolClient(dir, "allow_once")
	conn, sid := e2eSession(t, "openai", model, client, sdk.ClientCapabilities{}, "--mode", "full-access")
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[go]"))
	body := model.body(t, 1)
	for _, c := range secrets {
		assert.False(t, strings.Contains(body, c), "the model saw %s", c)
	}
	assert.Contains(t, body, "TEMPLATE_OK", "templates stay readable (the control)")
	for _, p := range writes {
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err == nil {
			assert.NotEqual(t, "planted", string(data), "the model wrote %s", p)
		}
	}
	t.Logf("denied-name corpus: %d tool calls, 0 leaks", len(cs))
}
