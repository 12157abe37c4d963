package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

var killPoints = flag.Int("killpoints", 12, "TestBinaryKillAtTheNthFsync: kill points tried, spread over a run's fsyncs (0: every one)")

// rawAgent is the agent under strace, driven by a minimal JSON-RPC
// client that, unlike acptest's, expects the agent to die at any moment.
type rawAgent struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
}

// call sends a request and returns its response's result, or ok false
// when the agent died first.
func (a *rawAgent) call(method string, params any) (json.RawMessage, bool) {
	a.next++
	data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": a.next, "method": method, "params": params})
	if _, err := a.in.Write(append(data, '\n')); err != nil {
		return nil, false
	}
	for {
		line, err := a.out.ReadBytes('\n')
		if err != nil {
			return nil, false
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || m.Method != "" || m.ID == nil || *m.ID != a.next {
			continue
		}
		if m.Error != nil {
			return m.Error, false
		}
		return m.Result, true
	}
}

// killScript is what the model does in a kill run: a text answer, a file
// write, a command, and the summary of a compaction.
func killScript(t *testing.T) string {
	return writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[write]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "w", "name": "write_file", "arguments": map[string]any{"path": "n.txt", "content": "N1\n"}}}}},
		map[string]any{"match": "[cmd]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "c", "name": "run_command", "arguments": map[string]any{"command": "echo C1 > c.txt && rm b.txt"}}}}},
		map[string]any{"events": []any{map[string]any{"text": "Done."}}},
	}})
}

// atFsync is strace's filter and fault injection that kill the agent at
// its nth fsync (0: never).
func atFsync(n int) []string {
	args := []string{"-e", "trace=fsync,fdatasync"}
	if n > 0 {
		args = append(args, "-e", fmt.Sprintf("inject=fsync,fdatasync:signal=KILL:when=%d", n))
	}
	return args
}

// killRun runs the steps of a session under strace with filter (the
// kill: atFsync), and returns the steps acknowledged, the session's and
// the fork's ids.
func killRun(t *testing.T, filter []string, ws, sessions, script, trace string) (acked []string, sid, fork string) {
	t.Helper()
	return killRunWith(t, filter, ws, sessions, []string{"--model", "replay/" + script}, nil, trace)
}

// killRunWith is killRun with the agent's model arguments and
// environment.
func killRunWith(t *testing.T, filter []string, ws, sessions string, model, env []string, trace string) (acked []string, sid, fork string) {
	t.Helper()
	args := append([]string{"-f", "-qq", "-o", trace}, filter...)
	args = append(append(append(args, "--", agentBin), model...), "--mode", "full-access", "--session-dir", sessions)
	cmd := exec.Command("strace", args...)
	cmd.Env = append(agentEnv(t), env...)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	a := &rawAgent{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	defer func() {
		in.Close()
		done := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, out); close(done) }()
		select {
		case <-done:
		case <-time.After(waitBudget(t)):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
	}()
	step := func(name, method string, params any) (json.RawMessage, bool) {
		r, ok := a.call(method, params)
		if ok {
			acked = append(acked, name)
		}
		return r, ok
	}
	if _, ok := step("initialize", acp.MethodInitialize, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); !ok {
		return
	}
	r, ok := step("new", acp.MethodSessionNew, map[string]any{"cwd": ws, "mcpServers": []any{}})
	if !ok {
		return
	}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, json.Unmarshal(r, &created))
	sid = created.SessionID
	prompt := func(text string) bool {
		_, ok := step(text, acp.MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
		return ok
	}
	for _, text := range []string{"[one] hello", "[write] the file", "[cmd] run it"} {
		if !prompt(text) {
			return
		}
	}
	if r, ok = step("fork", acp.MethodSessionFork, map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}); !ok {
		return
	}
	var forked struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, json.Unmarshal(r, &forked))
	fork = forked.SessionID
	// Back to before "[write]" (entry 2, after "[one]" and its answer):
	// n.txt gone, b.txt back, c.txt gone.
	if r, ok := step("rewind", acp.MethodExtSessionRewind, map[string]any{"sessionId": sid, "toUserEntryIndex": 2, "files": true}); !ok {
		t.Logf("rewind: %s", r)
		return
	}
	for _, text := range []string{"/compact", "[two] after"} {
		if !prompt(text) {
			return
		}
	}
	if _, ok := step("close", acp.MethodSessionClose, map[string]any{"sessionId": sid}); !ok {
		return
	}
	step("delete fork", acp.MethodSessionDelete, map[string]any{"sessionId": fork})
	return
}

// Kill at every point: the agent is killed (strace's fault injection:
// SIGKILL at its nth fsync, a deterministic place, where a write has been
// made and not yet made durable) during the first save, a write's
// checkpoint, a command's checkpoint, a fork, a compaction, a rewind, a
// close and a delete; a new process then loads the session, and what was
// acknowledged is there, once, the files are as the acknowledged steps
// left them (a rewind started is completed), and the workspace holds no
// temporary file. -killpoints=0 tries every fsync of the run.
func TestBinaryKillAtTheNthFsync(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("no strace(1)")
	}
	script := killScript(t)
	setup := func(t *testing.T) (ws, sessions string) {
		ws, sessions = t.TempDir(), t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("A0\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(ws, "b.txt"), []byte("B0\n"), 0o644))
		return ws, sessions
	}
	// A run without a kill counts the fsyncs.
	ws, sessions := setup(t)
	trace := filepath.Join(t.TempDir(), "trace")
	acked, _, _ := killRun(t, atFsync(0), ws, sessions, script, trace)
	require.Equal(t, []string{"initialize", "new", "[one] hello", "[write] the file", "[cmd] run it", "fork", "rewind", "/compact", "[two] after", "close", "delete fork"}, acked,
		"the run completes without a kill")
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	total := strings.Count(string(data), "fsync(")
	require.Greater(t, total, 5)
	t.Logf("%d fsyncs in a run", total)
	var points []int
	if *killPoints <= 0 || *killPoints >= total {
		for n := 1; n <= total; n++ {
			points = append(points, n)
		}
	} else {
		for i := range *killPoints {
			points = append(points, 1+i*(total-1)/max(*killPoints-1, 1))
		}
	}
	for _, n := range points {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			ws, sessions := setup(t)
			acked, sid, fork := killRun(t, atFsync(n), ws, sessions, script, filepath.Join(t.TempDir(), "trace"))
			t.Logf("killed at fsync %d after %v", n, acked)
			checkKilled(t, acked, sid, fork, ws, sessions, script)
		})
	}
	// A kill between a tool's write of its temporary file and the rename
	// onto the file (rename(2) onto n.txt: strace's -P): the load removes
	// the temporary file.
	// The same with apply_patch, which a model trained on its format is
	// offered (an OpenAI-format server on loopback).
	patcher := promptModel(t, map[string][]modelCall{
		"[write]": {{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: n.txt\n+N1\n*** End Patch"}}},
	})
	for _, tc := range []struct {
		name       string
		model, env []string
	}{
		{"write_file", []string{"--model", "replay/" + script}, nil},
		{"apply_patch", []string{"--model", "openai/gpt-5"}, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + patcher.URL + "/v1"}},
	} {
		t.Run(tc.name+" before its rename", func(t *testing.T) {
			ws, sessions := setup(t)
			filter := []string{"-P", ws, "-e", "trace=rename,renameat,renameat2", "-e", "inject=rename,renameat,renameat2:signal=KILL"}
			acked, sid, fork := killRunWith(t, filter, ws, sessions, tc.model, tc.env, filepath.Join(t.TempDir(), "trace"))
			require.Equal(t, []string{"initialize", "new", "[one] hello"}, acked, "killed in the write")
			checkKilled(t, acked, sid, fork, ws, sessions, script)
		})
	}
}

// checkKilled loads what a kill run left in a new process and checks it
// against the steps acknowledged.
func checkKilled(t *testing.T, acked []string, sid, fork, ws, sessions, script string) {
	t.Helper()
	has := func(step string) bool { return slices.Contains(acked, step) }
	if sid == "" || !has("[one] hello") {
		return // nothing acknowledged to keep
	}
	p := startAgent(t, nil, "--model", "replay/"+script, "--mode", "full-access", "--session-dir", sessions)
	p.Initialize(nil)
	t.Logf("loading the session %s", sid)
	loadSession(t, p, sid, ws)
	users := userTexts(t, p, sid)
	seen := map[string]bool{}
	for _, u := range users {
		assert.False(t, seen[u], "%q twice in %q", u, users)
		seen[u] = true
	}
	state := treeState(t, ws)
	t.Logf("loaded: users %q, files %q", users, state)
	for _, r := range checkpointLog(t, sessions, sid) {
		t.Logf("checkpoint log: %v", r)
	}
	rewound := map[string]string{"a.txt": "A0\n", "b.txt": "B0\n"}
	commanded := map[string]string{"a.txt": "A0\n", "n.txt": "N1\n", "c.txt": "C1\n"}
	switch {
	case has("rewind"):
		assert.Equal(t, rewound, state, "the rewind acknowledged")
		if !has("/compact") && len(users) > 0 {
			assert.Equal(t, []string{"[one] hello"}, users)
		}
		if has("[two] after") {
			assert.Contains(t, users, "[two] after")
		}
	case has("[cmd] run it"):
		if len(users) == 1 {
			// Killed during the rewind, logged: the load completed it.
			assert.Equal(t, []string{"[one] hello"}, users)
			assert.Equal(t, rewound, state, "a rewind the load completed")
		} else {
			assert.Equal(t, []string{"[one] hello", "[write] the file", "[cmd] run it"}, users)
			assert.Equal(t, commanded, state)
		}
	case has("[write] the file"):
		assert.Equal(t, []string{"[one] hello", "[write] the file"}, users[:min(2, len(users))])
		assert.Equal(t, "N1\n", state["n.txt"])
	default:
		assert.Equal(t, []string{"[one] hello"}, users[:1])
	}
	for name := range state {
		assert.False(t, strings.HasPrefix(filepath.Base(name), ".acp-"), "a temporary file left in the workspace: %s", name)
	}
	if has("fork") && !has("close") {
		// (Once close is acknowledged the fork's delete may be done.)
		t.Logf("loading the fork %s", fork)
		loadSession(t, p, fork, ws)
		fusers := userTexts(t, p, fork)
		assert.Equal(t, []string{"[one] hello", "[write] the file", "[cmd] run it"}, fusers, "the fork holds its source's conversation")
	}
	// The session goes on.
	promptOK(t, p, sid, "[three] again")
}
