package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// session/load reads the session's checkpoint log (its file history)
// once: the replay, which must know whether a rewind is pending before it
// starts, opens it, and the session takes that history over (it used to
// read the file a second time). strace counts the agent's opens of it.
func TestBinaryLoadReadsTheCheckpointLogOnce(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed (.ci/run installs it): the opens cannot be counted")
	}
	dir, sessions := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("A0\n"), 0o644))
	model := newGatedModel(t, map[string][]modelCall{
		// write_file overwrites a.txt only after a read (issue 26).
		"[edit]": {{"read_file", map[string]any{"path": "a.txt"}}, {"write_file", map[string]any{"path": "a.txt", "content": "A1\n"}}},
	}, nil, nil)
	p := integrityAgent(t, model, sessions)
	sid := p.NewSession(dir)
	promptOK(t, p, sid, "[edit]")
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 0))
	log := filepath.Join(sessions, sid, "checkpoints", "log.jsonl")
	require.FileExists(t, log)

	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, append([]string{"-f", "-qq", "-e", "trace=open,openat", "-o", trace, agentBin,
		"--model", "openai/test-model", "--mode", "full-access", "--session-dir", sessions}, shellArgs(t)...)...)
	q := startAgentCmd(t, cmd, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"})
	q.Initialize(nil)
	said := loadSession(t, q, sid, dir)
	assert.Contains(t, said, "All done.", "the conversation was replayed")
	q.stdin.Close()
	require.NoError(t, q.waitExit(t, 0))
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	var opens []string
	for line := range strings.Lines(string(data)) {
		if strings.Contains(line, `"`+log+`"`) && !strings.Contains(line, "= -1") {
			opens = append(opens, line)
		}
	}
	assert.Len(t, opens, 1, "the load opened the checkpoint log:\n%s", strings.Join(opens, ""))
}
