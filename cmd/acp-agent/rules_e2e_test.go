package main

import (
	"github.com/acp-agent/acp-agent/internal/winetest"

	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// messageClient is a toolClient that also keeps the agent's message text.
type messageClient struct {
	*toolClient
	mu   sync.Mutex
	text strings.Builder
}

func (c *messageClient) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	if ch := n.Update.AgentMessageChunk; ch != nil && ch.Content.Text != nil {
		c.mu.Lock()
		c.text.WriteString(ch.Content.Text.Text)
		c.mu.Unlock()
	}
	return c.toolClient.SessionUpdate(ctx, n)
}

func (c *messageClient) said() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.text.String()
}

// systemPrompt is the system message of a recorded Chat Completions body.
func systemPrompt(t *testing.T, body string) string {
	t.Helper()
	if ms := messagesOf(t, body, "system"); len(ms) > 0 {
		return ms[0]
	}
	return ""
}

// messagesOf are the text contents of the messages of role in a recorded
// Chat Completions body, in order.
func messagesOf(t *testing.T, body, role string) []string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &req))
	var out []string
	for _, m := range req.Messages {
		if m.Role == role {
			out = append(out, m.Content)
		}
	}
	return out
}

func write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// Issue 16, rules files, through the built binary: AGENTS.md from the
// repository root down to the workspace root (CLAUDE.md where there is no
// AGENTS.md), the user's own first, nothing above the repository; a nested
// AGENTS.md joins the instructions when a file under it is first read; a
// rules file that is a symlink out of the repository is never read; a
// large one is cut with a notice the user sees.
func TestBinaryRulesFilesReachTheSystemPrompt(t *testing.T) {
	winetest.NeedsRealWindows(t, winetest.Symlinks)
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	ws := filepath.Join(repo, "svc", "app")
	home := t.TempDir()
	write(t, filepath.Join(top, "AGENTS.md"), "ABOVE-THE-REPO: never included")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	write(t, filepath.Join(repo, "AGENTS.md"), "ROOT-RULES: run make test")
	write(t, filepath.Join(repo, "svc", "CLAUDE.md"), "SVC-CLAUDE: services use gRPC")
	write(t, filepath.Join(ws, "AGENTS.md"), "APP-RULES: app code is Go")
	write(t, filepath.Join(ws, "CLAUDE.md"), "APP-CLAUDE: shadowed by AGENTS.md")
	write(t, filepath.Join(ws, "sub", "AGENTS.md"), "NESTED-RULES: sub is generated")
	write(t, filepath.Join(ws, "sub", "x.txt"), "x")
	secret := filepath.Join(home, "secret.txt")
	write(t, secret, "SECRET-TOKEN-1234")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "evil"), 0o755))
	require.NoError(t, os.Symlink(secret, filepath.Join(ws, "evil", "AGENTS.md")))
	write(t, filepath.Join(ws, "evil", "y.txt"), "y")
	write(t, filepath.Join(ws, "big", "AGENTS.md"), "BIG-RULES "+strings.Repeat("b", 40<<10)+" BIG-TAIL")
	write(t, filepath.Join(ws, "big", "z.txt"), "z")
	write(t, filepath.Join(home, ".config", "acp-agent", "AGENTS.md"), "USER-RULES: answer in English")

	model := promptModel(t, map[string][]modelCall{
		"[read-sub]":  {{"read_file", map[string]any{"path": "sub/x.txt"}}},
		"[read-evil]": {{"read_file", map[string]any{"path": "evil/y.txt"}}},
		"[read-big]":  {{"read_file", map[string]any{"path": "big/z.txt"}}},
	})
	client := &messageClient{toolClient: newToolClient(ws, "allow_once")}
	cmd := exec.Command(agentBin, "--model", "openai/test-model")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	conn, sid := startE2EWith(t, cmd, client, ws, sdk.ClientCapabilities{})

	promptE2E(t, conn, sid, "[read-sub]")
	first := systemPrompt(t, model.body(t, 0))
	order := []string{"USER-RULES", "ROOT-RULES", "SVC-CLAUDE", "APP-RULES"}
	last := -1
	for _, want := range order {
		i := strings.Index(first, want)
		require.GreaterOrEqual(t, i, 0, "%s missing from the system prompt:\n%s", want, first)
		assert.Greater(t, i, last, "%s out of order", want)
		last = i
	}
	assert.Contains(t, first, filepath.Join(repo, "AGENTS.md"), "each file comes with its path")
	assert.NotContains(t, first, "ABOVE-THE-REPO")
	assert.NotContains(t, first, "APP-CLAUDE", "CLAUDE.md is read only where there is no AGENTS.md")
	assert.NotContains(t, first, "NESTED-RULES", "nested rules wait until a file under them is read")
	// Issue 26: the system prompt is not rewritten mid-session (prompt
	// caches); a nested rules file reaches the model in the result of the
	// call that reached its directory.
	assert.Equal(t, first, systemPrompt(t, model.body(t, 1)), "the system prompt stays as it was")
	readResult := lastToolResult(t, model.body(t, 1))
	assert.Contains(t, readResult, "NESTED-RULES", "reading sub/x.txt brings sub/AGENTS.md in, in the tool result")
	assert.Contains(t, readResult, "Rules files for the directories you just reached")
	assert.Contains(t, readResult, filepath.Join(ws, "sub", "AGENTS.md"))

	promptE2E(t, conn, sid, "[read-evil]")
	promptE2E(t, conn, sid, "[read-big]")
	model.mu.Lock()
	bodies := append([]string(nil), model.bodies...)
	model.mu.Unlock()
	for i, b := range bodies {
		assert.NotContains(t, b, "SECRET-TOKEN", "request %d carries the secret behind the symlinked AGENTS.md", i)
	}
	final := bodies[len(bodies)-1]
	assert.Equal(t, first, systemPrompt(t, final))
	big := lastToolResult(t, final)
	assert.Contains(t, big, "BIG-RULES")
	assert.NotContains(t, big, "BIG-TAIL", "the big file is cut")
	assert.Contains(t, big, "[... cut: the file is")
	assert.Contains(t, final, "NESTED-RULES", "nested rules stay in the conversation for the rest of the session")
	said := client.said()
	assert.Contains(t, said, filepath.Join(ws, "evil", "AGENTS.md")+" was not read", "the user is told about the refused file")
	assert.Contains(t, said, "only its first", "the user is told about the cut")
}

// rulesFiles: false in the config file leaves every rules file out.
func TestBinaryRulesFilesCanBeTurnedOff(t *testing.T) {
	repo := t.TempDir()
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	write(t, filepath.Join(repo, "AGENTS.md"), "ROOT-RULES")
	write(t, filepath.Join(home, ".config", "acp-agent", "config.json"), `{"rulesFiles": false}`)
	model := promptModel(t, nil)
	client := newToolClient(repo, "allow_once")
	cmd := exec.Command(agentBin, "--model", "openai/test-model")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	conn, sid := startE2EWith(t, cmd, client, repo, sdk.ClientCapabilities{})
	promptE2E(t, conn, sid, "hello")
	assert.NotContains(t, systemPrompt(t, model.body(t, 0)), "ROOT-RULES")
}
