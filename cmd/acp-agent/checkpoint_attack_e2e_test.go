package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// A planted checkpoint store (someone hands the user a session
// directory, or writes into it) is input: a stored content that is a
// FIFO, a link to one, or a pack whose header claims a content larger
// than the pack (1 EiB) makes a rewind (and a load, which indexes the
// packs) answer an error, not hang on the FIFO nor crash the agent on the
// allocation; the workspace is left as it is.
func TestBinaryPlantedCheckpointObjectsNeitherHangNorCrash(t *testing.T) {
	before := "A0\n"
	sum := sha256.Sum256([]byte(before))
	hash := hex.EncodeToString(sum[:])
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, objects string)
	}{
		{"the content is a FIFO", func(t *testing.T, objects string) {
			require.NoError(t, os.MkdirAll(filepath.Join(objects, hash[:2]), 0o700))
			mkfifo(t, filepath.Join(objects, hash[:2], hash))
		}},
		{"the content is a link to a FIFO", func(t *testing.T, objects string) {
			fifo := filepath.Join(t.TempDir(), "fifo")
			mkfifo(t, fifo)
			require.NoError(t, os.MkdirAll(filepath.Join(objects, hash[:2]), 0o700))
			require.NoError(t, os.Symlink(fifo, filepath.Join(objects, hash[:2], hash)))
		}},
		{"a pack is a FIFO", func(t *testing.T, objects string) {
			mkfifo(t, filepath.Join(objects, "pack-fifo"))
		}},
		{"a pack claims a content of 1 EiB", func(t *testing.T, objects string) {
			header := fmt.Sprintf(`{"objects":[{"h":%q,"n":%d}]}`+"\n", hash, int64(1)<<60)
			require.NoError(t, os.WriteFile(filepath.Join(objects, "pack-huge"), []byte(header+before), 0o600))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, sessions := t.TempDir(), t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte(before), 0o644))
			model := newGatedModel(t, map[string][]modelCall{
				"[p1]": {{"edit_file", map[string]any{"path": "a.txt", "old_string": "A0", "new_string": "A1"}}},
			}, nil, nil)
			p := integrityAgent(t, model, sessions)
			sid := p.NewSession(dir)
			promptOK(t, p, sid, "[p1]")
			p.kill9(t)

			objects := filepath.Join(sessions, sid, "checkpoints", "objects")
			require.NoError(t, os.RemoveAll(objects))
			require.NoError(t, os.MkdirAll(objects, 0o700))
			tc.plant(t, objects)

			p = integrityAgent(t, model, sessions)
			loadSession(t, p, sid, dir)
			_, werr := ext(t, p, "_acp-agent/session/rewind", rewindRequest(sid, userIndexes(t, p, sid)[0]))
			require.NotNil(t, werr, "the content is not there to restore")
			assert.Contains(t, werr.Message, "nothing was changed")
			got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
			require.NoError(t, err)
			assert.Equal(t, "A1\n", string(got))
			// Still serving.
			resp, _ := p.Call(acp.MethodSessionList, map[string]any{})
			assert.Nil(t, resp.Error)
		})
	}
}

// A planted checkpoint log is never followed out of the session
// directory nor waited on: a log that is a link to a file elsewhere is
// not appended to (the file stays as it was, though the session edits
// files), and one that is a FIFO does not hang the load. File history
// is off for such a session; the conversation and the edits go on.
func TestBinaryPlantedCheckpointLogIsNeitherFollowedNorWaitedOn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, log string) (check func(t *testing.T))
	}{
		{"a link to a file elsewhere", func(t *testing.T, log string) func(t *testing.T) {
			outside := filepath.Join(t.TempDir(), "profile")
			require.NoError(t, os.WriteFile(outside, []byte("export PATH=x"), 0o600))
			require.NoError(t, os.Symlink(outside, log))
			return func(t *testing.T) {
				got, err := os.ReadFile(outside)
				require.NoError(t, err)
				assert.Equal(t, "export PATH=x", string(got), "nothing written outside the session directory")
			}
		}},
		{"a FIFO", func(t *testing.T, log string) func(t *testing.T) {
			mkfifo(t, log)
			return func(t *testing.T) {}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, sessions := t.TempDir(), t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("A0\n"), 0o644))
			model := newGatedModel(t, map[string][]modelCall{
				"[p1]": {{"edit_file", map[string]any{"path": "a.txt", "old_string": "A0", "new_string": "A1"}}},
				"[p2]": {{"edit_file", map[string]any{"path": "a.txt", "old_string": "A1", "new_string": "A2"}}},
			}, nil, nil)
			p := integrityAgent(t, model, sessions)
			sid := p.NewSession(dir)
			promptOK(t, p, sid, "[p1]")
			p.kill9(t)

			cps := filepath.Join(sessions, sid, "checkpoints")
			require.NoError(t, os.RemoveAll(cps))
			require.NoError(t, os.MkdirAll(cps, 0o700))
			check := tc.plant(t, filepath.Join(cps, "log.jsonl"))

			p = integrityAgent(t, model, sessions)
			loadSession(t, p, sid, dir)
			promptOK(t, p, sid, "[p2]")
			got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
			require.NoError(t, err)
			assert.Equal(t, "A2\n", string(got))
			check(t)
		})
	}
}
