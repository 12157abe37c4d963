//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeRefusesATokenFileAnotherUserControls: a FIFO at the token
// path (which held serve at its start for ever) and, for serve run as
// root, a file another user planted there (mode 0600, which root reads
// anyway: that user knows the token and could drive the agent as root)
// are refused, and serve says why. A symbolic link to the user's own
// private file is followed (secret volumes are links).
func TestServeRefusesATokenFileAnotherUserControls(t *testing.T) {
	env := []string{"XDG_STATE_HOME=" + t.TempDir()}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	err, stderr := serveExits(t, env, "--listen", "127.0.0.1:0", "--token-file", fifo)
	require.Error(t, err)
	assert.Contains(t, stderr, "is not a regular file")

	if os.Geteuid() != 0 {
		t.Log("not root: the planted file's case needs chown")
		return
	}
	planted := filepath.Join(dir, "planted")
	require.NoError(t, os.WriteFile(planted, []byte("known-to-the-other-user-0123456789\n"), 0o600))
	require.NoError(t, os.Chown(planted, 65534, 65534))
	err, stderr = serveExits(t, env, "--listen", "127.0.0.1:0", "--token-file", planted)
	require.Error(t, err)
	assert.Contains(t, stderr, "owned by uid 65534, not by this user")
	assert.NotContains(t, stderr, "listening on")
}
