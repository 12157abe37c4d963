package persistence

import (
	"github.com/acp-agent/acp-agent/internal/winetest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRemoveStaleCleansOnlyWhatStoppedAgentsLeft: temporary files, and the
// lock files and directories of sessions that have no file, go; what
// belongs to a saved session, a session in use, another name shape, or
// lies behind a symlink stays.
func TestRemoveStaleCleansOnlyWhatStoppedAgentsLeft(t *testing.T) {
	winetest.NeedsRealWindows(t, winetest.Symlinks)
	s := newFastStore(t)
	dir := s.Dir()
	outside := t.TempDir()
	target := filepath.Join(outside, "precious")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "tree"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "tree", "file"), []byte("keep"), 0o600))
	write := func(name, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600))
	}

	// A saved session: nothing of it is touched (its next lock holder
	// removes its temporary file).
	createWith(t, s, "saved", recs(0, 1))
	write("saved.jsonl.tmp111", "partial")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "saved", "offloaded"), 0o700))
	// Killed during creation: a temporary file and a lock, no session.
	write("killed.jsonl.tmp222", "{\"type\":\"session\"")
	write("killed.lock", "")
	// Started and never saved: its directory and lock.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "unsaved", "checkpoints", "objects"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "unsaved", "offloaded"), 0o700))
	write("unsaved.lock", "")
	// Symlinks with our names: unlinked, never followed.
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "linked.jsonl.tmp333")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "tree"), filepath.Join(dir, "linkdir")))
	// In use by this process (another process holds it the same way): left alone.
	busy, err := s.Create(Header{ID: "busy"})
	require.NoError(t, err)
	defer busy.Close()
	write("busy.jsonl.tmp444", "partial")
	// Reserved and not saved yet (an agent between session/new and the
	// first prompt): its id is in use, so nothing of it goes.
	res, err := s.Reserve("reserved")
	require.NoError(t, err)
	defer res.Release()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "reserved", "offloaded"), 0o700))
	write("reserved.jsonl.tmp555", "being created")
	// Not our shapes: left alone.
	write("notes.txt", "x")
	write("weird.jsonl.tmpX", "x")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "dir.jsonl.tmp555"), 0o700))
	write(".hidden.jsonl.tmp666", "x")

	removed, err := s.RemoveStale()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"killed.jsonl.tmp222", "killed.lock", "unsaved/", "unsaved.lock",
		"linked.jsonl.tmp333", "linkdir"}, removed)
	for _, gone := range []string{"killed.jsonl.tmp222", "killed.lock", "unsaved", "unsaved.lock", "linked.jsonl.tmp333", "linkdir"} {
		_, err := os.Lstat(filepath.Join(dir, gone))
		assert.ErrorIs(t, err, os.ErrNotExist, gone)
	}
	for _, kept := range []string{"saved.jsonl", "saved.lock", "saved/offloaded", "saved.jsonl.tmp111",
		"reserved.lock", "reserved/offloaded", "reserved.jsonl.tmp555", "busy.jsonl", "busy.lock", "busy.jsonl.tmp444", "notes.txt",
		"weird.jsonl.tmpX", "dir.jsonl.tmp555", ".hidden.jsonl.tmp666"} {
		_, err := os.Lstat(filepath.Join(dir, kept))
		assert.NoError(t, err, kept)
	}
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(data))
	_, err = os.Stat(filepath.Join(outside, "tree", "file"))
	assert.NoError(t, err, "a symlinked directory is unlinked, not emptied")

	// Nothing stale is left: a second pass removes nothing.
	removed, err = s.RemoveStale()
	require.NoError(t, err)
	assert.Empty(t, removed)
}
