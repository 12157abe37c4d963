package persistence

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/internal/winetest"
)

// A running agent's entry in RunningDir is held open for the agent's
// whole life, with delete access shared (FILE_SHARE_DELETE): the user,
// or a scanner's quarantine, can delete it while the agent runs; the
// agent's exit then ends cleanly and leaves nothing that keeps the
// directory from going.
func TestWindowsARunningAgentsEntryCanBeDeleted(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir)
	require.NoError(t, err)
	createWith(t, s, "saved", nil)
	entries := dirNamesOf(filepath.Join(dir, RunningDir))
	require.Len(t, entries, 1, "the agent's entry")
	require.NoError(t, os.Remove(filepath.Join(dir, RunningDir, entries[0])), "deleted while the agent holds it")
	require.NoError(t, s.Close(), "the exit after it")
	require.NoError(t, os.RemoveAll(dir), "nothing of the agent's is left open")
}

// The user deletes the whole session directory while an agent runs (and
// has its entry): on NTFS since Windows 10 1903 a deletion takes the
// name away at once, also of a file held open with delete shared, so the
// directory goes; the agent's exit then finds its entry gone.
func TestWindowsTheSessionDirectoryCanBeDeletedWhileAnAgentRuns(t *testing.T) {
	winetest.NeedsRealWindows(t, "Wine keeps a deleted file's name until its last handle closes (no POSIX-semantics delete), so the directory is not empty yet")
	dir := filepath.Join(t.TempDir(), "sessions")
	s, err := OpenStore(dir)
	require.NoError(t, err)
	createWith(t, s, "saved", nil)
	require.NotEmpty(t, dirNamesOf(filepath.Join(dir, RunningDir)))
	require.NoError(t, os.RemoveAll(dir))
	assert.NoDirExists(t, dir)
	assert.NoError(t, s.Close())
}
