//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// secretsTree makes a workspace of n directories, each with a file, and
// a cache directory under a denied one; it returns the workspace and the
// cache.
func secretsTree(t *testing.T, n int) (ws, cache string) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for i := range n {
		d := filepath.Join(ws, "d"+string(rune('a'+i)))
		require.NoError(t, os.Mkdir(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "f.txt"), nil, 0o644))
	}
	return ws, filepath.Join(t.TempDir(), "sessions", ".secrets-cache")
}

// listings is how many directories f lists. (The scans share one
// getdents buffer, as the helper's one scanner does: not in parallel.)
func listings(f func()) int64 {
	before := dirsListed.Load()
	f()
	return dirsListed.Load() - before
}

// A new process's scan (a new scanner) starts from the listings the last
// one kept: it reads again only a directory whose stamp changed, and
// finds the .env created there.
func TestKeptSecretsListingsAreReadAgainOnlyWhereADirectoryChanged(t *testing.T) {
	ws, cache := secretsTree(t, 5)
	time.Sleep(racyWindow + 200*time.Millisecond)
	roots := []string{ws}
	var found []secretFile
	assert.Equal(t, int64(6), listings(func() { found = (&secretsScan{}).find(roots, cache) }))
	assert.Empty(t, found)
	assert.Zero(t, listings(func() { found = (&secretsScan{}).find(roots, cache) }), "nothing changed: nothing listed")
	assert.Empty(t, found)

	require.NoError(t, os.WriteFile(filepath.Join(ws, "dc", ".env"), []byte("X=1\n"), 0o600))
	assert.Equal(t, int64(1), listings(func() { found = (&secretsScan{}).find(roots, cache) }))
	require.Len(t, found, 1)
	assert.Equal(t, filepath.Join(ws, "dc", ".env"), found[0].path)
	// Changed within the racy window: listed, not kept; listed again.
	assert.Equal(t, int64(1), listings(func() { found = (&secretsScan{}).find(roots, cache) }))
	require.Len(t, found, 1)
}

// A directory listed within the racy window of its last change is not
// kept: a change in the same clock tick would not change its stamp.
func TestKeptSecretsListingsKeepNoRacyDirectory(t *testing.T) {
	ws, cache := secretsTree(t, 3)
	roots := []string{ws}
	assert.Equal(t, int64(4), listings(func() { (&secretsScan{}).find(roots, cache) }))
	assert.Equal(t, int64(4), listings(func() { (&secretsScan{}).find(roots, cache) }), "all just made: all listed again")
}

// A cache file that is torn, or changed in any byte, is not used at all.
func TestKeptSecretsListingsThatAreNotIntactAreIgnored(t *testing.T) {
	ws, cache := secretsTree(t, 3)
	time.Sleep(racyWindow + 200*time.Millisecond)
	roots := []string{ws}
	(&secretsScan{}).find(roots, cache)
	file := keptSecretsFile(cache, roots)
	good, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Len(t, loadKeptSecrets(file), 4)
	for name, bad := range map[string][]byte{
		"torn":    good[:len(good)-10],
		"flipped": append(append([]byte{}, good[:40]...), append([]byte{good[40] ^ 1}, good[41:]...)...),
		"empty":   {},
	} {
		require.NoError(t, os.WriteFile(file, bad, 0o600))
		assert.Nil(t, loadKeptSecrets(file), name)
		assert.Equal(t, int64(4), listings(func() { (&secretsScan{}).find(roots, cache) }), name)
		require.NoError(t, os.WriteFile(file, good, 0o600))
	}
}

// The kept listings are read only from under a denied path, where no
// command can write them: anywhere else a command could forge one.
func TestKeptSecretsListingsLiveOnlyUnderADeniedPath(t *testing.T) {
	for _, c := range []struct {
		cache  string
		denied []string
		want   string
	}{
		{"/home/u/.local/state/acp-agent/sessions/.secrets-cache", []string{"/home/u/.ssh", "/home/u/.local/state/acp-agent/sessions"}, "/home/u/.local/state/acp-agent/sessions/.secrets-cache"},
		{"/s/x/../.secrets-cache", []string{"/s"}, "/s/.secrets-cache"},
		{"/s/.secrets-cache", []string{"/s"}, "/s/.secrets-cache"},
		{"/ws/.secrets-cache", []string{"/s"}, ""},
		{"/s/../ws/.secrets-cache", []string{"/s"}, ""},
		{"/sessions-other/.secrets-cache", []string{"/sessions"}, ""},
		{"relative/.secrets-cache", []string{"relative"}, ""},
		{"/s/.secrets-cache", []string{"relative/s"}, ""},
		{"/x/.secrets-cache", []string{"/"}, ""},
		{"/s/.secrets-cache", nil, ""},
		{"", []string{"/s"}, ""},
	} {
		got := secretsCacheDir(Policy{SecretsCache: c.cache, DeniedPaths: c.denied})
		assert.Equal(t, c.want, got, "%s under %v", c.cache, c.denied)
	}
}

// Listings are kept only on file systems whose ctime no program can set:
// on FAT or exFAT (ctime is the mtime, which utimes sets), NFS or FUSE a
// command could put a .env in a directory and set its times back.
func TestListingsAreKeptOnlyWhereTheCtimeCannotBeSet(t *testing.T) {
	for magic, want := range map[int64]bool{
		unix.EXT4_SUPER_MAGIC: true, unix.TMPFS_MAGIC: true, unix.XFS_SUPER_MAGIC: true, unix.BTRFS_SUPER_MAGIC: true,
		unix.MSDOS_SUPER_MAGIC: false, unix.EXFAT_SUPER_MAGIC: false, unix.NFS_SUPER_MAGIC: false,
		unix.FUSE_SUPER_MAGIC: false, unix.SMB2_SUPER_MAGIC: false, 0: false,
	} {
		assert.Equal(t, want, timesCanVouch(magic), "%#x", magic)
	}
	// Where they cannot vouch, nothing is kept: every scan lists again.
	ws, cache := secretsTree(t, 2)
	time.Sleep(racyWindow + 200*time.Millisecond)
	s := &secretsScan{}
	var st unix.Stat_t
	require.NoError(t, unix.Stat(ws, &st))
	s.timesKept = map[uint64]bool{uint64(st.Dev): false}
	assert.Equal(t, int64(3), listings(func() { s.find([]string{ws}, cache) }))
	assert.Equal(t, int64(3), listings(func() { s.find([]string{ws}, cache) }))
	assert.Nil(t, loadKeptSecrets(keptSecretsFile(cache, []string{ws})), "nothing kept")
}

// A command may rename or replace anything below a path it may write,
// the directories above a masked denied path included: a cache there
// (the workspace is the home directory, which holds the session
// directory), reached through a symlink, or holding a writable path, is
// not used. The attacks: rename the state directory away and plant a
// listing that says a directory holds no .env; make the cache a symlink
// to the user's files, which pruning would delete.
func TestKeptSecretsListingsAreNotKeptWhereCommandsWrite(t *testing.T) {
	home := t.TempDir()
	sessions := filepath.Join(home, ".local", "state", "acp-agent", "sessions")
	require.NoError(t, os.MkdirAll(sessions, 0o700))
	cache := filepath.Join(sessions, ".secrets-cache")
	link := filepath.Join(t.TempDir(), "ws")
	require.NoError(t, os.Symlink(home, link))
	for _, c := range []struct {
		name string
		p    Policy
		want string
	}{
		{"the workspace elsewhere", Policy{WritableRoots: []string{t.TempDir()}}, cache},
		{"the workspace holds the session directory", Policy{WritableRoots: []string{home}}, ""},
		{"through a symlink", Policy{WritableRoots: []string{link}}, ""},
		{"an extra writable path holds it", Policy{ExtraWritable: []string{filepath.Join(home, ".local")}}, ""},
		{"the temporary directory holds it", Policy{TempDir: sessions}, ""},
		{"a writable path inside it", Policy{WritableRoots: []string{filepath.Join(cache, "ws")}}, ""},
	} {
		c.p.SecretsCache, c.p.DeniedPaths = cache, []string{sessions}
		assert.Equal(t, c.want, secretsCacheDir(c.p), c.name)
	}
}

// Pruning removes only the files saveKeptSecrets writes.
func TestKeptSecretsPruningRemovesOnlyItsOwnFiles(t *testing.T) {
	dir := t.TempDir()
	for i := range maxKeptSecretsFiles + 4 {
		name := fmt.Sprintf("%032x", i)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o600))
		require.NoError(t, os.Chtimes(filepath.Join(dir, name), time.Time{}, time.Unix(int64(1000+i), 0)))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "thesis.tex"), nil, 0o600))
	require.NoError(t, os.Chtimes(filepath.Join(dir, "thesis.tex"), time.Time{}, time.Unix(1, 0)))
	pruneKeptSecrets(dir)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, maxKeptSecretsFiles+1)
	assert.FileExists(t, filepath.Join(dir, "thesis.tex"))
}
