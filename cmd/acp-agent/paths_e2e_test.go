package main

import (
	"context"
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

// diskEditor is an editor that opens exactly what it is given: reads and
// writes go to the path in the request, following every symlink and hard
// link, as a careless editor would.
type diskEditor struct {
	*toolClient
	paths []string
}

func (c *diskEditor) ReadTextFile(_ context.Context, req sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.record("fs/read_text_file")
	c.mu.Lock()
	c.paths = append(c.paths, req.Path)
	c.mu.Unlock()
	data, err := os.ReadFile(req.Path)
	return sdk.ReadTextFileResponse{Content: string(data)}, err
}

func (c *diskEditor) WriteTextFile(_ context.Context, req sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.record("fs/write_text_file")
	c.mu.Lock()
	c.paths = append(c.paths, req.Path)
	c.mu.Unlock()
	return sdk.WriteTextFileResponse{}, os.WriteFile(req.Path, []byte(req.Content), 0o644)
}

// Issue 13 item 3 through the built binary: with fs/* advertised, every
// path goes through the local runtime's real-path checks before the
// editor sees it, and the editor is given the checked real path. A corpus
// of symlinks (out of the workspace, to .git, .env and nested names, to
// /proc/self/root, chains, dangling, through directories), hard links and
// a FIFO, for reads and writes: 0 leaks, 0 writes outside.
func TestBinaryEditorFSGetsOnlyCheckedRealPaths(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	reads, writes := plantLinkCorpus(t, dir, outside, "ORDINARY_OK")
	reads = append(reads, "/proc/self/root"+filepath.Join(outside, "secret"), filepath.Join(outside, "secret"))
	var cs []modelCall
	for _, p := range reads {
		cs = append(cs, modelCall{"read_file", map[string]any{"path": p}})
	}
	for _, p := range writes {
		cs = append(cs, modelCall{"write_file", map[string]any{"path": p, "content": "PLANTED"}})
	}
	cs = append(cs, modelCall{"read_file", map[string]any{"path": "link_ok"}},
		modelCall{"write_file", map[string]any{"path": "new/dir/made.txt", "content": "MADE"}})
	model := promptModel(t, map[string][]modelCall{"[go]": cs})
	editor := &diskEditor{toolClient: newToolClient(dir, "allow_once")}
	caps := sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}
	conn, sid := e2eSessionWithCaps(t, model, editor, caps, "--mode", "full-access")
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[go]"))

	body := model.body(t, 1)
	for _, s := range []string{"OUTSIDE_SECRET", "GIT_SECRET", "ENV_SECRET", "NESTED_SECRET", "DOTGIT_FILE_SECRET", "root:x:0"} {
		assert.False(t, strings.Contains(body, s), "the model saw %s", s)
	}
	assert.True(t, strings.Contains(body, "ORDINARY_OK"), "an ordinary file is read through the editor (control)")
	data, err := os.ReadFile(filepath.Join(dir, "new/dir/made.txt"))
	require.NoError(t, err, "an ordinary write goes through the editor (control)")
	assert.Equal(t, "MADE", string(data))
	assertOutsideUntouched(t, outside)
	for _, p := range []string{".env", ".git/config", "sub/.env.local"} {
		data, _ := os.ReadFile(filepath.Join(dir, p))
		assert.NotEqual(t, "PLANTED", string(data), "%s was written", p)
	}
	assert.NoFileExists(t, filepath.Join(dir, ".git", "hooks", "pre-commit"))
	editor.assertCheckedPaths(t, dir)
	t.Logf("editor fs corpus: %d reads, %d writes, 0 leaks", len(reads), len(writes))
}

// plantLinkCorpus plants the link corpus in dir: secrets outside (in
// outside), in .git, .env and nested .env.* files; symlinks out of dir,
// to .git, .env and nested names, to /proc/self/root, chains, dangling,
// through directories; hard links and a FIFO; and ok.txt holding ok, the
// control. It returns the attacking reads and writes, relative to dir.
func plantLinkCorpus(t *testing.T, dir, outside, ok string) (reads, writes []string) {
	t.Helper()
	w := func(p, c string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(c), 0o644))
	}
	ln := func(target, name string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.Symlink(target, filepath.Join(dir, name)))
	}
	w(filepath.Join(outside, "secret"), "OUTSIDE_SECRET")
	w(filepath.Join(dir, ".git", "config"), "GIT_SECRET")
	w(filepath.Join(dir, ".env"), "ENV_SECRET")
	w(filepath.Join(dir, "sub", ".env.local"), "NESTED_SECRET")
	w(filepath.Join(dir, "deep", "repo", ".git"), "gitdir: DOTGIT_FILE_SECRET")
	w(filepath.Join(dir, "ok.txt"), ok)
	ln(filepath.Join(outside, "secret"), "link_out")
	ln(outside, "link_outdir")
	ln(filepath.Join(dir, ".git", "config"), "link_git")
	ln(".git", "link_gitdir")
	ln(".env", "link_env")
	ln("sub/.env.local", "link_nested_env")
	ln("deep/repo/.git", "link_dotgit_file")
	ln("/proc/self/root"+filepath.Join(outside, "secret"), "link_proc")
	ln("/proc/self/root"+outside, "link_procdir")
	ln(filepath.Join("..", filepath.Base(outside), "secret"), "link_rel")
	ln("link_out", "chain_a")
	ln("chain_a", "chain_b")
	ln("..", "sub/up")
	ln("/etc/passwd", "link_passwd")
	ln(filepath.Join(outside, "created-by-dangling"), "dangling")
	ln("ok.txt", "link_ok")
	require.NoError(t, os.Link(filepath.Join(outside, "secret"), filepath.Join(dir, "hardlink_out")))
	require.NoError(t, os.Link(filepath.Join(dir, ".env"), filepath.Join(dir, "hardlink_env")))
	mkfifo(t, filepath.Join(dir, "fifo"))

	reads = []string{"link_out", "link_outdir/secret", "link_git", "link_gitdir/config", "link_env", "link_nested_env",
		"link_dotgit_file", "link_proc", "link_procdir/secret", "link_rel", "chain_b", "sub/up/.env", "link_passwd",
		"hardlink_out", "hardlink_env", "fifo", "sub/up/link_out", "dangling"}
	writes = []string{"link_out", "link_outdir/new", "link_gitdir/hooks/pre-commit", "link_env", "sub/up/.env",
		"hardlink_out", "dangling", "link_procdir/new", "chain_b", "sub/up/link_outdir/new2", "link_nested_env"}
	return reads, writes
}

// assertOutsideUntouched checks that nothing was made or changed in
// outside, which holds only plantLinkCorpus's secret.
func assertOutsideUntouched(t *testing.T, outside string) {
	t.Helper()
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	for _, e := range entries {
		assert.Equal(t, "secret", e.Name(), "%s was created outside", e.Name())
	}
	data, _ := os.ReadFile(filepath.Join(outside, "secret"))
	assert.Equal(t, "OUTSIDE_SECRET", string(data), "the outside file is unchanged")
}

// assertCheckedPaths checks every path the editor was given: inside
// root, and real (no link in its directory).
func (c *diskEditor) assertCheckedPaths(t *testing.T, root string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.paths {
		rel, err := filepath.Rel(root, p)
		assert.True(t, err == nil && filepath.IsLocal(rel), "the editor was given %s", p)
		real, err := filepath.EvalSymlinks(filepath.Dir(p))
		if err == nil {
			assert.Equal(t, filepath.Dir(p), real, "the editor was given a path with a link in it: %s", p)
		}
	}
}

// run_command's cwd is checked by its real path: a symlink in the
// workspace that leads out of it (or to .git) is refused before anything
// runs, even in full-access mode.
func TestBinaryCommandCwdThroughASymlinkOutIsRefused(t *testing.T) {
	needsBash(t)
	dir, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	require.NoError(t, os.Symlink(".git", filepath.Join(dir, "g")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755))
	require.NoError(t, os.Symlink("real/sub", filepath.Join(dir, "inside")))
	model := promptModel(t, map[string][]modelCall{
		"[out]":    {{"run_command", map[string]any{"command": "touch made", "cwd": "out"}}},
		"[git]":    {{"run_command", map[string]any{"command": "touch made", "cwd": "g"}}},
		"[inside]": {{"run_command", map[string]any{"command": "touch made", "cwd": "inside"}}},
	})
	client := newToolClient(dir, "allow_once")
	conn, sid := e2eSession(t, "openai", model, client, sdk.ClientCapabilities{}, "--mode", "full-access")
	for _, p := range []string{"[out]", "[git]", "[inside]"} {
		promptE2E(t, conn, sid, p)
	}
	assert.NoFileExists(t, filepath.Join(outside, "made"), "a command ran outside the workspace")
	assert.NoFileExists(t, filepath.Join(dir, ".git", "made"), "a command ran in .git")
	assert.FileExists(t, filepath.Join(dir, "real", "sub", "made"), "a link that stays inside works (control)")
}

// Issue 15 pin: the config file's workspace rules through the built
// binary: a write into a readOnlyRoot and a read under a
// deniedPathPrefix are refused; the same operations elsewhere work.
func TestBinaryConfigWorkspaceRulesReadOnlyRootsAndDeniedPrefixes(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "vendor"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vendor", "lib.go"), []byte("VENDORED"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "secrets", "keys"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secrets", "keys", "id"), []byte("KEY_SECRET"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("NOTES_OK"), 0o644))
	config := filepath.Join(t.TempDir(), "config.json")
	cfg := fmt.Sprintf(`{"readOnlyRoots":[%q],"deniedPathPrefixes":["secrets/keys"]}`, filepath.Join(dir, "vendor"))
	require.NoError(t, os.WriteFile(config, []byte(cfg), 0o600))
	model := promptModel(t, map[string][]modelCall{"[go]": {
		{"write_file", map[string]any{"path": "vendor/lib.go", "content": "CHANGED"}},
		{"write_file", map[string]any{"path": "vendor/new.go", "content": "CHANGED"}},
		{"edit_file", map[string]any{"path": "vendor/lib.go", "old_string": "VENDORED", "new_string": "CHANGED"}},
		{"read_file", map[string]any{"path": "secrets/keys/id"}},
		{"grep", map[string]any{"pattern": "KEY_SEC"}},
		{"read_file", map[string]any{"path": "vendor/lib.go"}},
		{"read_file", map[string]any{"path": "notes.txt"}},
		{"write_file", map[string]any{"path": "src/ok.go", "content": "WRITTEN"}},
	}})
	client := newToolClient(dir, "allow_once")
	conn, sid := e2eSession(t, "openai", model, client, sdk.ClientCapabilities{}, "--config", config, "--mode", "full-access")
	promptE2E(t, conn, sid, "[go]")
	body := model.body(t, 1)
	data, _ := os.ReadFile(filepath.Join(dir, "vendor", "lib.go"))
	assert.Equal(t, "VENDORED", string(data), "the read-only root was written")
	assert.NoFileExists(t, filepath.Join(dir, "vendor", "new.go"))
	assert.False(t, strings.Contains(body, "KEY_SECRET"), "a denied prefix was read")
	assert.True(t, strings.Contains(body, "VENDORED"), "a read-only root stays readable")
	assert.True(t, strings.Contains(body, "NOTES_OK"), "ordinary reads work")
	data, err := os.ReadFile(filepath.Join(dir, "src", "ok.go"))
	require.NoError(t, err, "ordinary writes work")
	assert.Equal(t, "WRITTEN", string(data))
}
