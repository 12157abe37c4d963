package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/acp-agent/acp-agent/agent"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// everythingEnv names the dist/index.js of @modelcontextprotocol/server-everything.
const everythingEnv = "ACP_AGENT_MCP_EVERYTHING"

// everythingServer returns node and the path of server-everything's
// dist/index.js, or skips the test.
func everythingServer(t *testing.T) (node, index string) {
	t.Helper()
	index = os.Getenv(everythingEnv)
	if index != "" {
		// Asked for explicitly: a wrong path is an error, not a skip.
		_, err := os.Stat(index)
		require.NoError(t, err, "%s", everythingEnv)
	} else {
		// The package directory is agent/mcpclient.
		index = filepath.Join("..", "..", ".ci", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	}
	index, err := filepath.Abs(index)
	require.NoError(t, err)
	if _, err := os.Stat(index); err != nil {
		t.Skipf("server-everything not installed (%v); run `npm install --prefix .ci @modelcontextprotocol/server-everything@2026.8.31` in the repo root, or set %s to its dist/index.js", err, everythingEnv)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		t.Skipf("server-everything is installed but node is not on PATH: %v", err)
	}
	return node, index
}

func TestEverythingServerOverStdio(t *testing.T) {
	node, index := everythingServer(t)
	// Node takes about 0.4 s to exit after stdin closes: use the real grace.
	defer func(d time.Duration) { terminateGrace = d }(terminateGrace)
	terminateGrace = 2 * time.Second
	log, logs := newTestLogger()
	m, failures := connect(t, []Server{{Stdio: &StdioServer{
		Name: "everything", Command: node, Args: []string{index, "stdio"},
	}}}, Options{Logger: log})
	require.Empty(t, failures)
	checkEverything(t, m)
	require.NoError(t, m.Close())
	assert.Contains(t, logs.String(), "mcp server stderr", "its stderr banner reached the logger")
}

func TestEverythingServerOverStreamableHTTP(t *testing.T) {
	node, index := everythingServer(t)
	port := freePort(t)
	var out bytes.Buffer // never our stdout: that is where go test reports
	cmd := exec.Command(node, index, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 20*time.Second, 50*time.Millisecond, "server-everything did not listen on %s", addr)

	m, failures := connect(t, []Server{{HTTP: &HTTPServer{
		Name: "everything", URL: "http://" + addr + "/mcp",
		Headers: []HTTPHeader{{Name: "X-Test", Value: "1"}},
	}}}, Options{})
	require.Empty(t, failures)
	checkEverything(t, m)
	require.NoError(t, m.Close())
}

func checkEverything(t *testing.T, m *Manager) {
	t.Helper()
	names := toolNames(m.Tools())
	require.Contains(t, names, "mcp__everything__echo")
	for _, tool := range m.Tools() {
		if tool.Name == "echo" {
			assert.Contains(t, string(tool.InputSchema), `"message"`)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := m.Call(ctx, "mcp__everything__echo", json.RawMessage(`{"message":"hi"}`))
	require.NoError(t, err)
	assert.Equal(t, "Echo: hi", res.Text)
	assert.False(t, res.IsError)

	if !strings.Contains(strings.Join(names, " "), "mcp__everything__get-tiny-image") {
		return
	}
	res, err = m.Call(ctx, "mcp__everything__get-tiny-image", nil)
	require.NoError(t, err)
	assert.Contains(t, res.Text, "[image: image/png, ")
	var images int
	for _, b := range res.Content {
		if b.Type == agent.BlockImage {
			images++
		}
	}
	assert.Equal(t, 1, images)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
