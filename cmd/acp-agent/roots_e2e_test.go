//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 29: an additional directory (session/new additionalDirectories)
// is confined like the main root, through the binary. The filesystem
// corpus of the main root (symlinks out of it, to .git, .env and nested
// names, to /proc/self/root, chains, dangling ones, hard links, a FIFO;
// .git and .env.* at every depth) runs against paths in the extra root,
// with the local runtime and with a careless editor's fs/*: 0 leaks, 0
// writes outside. And the extra root is part of the workspace: searches
// without a path, commands (cwd there) and its rules file see it.
func TestBinaryAdditionalDirectoryIsConfinedLikeTheMainRoot(t *testing.T) {
	for _, viaEditor := range []bool{false, true} {
		t.Run(map[bool]string{false: "local runtime", true: "editor fs"}[viaEditor], func(t *testing.T) {
			additionalDirectoryCorpus(t, viaEditor)
		})
	}
}

func additionalDirectoryCorpus(t *testing.T, viaEditor bool) {
	main, extra, outside := t.TempDir(), t.TempDir(), t.TempDir()
	x := func(rel string) string { return filepath.Join(extra, rel) }
	reads, writes := plantLinkCorpus(t, extra, outside, "EXTRA_ORDINARY_OK")
	write(t, x("d/.ENV.production"), "UPPER_ENV_SECRET")
	write(t, x("e/f/.git/refs/x"), "DEEP_GIT_SECRET")
	write(t, x("AGENTS.md"), "EXTRA_RULE_MARKER: the extra root's rules.\n")
	write(t, filepath.Join(main, "main.txt"), "MAIN_ORDINARY_OK")
	// Denied names at every depth, and traversals, in the extra root.
	reads = append(reads, ".env", ".git/config", "sub/.env.local", "d/.ENV.production", "e/f/.git/refs/x", "sub/../.env", ".Git/config")
	writes = append(writes, ".git/HEAD", "x/.env", "X/.GiT/config", "w/.env.prod")
	var cs []modelCall
	for _, p := range reads {
		cs = append(cs, modelCall{"read_file", map[string]any{"path": x(p)}})
	}
	for _, p := range writes {
		cs = append(cs, modelCall{"write_file", map[string]any{"path": x(p), "content": "PLANTED"}})
	}
	cs = append(cs,
		modelCall{"list_directory", map[string]any{"path": x(".git")}},
		modelCall{"list_directory", map[string]any{"path": x("link_outdir")}},
		modelCall{"glob", map[string]any{"pattern": "**/.env*", "path": extra}},
		modelCall{"glob", map[string]any{"pattern": "**/.git/**"}},
		modelCall{"grep", map[string]any{"pattern": "SECRET"}},
		modelCall{"grep", map[string]any{"pattern": "SECRET", "path": x("link_outdir")}},
		modelCall{"edit_file", map[string]any{"path": x(".env"), "old_string": "ENV", "new_string": "PWN"}},
		// The controls: the extra root is part of the workspace.
		modelCall{"read_file", map[string]any{"path": x("link_ok")}},
		modelCall{"write_file", map[string]any{"path": x("new/dir/made.txt"), "content": "MADE"}},
		modelCall{"grep", map[string]any{"pattern": "ORDINARY_OK"}},
		modelCall{"glob", map[string]any{"pattern": "*.txt"}},
		modelCall{"run_command", map[string]any{"command": "cat ok.txt; pwd", "cwd": extra}},
	)
	model := promptModel(t, map[string][]modelCall{"[go]": cs})
	client := newToolClient(main, "allow_once")
	var c sdk.Client = client
	var caps sdk.ClientCapabilities
	editor := &diskEditor{toolClient: client}
	if viaEditor {
		c = editor
		caps.Fs = sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}
	}
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--mode", "full-access")
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
	conn, sid := startE2EWithRoots(t, cmd, c, main, []string{extra}, caps)
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[go]"))

	body := model.body(t, 1)
	for _, s := range []string{"OUTSIDE_SECRET", "GIT_SECRET", "ENV_SECRET", "NESTED_SECRET", "UPPER_ENV_SECRET", "DEEP_GIT_SECRET",
		"DOTGIT_FILE_SECRET", "root:x:0"} {
		assert.False(t, strings.Contains(body, s), "the model saw %s", s)
	}
	// The controls.
	assert.Contains(t, body, "EXTRA_ORDINARY_OK", "the extra root is read, searched and a command runs there")
	assert.Contains(t, body, "ok.txt:1: EXTRA_ORDINARY_OK", "a search without a path covers the extra root")
	assert.Contains(t, body, "main.txt:1: MAIN_ORDINARY_OK", "and the main one")
	assert.Contains(t, body, `main.txt\n`+filepath.Join(extra, "ok.txt"), "glob without a path lists both roots' files")
	assert.Contains(t, systemPrompt(t, model.body(t, 0)), "EXTRA_RULE_MARKER", "the extra root's rules file reaches the model")
	data, err := os.ReadFile(x("new/dir/made.txt"))
	require.NoError(t, err, "an ordinary write in the extra root (control)")
	assert.Equal(t, "MADE", string(data))

	assertOutsideUntouched(t, outside)
	for p, want := range map[string]string{".env": "ENV_SECRET", ".git/config": "GIT_SECRET", "sub/.env.local": "NESTED_SECRET"} {
		data, _ := os.ReadFile(x(p))
		assert.Equal(t, want, string(data), "%s was written", p)
	}
	for _, p := range []string{".git/hooks/pre-commit", ".git/HEAD", "x/.env", "X/.GiT/config", "w/.env.prod"} {
		assert.NoFileExists(t, x(p))
	}
	if viaEditor {
		editor.mu.Lock()
		require.NotEmpty(t, editor.paths, "the editor's fs/* was used")
		editor.mu.Unlock()
		editor.assertCheckedPaths(t, extra)
	}
	t.Logf("additional directory corpus: %d tool calls, 0 leaks", len(cs))
}
