package acpagent_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/persistence"
)

// startWithAgent is storeEnv.start that also hands back the agent, so a
// test can use the Go facade (agent.Session) of a session the client made.
func (e *storeEnv) startWithAgent() (*acptest.Client, *acpagent.Agent) {
	store, err := persistence.OpenStore(e.dir)
	require.NoError(e.t, err)
	transport := &http.Transport{}
	e.t.Cleanup(transport.CloseIdleConnections)
	env := map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": e.model.URL + "/v1"}
	a := acpagent.New(acpagent.Config{Config: host.Config{
		Model: "openai/test-model", Getenv: func(k string) string { return env[k] },
		HTTPClient: &http.Client{Transport: transport}, Version: "test",
		Store: store, Mode: "accept-edits",
	}})
	c := acptest.Pipe(e.t, acp.NewAgentService(a, acp.Options{}))
	c.AnnouncesCommands = true
	c.Initialize(nil)
	return c, a
}

// Session.Resume of a stored session is what a later session/load
// replays: the file is rewritten to the resumed transcript.
func TestResumeOfAStoredSessionIsWhatLoadReplaysAfterARestart(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c, a := e.startWithAgent()
	sid := c.NewSession(cwd)
	say(t, c, sid, "first")
	s, ok := a.Session(sid)
	require.True(t, ok)
	snapshot := s.Transcript()
	say(t, c, sid, "second")
	say(t, c, sid, "third")

	require.NoError(t, s.Resume(snapshot), "back to the state after the first turn")
	text, _ := say(t, c, sid, "fourth")
	assert.Equal(t, "2 user messages so far", text, "the model sees the resumed history")
	c.Stop()

	c2 := e.start(nil)
	resp, replay := loadSession(t, c2, acp.MethodSessionLoad, sid, cwd)
	acptest.MustResult(t, resp, nil)
	var users []string
	for _, u := range replay {
		if u.UserMessageChunk != nil {
			users = append(users, u.UserMessageChunk.Content.Text.Text)
		}
	}
	assert.Equal(t, []string{"first", "fourth"}, users, "load replays the resumed transcript and what followed it")
	text, _ = say(t, c2, sid, "fifth")
	assert.Equal(t, "3 user messages so far", text)
}
