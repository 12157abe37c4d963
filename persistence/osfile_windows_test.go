package persistence

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/internal/winetest"
)

// A rename over a file another process holds without FILE_SHARE_DELETE
// (a virus scanner, an indexer, a backup agent: Go's own os.Open does
// that) fails with a sharing violation on Windows; replaceFile retries
// until the holder lets go.
func TestWindowsReplaceRetriesSharingViolations(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "new.tmp"), filepath.Join(dir, "session.jsonl")
	require.NoError(t, os.WriteFile(src, []byte("new"), 0o600))
	require.NoError(t, os.WriteFile(dst, []byte("old"), 0o600))
	holder, err := os.Open(dst) // FILE_SHARE_READ|FILE_SHARE_WRITE, no DELETE
	require.NoError(t, err)
	const hold = 400 * time.Millisecond
	released := make(chan struct{})
	go func() {
		time.Sleep(hold)
		holder.Close()
		close(released)
	}()
	start := time.Now()
	require.NoError(t, replaceFile(src, dst))
	<-released
	assert.GreaterOrEqual(t, time.Since(start), hold-50*time.Millisecond, "the rename waited for the holder")
	data, err := os.ReadFile(dst)
	require.NoError(t, err)
	assert.Equal(t, "new", string(data))
	assert.NoFileExists(t, src)
}

// A holder that never lets go makes the rename fail in bounded time,
// leaving the old file as it was.
func TestWindowsReplaceGivesUpOnAHolderThatStays(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "new.tmp"), filepath.Join(dir, "session.jsonl")
	require.NoError(t, os.WriteFile(src, []byte("new"), 0o600))
	require.NoError(t, os.WriteFile(dst, []byte("old"), 0o600))
	holder, err := os.Open(dst)
	require.NoError(t, err)
	defer holder.Close()
	start := time.Now()
	assert.Error(t, replaceFile(src, dst))
	assert.Less(t, time.Since(start), replaceRetryFor+time.Second)
	data, _ := os.ReadFile(dst)
	assert.Equal(t, "old", string(data))
}

// A session file a lister has open (with FILE_SHARE_DELETE, as List opens
// them) can still be rewritten: POSIX-semantics renames replace it.
func TestWindowsRewriteWhileAListerHoldsTheFile(t *testing.T) {
	winetest.NeedsRealWindows(t, "no POSIX-semantics rename (FileRenameInfoEx), so a file open elsewhere cannot be replaced")
	s := newStore(t)
	f, err := s.Create(header("held"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.AppendSync(json.RawMessage(`{"type":"x","n":1}`)))
	lister, err := openNoFollow(dataFile(s, "held"), os.O_RDONLY, 0)
	require.NoError(t, err)
	defer lister.Close()
	require.NoError(t, f.Rewrite(header("held"), []json.RawMessage{json.RawMessage(`{"type":"x","n":2}`)}))
	require.NoError(t, f.AppendSync(json.RawMessage(`{"type":"x","n":3}`)))
	require.NoError(t, f.Close())
	data, err := os.ReadFile(dataFile(s, "held"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"n":2`)
	assert.Contains(t, string(data), `"n":3`)
	assert.NotContains(t, string(data), `"n":1`)
}

// The lock file is a Windows lock (LockFileEx): a second handle, in this
// process or another, cannot take it, and deleting the session removes
// the lock file while it is held (FILE_SHARE_DELETE).
func TestWindowsLockIsExclusiveAndDeletable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.lock")
	a, err := openNoFollow(path, os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, lockFile(a))
	b, err := openNoFollow(path, os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	assert.ErrorIs(t, lockFile(b), errLockHeld)
	require.NoError(t, unlockFile(a))
	require.NoError(t, lockFile(b), "free once unlocked")
	require.NoError(t, os.Remove(path), "removable while open and locked")
	b.Close()
}
