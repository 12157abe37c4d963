package telemetry

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rotating log keeps its cap: whole lines, at most backups+1 files, the
// newest lines in the file itself, the oldest dropped.
func TestRotatingFileKeepsItsCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log", "agent.log")
	r, err := OpenRotatingFile(path, 100, 2)
	require.NoError(t, err)
	for i := range 50 {
		_, err := fmt.Fprintf(r, "line %02d of the log\n", i) // 19 bytes
		require.NoError(t, err)
	}
	require.NoError(t, r.Close())
	var all []byte
	for _, name := range []string{path + ".2", path + ".1", path} {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(data), 100, name)
		assert.True(t, bytes.HasSuffix(data, []byte("\n")), "only whole lines: %s", name)
		fi, err := os.Stat(name)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		all = append(all, data...)
	}
	_, err = os.Stat(path + ".3")
	assert.ErrorIs(t, err, os.ErrNotExist, "older files are dropped")
	assert.True(t, bytes.HasSuffix(all, []byte("line 49 of the log\n")))
	assert.Contains(t, string(all), "line 40 of the log\n")
	assert.NotContains(t, string(all), "line 30 of the log\n")
}

// Two processes share one log path: when one has rotated, the other
// reopens the path instead of rotating the fresh file away.
func TestRotatingFileSharedByTwoWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.log")
	a, err := OpenRotatingFile(path, 60, 3)
	require.NoError(t, err)
	b, err := OpenRotatingFile(path, 60, 3)
	require.NoError(t, err)
	defer a.Close()
	defer b.Close()
	fmt.Fprint(a, "a1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n") // 52 bytes
	fmt.Fprint(a, "a2 rotates\n")                                          // a rotates: path.1 holds a1
	fmt.Fprint(b, "b1 bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n") // b still has the file a renamed: lands in path.1, not lost
	fmt.Fprint(b, "b2 would rotate\n")                                     // b thinks 52+16 > 60: the path is another file, so it reopens
	one, err := os.ReadFile(path + ".1")
	require.NoError(t, err)
	assert.Equal(t, "a1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nb1 bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n", string(one))
	_, err = os.Stat(path + ".2")
	assert.ErrorIs(t, err, os.ErrNotExist, "the fresh file was not rotated away")
	cur, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(cur), "a2 rotates\n")
	assert.Contains(t, string(cur), "b2 would rotate\n")
}
