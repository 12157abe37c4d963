//go:build linux

package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// Issue 30 (the burst of first prompts): a session's file is made when
// the session starts, empty, as <id>.jsonl.tmp<digits>, and its first
// prompt only fills it, fsyncs it and renames it into place, so the
// prompt does not wait for a new file. A session never prompted leaves
// nothing visible: not listed while it lives, its prepared file gone
// when the agent exits, and after a kill -9 (idle, or at each step of
// its first save: the write, the fsync, the rename) nothing of the
// model's answer was shown, nothing is listed, the next start removes what is left of it
// but its reservation record, and the session opens again from that
// record and is saved at its first prompt there.
func TestBinarySessionNeverSavedLeavesNothingVisible(t *testing.T) {
	model := newCountingModel(t)
	dir, cwd := t.TempDir(), t.TempDir()
	prepared := func(sid string) []string {
		var temps []string
		for _, n := range sessionDirNames(t, dir) {
			if strings.HasPrefix(n, sid+".jsonl.tmp") {
				temps = append(temps, n)
			}
		}
		return temps
	}
	listed := func(p *proc) []string {
		resp, _ := p.Call(acp.MethodSessionList, &acp.ListSessionsRequest{})
		var list acp.ListSessionsResponse
		acptest.MustResult(t, resp, &list)
		var ids []string
		for _, s := range list.Sessions {
			ids = append(ids, string(s.SessionID))
		}
		return ids
	}

	// Exits cleanly: the prepared file goes with it, before any clean-up
	// of a later start could hide a leak.
	p := storeAgent(t, model, dir)
	sid := p.NewSession(cwd)
	require.Len(t, prepared(sid), 1, "its file is made at session/new")
	assert.Empty(t, listed(p), "and not listed")
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))
	assert.Empty(t, prepared(sid), "an exit removes the file of a session never prompted")
	assert.NotContains(t, sessionDirNames(t, dir), sid+".lock")

	for _, step := range []string{"", "write", "fsync", "rename"} {
		name := step
		if name == "" {
			name = "idle"
		}
		t.Run(name, func(t *testing.T) {
			p := storeAgent(t, model, dir)
			sid := p.NewSession(cwd)
			temps := prepared(sid)
			require.Len(t, temps, 1)
			if step == "" {
				require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
			} else {
				killAtSyscall(t, p.cmd.Process.Pid, filepath.Join(dir, temps[0]), step)
				p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: acp.SessionId(sid), Prompt: []acp.ContentBlock{acp.TextBlock("hello")}})
			}
			require.Error(t, p.waitExit(t, 10*time.Second), "killed")
			// The model may have been asked (its call runs beside the
			// save), but nothing of its answer was shown.
			for _, m := range p.Rest(waitBudget(t)) {
				if m.Method == acp.MethodSessionUpdate {
					assert.Nil(t, m.Update(t).Update.AgentMessageChunk, "nothing of the answer is shown before the session is saved")
				}
			}
			assert.NoFileExists(t, filepath.Join(dir, sid+".jsonl"))

			p = storeAgent(t, model, dir)
			assert.NotContains(t, listed(p), sid, "nothing visible after the kill")
			awaitDir(t, dir, func(names []string) bool {
				return !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, sid) })
			}, "the next start removes the prepared file, the lock and the directory")
			assert.FileExists(t, filepath.Join(dir, ".reserved", sid), "the reservation record survives the kill")
			resp, _ := p.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd, MCPServers: []acp.McpServer{}})
			acptest.MustResult(t, resp, nil)
			require.Len(t, prepared(sid), 1, "opened again, its file is made again")
			assert.Equal(t, "1 user messages", askText(t, p, sid, "hello"))
			assert.Contains(t, listed(p), sid, "saved at its first prompt")
			assert.Empty(t, prepared(sid), "the prepared file became the session's")
			model.reset()
			p.stdin.Close()
			require.NoError(t, p.waitExit(t, 10*time.Second))
		})
	}
}

// killAtSyscall has strace kill process pid (SIGKILL injected) at its
// first call of syscall on path (a file descriptor of it, for write and
// fsync), and returns once strace is attached; the test skips where
// strace is missing or cannot attach.
func killAtSyscall(t *testing.T, pid int, path, call string) {
	t.Helper()
	killAtNthSyscall(t, pid, []string{path}, call, 1, "")
}

// killAtNthSyscall is killAtSyscall at the nth call on any of paths;
// with errno (say "ENOENT") that call fails with it instead of running,
// so the kill surely lands before it.
func killAtNthSyscall(t *testing.T, pid int, paths []string, call string, n int, errno string) {
	t.Helper()
	inject := "signal=KILL:when=" + strconv.Itoa(n)
	if errno != "" {
		inject += ":error=" + errno
	}
	traceInject(t, pid, paths, call, inject)
}

// delayAtSyscall has strace delay process pid's first call of syscall on
// path by d, as a slow disk would (fsync), and returns once strace is
// attached; the test skips where strace is missing or cannot attach.
func delayAtSyscall(t *testing.T, pid int, path, call string, d time.Duration) {
	t.Helper()
	traceInject(t, pid, []string{path}, call, "delay_enter="+strconv.FormatInt(d.Microseconds(), 10)+":when=1")
}

// traceInject attaches strace to pid, injecting inject (strace's
// "inject=" options) into call on any of paths.
func traceInject(t *testing.T, pid int, paths []string, call, inject string) {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed (.ci/run installs it): the fault cannot be placed")
	}
	calls := call
	if call == "rename" {
		calls = "rename,renameat,renameat2"
	}
	var straceErr syncWriter
	args := []string{"-f", "-o", "/dev/null", "-p", strconv.Itoa(pid), "-e", "trace=" + calls}
	for _, p := range paths {
		args = append(args, "-P", p)
	}
	tracer := exec.Command(strace, append(args, "-e", "inject="+calls+":"+inject)...)
	tracer.Stderr = &straceErr
	require.NoError(t, tracer.Start())
	traced := make(chan struct{})
	go func() { tracer.Wait(); close(traced) }()
	t.Cleanup(func() { tracer.Process.Kill(); <-traced })
	deadline := time.After(waitBudget(t))
	for !strings.Contains(straceErr.String(), "attached") {
		select {
		case <-traced:
			syscall.Kill(pid, syscall.SIGKILL)
			t.Skipf("strace cannot attach to the agent here: %s", straceErr.String())
		case <-deadline:
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("strace did not attach: %s", straceErr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// count is the number of model requests so far.
func (m *countingModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.bodies)
}

// reset forgets the requests so far.
func (m *countingModel) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bodies = nil
}
