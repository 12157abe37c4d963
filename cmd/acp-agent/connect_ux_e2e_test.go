package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connectProc runs `acp-agent connect` with its token in a file, on
// pipes: what an editor starts as its agent.
type connectProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *syncWriter
	exited chan error
}

func startConnect(t *testing.T, url, token string) *connectProc {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))
	c := &connectProc{stderr: &syncWriter{}, exited: make(chan error, 1)}
	cmd := exec.Command(agentBin, "connect", "--token-file", tokenFile, url)
	cmd.Env = agentEnv(t)
	cmd, stdin, stdout := startPiped(t, cmd, c.stderr)
	c.cmd, c.stdin, c.stdout = cmd, stdin, bufio.NewReader(stdout)
	go func() { c.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case err := <-c.exited:
			c.exited <- err
		case <-time.After(waitBudget(t)):
			_ = cmd.Process.Kill()
			t.Errorf("connect did not exit within %s of stdin EOF", waitBudget(t))
		}
		if t.Failed() {
			t.Logf("connect stderr:\n%s", c.stderr.String())
		}
	})
	return c
}

// wait is connect's exit error, within the wait budget.
func (c *connectProc) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-c.exited:
		c.exited <- err
		return err
	case <-time.After(waitBudget(t)):
		t.Fatalf("connect did not exit within %s", waitBudget(t))
		return nil
	}
}

// TestConnectSaysWhenTheServerGoesAway: serve stops (or restarts) while
// an editor still runs `acp-agent connect` as its agent. connect used to
// exit 0 without a word, so the editor showed an agent that had simply
// ended; now it fails saying the server closed the connection and that
// the sessions are saved there, to be reopened.
func TestConnectSaysWhenTheServerGoesAway(t *testing.T) {
	s := startServe(t, nil)
	c := startConnect(t, s.url, s.token)
	_, err := c.stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n"))
	require.NoError(t, err)
	line, err := c.stdout.ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, line, `"protocolVersion":1`, "initialize went through")

	s.stop(t)
	err = c.wait(t)
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "connect fails when the server goes away with the editor still there: %v", err)
	msg := c.stderr.String()
	assert.Contains(t, msg, "closed the connection")
	assert.Contains(t, msg, "it stopped or restarted")
	assert.Contains(t, msg, "reopen the session")
	assert.NotContains(t, msg, "(closed)", "serve's bare close reason says nothing to a user")
}

// TestConnectSaysWhatIsWrongWithTheServer: the two ways a first connect
// fails most (a token that is not the server's, no server at the
// address) say what to do, not only the transport's words.
func TestConnectSaysWhatIsWrongWithTheServer(t *testing.T) {
	t.Run("wrong token", func(t *testing.T) {
		s := startServe(t, nil)
		c := startConnect(t, s.url, strings.Repeat("x", 43))
		require.Error(t, c.wait(t))
		msg := c.stderr.String()
		assert.Contains(t, msg, "401")
		assert.Contains(t, msg, "copy it again from the server's token file")
	})
	t.Run("nothing listening", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		c := startConnect(t, "http://"+addr+"/acp", strings.Repeat("x", 43))
		require.Error(t, c.wait(t))
		msg := c.stderr.String()
		assert.Contains(t, msg, "nothing is listening at "+addr)
		assert.Contains(t, msg, "is acp-agent serve running there")
	})
}
