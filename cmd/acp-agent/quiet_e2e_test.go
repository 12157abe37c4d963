package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// noticesCaps is a client that shows notice updates (SDK 2.4.0).
var noticesCaps = &acp.ClientCapabilities{Session: &acp.ClientSessionCapabilities{Notices: &acp.NoticeCapabilities{}}}

// Issue 25 item 3: by default stderr (which agent-shell shows the user)
// carries warnings and errors only; the info-level events (session
// created, telemetry) go to a log file under the state directory;
// --log-level still brings them to stderr. What the user must know (here
// a failed model discovery) comes once, as a notice update, to a client
// that shows notices, and is not on stderr.
func TestStderrIsQuietAndNoticesTellTheUser(t *testing.T) {
	srv := newFakeModelServer(t, map[string]http.HandlerFunc{
		"GET /v1/models": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		},
		"POST /v1/chat/completions": chatWithUsage,
	})
	home := t.TempDir()
	env := []string{"HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + srv.URL + "/v1"}
	p := startAgent(t, env, "--model", "openai/test-model")
	p.Initialize(noticesCaps)
	sid := p.NewSession(t.TempDir())
	var notices []*acp.Notice
	deadline := time.Now().Add(waitBudget(t))
	for len(notices) == 0 && time.Now().Before(deadline) {
		if m, ok := p.NextWithin(200 * time.Millisecond); ok && m.Method == acp.MethodSessionUpdate {
			if n := m.Update(t).Update.Notice; n != nil {
				notices = append(notices, n)
			}
		}
	}
	require.Len(t, notices, 1, "the failed discovery is told")
	assert.Equal(t, "Model discovery failed", notices[0].Title)
	assert.Equal(t, acp.NoticeSeverityWarning, notices[0].Severity)
	assert.Contains(t, notices[0].Description, "503")
	for range 2 {
		resp, updates, _ := turn(t, p, sid, "hi", nil)
		acptest.MustResult(t, resp, nil)
		for _, u := range updates {
			assert.Nil(t, u.Notice, "told once")
		}
	}
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))
	assert.Empty(t, p.stderr.String(), "nothing on stderr: no errors happened")

	logFile := filepath.Join(home, ".local", "state", "acp-agent", "log", "acp-agent.log")
	data, err := os.ReadFile(logFile)
	require.NoError(t, err)
	for _, want := range []string{"session created", "name=prompt_started", "name=prompt_completed", "model discovery failed"} {
		assert.Contains(t, string(data), want)
	}
	fi, err := os.Stat(logFile)
	require.NoError(t, err)
	if !onWindows { // no Unix permission bits there; the profile's ACL keeps it private
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "logs name files and prompts")
	}

	// --log-level brings the info events back to stderr.
	p = startAgent(t, env, "--model", "openai/test-model", "--log-level", "info", "--discover-models=false")
	p.Initialize(nil)
	p.NewSession(t.TempDir())
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))
	assert.Contains(t, p.stderr.String(), "session created")

	// A client without notices hears nothing of the failed discovery (it
	// is in the log file), and nothing lands in the conversation.
	failures := func() int {
		data, err := os.ReadFile(logFile)
		require.NoError(t, err)
		return strings.Count(string(data), "model discovery failed")
	}
	before := failures()
	p = startAgent(t, env, "--model", "openai/test-model")
	p.Initialize(nil)
	sid = p.NewSession(t.TempDir())
	require.Eventually(t, func() bool { return failures() > before }, waitBudget(t), 20*time.Millisecond, "discovery failed (in the log file)")
	_, updates, _ := turn(t, p, sid, "hi", nil)
	for _, u := range updates {
		if u.AgentMessageChunk != nil {
			assert.NotContains(t, u.AgentMessageChunk.Content.Text.Text, "discovery")
		}
	}
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))
	assert.Empty(t, p.stderr.String())
}

// Issue 25 item 3: a setup problem the user can fix (here the models file)
// does not stop the agent; the first session tells it as a notice.
func TestSetupProblemsAreToldOnceAsNotices(t *testing.T) {
	models := filepath.Join(t.TempDir(), "models.json")
	require.NoError(t, os.WriteFile(models, []byte("{broken"), 0o600))
	p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}, "--model", "replay/default", "--models-file", models)
	p.Initialize(noticesCaps)
	resp, msgs := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
	acptest.MustResult(t, resp, nil)
	var notices []*acp.Notice
	for _, m := range msgs {
		if n := m.Update(t).Update.Notice; n != nil {
			notices = append(notices, n)
		}
	}
	for len(notices) == 0 {
		m, ok := p.NextWithin(5 * time.Second)
		require.True(t, ok, "a notice about the models file")
		if m.Method == acp.MethodSessionUpdate {
			if n := m.Update(t).Update.Notice; n != nil {
				notices = append(notices, n)
			}
		}
	}
	require.Len(t, notices, 1)
	assert.Equal(t, "The models file cannot be used", notices[0].Title)
	assert.Contains(t, notices[0].Description, models)
	// A second session is not told again.
	resp, msgs = p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
	acptest.MustResult(t, resp, nil)
	for _, m := range msgs {
		assert.Nil(t, m.Update(t).Update.Notice)
	}
	if m, ok := p.NextWithin(300 * time.Millisecond); ok && m.Method == acp.MethodSessionUpdate {
		assert.Nil(t, m.Update(t).Update.Notice, "told once")
	}
	assert.False(t, strings.Contains(p.stderr.String(), "level=INFO"))
}
