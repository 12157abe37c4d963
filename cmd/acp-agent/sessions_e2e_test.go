package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
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
	"github.com/acp-agent/acp-agent/persistence"
)

// usageModel is an OpenAI-compatible server that answers "ok" with usage:
// prompt 1000+n·100 tokens (n: the requests so far), completion 20, 300
// of the prompt read from the cache.
func usageModel(t *testing.T) *fakeModelServer {
	n := 0
	return newFakeModelServer(t, map[string]http.HandlerFunc{
		"POST /v1/chat/completions": func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			n++
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\n")
			fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":20,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":300}}}`+"\n\n", 1000+n*100, 1020+n*100)
			io.WriteString(w, "data: [DONE]\n\n")
		},
	})
}

// costOf runs /cost in sid and returns its line.
func costOf(t *testing.T, p *proc, sid string) string {
	t.Helper()
	resp, updates, _ := turn(t, p, sid, "/cost", nil)
	acptest.MustResult(t, resp, nil)
	var b strings.Builder
	for _, u := range updates {
		if u.AgentMessageChunk != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return strings.TrimSpace(b.String())
}

func lastUsage(updates []acp.SessionUpdate) *acp.UsageUpdate {
	var last *acp.UsageUpdate
	for _, u := range updates {
		if u.UsageUpdate != nil {
			last = u.UsageUpdate
		}
	}
	return last
}

// Issue 25 item 4: usage is stored with the session. After a restart,
// session/load (and resume) send the usage_update the client last had and
// /cost is identical, for a priced model and for one outside the pricing
// table whose window the config gives (usage_update without a cost, /cost
// "N/A").
func TestUsageSurvivesARestart(t *testing.T) {
	tests := []struct {
		name, model, config string
		priced              bool
	}{
		{"priced", "openai/gpt-4.1", "", true},
		{"unpriced, window from the config", "openai/local-llama", `{"models": [{"model": "openai/local-llama", "contextWindow": 8192}]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := usageModel(t)
			dir, cwd := t.TempDir(), t.TempDir()
			args := []string{"--model", tt.model, "--discover-models=false"}
			if tt.config != "" {
				cfg := filepath.Join(t.TempDir(), "config.json")
				require.NoError(t, os.WriteFile(cfg, []byte(tt.config), 0o600))
				args = append(args, "--config", cfg)
			}
			env := []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + srv.URL + "/v1", "ACP_AGENT_SESSION_DIR=" + dir}
			start := func() *proc {
				p := startAgent(t, env, args...)
				p.Initialize(nil)
				return p
			}
			p := start()
			sid := p.NewSession(cwd)
			var before *acp.UsageUpdate
			for _, q := range []string{"first", "second"} {
				resp, updates, _ := turn(t, p, sid, q, nil)
				acptest.MustResult(t, resp, nil)
				before = lastUsage(updates)
				require.NotNil(t, before, "usage_update whenever the window is known")
			}
			assert.Equal(t, uint64(1220), before.Used)
			if tt.priced {
				require.NotNil(t, before.Cost)
				assert.Positive(t, before.Cost.Amount)
			} else {
				assert.Equal(t, uint64(8192), before.Size)
				assert.Nil(t, before.Cost, "no cost for an unpriced model")
			}
			cost := costOf(t, p, sid)
			assert.Contains(t, cost, "Token: 2,300 in / 40 out | Cache: 600 read / 0 write (26% hit) | Cost: ")
			if !tt.priced {
				assert.True(t, strings.HasSuffix(cost, "Cost: N/A"), cost)
			}
			p.stdin.Close()
			require.NoError(t, p.waitExit(t, 10*time.Second))

			p = start()
			resp, replay := p.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd, MCPServers: []acp.McpServer{}})
			acptest.MustResult(t, resp, nil)
			var updates []acp.SessionUpdate
			for _, m := range replay {
				updates = append(updates, m.Update(t).Update)
			}
			assert.Equal(t, before, lastUsage(updates), "the meter and cost as they were")
			assert.Equal(t, cost, costOf(t, p, sid), "/cost is identical after load")
			p.stdin.Close()
			require.NoError(t, p.waitExit(t, 10*time.Second))

			p = start()
			resp, msgs := p.Call(acp.MethodSessionResume, &acp.ResumeSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd})
			acptest.MustResult(t, resp, nil)
			var got *acp.UsageUpdate
			for _, m := range msgs {
				if u := m.Update(t).Update.UsageUpdate; u != nil {
					got = u
				}
			}
			if got == nil {
				m, ok := p.NextWithin(5 * time.Second)
				require.True(t, ok, "usage_update after resume")
				got = m.Update(t).Update.UsageUpdate
			}
			assert.Equal(t, before, got, "resume shows the meter too")
			assert.Equal(t, cost, costOf(t, p, sid), "/cost is identical after resume")
		})
	}
}

// Issue 25 item 5: a session another agent process has open fails
// session/load with its own code, a message that says what to do, and
// data with the reason; a session that process never saved is not found.
func TestLoadOfASessionOpenElsewhereSaysSo(t *testing.T) {
	model := newCountingModel(t)
	dir, cwd := t.TempDir(), t.TempDir()
	p1 := storeAgent(t, model, dir)
	sid := p1.NewSession(cwd)
	askText(t, p1, sid, "hello")
	unsaved := p1.NewSession(cwd)

	p2 := storeAgent(t, model, dir)
	for _, method := range []string{acp.MethodSessionLoad, acp.MethodSessionResume} {
		var params any = &acp.LoadSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd, MCPServers: []acp.McpServer{}}
		if method == acp.MethodSessionResume {
			params = &acp.ResumeSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd}
		}
		resp, _ := p2.Call(method, params)
		require.NotNil(t, resp.Error, method)
		assert.Equal(t, acp.CodeSessionLocked, resp.Error.Code, method)
		assert.Contains(t, resp.Error.Message, "session locked: session "+sid+" is open in another acp-agent process")
		assert.Contains(t, resp.Error.Message, "close it there")
		assert.NotContains(t, resp.Error.Message, "internal error")
		var data map[string]any
		require.NoError(t, json.Unmarshal(resp.Error.Data, &data))
		assert.Equal(t, sid, data["sessionId"])
		assert.Equal(t, "openInAnotherProcess", data["reason"])
	}
	resp, _ := p2.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: acp.SessionId(unsaved), CWD: cwd, MCPServers: []acp.McpServer{}})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeResourceNotFound, resp.Error.Code)

	// Once the first agent is gone, the second loads it.
	p1.stdin.Close()
	require.NoError(t, p1.waitExit(t, 10*time.Second))
	resp, _ = p2.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd, MCPServers: []acp.McpServer{}})
	acptest.MustResult(t, resp, nil)
}

// sessionDirNames lists the session directory, but for the running
// agents' entries (persistence.RunningDir: no session's).
func sessionDirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if e.Name() == persistence.RunningDir {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}

// Issue 25 item 7: a session is saved at its first prompt. Three client
// starts that open a session and never prompt leave session/list empty
// and nothing in the session directory but their reservation records
// (.reserved/<id>, issue 30 review: a later load finds them), also when
// the agent was killed; a prompted one is listed.
func TestSessionsAreSavedAtTheirFirstPrompt(t *testing.T) {
	model := newCountingModel(t)
	dir := t.TempDir()
	var started []string
	for i := range 3 {
		p := storeAgent(t, model, dir)
		started = append(started, p.NewSession(t.TempDir()))
		if i == 2 {
			// Killed: its reserved id's lock and directory stay until
			// the next start cleans them up.
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
			require.Error(t, p.waitExit(t, 5*time.Second))
			continue
		}
		p.stdin.Close()
		require.NoError(t, p.waitExit(t, 10*time.Second))
	}
	p := storeAgent(t, model, dir)
	resp, _ := p.Call(acp.MethodSessionList, &acp.ListSessionsRequest{})
	var list acp.ListSessionsResponse
	acptest.MustResult(t, resp, &list)
	assert.Empty(t, list.Sessions)
	// The start's clean-up runs in the background.
	awaitDir(t, dir, func(names []string) bool { return slices.Equal(names, []string{".reserved"}) }, "nothing left of sessions never prompted but their reservations")
	assert.ElementsMatch(t, started, sessionDirNames(t, filepath.Join(dir, ".reserved")))

	sid := p.NewSession(t.TempDir())
	askText(t, p, sid, "hello")
	resp, _ = p.Call(acp.MethodSessionList, &acp.ListSessionsRequest{})
	acptest.MustResult(t, resp, &list)
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, sid, string(list.Sessions[0].SessionID))
	assert.Equal(t, "hello", list.Sessions[0].Title)
}

// Issue 30 review (acpx's "sessions new" then "prompt"): a session this
// agent started and never prompted opens again in a new process, by
// session/resume or session/load, empty, in its cwd and with the mode it
// was given, and is saved (listed) at its first prompt there. Its
// reservation expires after persistence.ReservationTTL: the start that
// finds it older removes it, and the id is unknown again.
func TestBinarySessionNeverPromptedOpensInANewProcess(t *testing.T) {
	model := newCountingModel(t)
	dir, cwd := t.TempDir(), t.TempDir()
	p := storeAgent(t, model, dir)
	sid := p.NewSession(cwd)
	resp, _ := p.Call(acp.MethodSessionSetMode, &acp.SetSessionModeRequest{SessionID: sid, ModeID: "full-access"})
	acptest.MustResult(t, resp, nil)
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))

	p = storeAgent(t, model, dir)
	var list acp.ListSessionsResponse
	resp, _ = p.Call(acp.MethodSessionList, &acp.ListSessionsRequest{})
	acptest.MustResult(t, resp, &list)
	assert.Empty(t, list.Sessions, "not listed before its first prompt")
	var resumed acp.ResumeSessionResponse
	resp, _ = p.Call(acp.MethodSessionResume, &acp.ResumeSessionRequest{SessionID: sid, CWD: cwd})
	acptest.MustResult(t, resp, &resumed)
	require.NotNil(t, resumed.Modes)
	assert.Equal(t, acp.SessionModeId("full-access"), resumed.Modes.CurrentModeID, "the mode it was given")
	assert.Equal(t, "1 user messages", askText(t, p, sid, "hello"), "it opens empty")
	resp, _ = p.Call(acp.MethodSessionList, &acp.ListSessionsRequest{})
	acptest.MustResult(t, resp, &list)
	require.Len(t, list.Sessions, 1, "saved at its first prompt")
	assert.Equal(t, sid, string(list.Sessions[0].SessionID))
	assert.Equal(t, cwd, list.Sessions[0].CWD)
	assert.NoFileExists(t, filepath.Join(dir, ".reserved", sid), "the file replaced the reservation")
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))

	// session/load works the same; then an expired reservation is gone.
	p = storeAgent(t, model, dir)
	other := p.NewSession(cwd)
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))
	p = storeAgent(t, model, dir)
	resp, _ = p.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: other, CWD: cwd, MCPServers: []acp.McpServer{}})
	acptest.MustResult(t, resp, nil)
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))
	old := time.Now().Add(-8 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, ".reserved", other), old, old))
	p = storeAgent(t, model, dir)
	awaitDir(t, filepath.Join(dir, ".reserved"), func(names []string) bool { return len(names) == 0 }, "an expired reservation is removed at start")
	resp, _ = p.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: other, CWD: cwd, MCPServers: []acp.McpServer{}})
	require.NotNil(t, resp.Error)
	assert.Equal(t, int64(-32002), resp.Error.Code)
}

// Issue 24 item 12: an agent killed while it creates a session's file
// leaves <id>.jsonl.tmp<digits> (and the id's lock); the next agent to
// start removes them, and nothing else: not a symlink's target, not the
// temporary file of a session another live agent holds. The kill lands
// exactly on the rename that would publish the file (strace injects
// SIGKILL there).
func TestKillDuringCreationLeavesNothingAfterTheNextStart(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed (.ci/run installs it): the kill cannot be placed")
	}
	model := newCountingModel(t)
	dir, cwd := t.TempDir(), t.TempDir()
	cmd := exec.Command(agentBin, "--model", "openai/test-model")
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k",
		"OPENAI_BASE_URL="+model.URL+"/v1", "ACP_AGENT_SESSION_DIR="+dir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c := acptest.New(t, stdin, stdout)
	c.AnnouncesCommands = true
	c.Initialize(nil)
	sid := c.NewSession(cwd)
	// strace joins now that the id is known, and kills the agent at the
	// rename that publishes <id>.jsonl (-P), whatever else it renames
	// first (a reservation record at session/new, checkpoint files).
	var straceErr syncWriter
	tracer := exec.Command(strace, "-f", "-o", "/dev/null", "-p", strconv.Itoa(cmd.Process.Pid),
		"-e", "trace=rename,renameat,renameat2", "-P", filepath.Join(dir, sid+".jsonl"),
		"-e", "inject=rename,renameat,renameat2:signal=KILL:when=1")
	tracer.Stderr = &straceErr
	require.NoError(t, tracer.Start())
	traced := make(chan struct{})
	go func() { tracer.Wait(); close(traced) }()
	t.Cleanup(func() { tracer.Process.Kill(); <-traced })
	deadline := time.After(waitBudget(t))
	for !strings.Contains(straceErr.String(), "attached") {
		select {
		case <-traced: // ptrace refused (Yama, a container): no kill to place
			cmd.Process.Kill()
			t.Skipf("strace cannot attach to the agent here: %s", straceErr.String())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("strace did not attach: %s", straceErr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	c.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: acp.SessionId(sid), Prompt: []acp.ContentBlock{acp.TextBlock("hello")}})
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(waitBudget(t)):
		cmd.Process.Kill()
		<-done
		t.Fatal("the agent was not killed at its first rename")
	}
	stdin.Close()
	left := sessionDirNames(t, dir)
	var temps []string
	for _, n := range left {
		if strings.HasPrefix(n, sid+".jsonl.tmp") {
			temps = append(temps, n)
		}
	}
	require.Len(t, temps, 1, "killed between writing the file and renaming it: %v", left)
	assert.NotContains(t, left, sid+".jsonl")

	// Things that must survive the clean-up: a symlink named like a
	// temporary file (removed itself, its target kept), and the
	// temporary file of a session a live agent holds.
	outside := filepath.Join(t.TempDir(), "precious")
	require.NoError(t, os.WriteFile(outside, []byte("keep"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "link.jsonl.tmp7")))
	holder := storeAgent(t, model, dir)
	held := holder.NewSession(cwd)
	askText(t, holder, held, "hold it")
	// A session the live agent opened but has not saved yet, with a file
	// being created: its lock is held, so none of it is stale.
	reserved := holder.NewSession(cwd)
	heldTemp := filepath.Join(dir, reserved+".jsonl.tmp99")
	require.NoError(t, os.WriteFile(heldTemp, []byte("in flight"), 0o600))

	p := storeAgent(t, model, dir)
	resp, _ := p.Call(acp.MethodSessionList, &acp.ListSessionsRequest{})
	var list acp.ListSessionsResponse
	acptest.MustResult(t, resp, &list)
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, held, string(list.Sessions[0].SessionID))
	left = awaitDir(t, dir, func(names []string) bool {
		return !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, sid) || n == "link.jsonl.tmp7" })
	}, "the killed session's files are removed")
	for _, n := range left {
		assert.False(t, strings.HasPrefix(n, sid), "%s left of the killed session: %v", n, left)
	}
	assert.NotContains(t, left, "link.jsonl.tmp7")
	data, err := os.ReadFile(outside)
	require.NoError(t, err, "a symlink's target is never removed")
	assert.Equal(t, "keep", string(data))
	_, err = os.Stat(heldTemp)
	assert.NoError(t, err, "a session in use elsewhere is left alone")
	_, err = os.Stat(filepath.Join(dir, reserved))
	assert.NoError(t, err, "so is its directory")
}

// awaitDir waits (at most 10 s) until the session directory's names
// satisfy ok, and returns them.
func awaitDir(t *testing.T, dir string, ok func([]string) bool, msg string) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		names := sessionDirNames(t, dir)
		if ok(names) {
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", msg, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Issue 25 item 8: session/load replays the conversation in the order it
// happened: a plan under the prompt that made it, after its tool call,
// not at the end.
func TestLoadReplaysPlansWhereTheyCame(t *testing.T) {
	plan := map[string]any{"entries": []any{
		map[string]any{"content": "read the code", "status": "completed"},
		map[string]any{"content": "fix the bug", "status": "in_progress"},
	}}
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "plan it", "events": []any{map[string]any{"toolCall": map[string]any{"id": "plan1", "name": "update_plan", "arguments": plan}}}},
		map[string]any{"match": "thanks", "events": []any{map[string]any{"text": "you are welcome"}}},
		map[string]any{"events": []any{map[string]any{"text": "planned"}}},
	}})
	dir, cwd := t.TempDir(), t.TempDir()
	start := func() *proc {
		p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + dir}, "--model", "replay/"+script)
		p.Initialize(nil)
		return p
	}
	p := start()
	sid := p.NewSession(cwd)
	live := func(text string) []string {
		_, updates, _ := turn(t, p, sid, text, nil)
		return replayKinds(updates)
	}
	var order []string
	order = append(order, "user:plan it")
	order = append(order, live("plan it")...)
	order = append(order, "user:thanks")
	order = append(order, live("thanks")...)
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))

	p = start()
	resp, msgs := p.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd, MCPServers: []acp.McpServer{}})
	acptest.MustResult(t, resp, nil)
	var updates []acp.SessionUpdate
	for _, m := range msgs {
		updates = append(updates, m.Update(t).Update)
	}
	got := replayKinds(updates)
	want := []string{"user:plan it", "tool:plan1", "plan:2", "agent:planned", "user:thanks", "agent:you are welcome"}
	assert.Equal(t, want, got)
	assert.Equal(t, want, dedupe(order), "the replay is the order the client saw")
}

// replayKinds names the conversational updates in order: user and agent
// text, tool calls (once, by id) and plans.
func replayKinds(updates []acp.SessionUpdate) []string {
	var out []string
	seen := map[string]bool{}
	for _, u := range updates {
		switch {
		case u.UserMessageChunk != nil:
			out = append(out, "user:"+u.UserMessageChunk.Content.Text.Text)
		case u.AgentMessageChunk != nil:
			out = append(out, "agent:"+u.AgentMessageChunk.Content.Text.Text)
		case u.ToolCall != nil && !seen[string(u.ToolCall.ToolCallID)]:
			seen[string(u.ToolCall.ToolCallID)] = true
			out = append(out, "tool:"+string(u.ToolCall.ToolCallID))
		case u.Plan != nil:
			out = append(out, fmt.Sprintf("plan:%d", len(u.Plan.Entries)))
		}
	}
	return out
}

// dedupe merges consecutive equal entries (streamed text comes in one
// chunk per update here).
func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}
