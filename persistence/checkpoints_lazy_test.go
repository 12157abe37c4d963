package persistence

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A checkpoint store is made at its first write, not when it is opened:
// opened and closed unused, it leaves nothing; each kind of first write
// (a record, a content, a pack, a kept scan taken) makes it, and what
// was written is there when it is opened again.
func TestCheckpointStoreIsMadeAtItsFirstWrite(t *testing.T) {
	base := t.TempDir()
	gone := func(dir string) {
		t.Helper()
		_, err := os.Lstat(dir)
		require.ErrorIs(t, err, os.ErrNotExist, "nothing made")
	}
	unused := filepath.Join(base, "unused")
	c, err := OpenCheckpoints(unused)
	require.NoError(t, err)
	assert.Empty(t, c.Records())
	_, err = c.Get(hashOf("x"))
	require.ErrorIs(t, err, ErrObjectMissing)
	require.NoError(t, c.Compact())
	require.NoError(t, c.Close())
	gone(unused)

	writes := map[string]func(c *Checkpoints) error{
		"append": func(c *Checkpoints) error { return c.Append(CheckpointRecord{Type: CheckpointTurn, Turn: 1}) },
		"put": func(c *Checkpoints) error {
			h, err := c.Put([]byte("content"))
			if err == nil {
				err = c.Sync(h)
			}
			return err
		},
		"put-all": func(c *Checkpoints) error { return c.PutAll(map[string][]byte{hashOf("content"): []byte("content")}) },
		"take-scan": func(c *Checkpoints) error {
			_, _, err := c.TakeScan(filepath.Join(base, "no-scan-kept"))
			return err
		},
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(base, name)
			c, err := OpenCheckpoints(dir)
			require.NoError(t, err)
			gone(dir)
			require.NoError(t, write(c))
			require.NoError(t, c.Close())
			c, err = OpenCheckpoints(dir)
			require.NoError(t, err)
			defer c.Close()
			switch name {
			case "append":
				assert.Len(t, c.Records(), 1)
			case "put", "put-all":
				data, err := c.Get(hashOf("content"))
				require.NoError(t, err)
				assert.Equal(t, "content", string(data))
			}
			require.NoError(t, c.Append(CheckpointRecord{Type: CheckpointTurn, Turn: 2}), "the reopened store takes records")
		})
	}
}
