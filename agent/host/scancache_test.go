package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/host"
)

// command is a replay turn matched by match that runs line.
func command(match, id, line string) map[string]any {
	return calls(match, map[string]any{"id": id, "name": "run_command", "arguments": map[string]any{"command": line}})
}

// keptScans lists the workspaces' kept scans under the session directory.
func keptScans(t *testing.T, dir string) []string {
	t.Helper()
	kept, err := filepath.Glob(filepath.Join(dir, ".scan-cache", "*", "kept"))
	require.NoError(t, err)
	return kept
}

// A workspace's scan is kept from one session to the next so that the
// next session's first command need not read the files again; every
// change that keeps a file's size, its modification time or its inode is
// still seen, and a rewind puts it back: an in-place edit of the same
// size with the modification time set back (only the status change time
// tells), the same with a mode change, another file of the same size and
// time renamed over one (a new inode), a file in a new directory, a
// removed directory.
func TestHostKeptScanSeesEveryChangeThatKeepsAFilesSizeOrTime(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	files := map[string]string{
		"same.txt":       "AAAA\n",
		"mode.txt":       "MMMM\n",
		"swap.txt":       "SSSS\n",
		"other.txt":      "OOOO\n",
		"gone/inner.txt": "IIII\n",
		"untouched.txt":  "UUUU\n",
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for name, content := range files {
		p := filepath.Join(cwd, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		require.NoError(t, os.Chtimes(p, old, old))
	}
	// A file's key vouches for its content only once its status change
	// time is older than a scan's start by the racy window (2 s).
	time.Sleep(2100 * time.Millisecond)
	stamp := old.Format("200601021504.05")
	attack := fmt.Sprintf(`set -e
printf 'BBBB\n' > same.txt; touch -m -t %[1]s same.txt
printf 'NNNN\n' > mode.txt; chmod 600 mode.txt; touch -m -t %[1]s mode.txt
printf 'WWWW\n' > new.tmp; touch -m -t %[1]s new.tmp; mv new.tmp swap.txt
mkdir -p fresh/deep; printf 'F\n' > fresh/deep/made.txt
rm -r gone`, stamp)
	path := script(t,
		command("[warm]", "c1", "true"), says("", "ok"),
		command("[attack]", "c2", attack), says("", "ok"))

	// The first session scans and, closing, keeps the scan.
	h := newHost(t, path, dir)
	s, err := h.NewSession(context.Background(), host.NewRequest{CWD: cwd}, &client{})
	require.NoError(t, err)
	prompt(t, s, "[warm] look")
	require.NoError(t, s.Close())
	require.Len(t, keptScans(t, dir), 1, "the closed session kept its workspace's scan")

	// The next one starts from it, and its command changes the files in
	// every way a stat cache could miss.
	s2, err := newHost(t, path, dir).NewSession(context.Background(), host.NewRequest{CWD: cwd}, &client{})
	require.NoError(t, err)
	defer s2.Close()
	prompt(t, s2, "[attack] change")
	assert.Empty(t, keptScans(t, dir), "the session took the kept scan")
	require.Equal(t, "BBBB\n", readFile(t, filepath.Join(cwd, "same.txt")))
	require.FileExists(t, filepath.Join(cwd, "fresh/deep/made.txt"))

	users := s2.Core().ForkableUserMessages()
	require.Len(t, users, 1)
	res, err := s2.Rewind(context.Background(), host.RewindRequest{ToUserEntryIndex: ptr(users[0].EntryIndex), Files: true})
	require.NoError(t, err)
	assert.False(t, res.Incomplete)
	for name, content := range files {
		assert.Equal(t, content, readFile(t, filepath.Join(cwd, name)), "%s is back", name)
	}
	assert.NoFileExists(t, filepath.Join(cwd, "fresh/deep/made.txt"), "the file made in a new directory is gone")
}
