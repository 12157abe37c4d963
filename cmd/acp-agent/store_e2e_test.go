package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// countingModel answers every request with the number of user messages
// in it, and records the bodies.
type countingModel struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newCountingModel(t *testing.T) *countingModel {
	m := &countingModel{}
	m.Server = httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.bodies = append(m.bodies, string(data))
		m.mu.Unlock()
		users := strings.Count(string(data), `"role":"user"`)
		w.Header().Set("Content-Type", "text/event-stream")
		text, _ := json.Marshal(fmt.Sprintf("%d user messages", users))
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", text)
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *countingModel) last() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bodies[len(m.bodies)-1]
}

func storeAgent(t *testing.T, model *countingModel, sessionDir string) *proc {
	t.Helper()
	p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1", "ACP_AGENT_SESSION_DIR=" + sessionDir},
		"--model", "openai/test-model")
	init := p.Initialize(nil)
	require.True(t, init.AgentCapabilities.LoadSession)
	return p
}

func askText(t *testing.T, p *proc, sid, text string) string {
	t.Helper()
	resp, updates := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	acptest.MustResult(t, resp, nil)
	return textOf(t, updates)
}

// Issue 6: prompt, kill -9 the agent, start a new one: session/load
// replays the conversation and the next model request has the earlier
// turns.
func TestBinarySessionSurvivesKill9(t *testing.T) {
	model := newCountingModel(t)
	dir, cwd := t.TempDir(), t.TempDir()
	p := storeAgent(t, model, dir)
	sid := p.NewSession(cwd)
	assert.Equal(t, "1 user messages", askText(t, p, sid, "first question"))
	assert.Equal(t, "2 user messages", askText(t, p, sid, "second question"))
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	err := p.waitExit(t, 5*time.Second)
	require.Error(t, err, "killed")

	p2 := storeAgent(t, model, dir)
	resp, replay := p2.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: sid, CWD: cwd, MCPServers: []acp.McpServer{}})
	acptest.MustResult(t, resp, nil)
	var users, agents []string
	for _, m := range replay {
		u := m.Update(t).Update
		switch {
		case u.UserMessageChunk != nil:
			users = append(users, u.UserMessageChunk.Content.Text.Text)
		case u.AgentMessageChunk != nil:
			agents = append(agents, u.AgentMessageChunk.Content.Text.Text)
		}
	}
	assert.Equal(t, []string{"first question", "second question"}, users)
	assert.Equal(t, []string{"1 user messages", "2 user messages"}, agents)
	assert.Equal(t, "3 user messages", askText(t, p2, sid, "third question"))
	assert.Contains(t, model.last(), "first question", "the earlier turns go to the model")
	assert.Contains(t, model.last(), "2 user messages")
}

// Issue 6: fork isolation, list pagination and delete through the binary.
func TestBinaryForkListDelete(t *testing.T) {
	model := newCountingModel(t)
	dir, cwd := t.TempDir(), t.TempDir()
	p := storeAgent(t, model, dir)
	src := p.NewSession(cwd)
	askText(t, p, src, "shared start")
	resp, _ := p.Call(acp.MethodSessionFork, &acp.ForkSessionRequest{SessionID: acp.SessionId(src), CWD: cwd})
	var fr acp.ForkSessionResponse
	acptest.MustResult(t, resp, &fr)
	assert.Equal(t, "2 user messages", askText(t, p, string(fr.SessionID), "in the fork"))
	assert.Equal(t, "2 user messages", askText(t, p, src, "in the source"))
	assert.NotContains(t, model.last(), "in the fork", "the source never sees the fork's turns")

	for range 52 {
		askText(t, p, p.NewSession(t.TempDir()), "hello")
	}
	p.NewSession(t.TempDir()) // never prompted: never listed
	seen := map[string]bool{}
	cursor := ""
	for {
		resp, _ := p.Call(acp.MethodSessionList, &acp.ListSessionsRequest{Cursor: cursor})
		var page acp.ListSessionsResponse
		acptest.MustResult(t, resp, &page)
		for _, s := range page.Sessions {
			seen[string(s.SessionID)] = true
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	assert.Len(t, seen, 54)
	resp, _ = p.Call(acp.MethodSessionList, &acp.ListSessionsRequest{CWD: cwd})
	var mine acp.ListSessionsResponse
	acptest.MustResult(t, resp, &mine)
	assert.Len(t, mine.Sessions, 2, "source and fork")
	titles := map[acp.SessionId]string{}
	for _, si := range mine.Sessions {
		titles[si.SessionID] = si.Title
	}
	assert.Equal(t, map[acp.SessionId]string{acp.SessionId(src): "shared start", fr.SessionID: "shared start (fork)"}, titles,
		"session/list tells the fork from its source")
	// A fork of the fork is not marked twice.
	resp, _ = p.Call(acp.MethodSessionFork, &acp.ForkSessionRequest{SessionID: fr.SessionID, CWD: cwd})
	var ffr acp.ForkSessionResponse
	acptest.MustResult(t, resp, &ffr)
	resp, _ = p.Call(acp.MethodSessionList, &acp.ListSessionsRequest{CWD: cwd})
	acptest.MustResult(t, resp, &mine)
	titles = map[acp.SessionId]string{}
	for _, si := range mine.Sessions {
		titles[si.SessionID] = si.Title
	}
	assert.Equal(t, "shared start (fork)", titles[ffr.SessionID], "a fork of a fork is not marked twice")
	resp, _ = p.Call(acp.MethodSessionDelete, &acp.DeleteSessionRequest{SessionID: ffr.SessionID})
	acptest.MustResult(t, resp, nil)

	resp, _ = p.Call(acp.MethodSessionDelete, &acp.DeleteSessionRequest{SessionID: acp.SessionId(src)})
	acptest.MustResult(t, resp, nil)
	resp, _ = p.Call(acp.MethodSessionList, &acp.ListSessionsRequest{CWD: cwd})
	acptest.MustResult(t, resp, &mine)
	require.Len(t, mine.Sessions, 1)
	assert.Equal(t, fr.SessionID, mine.Sessions[0].SessionID, "deleting the source leaves the fork")
}
