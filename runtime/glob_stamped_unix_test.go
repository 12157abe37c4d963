//go:build unix

package runtime

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GlobStamped gives each path GlobWith gives, in the same order, with
// the stamp StampOf gives it: for a regular file only (a symlink to one,
// a directory, a fifo are not regular), whatever the walk's listing.
func TestGlobStampedStampsWhatStampOfStamps(t *testing.T) {
	tr := newTree(t)
	writeFile(t, tr.root, "b/one.txt", "one\n")
	writeFile(t, tr.root, "a.txt", "a\n")
	writeFile(t, tr.root, "b/c/deep.txt", "deep\n")
	require.NoError(t, os.Symlink("a.txt", tr.path("link")))
	require.NoError(t, syscall.Mkfifo(tr.path("b/fifo"), 0o644))
	ctx := context.Background()
	want, _, err := tr.fs.GlobWith(ctx, tr.root, "**", GlobOptions{})
	require.NoError(t, err)
	got, truncated, err := tr.fs.GlobStamped(ctx, tr.root, "**", GlobOptions{})
	require.NoError(t, err)
	assert.False(t, truncated)
	require.Len(t, got, len(want))
	regular := map[string]bool{}
	for i, p := range got {
		assert.Equal(t, want[i], p.Path)
		st, ok := StampOf(p.Path)
		assert.Equal(t, ok, p.Regular, "%s", p.Path)
		assert.Equal(t, st, p.Stamp, "%s", p.Path)
		regular[p.Path] = p.Regular
	}
	for rel, want := range map[string]bool{"a.txt": true, "b/one.txt": true, "b/c/deep.txt": true, "link": false, "b/fifo": false, "b": false} {
		isRegular, listed := regular[tr.path(rel)]
		assert.True(t, listed, "%s listed", rel)
		assert.Equal(t, want, isRegular, "%s", rel)
	}
}
