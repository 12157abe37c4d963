//go:build !windows

package main

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// TestConnectRefusesATokenFileOthersCanRead: `acp-agent connect
// --token-file` holds the same token, so the same rule: a copy others can
// read (or another user's file, or a FIFO) is refused before anything is
// sent, and a private one is used.
func TestConnectRefusesATokenFileOthersCanRead(t *testing.T) {
	catcher := &tokenCatcher{}
	srv := httptest.NewServer(catcher)
	defer srv.Close()
	token := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(token, []byte("0123456789abcdef0123456789\n"), 0o644))
	connect := func() string {
		cmd := exec.Command(agentBin, "connect", "--token-file", token, srv.URL+"/acp")
		cmd.Env = append(agentEnv(t), goraceEnv)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%s", out)
		return string(out)
	}
	assert.Contains(t, connect(), "is readable by others")
	assert.Empty(t, catcher.got(), "nothing sent")
	require.NoError(t, os.Chmod(token, 0o600))
	connect() // the catcher answers 401
	assert.Equal(t, []string{"Bearer 0123456789abcdef0123456789"}, catcher.got())
}
