package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A file whose times are within the racy window of a scan's start could
// change again in the same clock tick without its key changing: the next
// scan reads it again whatever its key says, and such a file is not kept
// for the next session.
func TestScanReadsAgainAFileReadWithinItsRacyWindow(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	w, err := NewWorkspace(dir, nil, WorkspaceConfig{}, Editor{})
	require.NoError(t, err)
	defer w.Close()
	p := filepath.Join(dir, "a.txt")
	require.NoError(t, os.WriteFile(p, []byte("one\n"), 0o644))
	ctx := context.Background()
	first := w.scanTree(ctx)
	require.Contains(t, first.files, p)
	assert.False(t, first.files[p].trusted, "just written: racy")
	assert.Nil(t, w.KeptScan(), "a racy file is not kept for the next session")

	// What a change in the same tick as the read leaves: the key the
	// scan holds is the file's, the content it holds is not.
	w.scan.mu.Lock()
	stale := w.scan.files[p]
	stale.sum, stale.data = sha256.Sum256([]byte("two\n")), []byte("two\n")
	w.scan.files[p] = stale
	w.scan.mu.Unlock()
	second := w.scanTree(ctx)
	assert.Equal(t, sha256.Sum256([]byte("one\n")), second.files[p].sum, "read again, not taken from the scan before")
}

// Whether a key vouches for its content: both times older than the
// scan's start by the racy window.
func TestTrustedNeedsBothTimesOlderThanTheRacyWindow(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	old, recent := start.Add(-racyWindow-time.Nanosecond).UnixNano(), start.Add(-racyWindow+time.Millisecond).UnixNano()
	for _, c := range []struct {
		name         string
		mtime, ctime int64
		want         bool
	}{
		{"both old", old, old, true},
		{"mtime recent", recent, old, false},
		{"ctime recent", old, recent, false},
		{"from after the start", start.Add(time.Second).UnixNano(), old, false},
	} {
		assert.Equal(t, c.want, trusted(fileKey{MTime: c.mtime, CTime: c.ctime}, start), c.name)
	}
}

// A kept scan's encoding gives back every file as it was, whatever its
// path holds (spaces, newlines), and refuses what it did not write.
func TestKeptScanEncodingRoundTrips(t *testing.T) {
	h := hex.EncodeToString(make([]byte, sha256.Size))
	in := KeptScan{Files: map[string]KeptFile{
		"/w/a b.txt":   {Hash: h, Size: 3, MTime: -1, CTime: 1_700_000_000_000_000_000, Ino: 1 << 40, Mode: 0o100644},
		"/w/new\nline": {Hash: h},
	}}
	data, err := in.MarshalBinary()
	require.NoError(t, err)
	var out KeptScan
	require.NoError(t, out.UnmarshalBinary(data))
	assert.Equal(t, in, out)
	for _, bad := range [][]byte{data[:len(data)-1], []byte("{}"), append(slices.Clone(data), []byte("x 1 2\x00")...)} {
		assert.Error(t, new(KeptScan).UnmarshalBinary(bad))
	}
}

// A command's manifest is encoded by hand (it is encoded before every
// command, thousands of entries in a large workspace); what it writes is
// byte for byte what encoding/json writes, for any path (quotes,
// backslashes, HTML characters, control characters, invalid UTF-8) and
// with the optional fields present or not.
func TestManifestEncodesAsEncodingJSONDoes(t *testing.T) {
	type plain CommandManifest // encoding/json's own encoding
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "/", "é", "\"", "\\", "<", ">", "&", "\n", "\x00", "\x1f", "\x7f", "\xff", "\u2028", " ", "z"}
	for round := range 300 {
		m := CommandManifest{Complete: round%2 == 0}
		if round%3 != 0 {
			m.Taken = rng.Int64()
		}
		if round%17 != 0 {
			m.Files = map[string]ManifestFile{}
		}
		for n := rng.IntN(20); m.Files != nil && n > 0; n-- {
			var p strings.Builder
			for range 1 + rng.IntN(12) {
				p.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			f := ManifestFile{Size: rng.Int64N(1 << 40), MTime: rng.Int64() - rng.Int64(), Ino: rng.Uint64(), CTime: rng.Int64()}
			if rng.IntN(2) == 0 {
				f.Hash = hex.EncodeToString(make([]byte, 32))
			}
			if rng.IntN(3) == 0 {
				f.Ino, f.CTime = 0, 0
			}
			m.Files[p.String()] = f
		}
		want, err := json.Marshal(plain(m))
		require.NoError(t, err)
		got, err := m.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "round %d", round)
	}
}
