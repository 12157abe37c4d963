package persistence

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An unrecorded reservation writes no record, and its session's file is
// as any other's; Unrecorded after a Keep leaves that record, which the
// file removes at its first Sync as usual.
func TestAnUnrecordedReservationKeepsNoRecord(t *testing.T) {
	s := newFastStore(t)
	state := []json.RawMessage{json.RawMessage(`{"type":"mode","mode":"full-access"}`)}

	res, err := s.ReserveNew("u1")
	require.NoError(t, err)
	res.Unrecorded()
	require.NoError(t, res.Keep(header("u1"), state))
	assert.False(t, s.IsReserved("u1"), "no record")
	require.Error(t, res.Keep(header("other"), nil), "a Keep is still checked")
	require.NoError(t, res.Prepare())
	f, err := res.Create(header("u1"), state...)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	g, _, err := s.Open("u1")
	require.NoError(t, err)
	assert.Equal(t, 1, g.Count(), "the file holds the state records")
	require.NoError(t, g.Close())

	res, err = s.ReserveNew("u2")
	require.NoError(t, err)
	require.NoError(t, res.Keep(header("u2"), state))
	res.Unrecorded()
	require.NoError(t, res.Keep(header("u2"), state))
	require.True(t, s.IsReserved("u2"), "a record kept before stays")
	f, err = res.Create(header("u2"), state...)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	assert.False(t, s.IsReserved("u2"), "and goes at the file's first Sync")
	require.NoError(t, f.Close())
}
