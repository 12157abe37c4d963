package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modeSwitchingClient switches the session to read-only when it is
// first asked for permission, then allows: the user stopping edits while
// a call waits.
type modeSwitchingClient struct {
	*toolClient
	once      sync.Once
	mu        sync.Mutex
	conn      *sdk.ClientSideConnection
	sid       sdk.SessionId
	switchErr error
}

func (c *modeSwitchingClient) RequestPermission(ctx context.Context, req sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.once.Do(func() {
		c.mu.Lock()
		conn, sid := c.conn, c.sid
		c.mu.Unlock()
		_, err := conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sid, ModeId: "read-only"})
		c.mu.Lock()
		c.switchErr = err
		c.mu.Unlock()
	})
	return c.toolClient.RequestPermission(ctx, req)
}

// The user switches a session to read-only while its turn runs (here,
// while a command waits for its answer): no later tool call of the turn
// edits, the session's own and a subagent's alike. The subagent had
// taken the parent's mode when it started and kept it, so it went on
// writing files after the user had made the session read-only.
func TestBinaryReadOnlyChosenMidTurnHoldsForSubagents(t *testing.T) {
	needsBash(t)
	for _, v := range []struct {
		name  string
		calls map[string][]modelCall
	}{
		{name: "session", calls: map[string][]modelCall{
			"[go]": {{"run_command", map[string]any{"command": "true"}}, {"write_file", map[string]any{"path": "after.txt", "content": "x"}}},
		}},
		{name: "subagent", calls: map[string][]modelCall{
			"[go]":    {{"task", map[string]any{"description": "worker", "prompt": "[child] do it"}}},
			"[child]": {{"run_command", map[string]any{"command": "true"}}, {"write_file", map[string]any{"path": "after.txt", "content": "x"}}},
		}},
	} {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			model := promptModel(t, v.calls)
			client := &modeSwitchingClient{toolClient: newToolClient(dir, "allow_once")}
			cmd := exec.Command(agentBin, "--model", "openai/test-model", "--mode", "accept-edits")
			cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
			conn, sid := startE2EWith(t, cmd, client, dir, sdk.ClientCapabilities{})
			client.mu.Lock()
			client.conn, client.sid = conn, sid
			client.mu.Unlock()
			promptE2E(t, conn, sid, "[go]")
			client.mu.Lock()
			require.NoError(t, client.switchErr, "switching to read-only")
			client.mu.Unlock()
			client.toolClient.mu.Lock()
			asked := len(client.toolClient.permissions)
			client.toolClient.mu.Unlock()
			require.Equal(t, 1, asked, "the command asked once")
			_, err := os.Stat(filepath.Join(dir, "after.txt"))
			assert.True(t, os.IsNotExist(err), "a file was written after the session was made read-only")
		})
	}
}
