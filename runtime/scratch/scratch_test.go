//go:build unix

package scratch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A process's directory stays while anything is left in it, and a later
// MkdirTemp after its removal makes a new one; RemoveStale never takes a
// held directory, this process's included.
func TestReleaseKeepsADirectoryStillInUse(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a, err := MkdirTemp("cmd-")
	require.NoError(t, err)
	dir := Dir()
	require.Equal(t, dir, filepath.Dir(a))
	removed, err := RemoveStale()
	require.NoError(t, err)
	assert.Empty(t, removed, "this process's directory is held")

	require.NoError(t, Release())
	assert.DirExists(t, dir, "a workspace still has its directory there")
	require.NoError(t, os.Remove(a))
	require.NoError(t, Release())
	assert.NoDirExists(t, dir)
	assert.Empty(t, Dir())

	b, err := MkdirTemp("cmd-")
	require.NoError(t, err)
	assert.NotEqual(t, dir, filepath.Dir(b))
	require.NoError(t, os.Remove(b))
	require.NoError(t, Release())
}

// A staging directory (its maker died between mkdir and rename) is
// removed only once it is a minute old: a younger one may be being made.
func TestStagingDirectoriesAreRemovedOnlyWhenOld(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	young := filepath.Join(tmp, stagingPrefix+"1")
	old := filepath.Join(tmp, stagingPrefix+"2")
	for _, d := range []string{young, old} {
		require.NoError(t, os.Mkdir(d, 0o700))
	}
	long := time.Now().Add(-2 * stagingAge)
	require.NoError(t, os.Chtimes(old, long, long))
	removed, err := RemoveStale()
	require.NoError(t, err)
	assert.Equal(t, []string{old}, removed)
	assert.DirExists(t, young)
}

// One call removes at most MaxRemoved directories; the next removes more.
func TestRemoveStaleIsBounded(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for i := range MaxRemoved + 3 {
		require.NoError(t, os.Mkdir(filepath.Join(tmp, prefix+"1-"+string(rune('a'+i%26))+string(rune('a'+i/26))), 0o700))
	}
	removed, err := RemoveStale()
	require.NoError(t, err)
	assert.Len(t, removed, MaxRemoved)
	removed, err = RemoveStale()
	require.NoError(t, err)
	assert.Len(t, removed, 3)
}
