package persistence

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// A pack's header line is read without encoding/json when it is exactly
// what json.Marshal writes; whatever the line, the result is
// encoding/json's: the same entries, the same refusals.
func TestPackHeadersDecodeAsEncodingJSONDoes(t *testing.T) {
	h := func(c byte) string { return strings.Repeat(string(c), 64) }
	var lines []string
	for _, hdr := range []packHeader{
		{Objects: []packEntry{}},
		{Objects: []packEntry{{H: h('a'), N: 12}}},
		{Objects: []packEntry{{H: h('0'), N: 0}, {H: h('f'), N: 1 << 40}, {H: h('9'), N: -3}}},
		{Objects: []packEntry{{H: "ABC", N: 1}, {H: "a\"b", N: 2}, {H: "", N: 3}}},
	} {
		line, err := json.Marshal(hdr)
		require.NoError(t, err)
		lines = append(lines, string(line), string(line)+"\n")
		if !strings.Contains(string(line), "ABC") {
			_, fast := parsePackHeader(line)
			assert.True(t, fast, "%s is read directly", line)
		}
	}
	lines = append(lines,
		`{"objects":null}`, `{"objects":[{"n":1,"h":"ab"}]}`, `{"objects":[{"h":"ab","n":01}]}`,
		`{"objects":[{"h":"ab","n":1.5}]}`, `{"objects":[{"h":"ab","n":-}]}`, `{"objects":[{"h":"ab","n":1}],"x":1}`,
		`{"objects":[{"h":"ab","n":1},]}`, `{"objects":[{"h":"ab","n":1}]`, `{"objects":[{"h":"ab","n":99999999999999999999}]}`,
		`{"objects":[{"h":"a\u0062","n":1}]}`, `{"objects":[]} `, ``, `[`, `{"objects":[{"h":"ab","n":1}]}x`)
	for _, line := range lines {
		var want packHeader
		wantErr := json.Unmarshal([]byte(line), &want)
		got, err := decodePackHeader([]byte(line))
		if wantErr != nil {
			assert.Error(t, err, "%q", line)
			continue
		}
		require.NoError(t, err, "%q", line)
		assert.Equal(t, len(want.Objects), len(got.Objects), "%q", line)
		for i := range want.Objects {
			assert.Equal(t, want.Objects[i], got.Objects[i], "%q", line)
		}
	}
}
