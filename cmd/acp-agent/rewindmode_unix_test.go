//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rewind sets a file back with its mode: an executable script a
// command deleted comes back executable, and a private file a tool
// changed first (its mode kept with its content) and a command deleted
// comes back private (they came back 0644: a file made world-readable by
// a rewind).
func TestBinaryRewindRestoresTheExecutableBit(t *testing.T) {
	needsBash(t)
	dir, sessions := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("K0\n"), 0o600))
	model := promptModel(t, map[string][]modelCall{
		"[rm]": {{"read_file", map[string]any{"path": "keep.txt"}}, {"write_file", map[string]any{"path": "keep.txt", "content": "K1\n"}},
			{"run_command", map[string]any{"command": "rm run.sh keep.txt"}}},
	})
	p := rewindAgent(t, model, sessions)
	p.Initialize(nil)
	sid := p.NewSession(dir)
	promptOK(t, p, sid, "[rm]")
	require.NoFileExists(t, filepath.Join(dir, "run.sh"))
	users := userIndexes(t, p, sid)
	require.Len(t, users, 1)
	rewindTo(t, p, sid, map[string]any{"toUserEntryIndex": users[0], "files": true})
	for name, mode := range map[string]os.FileMode{"run.sh": 0o755, "keep.txt": 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.Equal(t, mode, fi.Mode().Perm(), "%s comes back with its mode", name)
	}
	assert.Equal(t, map[string]string{"run.sh": "#!/bin/sh\necho hi\n", "keep.txt": "K0\n"}, treeState(t, dir))
}
