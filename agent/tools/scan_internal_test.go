package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
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
