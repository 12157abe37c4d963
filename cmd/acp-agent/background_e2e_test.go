package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// lastToolResult is the content of the last tool message of an OpenAI
// request body.
func lastToolResult(t *testing.T, body string) string {
	t.Helper()
	msgs := chatMessages(t, body)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "tool" {
			s, _ := msgs[i].Content.(string)
			return s
		}
	}
	t.Fatalf("no tool result in %s", tail(body, 500))
	return ""
}

// Issue 17: run_command with background: true returns at once with an
// id; background_command reads the new output (waiting for it), lists the
// commands and stops one; the sandbox confines them like any command;
// they end with the session.
func TestBinaryBackgroundCommands(t *testing.T) {
	needsBash(t)
	dir, home := t.TempDir(), t.TempDir()
	sandboxed := sandbox.Probe().Available
	escape := filepath.Join(home, "escaped")
	model := promptModel(t, map[string][]modelCall{
		"[start]":  {{"run_command", map[string]any{"command": "echo started; while true; do echo tick; sleep 0.2; done", "background": true}}},
		"[escape]": {{"run_command", map[string]any{"command": "touch " + escape + "; echo touch-status-$?", "background": true}}},
		"[output]": {{"background_command", map[string]any{"action": "output", "id": "bg1", "wait_seconds": 5}}},
		"[again]":  {{"background_command", map[string]any{"action": "output", "id": "bg1", "wait_seconds": 5}}},
		"[list]":   {{"background_command", map[string]any{"action": "list"}}},
		"[escout]": {{"background_command", map[string]any{"action": "output", "id": "bg2", "wait_seconds": 5}}},
		"[stop]":   {{"background_command", map[string]any{"action": "stop", "id": "bg1"}}},
		"[nosuch]": {{"background_command", map[string]any{"action": "output", "id": "bg99"}}},
		"[sleep]":  {{"run_command", map[string]any{"command": "exec sleep 300", "background": true}}},
	})
	mode := "off"
	if sandboxed {
		mode = "on"
	}
	client := newToolClient(dir, "allow_once")
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--mode", "full-access", "--sandbox", mode, "--sandbox-network=false", "--session-dir", t.TempDir())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	conn, sid := startE2E(t, cmd, client, sdk.ClientCapabilities{})
	n := 0
	run := func(key string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
		defer cancel()
		start := time.Now()
		_, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: []sdk.ContentBlock{sdk.TextBlock(key)}})
		require.NoError(t, err)
		require.Less(t, time.Since(start), time.Minute, "%s returned before the 2-minute command timeout", key)
		out := lastToolResult(t, model.body(t, 2*n+1))
		n++
		return out
	}

	out := run("[start]")
	assert.Contains(t, out, "as bg1", "the start returns at once with an id")
	assert.Contains(t, out, "started")
	assert.Contains(t, out, "[bg1 is running")

	out = run("[output]")
	assert.Contains(t, out, "tick", "new output since the last read")
	assert.NotContains(t, out, "started", "output already read is not repeated")
	assert.Contains(t, out, "[bg1 is running")
	out = run("[again]")
	assert.Contains(t, out, "tick")

	out = run("[escape]")
	assert.Contains(t, out, "as bg2")
	if !regexp.MustCompile(`touch-status-\d`).MatchString(out) {
		out += run("[escout]") // it had not answered within the start's grace
	}
	if sandboxed {
		assert.Regexp(t, `touch-status-[1-9]`, out, "the write outside the workspace failed")
	} else {
		assert.Contains(t, out, "touch-status-0")
	}
	out = run("[list]")
	assert.Contains(t, out, "bg1: echo started")
	assert.Contains(t, out, "bg2: touch")

	out = run("[stop]")
	assert.Contains(t, out, "bg1")
	assert.NotContains(t, out, "is running", "stop waits for the end")
	assert.Contains(t, run("[list]"), "bg1: echo started")
	assert.Contains(t, run("[nosuch]"), `no background command "bg99"`)

	out = run("[sleep]")
	m := regexp.MustCompile(`\(pid (\d+)\)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	pid, _ := strconv.Atoi(m[1])
	require.True(t, processAlive(pid), "the background command runs")

	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	_, err := conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: sid})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !processAlive(pid) },
		10*time.Second, 50*time.Millisecond, "the background command ended with the session")
	if sandboxed {
		_, err := os.Stat(escape)
		assert.True(t, os.IsNotExist(err), "the sandbox confined the background command")
	}
}
