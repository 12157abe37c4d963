package acpagent_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/persistence"
)

// storeEnv is a session directory and a model server shared by several
// agent "processes" (services), so a test can restart the agent.
type storeEnv struct {
	t     *testing.T
	dir   string
	model *openAIServer
}

// newStoreEnv serves, for each request: a write_file tool call when the
// last user message says "write", else an answer naming how many user
// messages the conversation has (so a test sees the history).
func newStoreEnv(t *testing.T) *storeEnv {
	e := &storeEnv{t: t, dir: t.TempDir()}
	e.model = newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		body := e.model.Request(t, n-1).Body
		msgs := body["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		users := 0
		for _, m := range msgs {
			if m.(map[string]any)["role"] == "user" {
				users++
			}
		}
		if last["role"] == "user" && strings.Contains(fmt.Sprint(last["content"]), "write") {
			args, _ := json.Marshal(map[string]any{"path": "out.txt", "content": fmt.Sprintf("v%d", users)})
			argStr, _ := json.Marshal(string(args))
			sse(w, []string{
				`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_w` + fmt.Sprint(n) + `","type":"function","function":{"name":"write_file","arguments":` + string(argStr) + `}}]},"finish_reason":null}]}`,
				finishChunk("tool_calls")}, true)
			return
		}
		sse(w, []string{reasoningChunk("reasoning_content", "counting"), textChunk(fmt.Sprintf("%d user messages so far", users)), finishChunk("stop")}, true)
	})
	return e
}

// start is one agent process on the shared store.
func (e *storeEnv) start(caps *acp.ClientCapabilities, configure ...func(*acpagent.Config)) *acptest.Client {
	store, err := persistence.OpenStore(e.dir)
	require.NoError(e.t, err)
	c := client(e.t, e.model, nil, append([]func(*acpagent.Config){func(cfg *acpagent.Config) {
		cfg.Store = store
		cfg.Mode = "accept-edits"
	}}, configure...)...)
	init := c.Initialize(caps)
	require.True(e.t, init.AgentCapabilities.LoadSession)
	require.NotNil(e.t, init.AgentCapabilities.SessionCapabilities.List)
	return c
}

func say(t *testing.T, c *acptest.Client, sid, text string) (string, []acp.SessionUpdate) {
	t.Helper()
	resp, msgs := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock(text)))
	acptest.MustResult(t, resp, nil)
	var out string
	var updates []acp.SessionUpdate
	for _, m := range msgs {
		u := m.Update(t).Update
		updates = append(updates, u)
		if u.AgentMessageChunk != nil {
			out += u.AgentMessageChunk.Content.Text.Text
		}
	}
	return out, updates
}

func loadSession(t *testing.T, c *acptest.Client, method, sid, cwd string) (acptest.Message, []acp.SessionUpdate) {
	t.Helper()
	var params any = &acp.LoadSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd, MCPServers: []acp.McpServer{}}
	if method == acp.MethodSessionResume {
		params = &acp.ResumeSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd}
	}
	resp, msgs := c.Call(method, params)
	var updates []acp.SessionUpdate
	for _, m := range msgs {
		updates = append(updates, m.Update(t).Update)
	}
	return resp, updates
}

func TestSessionSurvivesARestartAndLoadReplaysIt(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c := e.start(nil)
	sid := c.NewSession(cwd)
	_, err := os.Stat(filepath.Join(e.dir, sid+".jsonl"))
	require.ErrorIs(t, err, os.ErrNotExist, "session/new creates no file: a session nobody prompts leaves nothing")
	text, _ := say(t, c, sid, "please write the file")
	_, err = os.Stat(filepath.Join(e.dir, sid+".jsonl"))
	require.NoError(t, err, "the first prompt saves the session")
	assert.Equal(t, "1 user messages so far", text)
	text, _ = say(t, c, sid, "and again")
	assert.Equal(t, "2 user messages so far", text)
	// Remembered state: a mode change.
	resp, _ := c.Call(acp.MethodSessionSetMode, &acp.SetSessionModeRequest{SessionID: acp.SessionId(sid), ModeID: "read-only"})
	acptest.MustResult(t, resp, nil)

	// A new agent process on the same directory.
	c.Stop()
	c2 := e.start(nil)
	resp, replay := loadSession(t, c2, acp.MethodSessionLoad, sid, cwd)
	var lr acp.LoadSessionResponse
	acptest.MustResult(t, resp, &lr)
	assert.Equal(t, acp.SessionModeId("read-only"), lr.Modes.CurrentModeID, "the mode survives the restart")

	var kinds []string
	var diff *acp.Diff
	for _, u := range replay {
		switch {
		case u.UserMessageChunk != nil:
			kinds = append(kinds, "user:"+u.UserMessageChunk.Content.Text.Text)
		case u.AgentThoughtChunk != nil:
			kinds = append(kinds, "thought:"+u.AgentThoughtChunk.Content.Text.Text)
		case u.AgentMessageChunk != nil:
			kinds = append(kinds, "agent:"+u.AgentMessageChunk.Content.Text.Text)
		case u.ToolCall != nil:
			kinds = append(kinds, fmt.Sprintf("tool:%s:%s", u.ToolCall.Title, u.ToolCall.Status))
			diff = u.ToolCall.Content[0].Diff
		default:
			kinds = append(kinds, u.Tag())
		}
	}
	assert.Equal(t, []string{
		"user:please write the file", "tool:Write `out.txt`:completed", "thought:counting", "agent:1 user messages so far",
		"user:and again", "thought:counting", "agent:2 user messages so far",
		"available_commands_update",
	}, kinds, "the whole conversation (replayed as the file is read), what the load tells, then the response")
	require.NotNil(t, diff, "the tool call comes back with its diff")
	assert.Equal(t, "v1", diff.NewText)

	// The next prompt's model request carries the earlier turns.
	text, _ = say(t, c2, sid, "how many?")
	assert.Equal(t, "3 user messages so far", text)
}

func TestResumeRestoresWithoutReplay(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c := e.start(nil)
	sid := c.NewSession(cwd)
	say(t, c, sid, "hello")
	c.Stop()
	c2 := e.start(nil)
	resp, replay := loadSession(t, c2, acp.MethodSessionResume, sid, cwd)
	acptest.MustResult(t, resp, nil)
	require.Len(t, replay, 1, "resume replays nothing")
	assert.NotNil(t, replay[0].AvailableCommandsUpdate, "only the slash commands are announced")
	text, _ := say(t, c2, sid, "again")
	assert.Equal(t, "2 user messages so far", text)
}

func TestLoadOfAnUnknownSessionIsResourceNotFound(t *testing.T) {
	e := newStoreEnv(t)
	c := e.start(nil)
	for _, method := range []string{acp.MethodSessionLoad, acp.MethodSessionResume} {
		resp, _ := loadSession(t, c, method, "no-such-session", t.TempDir())
		require.NotNil(t, resp.Error, method)
		assert.Equal(t, int64(acp.CodeResourceNotFound), resp.Error.Code, method)
	}
}

func TestForkIsIsolatedInMemoryAndOnDisk(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c := e.start(nil)
	src := c.NewSession(cwd)
	say(t, c, src, "one")
	resp, _ := c.Call(acp.MethodSessionFork, &acp.ForkSessionRequest{SessionID: acp.SessionId(src), CWD: cwd})
	var fr acp.ForkSessionResponse
	acptest.MustResult(t, resp, &fr)
	fork := string(fr.SessionID)
	require.NotEqual(t, src, fork)
	text, _ := say(t, c, fork, "fork two")
	assert.Equal(t, "2 user messages so far", text, "the fork has the source's history")
	text, _ = say(t, c, src, "source two")
	assert.Equal(t, "2 user messages so far", text, "the source does not see the fork's turn")

	// After a restart, each file holds its own history.
	c.Stop()
	c2 := e.start(nil)
	for id, want := range map[string]string{src: "source two", fork: "fork two"} {
		resp, replay := loadSession(t, c2, acp.MethodSessionLoad, id, cwd)
		acptest.MustResult(t, resp, nil)
		var users []string
		for _, u := range replay {
			if u.UserMessageChunk != nil {
				users = append(users, u.UserMessageChunk.Content.Text.Text)
			}
		}
		assert.Equal(t, []string{"one", want}, users, id)
	}
	list := listSessions(t, c2, "", "")
	var parent string
	for _, s := range list.Sessions {
		if string(s.SessionID) == fork {
			parent = s.Title
		}
	}
	assert.Equal(t, "one (fork)", parent, "the fork keeps the source's title, marked as a fork")
}

func listSessions(t *testing.T, c *acptest.Client, cwd, cursor string) acp.ListSessionsResponse {
	t.Helper()
	resp, _ := c.Call(acp.MethodSessionList, &acp.ListSessionsRequest{CWD: cwd, Cursor: cursor})
	var lr acp.ListSessionsResponse
	acptest.MustResult(t, resp, &lr)
	return lr
}

func TestListFiltersPagesAndTitles(t *testing.T) {
	e := newStoreEnv(t)
	c := e.start(nil)
	a, b := t.TempDir(), t.TempDir()
	var inA []string
	for i := range 55 {
		sid := c.NewSession(a)
		inA = append(inA, sid)
		// A title saves a session that has no prompt yet.
		title := fmt.Sprintf("session %d", i)
		resp, _ := c.Call(acp.MethodSessionSetTitle, &acp.SetSessionTitleRequest{SessionID: acp.SessionId(sid), Title: &title})
		acptest.MustResult(t, resp, nil)
	}
	c.NewSession(a) // never prompted: not listed
	other := c.NewSession(b)
	say(t, c, other, "Title from the first line\nnot this one")

	page := listSessions(t, c, b, "")
	require.Len(t, page.Sessions, 1)
	assert.Equal(t, "Title from the first line", page.Sessions[0].Title)
	assert.Empty(t, page.NextCursor)

	seen := map[string]bool{}
	cursor := ""
	pages := 0
	for {
		page := listSessions(t, c, a, cursor)
		pages++
		for _, s := range page.Sessions {
			assert.Equal(t, a, s.CWD)
			assert.False(t, seen[string(s.SessionID)], "no session twice")
			seen[string(s.SessionID)] = true
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	assert.Len(t, seen, len(inA))
	assert.Equal(t, 2, pages, "55 sessions, 50 a page")

	resp, _ := c.Call(acp.MethodSessionList, &acp.ListSessionsRequest{Cursor: "not-a-cursor"})
	require.NotNil(t, resp.Error)
	assert.Equal(t, int64(acp.CodeInvalidParams), resp.Error.Code)
}

func TestCloseKeepsTheFileAndDeleteRemovesIt(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c := e.start(nil)
	sid := c.NewSession(cwd)
	say(t, c, sid, "hello")
	resp, _ := c.Call(acp.MethodSessionClose, &acp.CloseSessionRequest{SessionID: acp.SessionId(sid)})
	acptest.MustResult(t, resp, nil)
	resp, _ = c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("still there?")))
	require.NotNil(t, resp.Error, "a closed session is not open any more")
	resp, _ = loadSession(t, c, acp.MethodSessionLoad, sid, cwd)
	acptest.MustResult(t, resp, nil)

	resp, _ = c.Call(acp.MethodSessionDelete, &acp.DeleteSessionRequest{SessionID: acp.SessionId(sid)})
	acptest.MustResult(t, resp, nil)
	_, err := os.Stat(filepath.Join(e.dir, sid+".jsonl"))
	assert.True(t, os.IsNotExist(err))
	assert.Empty(t, listSessions(t, c, "", "").Sessions)
	resp, _ = c.Call(acp.MethodSessionDelete, &acp.DeleteSessionRequest{SessionID: "never-existed"})
	acptest.MustResult(t, resp, nil)
	resp, _ = loadSession(t, c, acp.MethodSessionLoad, sid, cwd)
	require.NotNil(t, resp.Error)
	assert.Equal(t, int64(acp.CodeResourceNotFound), resp.Error.Code)
}

func TestRememberedPermissionsSurviveARestart(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c := e.start(nil, func(cfg *acpagent.Config) { cfg.Mode = "default" })
	sid := c.NewSession(cwd)
	r := runPrompt(t, c, sid, "write please", answerPermission("allow_always"))
	require.Len(t, r.requests, 1)
	c.Stop()
	c2 := e.start(nil, func(cfg *acpagent.Config) { cfg.Mode = "default" })
	resp, _ := loadSession(t, c2, acp.MethodSessionResume, sid, cwd)
	acptest.MustResult(t, resp, nil)
	// A new file: overwriting out.txt would need a read in this process
	// first (write_file's check), which is not what this test is about.
	require.NoError(t, os.Remove(filepath.Join(cwd, "out.txt")))
	r = runPrompt(t, c2, sid, "write again", answerPermission("reject_once"))
	assert.Empty(t, r.requests, "allow_always for edits was remembered across the restart")
	data, err := os.ReadFile(filepath.Join(cwd, "out.txt"))
	require.NoError(t, err)
	assert.Equal(t, "v2", string(data))
}

func TestASessionOpenInAnotherProcessIsRefused(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c := e.start(nil)
	sid := c.NewSession(cwd)
	say(t, c, sid, "hello")
	// A second agent (same process here; the lock is per file) cannot
	// take the session while the first holds it.
	c2 := e.start(nil)
	resp, _ := loadSession(t, c2, acp.MethodSessionLoad, sid, cwd)
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeSessionLocked, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "open in another acp-agent process")
	var data acpagent.SessionLockedData
	require.NoError(t, json.Unmarshal(resp.Error.Data, &data))
	assert.Equal(t, acpagent.SessionLockedData{SessionID: sid, Reason: "openInAnotherProcess", Detail: data.Detail}, data)
	assert.NotEmpty(t, data.Detail)
	// A session the other agent started but never saved is not found.
	unsaved := c.NewSession(cwd)
	resp, _ = loadSession(t, c2, acp.MethodSessionLoad, unsaved, cwd)
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeResourceNotFound, resp.Error.Code)
}

// session/load of a session open on this connection reloads it from its
// file (the open one is closed first) and goes on.
func TestLoadOfAnOpenSessionReloadsIt(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c := e.start(nil)
	sid := c.NewSession(cwd)
	say(t, c, sid, "one")
	resp, replay := loadSession(t, c, acp.MethodSessionLoad, sid, cwd)
	acptest.MustResult(t, resp, nil)
	var users int
	for _, u := range replay {
		if u.UserMessageChunk != nil {
			users++
		}
	}
	assert.Equal(t, 1, users)
	text, _ := say(t, c, sid, "two")
	assert.Equal(t, "2 user messages so far", text)
}
