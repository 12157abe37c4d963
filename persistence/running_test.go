package persistence

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reserveChild starts session id as an agent does at session/new (the
// id reserved, its file prepared, its directory made) and says
// "reserved"; with release it then ends it unsaved as an agent that
// exits cleanly does (Release, the directory removed, Store.Close) and
// says "released", else it waits to be killed.
func reserveChild(dir, id string, release bool) error {
	s, err := OpenStore(dir)
	if err != nil {
		return err
	}
	r, err := s.ReserveNew(id)
	if err != nil {
		return err
	}
	if err := r.Prepare(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, id, "offloaded"), 0o700); err != nil {
		return err
	}
	if !release {
		fmt.Println("reserved")
		select {}
	}
	if err := r.Release(); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(dir, id)); err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	fmt.Println("released")
	return nil
}

// runningEntries lists RunningDir.
func runningEntries(t *testing.T, s *Store) []string {
	t.Helper()
	_, err := os.Stat(filepath.Join(s.Dir(), RunningDir))
	require.NoError(t, err)
	return dirNamesOf(filepath.Join(s.Dir(), RunningDir))
}

// nextStart is the clean-up of an agent that starts on dir, with a Store
// of its own that exits cleanly after it.
func nextStart(t *testing.T, dir string) ([]string, bool) {
	t.Helper()
	st, err := OpenStore(dir)
	require.NoError(t, err)
	removed, full, err := st.RemoveStaleAtStart()
	require.NoError(t, err)
	require.NoError(t, st.Close())
	return removed, full
}

// A start lists the whole directory only when an agent may have left
// something: never after agents that exited cleanly or while they run,
// always after one was killed (whatever it was doing), and then once.
func TestRemoveStaleAtStartListsTheDirectoryOnlyAfterAnAgentStoppedUncleanly(t *testing.T) {
	s := newStore(t)
	dir := s.Dir()
	createWith(t, s, "saved", recs(0, 1))
	require.NoError(t, s.Close())

	// No agent of this version has used the directory: a full pass.
	require.NoError(t, os.Remove(filepath.Join(dir, RunningDir)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old.lock"), nil, 0o600))
	removed, full := nextStart(t, dir)
	assert.True(t, full, "no %s yet", RunningDir)
	assert.Equal(t, []string{"old.lock"}, removed)
	assert.Empty(t, runningEntries(t, s), "made, empty")

	// An agent that ends its unsaved session and exits cleanly.
	c := startChild(t, "release", dir, "clean")
	require.Equal(t, "released", c.readLine(t))
	require.NoError(t, c.wait())
	assert.Empty(t, runningEntries(t, s), "a clean exit takes its entry")
	removed, full = nextStart(t, dir)
	assert.False(t, full, "nothing can have been left")
	assert.Empty(t, removed)

	// A running agent with a session being started: not listed, not
	// touched.
	c = startChild(t, "reserve", dir, "killed")
	require.Equal(t, "reserved", c.readLine(t))
	require.Len(t, runningEntries(t, s), 1)
	removed, full = nextStart(t, dir)
	assert.False(t, full, "the agent runs")
	assert.Empty(t, removed)

	// Killed: the next start finds its entry free and lists everything.
	require.NoError(t, c.cmd.Process.Kill())
	c.wait()
	left := dirNames(t, s)
	require.Contains(t, left, "killed.lock")
	require.Contains(t, left, "killed")
	removed, full = nextStart(t, dir)
	assert.True(t, full, "an agent was killed")
	assert.Contains(t, removed, "killed.lock")
	assert.Contains(t, removed, "killed/")
	assert.Len(t, removed, 3, "and its prepared file: %v", removed)
	assert.ElementsMatch(t, []string{".reserved", "saved.jsonl", "saved.lock"}, filterNames(dirNames(t, s), ".reserved"))
	assert.Empty(t, runningEntries(t, s), "the dead entry goes once the pass is done")
	_, full = nextStart(t, dir)
	assert.False(t, full, "once")
}

// filterNames is names with want added if missing (.reserved comes and
// goes with the records).
func filterNames(names []string, want string) []string {
	for _, n := range names {
		if n == want {
			return names
		}
	}
	return append(names, want)
}

// Close keeps the entry (so the next start lists the directory) when the
// Store may have left something: a lock still held, an id it locked that
// has no file but has a lock file or directory left, or a removal that
// failed.
func TestCloseKeepsTheEntryWhenSomethingMayBeLeft(t *testing.T) {
	for _, tc := range []struct {
		name string
		// end ends the Store's use of the reserved session "s" its way,
		// and the Store's (Close).
		end     func(t *testing.T, s *Store, r *Reservation)
		full    bool
		removed []string // by the next start
	}{
		{"a lock held", func(t *testing.T, s *Store, r *Reservation) {
			require.NoError(t, s.Close())
			require.NoError(t, r.Release())
		}, true, nil},
		{"a directory left", func(t *testing.T, s *Store, r *Reservation) {
			require.NoError(t, os.MkdirAll(filepath.Join(s.Dir(), "s", "offloaded"), 0o700))
			require.NoError(t, r.Release())
			require.NoError(t, s.Close())
		}, true, []string{"s/"}},
		{"a removal failed", func(t *testing.T, s *Store, r *Reservation) {
			require.NoError(t, r.Prepare())
			// The prepared file cannot be removed: a directory that is
			// not empty stands in its place (root ignores permissions).
			require.NoError(t, os.Remove(r.prepared))
			require.NoError(t, os.MkdirAll(filepath.Join(r.prepared, "x"), 0o700))
			require.Error(t, r.Release())
			require.NoError(t, s.Close())
		}, true, nil},
		{"nothing left", func(t *testing.T, s *Store, r *Reservation) {
			require.NoError(t, r.Prepare())
			require.NoError(t, r.Release())
			createWith(t, s, "saved", nil)
			require.NoError(t, s.Close())
		}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			r, err := s.ReserveNew("s")
			require.NoError(t, err)
			tc.end(t, s, r)
			removed, full := nextStart(t, s.Dir())
			assert.Equal(t, tc.full, full, "the next start lists the directory")
			assert.Equal(t, tc.removed, removed)
		})
	}
}
