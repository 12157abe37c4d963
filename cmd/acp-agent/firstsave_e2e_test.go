//go:build linux

package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// Issue 30: a session's first message is saved (its file made durable
// with the message in it) beside the model call that answers it, and
// nothing of the answer is shown before. With a slow disk (strace delays
// the fsync of the session's file) and a model that answers at once, the
// first chunk reaches the client only after the slow save; an agent
// killed (-9) the moment it arrives has the message on disk, and the
// next agent's session/load shows it.
func TestBinaryFirstChunkComesAfterTheMessageIsOnDisk(t *testing.T) {
	stop := make(chan struct{})
	model := httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		// The first chunk at once, then the stream stays open: the
		// agent is killed mid-answer.
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"first chunk\"},\"finish_reason\":null}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(model.Close)
	t.Cleanup(func() { close(stop) }) // runs first
	dir, cwd := t.TempDir(), t.TempDir()
	start := func() *proc {
		p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1", "ACP_AGENT_SESSION_DIR=" + dir},
			"--model", "openai/test-model")
		p.Initialize(nil)
		return p
	}

	p := start()
	sid := p.NewSession(cwd)
	var temps []string
	for _, n := range sessionDirNames(t, dir) {
		if strings.HasPrefix(n, sid+".jsonl.tmp") {
			temps = append(temps, n)
		}
	}
	require.Len(t, temps, 1, "the file its first prompt fills")
	const slow = 500 * time.Millisecond
	delayAtSyscall(t, p.cmd.Process.Pid, filepath.Join(dir, temps[0]), "fsync", slow)
	sent := time.Now()
	p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: acp.SessionId(sid), Prompt: []acp.ContentBlock{acp.TextBlock("remember this first message")}})
	for {
		m := p.Next()
		if m.Method == acp.MethodSessionUpdate && m.Update(t).Update.AgentMessageChunk != nil {
			break
		}
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	shown := time.Since(sent)
	require.Error(t, p.waitExit(t, 10*time.Second), "killed")
	assert.GreaterOrEqual(t, shown, slow, "the first chunk waited for the slow save")

	p = start()
	var replay []acptest.Message
	for deadline := time.Now().Add(waitBudget(t)); ; {
		var resp acptest.Message
		resp, replay = p.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd, MCPServers: []acp.McpServer{}})
		// The start's clean-up of what the kill left may hold the
		// session for a moment; the agent says to try again.
		if resp.Error != nil && strings.Contains(resp.Error.Message, "try again") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		acptest.MustResult(t, resp, nil)
		break
	}
	var users []string
	for _, m := range replay {
		if u := m.Update(t).Update; u.UserMessageChunk != nil {
			users = append(users, u.UserMessageChunk.Content.Text.Text)
		}
	}
	assert.Equal(t, []string{"remember this first message"}, users, "the message was on disk when its answer's first chunk was shown")
}
