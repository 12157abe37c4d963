//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Review of commit 54a457f: session/delete of a saved session whose
// reservation record outlived it (an agent killed between the session's
// first save and its first sync leaves both) removes the record before
// the file, so an agent killed between the two removals leaves the
// session as it was (its file, no record), never a record that the next
// agent reopens as an empty session of that id. strace places the kill
// on the second of the two removals (which fails with ENOENT instead of
// running, whichever file it is for).
func TestKillBetweenDeleteRemovalsNeverReopensTheSessionEmpty(t *testing.T) {
	model := newCountingModel(t)
	dir, cwd := t.TempDir(), t.TempDir()
	p := storeAgent(t, model, dir)
	sid := p.NewSession(cwd)
	require.Equal(t, "1 user messages", askText(t, p, sid, "hello"))
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))

	// The record a kill before the first sync leaves: the file's header.
	data := filepath.Join(dir, sid+".jsonl")
	body, err := os.ReadFile(data)
	require.NoError(t, err)
	header := body[:bytes.IndexByte(body, '\n')+1]
	record := filepath.Join(dir, ".reserved", sid)
	require.NoError(t, os.MkdirAll(filepath.Dir(record), 0o700))
	require.NoError(t, os.WriteFile(record, header, 0o600))

	p = storeAgent(t, model, dir)
	// A start removes such records (that of a session with a file):
	// once this one's has, the record is put back, as a start that has
	// not got to it yet, or failed to remove it, leaves it.
	awaitDir(t, filepath.Dir(record), func(names []string) bool { return len(names) == 0 }, "the start removes a record whose session has a file")
	require.NoError(t, os.WriteFile(record, header, 0o600))
	killAtNthSyscall(t, p.cmd.Process.Pid, []string{data, record}, "unlink,unlinkat", 2, "ENOENT")
	p.Request(acp.MethodSessionDelete, &acp.DeleteSessionRequest{SessionID: acp.SessionId(sid)})
	require.Error(t, p.waitExit(t, waitBudget(t)), "killed at the second removal")
	_, dataErr := os.Lstat(data)
	_, recordErr := os.Lstat(record)
	require.True(t, (dataErr == nil) != (recordErr == nil), "killed between the removals: one of the two is left (file %v, record %v)", dataErr, recordErr)

	p = storeAgent(t, model, dir)
	resp, _ := p.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd, MCPServers: []acp.McpServer{}})
	if resp.Error != nil {
		assert.Equal(t, int64(-32002), resp.Error.Code, "gone: not found")
	} else {
		acptest.MustResult(t, resp, nil)
		assert.Equal(t, "2 user messages", askText(t, p, sid, "again"), "the session comes back with its conversation, never empty")
	}
	assert.NoFileExists(t, record)
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))
}

// A start lists the whole session directory (the stale-file clean-up's
// full pass, whose cost grows with every session) only after an agent
// stopped without cleaning up: not after one that exited, even with a
// session it never prompted, and after a kill -9 once.
func TestStartListsTheSessionDirectoryOnlyAfterAnUncleanStop(t *testing.T) {
	model := newCountingModel(t)
	dir, cwd := t.TempDir(), t.TempDir()
	// listed starts an agent and returns it with what its clean-up said.
	listed := func() (*proc, string) {
		p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1", "ACP_AGENT_SESSION_DIR=" + dir},
			"--model", "openai/test-model", "--log-level", "debug")
		p.Initialize(nil)
		deadline := time.Now().Add(waitBudget(t))
		for {
			log := p.stderr.String()
			if i := strings.Index(log, `msg="session directory clean-up" listed=`); i >= 0 {
				rest := log[i+len(`msg="session directory clean-up" listed=`):]
				return p, rest[:strings.IndexAny(rest+"\n", " \n")]
			}
			require.True(t, time.Now().Before(deadline), "no clean-up logged: %s", log)
			time.Sleep(10 * time.Millisecond)
		}
	}
	exit := func(p *proc) {
		p.stdin.Close()
		require.NoError(t, p.waitExit(t, 10*time.Second))
	}
	p, full := listed()
	assert.Equal(t, "true", full, "the first start in a directory")
	saved := p.NewSession(cwd)
	askText(t, p, saved, "hello")
	p.NewSession(cwd) // never prompted: ended at exit
	exit(p)

	p, full = listed()
	assert.Equal(t, "false", full, "after an agent that exited")
	p.NewSession(cwd)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, p.waitExit(t, 10*time.Second))

	p, full = listed()
	assert.Equal(t, "true", full, "after a kill -9")
	want := []string{".reserved", saved, saved + ".jsonl", saved + ".lock"}
	awaitDir(t, dir, func(names []string) bool { return slices.Equal(names, want) },
		"the killed agent's session (its lock, prepared file, directory) is cleaned up; its record stays")
	exit(p)
	p, full = listed()
	assert.Equal(t, "false", full, "once")
	exit(p)
}
