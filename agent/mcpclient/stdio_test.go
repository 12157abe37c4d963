//go:build linux

package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callInt calls a child tool that answers with a number.
func callInt(t *testing.T, m *Manager, name string) int {
	t.Helper()
	res, err := m.Call(context.Background(), name, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, res.Text)
	n, err := strconv.Atoi(res.Text)
	require.NoError(t, err)
	return n
}

// processGone reports whether pid no longer runs: it does not exist, or it
// is a zombie waiting for a parent that is not us (a killed grandchild is
// reparented to init, which may not reap it at once).
func processGone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

func requireGone(t *testing.T, pid int, what string) {
	t.Helper()
	require.Eventually(t, func() bool { return processGone(pid) }, 5*time.Second, 10*time.Millisecond,
		"%s (pid %d) outlived Close", what, pid)
}

func TestStdioChildStderrGoesToLoggerAndNeverToOurStdout(t *testing.T) {
	log, logs := newTestLogger()
	m, failures := connect(t, []Server{childServer(t, "child", childServe)}, Options{Logger: log})
	require.Empty(t, failures)
	assert.Equal(t, []string{"mcp__child__crash", "mcp__child__echo", "mcp__child__env", "mcp__child__pid", "mcp__child__spawn"}, toolNames(m.Tools()))

	res, err := m.Call(context.Background(), "mcp__child__echo", json.RawMessage(`{"message":"hi"}`))
	require.NoError(t, err)
	assert.Equal(t, "Echo: hi", res.Text)
	pid := callInt(t, m, "mcp__child__pid")

	// The child's stdout and stderr are pipes of ours, not our stdout.
	ourStdout, err := os.Readlink("/proc/self/fd/1")
	require.NoError(t, err)
	for _, fd := range []int{1, 2} {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(target, "pipe:"), "child fd %d is %s", fd, target)
		assert.NotEqual(t, ourStdout, target, "child fd %d is our stdout", fd)
	}

	require.NoError(t, m.Close())
	requireGone(t, pid, "the child")
	out := logs.String()
	assert.Contains(t, out, `msg="mcp server stderr" mcp_server=child line="`+childStderrLine+`"`)
	assert.Contains(t, out, `line="echo called with hi"`)
	assert.Contains(t, out, `line="child exiting"`, "a last line without newline is logged at Close")
}

func TestStdioChildGetsMinimalEnvPlusConfiguredEnv(t *testing.T) {
	t.Setenv("MCPCLIENT_TEST_SECRET", "leak")
	m, failures := connect(t, []Server{childServer(t, "child", childServe,
		EnvVariable{Name: "GIVEN", Value: "by client"},
		EnvVariable{Name: "HOME", Value: "/client/home"},
	)}, Options{})
	require.Empty(t, failures)
	env := func(name string) string {
		res, err := m.Call(context.Background(), "mcp__child__env", json.RawMessage(`{"name":"`+name+`"}`))
		require.NoError(t, err)
		return res.Text
	}
	assert.Equal(t, "by client", env("GIVEN"))
	assert.Equal(t, "/client/home", env("HOME"), "the client's value wins")
	assert.Equal(t, os.Getenv("PATH"), env("PATH"))
	assert.Equal(t, "<unset>", env("MCPCLIENT_TEST_SECRET"), "the agent's other variables are not passed on")
}

func TestCloseLeavesNoProcessBehind(t *testing.T) {
	// stubborn ignores stdin EOF and SIGTERM, so Close must get to SIGKILL;
	// both children leave a grandchild in their process group.
	m, failures := connect(t, []Server{
		childServer(t, "polite", childServe),
		childServer(t, "stubborn", childStubborn),
	}, Options{})
	require.Empty(t, failures)
	pids := map[string]int{
		"polite child":          callInt(t, m, "mcp__polite__pid"),
		"polite's grandchild":   callInt(t, m, "mcp__polite__spawn"),
		"stubborn child":        callInt(t, m, "mcp__stubborn__pid"),
		"stubborn's grandchild": callInt(t, m, "mcp__stubborn__spawn"),
	}
	for what, pid := range pids {
		require.False(t, processGone(pid), "%s runs before Close", what)
	}

	start := time.Now()
	err := m.Close()
	elapsed := time.Since(start)
	// Only stubborn fails to shut down cleanly: it had to be killed.
	require.Error(t, err)
	assert.ErrorContains(t, err, `mcp server "stubborn": closing`)
	assert.NotContains(t, err.Error(), "polite")
	assert.Less(t, elapsed, 3*time.Second, "the ladder is bounded")
	for what, pid := range pids {
		requireGone(t, pid, what)
	}
}

func TestCrashedStdioServerIsDroppedAndReported(t *testing.T) {
	changed := make(chan struct{}, 10)
	log, logs := newTestLogger()
	m, failures := connect(t, []Server{
		childServer(t, "crashy", childServe),
		childServer(t, "steady", childServe),
	}, Options{Logger: log, OnToolsChanged: func() { changed <- struct{}{} }})
	require.Empty(t, failures)
	pid := callInt(t, m, "mcp__crashy__pid")

	_, err := m.Call(context.Background(), "mcp__crashy__crash", nil)
	require.Error(t, err, "the connection broke during the call")
	assert.ErrorContains(t, err, `mcp server "crashy"`)
	waitChanged(t, changed)

	for _, tool := range m.Tools() {
		assert.Equal(t, "steady", tool.Server)
	}
	st := m.Servers()
	assert.False(t, st[0].Connected)
	assert.ErrorIs(t, st[0].Err, ErrDisconnected)
	assert.True(t, st[1].Connected)
	_, err = m.Call(context.Background(), "mcp__crashy__echo", nil)
	assert.ErrorIs(t, err, ErrUnknownTool)
	assert.Positive(t, callInt(t, m, "mcp__steady__pid"), "the other server still answers")
	assert.Contains(t, logs.String(), "mcp server disconnected")

	require.NoError(t, m.Close(), "a server that already went away is not a Close error")
	requireGone(t, pid, "the crashed child")
}

func TestCallsRunConcurrentlyOnOneStdioServer(t *testing.T) {
	m, failures := connect(t, []Server{childServer(t, "child", childServe)}, Options{})
	require.Empty(t, failures)
	const n = 20
	errs := make(chan error, n)
	for i := range n {
		go func() {
			msg := strconv.Itoa(i)
			res, err := m.Call(context.Background(), "mcp__child__echo", json.RawMessage(`{"message":"`+msg+`"}`))
			if err == nil && res.Text != "Echo: "+msg {
				err = fmt.Errorf("got %q for %s", res.Text, msg)
			}
			errs <- err
		}()
	}
	for range n {
		assert.NoError(t, <-errs)
	}
}

// Kill(pid, 0) is what a careless check would use; make sure our helper
// agrees with it for a process we reaped ourselves.
func TestProcessGoneAgreesWithKillForReapedChild(t *testing.T) {
	m, failures := connect(t, []Server{childServer(t, "child", childServe)}, Options{})
	require.Empty(t, failures)
	pid := callInt(t, m, "mcp__child__pid")
	require.NoError(t, m.Close())
	assert.True(t, processGone(pid))
	assert.True(t, errors.Is(syscall.Kill(pid, 0), syscall.ESRCH))
}
