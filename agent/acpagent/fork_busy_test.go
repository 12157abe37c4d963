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
)

// Issue 15.8: forks taken while the source's turn keeps appending entries
// hold in their files exactly the entries they hold in memory, so a restart
// loses none of what the fork showed.
func TestForkDuringAStreamingTurnStoresWhatItHoldsAfterARestart(t *testing.T) {
	e := &storeEnv{t: t, dir: t.TempDir()}
	const rounds = 60
	e.model = newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		msgs := e.model.Request(t, n-1).Body["messages"].([]any)
		tools := 0 // tool results since the last user message
		for _, m := range msgs {
			switch m.(map[string]any)["role"] {
			case "tool":
				tools++
			case "user":
				tools = 0
			}
		}
		if tools < rounds {
			args, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("f%d.txt", tools), "content": "x"})
			argStr, _ := json.Marshal(string(args))
			sse(w, []string{
				`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_` + fmt.Sprint(n) + `","type":"function","function":{"name":"write_file","arguments":` + string(argStr) + `}}]},"finish_reason":null}]}`,
				finishChunk("tool_calls")}, true)
			return
		}
		sse(w, []string{textChunk("done"), finishChunk("stop")}, true)
	})
	cwd := t.TempDir()
	c, a := e.startWithAgent()
	sid := c.NewSession(cwd)
	say(t, c, sid, "a first turn gives the session its title")
	// The client keeps forking while the second turn runs, reading the
	// agent's messages itself (one reader: acptest is not for concurrent
	// calls).
	promptID := c.Request(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("again")))
	held := map[string]int{}
	for running := true; running; {
		forkID := c.Request(acp.MethodSessionFork, &acp.ForkSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd})
		for waiting := true; waiting; {
			m := c.Next()
			switch {
			case !m.IsResponse():
			case string(m.ID) == promptID:
				acptest.MustResult(t, m, nil)
				running = false
			case string(m.ID) == forkID:
				var fr acp.ForkSessionResponse
				acptest.MustResult(t, m, &fr)
				f, ok := a.Session(string(fr.SessionID))
				require.True(t, ok)
				held[string(fr.SessionID)] = len(f.Transcript())
				waiting = false
			}
		}
	}
	require.NotEmpty(t, held)
	c.Stop()

	for id, n := range held {
		data, err := os.ReadFile(filepath.Join(e.dir, id+".jsonl"))
		require.NoError(t, err)
		entries := 0
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, `"type":"entry"`) {
				entries++
			}
		}
		assert.Equal(t, n, entries, "fork %s: entries in its file vs in memory", id)
	}
	t.Logf("%d forks taken during the turn", len(held))
}

// A fork of a session that has entries but no title yet (its first
// message was blank) keeps the copied records when its own first message
// gives it a title: the title rewrite must not start the file afresh.
func TestForkOfAnUntitledSessionKeepsTheCopiedRecordsWhenItGetsATitle(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c, a := e.startWithAgent()
	sid := c.NewSession(cwd)
	say(t, c, sid, "   ")
	resp, _ := c.Call(acp.MethodSessionFork, &acp.ForkSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd})
	var fr acp.ForkSessionResponse
	acptest.MustResult(t, resp, &fr)
	fid := string(fr.SessionID)
	text, _ := say(t, c, fid, "a title at last")
	assert.Equal(t, "2 user messages so far", text)
	f, ok := a.Session(fid)
	require.True(t, ok)
	held := len(f.Transcript())
	c.Stop()

	data, err := os.ReadFile(filepath.Join(e.dir, fid+".jsonl"))
	require.NoError(t, err)
	assert.Contains(t, strings.SplitN(string(data), "\n", 2)[0], "a title at last", "the header has the fork's title")
	assert.Equal(t, held, strings.Count(string(data), `"type":"entry"`), "every entry the fork holds is in its file")
}
