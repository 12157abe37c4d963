package persistence

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAReservationOpensAgainUntilItsFirstSave: a session reserved and
// released without a file keeps its record (header and state records),
// is not listed, can be reserved again and read back, and its record
// goes once its file is created (the file starts with nothing else): at
// the file's first Sync, not on the way to the model, and nothing finds
// it meanwhile; or when it is deleted.
func TestAReservationOpensAgainUntilItsFirstSave(t *testing.T) {
	s := newFastStore(t)
	h := Header{ID: "r1", CWD: "/work/r1", AdditionalDirectories: []string{"/work/lib"}, Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	state := []json.RawMessage{json.RawMessage(`{"type":"mode","mode":"full-access"}`), json.RawMessage(`{"type":"model","model":"replay/default"}`)}

	res, err := s.Reserve("r1")
	require.NoError(t, err)
	require.NoError(t, res.Keep(h, state[:1]))
	require.NoError(t, res.Keep(h, state), "a later Keep replaces the record")
	require.Error(t, res.Keep(header("other"), nil), "a record names its own id")
	require.NoError(t, res.Release())

	assert.False(t, s.Exists("r1"))
	assert.True(t, s.IsReserved("r1"))
	page, err := s.List(ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, page.Sessions, "a reservation is not listed")
	got, recs, err := s.Reserved("r1")
	require.NoError(t, err)
	assert.Equal(t, "/work/r1", got.CWD)
	assert.Equal(t, []string{"/work/lib"}, got.AdditionalDirectories)
	assert.True(t, h.Timestamp.Equal(got.Timestamp))
	require.Len(t, recs, 2)
	assert.JSONEq(t, string(state[1]), string(recs[1]))

	// Opened again: the same id, then saved at its first prompt.
	res, err = s.Reserve("r1")
	require.NoError(t, err)
	f, err := res.Create(got)
	require.NoError(t, err)
	defer f.Close()
	assert.True(t, s.Exists("r1"))
	assert.True(t, s.IsReserved("r1"), "the record goes after the first prompt reaches the model")
	require.NoError(t, f.Sync())
	assert.False(t, s.IsReserved("r1"), "the file replaces the record")
	_, _, err = s.Reserved("r1")
	assert.ErrorIs(t, err, ErrNotFound)

	_, _, err = s.Reserved("nope")
	assert.ErrorIs(t, err, ErrNotFound)
	_, _, err = s.Reserved("../x")
	assert.ErrorIs(t, err, ErrInvalidID)

	// Deleted before any save: the record goes.
	res, err = s.Reserve("r2")
	require.NoError(t, err)
	require.NoError(t, res.Keep(header("r2"), nil))
	require.NoError(t, res.Release())
	require.NoError(t, s.Delete("r2"))
	assert.False(t, s.IsReserved("r2"))
}

// TestRemoveStaleDropsOldAndDeadReservations: RemoveStale keeps a fresh
// record and one whose id is in use whatever its age, and removes one
// older than ReservationTTL, one whose session has a file, and a
// temporary file of a record nobody writes.
func TestRemoveStaleDropsOldAndDeadReservations(t *testing.T) {
	s := newFastStore(t)
	dir := filepath.Join(s.Dir(), ReservedDir)
	keep := func(id string) *Reservation {
		res, err := s.Reserve(id)
		require.NoError(t, err)
		require.NoError(t, res.Keep(header(id), nil))
		return res
	}
	old := time.Now().Add(-ReservationTTL - time.Hour)
	age := func(id string) { require.NoError(t, os.Chtimes(filepath.Join(dir, id), old, old)) }

	require.NoError(t, keep("fresh").Release())
	require.NoError(t, keep("old").Release())
	age("old")
	busy := keep("busy") // old, but its id is held (an agent has it open)
	age("busy")
	defer busy.Release()
	require.NoError(t, keep("saved").Release())
	f, err := s.Create(header("saved"))
	require.NoError(t, err)
	f.Close()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "saved"), []byte("{}\n"), 0o600)) // outlived its removal
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gone.jsonl.tmp123"), []byte("partial"), 0o600))

	removed, err := s.RemoveStale()
	require.NoError(t, err)
	assert.Subset(t, removed, []string{".reserved/old", ".reserved/saved", ".reserved/gone.jsonl.tmp123"})
	for _, id := range []string{"old", "saved", "gone.jsonl.tmp123"} {
		assert.NoFileExists(t, filepath.Join(dir, id))
	}
	assert.True(t, s.IsReserved("fresh"))
	assert.True(t, s.IsReserved("busy"))
	assert.True(t, s.Exists("saved"))
	assert.NoFileExists(t, s.lockPath("old"), "the lock file of an id with no file goes with it")
}

// TestCreateLooksForStaleTemporaryFilesOnlyForReusedIDs: a session opened
// again (Reserve) may have been left half-created by a process that died,
// so its Create removes that process's temporary files; a new id
// (ReserveNew) cannot have any, and its Create does not read the store
// directory for them (whose size grows with every session). Either way
// the session's file is created whole.
func TestCreateLooksForStaleTemporaryFilesOnlyForReusedIDs(t *testing.T) {
	s := newFastStore(t)
	for _, tc := range []struct {
		id      string
		reserve func(string) (*Reservation, error)
		removed bool
	}{
		{"reused", s.Reserve, true},
		{"new", s.ReserveNew, false},
	} {
		stale := filepath.Join(s.Dir(), tc.id+".jsonl.tmp12345")
		require.NoError(t, os.WriteFile(stale, []byte("partial"), 0o600))
		res, err := tc.reserve(tc.id)
		require.NoError(t, err)
		f, err := res.Create(header(tc.id))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		_, statErr := os.Stat(stale)
		assert.Equal(t, tc.removed, os.IsNotExist(statErr), tc.id)
		l := load(t, s, tc.id)
		assert.Equal(t, tc.id, l.Header.ID)
	}
}

// TestAPreparedFileBecomesTheSessionsFile: Prepare makes the session's
// file early, empty and under a temporary name (not listed, the session
// does not exist yet); Create fills that very file with the header and
// the records it is given, renames it into place, and the File appends
// to it. A prepared file that is gone, or not empty, is not used: Create
// makes the file as without it. Release removes it. For a reused id,
// Prepare removes an earlier holder's temporary files first.
func TestAPreparedFileBecomesTheSessionsFile(t *testing.T) {
	s := newStore(t)
	temps := func(id string) []string {
		m, err := filepath.Glob(filepath.Join(s.Dir(), id+tempInfix+"*"))
		require.NoError(t, err)
		return m
	}
	res, err := s.ReserveNew("p1")
	require.NoError(t, err)
	require.NoError(t, res.Prepare())
	require.NoError(t, res.Prepare(), "again: nothing more")
	prepared := temps("p1")
	require.Len(t, prepared, 1)
	before, err := os.Stat(prepared[0])
	require.NoError(t, err)
	assert.Zero(t, before.Size())
	// Windows: Go reads a file's id lazily, by its path, which the
	// rename below takes away; read it now.
	require.True(t, os.SameFile(before, before))
	assert.False(t, s.Exists("p1"))
	page, err := s.List(ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, page.Sessions, "a prepared file is not a session")

	f, err := res.Create(header("p1"), rec(1), rec(2))
	require.NoError(t, err)
	after, err := os.Stat(s.dataPath("p1"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "the prepared file is the session's file")
	assert.Empty(t, temps("p1"))
	assert.Equal(t, 2, f.Count())
	require.NoError(t, f.AppendSync(rec(3)))
	require.NoError(t, f.Close())
	l := load(t, s, "p1")
	assert.Equal(t, "/work/p1", l.Header.CWD)
	assert.Equal(t, strs(recs(1, 4)), strs(l.Records))

	for i, spoil := range []func(string){
		func(p string) { require.NoError(t, os.Remove(p)) },
		func(p string) { require.NoError(t, os.WriteFile(p, []byte("junk\n"), 0o600)) },
	} {
		id := fmt.Sprintf("spoiled%d", i)
		res, err := s.ReserveNew(id)
		require.NoError(t, err)
		require.NoError(t, res.Keep(header(id), nil))
		require.NoError(t, res.Prepare())
		spoil(temps(id)[0])
		f, err := res.Create(header(id), rec(1))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		assert.False(t, s.IsReserved(id), "the record goes at Close if not at a Sync")
		assert.Empty(t, temps(id))
		assert.Equal(t, strs(recs(1, 2)), strs(load(t, s, id).Records), "made whole without the prepared file")
	}

	res, err = s.ReserveNew("gone")
	require.NoError(t, err)
	require.NoError(t, res.Prepare())
	require.NoError(t, res.Release())
	assert.Empty(t, temps("gone"), "Release removes the prepared file")
	assert.NoFileExists(t, s.lockPath("gone"))

	stale := filepath.Join(s.Dir(), "reused.jsonl.tmp12345")
	require.NoError(t, os.WriteFile(stale, []byte("partial"), 0o600))
	res, err = s.Reserve("reused")
	require.NoError(t, err)
	require.NoError(t, res.Prepare())
	assert.NoFileExists(t, stale, "an earlier holder's temporary file")
	require.Len(t, temps("reused"), 1)
	require.NoError(t, res.Release())
}
