package runtime

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/internal/winetest"
	"github.com/acp-agent/acp-agent/policy"
)

// TestRemoveFileStaysInTheRoots: RemoveFile deletes a regular file inside
// the roots, and never one reached through a symlinked directory, a
// symlink, a hard link or a denied prefix; a missing file is not an error
// and creates nothing.
func TestRemoveFileStaysInTheRoots(t *testing.T) {
	winetest.NeedsRealWindows(t, winetest.Symlinks)
	root, outside := t.TempDir(), t.TempDir()
	precious := filepath.Join(outside, "f.txt")
	require.NoError(t, os.WriteFile(precious, []byte("precious"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "linkdir")))
	require.NoError(t, os.Symlink(precious, filepath.Join(root, "link.txt")))
	require.NoError(t, os.Link(precious, filepath.Join(root, "hard.txt")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "config"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "plain.txt"), []byte("x"), 0o644))
	f, err := NewLocalFS(policy.FS{Roots: []string{root}, DeniedPathPrefixes: policy.DefaultDeniedPrefixes()})
	require.NoError(t, err)
	defer f.Close()
	ctx := context.Background()

	removed, err := f.RemoveFile(ctx, filepath.Join(root, "plain.txt"))
	require.NoError(t, err)
	assert.True(t, removed)
	assert.NoFileExists(t, filepath.Join(root, "plain.txt"))

	removed, err = f.RemoveFile(ctx, filepath.Join(root, "missing", "deeper.txt"))
	require.NoError(t, err)
	assert.False(t, removed)
	assert.NoDirExists(t, filepath.Join(root, "missing"), "nothing is created")

	for _, p := range []string{"linkdir/f.txt", "link.txt", "hard.txt", ".git/config", "../" + filepath.Base(outside) + "/f.txt"} {
		removed, _ := f.RemoveFile(ctx, filepath.Join(root, p))
		assert.False(t, removed, p)
	}
	assert.FileExists(t, precious)
	assert.FileExists(t, filepath.Join(root, "link.txt"), "the link itself is not removed either")
	assert.FileExists(t, filepath.Join(root, ".git", "config"))
}
