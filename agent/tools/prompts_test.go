package tools_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acp-agent/acp-agent/agent/prompts"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two sessions' workspaces in one directory share the library its
// command files define (read once, one copy) while the files are
// unchanged; after an edit, the next prompt of each looks again before
// its turn, is told of the change, and they share the new library.
func TestWorkspacesOfOneDirectoryShareTheirLibraryWhileItsFilesAreUnchanged(t *testing.T) {
	dir := t.TempDir()
	cmd := filepath.Join(dir, ".claude", "commands", "greet.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(cmd), 0o755))
	require.NoError(t, os.WriteFile(cmd, []byte("V1"), 0o644))
	cache := prompts.NewCache()
	open := func() (*tools.Workspace, *int) {
		w, err := tools.NewWorkspace(dir, nil, tools.WorkspaceConfig{PromptCache: cache}, tools.Editor{})
		require.NoError(t, err)
		t.Cleanup(func() { w.Close() })
		told := new(int)
		w.OnPromptsChanged(func() { *told++ })
		return w, told
	}
	w1, told1 := open()
	w2, told2 := open()
	body := func(w *tools.Workspace) string { return w.Prompts().Commands[0].Body }
	same := func() bool { return &w1.Prompts().Commands[0] == &w2.Prompts().Commands[0] }

	assert.Equal(t, "V1", body(w1))
	assert.Equal(t, "V1", body(w2))
	assert.True(t, same(), "one library for both")
	w1.PromptArrived()
	w1.TurnStarts()
	w2.PromptArrived()
	w2.TurnStarts()
	assert.Zero(t, *told1+*told2, "nothing changed")
	assert.True(t, same(), "still one library: unchanged files are not read again")

	require.NoError(t, os.WriteFile(cmd, []byte("V2 longer"), 0o644))
	w1.TurnStarts()
	assert.Equal(t, "V1", body(w1), "no prompt arrived: no look")
	w1.PromptArrived()
	w1.TurnStarts()
	assert.Equal(t, 1, *told1)
	assert.Equal(t, "V2 longer", body(w1), "the next prompt's turn reads the edit")
	assert.Equal(t, "V1", body(w2), "the other session has the library it was told of until it looks")
	assert.False(t, same())
	w2.PromptArrived()
	w2.TurnStarts()
	assert.Equal(t, 1, *told2)
	assert.Equal(t, "V2 longer", body(w2), "and its next prompt's turn finds the edit too")
	assert.True(t, same(), "one library again")

	require.NoError(t, os.WriteFile(cmd, []byte("V3 longer still"), 0o644))
	assert.True(t, w2.RefreshPrompts(), "a look now finds the edit")
	assert.Equal(t, "V3 longer still", body(w2))
	assert.False(t, w2.RefreshPrompts())
}
