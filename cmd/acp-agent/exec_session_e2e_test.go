package main

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/persistence"
)

// Issue 31 (the exec turn's fixed cost): exec's session is prompted at
// once, so it keeps no reservation record, which an editor's session
// keeps until its first prompt saves it (a file made on the prompt's way
// and removed at the turn's end, for a session nobody could open in
// between). While exec's model is answering, the session has its file
// and no record, nor a file history (made at its first write, which a
// turn that changes no file never makes); once exec has printed the turn's end, a kill -9 loses
// nothing: the next start lists the session and loads the question and
// the answer.
func TestExecSessionHasNoReservationRecordAndSurvivesAKill(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	asked, release := make(chan struct{}, 1), make(chan struct{})
	model := httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-release
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"the answer\"},\"finish_reason\":null}]}\n\n")
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(model.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})

	cmd := exec.Command(agentBin, "exec", "--model", "openai/test-model", "the question")
	cmd.Dir = cwd
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1", "ACP_AGENT_SESSION_DIR="+dir)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	startCmd(t, cmd, nil)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})

	select {
	case <-asked:
	case err := <-done:
		t.Fatalf("exec ended before asking the model: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("exec never asked the model")
	}
	// The prompt is saved beside the model call, before its answer is
	// shown (the model is held here): the file comes into place, and no
	// record was made for it.
	var sid string
	require.Eventually(t, func() bool {
		for _, n := range sessionDirNames(t, dir) {
			if id, ok := strings.CutSuffix(n, ".jsonl"); ok {
				sid = id
			}
		}
		return sid != ""
	}, waitBudget(t), 10*time.Millisecond, "the session's file exists before the model answers: %v", sessionDirNames(t, dir))
	records, err := os.ReadDir(filepath.Join(dir, persistence.ReservedDir))
	if err == nil {
		assert.Empty(t, records, "exec's session keeps no reservation record")
	} else {
		require.ErrorIs(t, err, os.ErrNotExist)
	}
	_, err = os.Lstat(filepath.Join(dir, sid, "checkpoints"))
	require.ErrorIs(t, err, os.ErrNotExist, "the file history is made at its first write, not at the session's start")
	close(release)

	// The answer, then the turn's end on stderr: killed there, before or
	// during the process's own exit.
	out := bufio.NewScanner(stdout)
	require.True(t, out.Scan(), "exec prints the answer")
	assert.Equal(t, "the answer", out.Text())
	errs := bufio.NewScanner(stderr)
	for errs.Scan() && !strings.HasPrefix(errs.Text(), "stop: end_turn") {
	}
	// The process may have exited on its own by now (Windows then
	// refuses to terminate it): the session must survive either way.
	_ = cmd.Process.Kill()
	<-done
	done <- nil // for the cleanup

	p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1", "ACP_AGENT_SESSION_DIR=" + dir},
		"--model", "openai/test-model")
	p.Initialize(nil)
	resp, _ := p.Call(acp.MethodSessionList, &acp.ListSessionsRequest{})
	var list acp.ListSessionsResponse
	acptest.MustResult(t, resp, &list)
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, sid, string(list.Sessions[0].SessionID))
	resp, replay := p.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: acp.SessionId(sid), CWD: cwd, MCPServers: []acp.McpServer{}})
	acptest.MustResult(t, resp, nil)
	var users []string
	for _, m := range replay {
		if u := m.Update(t).Update; u.UserMessageChunk != nil {
			users = append(users, u.UserMessageChunk.Content.Text.Text)
		}
	}
	assert.Equal(t, []string{"the question"}, users)
	assert.Equal(t, "the answer", textOf(t, replay))
}

// exec lets its heap grow to 32 MB before it collects (GOGC 800): a grep
// whose read buffers and listings come to about 15 MB runs no collection
// besides the one the package initialization may cause, where GOGC=100,
// which the environment can still set, runs several.
func TestExecTurnRunsWithoutCollections(t *testing.T) {
	tree := t.TempDir()
	line := strings.Repeat("x", 99) + "\n"
	for i := range 6 {
		body := strings.Repeat(line, (1<<20)/100*(i+1)) + "needle\n"
		require.NoError(t, os.WriteFile(filepath.Join(tree, fmt.Sprintf("f%d.txt", i)), []byte(body), 0o644))
	}
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"events": []any{map[string]any{"toolCall": map[string]any{"id": "g1", "name": "grep",
			"arguments": map[string]any{"pattern": "needle", "path": tree}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	collections := func(env ...string) int {
		t.Helper()
		out, errOut, code := runExecBin(t, tree, "", append(env, "GODEBUG=gctrace=1"), "--model", "replay/"+script, "find it")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "f5.txt")
		n := 0
		for _, l := range strings.Split(errOut, "\n") {
			if strings.HasPrefix(l, "gc ") {
				n++
			}
		}
		return n
	}
	assert.LessOrEqual(t, collections(), 1)
	assert.GreaterOrEqual(t, collections("GOGC=100"), 2, "the environment's GOGC rules")
}
