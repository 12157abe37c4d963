package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// everything returns node and @modelcontextprotocol/server-everything's
// dist/index.js (installed by .ci/run), or skips the test.
func everything(t *testing.T) (node, index string) {
	t.Helper()
	index = os.Getenv("ACP_AGENT_MCP_EVERYTHING")
	if index == "" {
		index = filepath.Join("..", "..", ".ci", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	}
	index, err := filepath.Abs(index)
	require.NoError(t, err)
	if _, err := os.Stat(index); err != nil {
		t.Skipf("server-everything not installed (%v): run `npm ci --prefix .ci` in the repo root (.ci/run does)", err)
	}
	if node, err = exec.LookPath("node"); err != nil {
		t.Skipf("server-everything is installed but node is not on PATH: %v", err)
	}
	return node, index
}

// stopServer ends a server process the test started: SIGTERM, then
// SIGKILL if it is still there after 5 s; it returns once it was waited
// for.
func stopServer(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// everythingHTTP starts server-everything over streamable HTTP and
// returns its endpoint.
func everythingHTTP(t *testing.T, node, index string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var out syncWriter
	cmd := exec.Command(node, index, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { stopServer(cmd) })
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, waitBudget(t), 50*time.Millisecond, "server-everything did not listen")
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// Issue 8: the real npm server-everything over stdio and streamable
// HTTP, through the built binary and an independent client: echo is
// listed, called through a permission prompt, and its result reaches the
// model.
func TestBinaryMCPServerEverything(t *testing.T) {
	node, index := everything(t)
	transports := map[string]func() sdk.McpServer{
		"stdio": func() sdk.McpServer {
			return sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: "everything", Command: node, Args: []string{index, "stdio"}, Env: []sdk.EnvVariable{}}}
		},
		"streamable http": func() sdk.McpServer {
			return sdk.McpServer{Http: &sdk.McpServerHttpInline{Name: "everything", Url: everythingHTTP(t, node, index), Headers: []sdk.HttpHeader{}, Type: "http"}}
		},
	}
	for name, server := range transports {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			model := newScriptedModel(t, "openai", modelCall{"mcp__everything__echo", map[string]any{"message": "hi from acp"}})
			client := newToolClient(dir, "allow_once")
			conn, _ := e2eSession(t, "openai", model, client, sdk.ClientCapabilities{})
			ctx := t.Context()
			sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{server()}})
			require.NoError(t, err)
			assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sess.SessionId, "echo something"))
			require.Len(t, client.permissions, 1, "the MCP call went through a permission prompt")
			require.NotNil(t, client.permissions[0].ToolCall.Title)
			assert.Contains(t, *client.permissions[0].ToolCall.Title, "everything")
			u, ok := client.final("call_0")
			require.True(t, ok)
			assert.Equal(t, sdk.ToolCallStatusCompleted, *u.Status)
			assert.Contains(t, toolText(u), "Echo: hi from acp")
			assert.Contains(t, model.body(t, 0), "mcp__everything__echo", "the tool was offered to the model")
			assert.Contains(t, model.body(t, 1), "Echo: hi from acp", "its result reached the model")
		})
	}
}
