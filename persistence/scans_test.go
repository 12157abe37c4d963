package persistence

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A closed session's scan moves to the workspace's directory and from
// there into the next session's store: once (a second taker gets
// nothing), its contents readable there, and a content damaged meanwhile
// not taken. Contents of a pack that are not the scan's do not make the
// scan be dropped unless they are most of it.
func TestKeptScanMovesOnceAndOnlyIntactContents(t *testing.T) {
	base := t.TempDir()
	kept := filepath.Join(base, "kept-ws")
	a, err := OpenCheckpoints(filepath.Join(base, "a"))
	require.NoError(t, err)
	require.NoError(t, a.PutAll(map[string][]byte{hashOf("one"): []byte("one"), hashOf("two"): []byte("two")}))
	var named map[string]bool
	require.NoError(t, a.CompactKeeping(kept, map[string]bool{hashOf("one"): true, hashOf("two"): true, hashOf("absent"): true},
		func(held map[string]bool) ([]byte, error) { named = held; return []byte("index"), nil }))
	require.NoError(t, a.Close())
	assert.Equal(t, map[string]bool{hashOf("one"): true, hashOf("two"): true}, named, "the index names only what moved")
	assert.Empty(t, packs(t, filepath.Join(base, "a")), "the packs left the closed session's store")

	// Damage one content where it is kept.
	pack, err := filepath.Glob(filepath.Join(kept, keptScanName, "pack-*"))
	require.NoError(t, err)
	require.Len(t, pack, 1)
	data, err := os.ReadFile(pack[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(pack[0], bytes.Replace(data, []byte("two"), []byte("twX"), 1), 0o600))

	b, err := OpenCheckpoints(filepath.Join(base, "b"))
	require.NoError(t, err)
	defer b.Close()
	index, held, err := b.TakeScan(kept)
	require.NoError(t, err)
	assert.Equal(t, "index", string(index))
	assert.Equal(t, map[string]bool{hashOf("one"): true}, held, "the damaged content was not taken")
	got, err := b.Get(hashOf("one"))
	require.NoError(t, err)
	assert.Equal(t, "one", string(got))
	require.NoError(t, b.PutAll(map[string][]byte{hashOf("one"): []byte("one")}))
	assert.Len(t, packs(t, filepath.Join(base, "b")), 1, "a taken content is durable here: not stored again")

	c, err := OpenCheckpoints(filepath.Join(base, "c"))
	require.NoError(t, err)
	defer c.Close()
	index, held, err = c.TakeScan(kept)
	require.NoError(t, err)
	assert.Nil(t, index, "a kept scan is taken once")
	assert.Empty(t, held)
}

// A scan whose packs are mostly other contents is not kept.
func TestKeptScanIsDroppedWhenItsPacksAreMostlyOtherContents(t *testing.T) {
	base := t.TempDir()
	kept := filepath.Join(base, "kept-ws")
	a, err := OpenCheckpoints(filepath.Join(base, "a"))
	require.NoError(t, err)
	big := bytes.Repeat([]byte("x"), keptPackExtra+keptPackSlack*10)
	require.NoError(t, a.PutAll(map[string][]byte{hashOf("small"): []byte("small"), hashOf(string(big)): big}))
	require.NoError(t, a.CompactKeeping(kept, map[string]bool{hashOf("small"): true},
		func(map[string]bool) ([]byte, error) { return []byte("index"), nil }))
	require.NoError(t, a.Close())
	assert.NoDirExists(t, filepath.Join(kept, keptScanName))
	assert.Empty(t, packs(t, filepath.Join(base, "a")))
}
