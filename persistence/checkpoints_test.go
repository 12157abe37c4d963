package persistence

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func hashOf(data string) string {
	sum := sha256.Sum256([]byte(data))
	return hex.EncodeToString(sum[:])
}

func packs(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "objects", "pack-*"))
	require.NoError(t, err)
	return names
}

// A pack holds many contents written durably at once: each is read back
// by its hash (also after a reopen), a content stored already is not
// written again, and a content under a wrong hash is refused.
func TestCheckpointPacks(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenCheckpoints(dir)
	require.NoError(t, err)
	contents := map[string][]byte{hashOf("one"): []byte("one"), hashOf("two"): []byte("two"), hashOf(""): {}}
	require.NoError(t, c.PutAll(contents))
	require.Len(t, packs(t, dir), 1)
	require.NoError(t, c.PutAll(contents), "nothing new")
	require.Len(t, packs(t, dir), 1, "no second pack for contents stored already")
	require.Error(t, c.PutAll(map[string][]byte{hashOf("x"): []byte("not x")}))
	require.NoError(t, c.Close())

	c, err = OpenCheckpoints(dir)
	require.NoError(t, err)
	defer c.Close()
	for h, want := range contents {
		got, err := c.Get(h)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
	}
	// A damaged pack is caught by the hash check.
	p := packs(t, dir)[0]
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	i := strings.LastIndex(string(data), "two")
	require.Positive(t, i)
	data[i] ^= 1
	require.NoError(t, os.WriteFile(p, data, 0o600))
	_, err = c.Get(hashOf("two"))
	assert.ErrorIs(t, err, ErrObjectMissing)
}

// Compact keeps what records name (as durable loose objects) and the
// manifest of a command that has not ended, and removes the packs.
func TestCheckpointCompactKeepsWhatTheLogNames(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenCheckpoints(dir)
	require.NoError(t, err)
	named, unnamed, manifest, doneManifest := "named before", "only the workspace", "open manifest", "done manifest"
	require.NoError(t, c.PutAll(map[string][]byte{hashOf(named): []byte(named), hashOf(unnamed): []byte(unnamed),
		hashOf(manifest): []byte(manifest), hashOf(doneManifest): []byte(doneManifest)}))
	before := hashOf(named)
	require.NoError(t, c.Append(
		CheckpointRecord{Type: CheckpointTurn, Turn: 1},
		CheckpointRecord{Type: CheckpointCommand, Turn: 1, Command: &Command{ID: 1, Manifest: hashOf(doneManifest)}},
		CheckpointRecord{Type: CheckpointFile, Turn: 1, Path: "/w/a", Before: &before},
		CheckpointRecord{Type: CheckpointCommandDone, Turn: 1, Command: &Command{ID: 1}},
		CheckpointRecord{Type: CheckpointCommand, Turn: 1, Command: &Command{ID: 2, Manifest: hashOf(manifest)}},
	))
	require.NoError(t, c.Compact())
	assert.Empty(t, packs(t, dir))
	for _, keep := range []string{named, manifest} {
		got, err := c.Get(hashOf(keep))
		require.NoError(t, err, keep)
		assert.Equal(t, keep, string(got))
	}
	for _, gone := range []string{unnamed, doneManifest} {
		_, err := c.Get(hashOf(gone))
		assert.ErrorIs(t, err, ErrObjectMissing, gone)
	}
	require.NoError(t, c.Close())
	c, err = OpenCheckpoints(dir)
	require.NoError(t, err)
	defer c.Close()
	got, err := c.Get(before)
	require.NoError(t, err)
	assert.Equal(t, named, string(got), "kept across a reopen")
}
