//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rewind writes files back through the file tools' rules, the denied
// paths included. With the home directory as the workspace, a hostile
// repository's directory the agent edited in (proj/keys) is swapped,
// after the checkpoint, for a symlink to ~/.ssh, which stays inside the
// workspace root: the rewind would write the repository's
// authorized_keys (its content before the edit) into ~/.ssh and remove
// a file the agent created there. It is refused, and ~/.ssh is as it was.
func TestBinaryRewindNeverWritesADeniedPathThroughAPlantedSymlink(t *testing.T) {
	home := testHome(t)
	sessions := t.TempDir()
	write(t, filepath.Join(home, "proj", "keys", "authorized_keys"), "ssh-ed25519 ATTACKER-KEY\n")
	write(t, filepath.Join(home, ".ssh", "authorized_keys"), "ssh-ed25519 USER-KEY\n")
	write(t, filepath.Join(home, ".ssh", "made.txt"), "precious\n")
	model := promptModel(t, map[string][]modelCall{
		"[edit]": {
			{"read_file", map[string]any{"path": "proj/keys/authorized_keys"}},
		},
		"[write]": {
			{"write_file", map[string]any{"path": "proj/keys/authorized_keys", "content": "edited\n"}},
			{"write_file", map[string]any{"path": "proj/keys/made.txt", "content": "made by the agent\n"}},
		},
	})
	p := startAgent(t, []string{"HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"},
		append([]string{"--model", "openai/test-model", "--mode", "full-access", "--session-dir", sessions, "--sandbox", "off"}, shellArgs(t)...)...)
	p.Initialize(nil)
	sid := p.NewSession(home)
	promptOK(t, p, sid, "[edit]")
	promptOK(t, p, sid, "[write]")
	require.NoError(t, os.RemoveAll(filepath.Join(home, "proj", "keys")))
	require.NoError(t, os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(home, "proj", "keys")))
	_, werr := ext(t, p, "_acp-agent/session/rewind", map[string]any{"sessionId": sid, "toUserEntryIndex": userIndexes(t, p, sid)[1], "files": true})
	assert.NotNil(t, werr, "the rewind is refused: the paths now lead into ~/.ssh")
	data, err := os.ReadFile(filepath.Join(home, ".ssh", "authorized_keys"))
	require.NoError(t, err)
	assert.Equal(t, "ssh-ed25519 USER-KEY\n", string(data), "the rewind wrote ~/.ssh/authorized_keys")
	data, err = os.ReadFile(filepath.Join(home, ".ssh", "made.txt"))
	require.NoError(t, err, "the rewind removed a file of ~/.ssh")
	assert.Equal(t, "precious\n", string(data))
}
