//go:build linux

package runtime

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWalkOpensOnlyTheListedDirectory: a directory swapped in under a
// listed name after the listing (another inode), or a symlink planted
// there, is not entered; the one listed is.
func TestWalkOpensOnlyTheListedDirectory(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(root, "other"), 0o755))
	dir, err := os.Open(root)
	require.NoError(t, err)
	defer dir.Close()
	entries, err := readStartDir(dir)
	require.NoError(t, err)
	parent := &dirHandle{fd: int(dir.Fd())}
	parent.refs.Store(1)
	find := func(name string) entry {
		for _, d := range entries {
			if d.Name() == name {
				return entry{rel: name, d: d, dir: parent}
			}
		}
		t.Fatalf("%s not listed", name)
		return entry{}
	}
	sub := find("sub")

	h, _, ok := openListedDir(sub)
	require.True(t, ok, "the listed directory opens")
	h.release()

	require.NoError(t, os.Rename(filepath.Join(root, "sub"), filepath.Join(root, "sub.old")))
	require.NoError(t, os.Rename(filepath.Join(root, "other"), filepath.Join(root, "sub")))
	_, _, ok = openListedDir(sub)
	require.False(t, ok, "another directory swapped in under the listed name")

	require.NoError(t, os.Rename(filepath.Join(root, "sub"), filepath.Join(root, "other")))
	require.NoError(t, os.Symlink("sub.old", filepath.Join(root, "sub")))
	_, _, ok = openListedDir(sub)
	require.False(t, ok, "a symlink planted under the listed name")
}
