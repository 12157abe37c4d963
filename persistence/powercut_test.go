//go:build unix

package persistence

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// powerCut models what a power cut keeps of directory entries: an entry
// survives once its directory has been fsynced while the entry was in it
// (file contents are the fsyncs of the files, checked elsewhere). It
// observes the package's directory fsyncs (dirSynced); tests that use it
// do not run in parallel with each other.
type powerCut struct {
	t    *testing.T
	root string
	mu   sync.Mutex
	kept map[string]bool
}

// observePowerCut starts observing directory fsyncs; entries above root
// (the test's temporary directory) count as kept.
func observePowerCut(t *testing.T, root string) *powerCut {
	pc := &powerCut{t: t, root: root, kept: map[string]bool{}}
	f := func(dir string) {
		names, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		pc.mu.Lock()
		defer pc.mu.Unlock()
		for _, e := range names {
			pc.kept[filepath.Join(dir, e.Name())] = true
		}
	}
	stop, err := ObserveDirSyncs(f)
	require.NoError(t, err)
	t.Cleanup(stop)
	return pc
}

// requireKept fails unless path, and every directory between root and
// it, would be found after a power cut now.
func (pc *powerCut) requireKept(path, why string) {
	pc.t.Helper()
	rel, err := filepath.Rel(pc.root, path)
	require.NoError(pc.t, err)
	_, err = os.Lstat(path)
	require.NoError(pc.t, err)
	pc.mu.Lock()
	defer pc.mu.Unlock()
	p := pc.root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		require.True(pc.t, pc.kept[p], "%s: %s would be lost in a power cut (its directory was not synced after it was made)", why, p)
	}
}

// observedCheckpoints is the checkpoint store (in dir) of a session
// that has no directory yet, in a session directory whose directory
// fsyncs pc observes.
func observedCheckpoints(t *testing.T) (pc *powerCut, c *Checkpoints, dir string) {
	store := t.TempDir()
	pc = observePowerCut(t, store)
	dir = filepath.Join(store, "s1", "checkpoints")
	c, err := OpenCheckpoints(dir)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return pc, c, dir
}

// A session's first file change makes <id>/, checkpoints/, objects/, an
// objects/<hash[:2]>/ directory and log.jsonl: once an object is synced
// and once a record is appended (what the agent waits for before it
// counts a change as recorded), a power cut keeps every entry on the way
// to them, and so does a pack once PutAll returns.
func TestFirstCheckpointIsKeptThroughAPowerCut(t *testing.T) {
	pc, c, dir := observedCheckpoints(t)

	h, err := c.Put([]byte("before"))
	require.NoError(t, err)
	require.NoError(t, c.Sync(h))
	pc.requireKept(c.objectPath(h), "a synced object")

	require.NoError(t, c.Append(CheckpointRecord{Type: CheckpointTurn, Turn: 1},
		CheckpointRecord{Type: CheckpointFile, Turn: 1, Path: "/w/a.txt", Before: &h}))
	pc.requireKept(filepath.Join(dir, "log.jsonl"), "an appended record")

	// Another object, in a new objects/<hash[:2]>/.
	var h2 string
	for i := 0; ; i++ {
		if h2 = hashOf(strings.Repeat("x", i)); h2[:2] != h[:2] {
			_, err := c.Put([]byte(strings.Repeat("x", i)))
			require.NoError(t, err)
			break
		}
	}
	require.NoError(t, c.Sync(h2))
	pc.requireKept(c.objectPath(h2), "an object in a new directory")

	require.NoError(t, c.PutAll(map[string][]byte{hashOf("packed"): []byte("packed")}))
	for _, p := range packs(t, dir) {
		pc.requireKept(p, "a pack")
	}
}

// A pack written first (a command before any other change) makes the
// store's directories too.
func TestFirstPackIsKeptThroughAPowerCut(t *testing.T) {
	pc, c, dir := observedCheckpoints(t)
	require.NoError(t, c.PutAll(map[string][]byte{hashOf("packed"): []byte("packed")}))
	p := packs(t, dir)
	require.Len(t, p, 1)
	pc.requireKept(p[0], "a pack")
}

// An agent's entry in .running/ (made at its first session lock) and the
// .reserved/ directory (made with the first reservation record) are made
// without an fsync, so that session/new waits for none: what they stand
// for (a session's leftovers, the records, none of them synced) becomes
// durable with the next fsync of the store directory, a session's first
// save, which syncs .running/ first. From then on a power cut keeps
// them: a lost entry would leave what the agent made for no start to
// remove.
func TestRunningEntryIsKeptThroughAPowerCut(t *testing.T) {
	dir := t.TempDir()
	pc := observePowerCut(t, dir)
	s := openStore(t, dir)
	res, err := s.ReserveNew("r1")
	require.NoError(t, err)
	defer res.Release()
	require.NoError(t, res.Keep(header("r1"), nil))
	entries, err := filepath.Glob(filepath.Join(dir, RunningDir, "*"))
	require.NoError(t, err)
	require.Len(t, entries, 1)

	f, err := res.Create(header("r1"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	pc.requireKept(entries[0], "the agent's running entry")
	pc.requireKept(filepath.Join(dir, ReservedDir), "the reservations' directory")
	pc.requireKept(filepath.Join(dir, "r1.jsonl"), "the session's file")
}
