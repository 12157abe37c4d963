//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// procStart is when process pid started, in clock ticks since boot
// (/proc/PID/stat's 22nd field).
func procStart(t *testing.T, stat string) int {
	t.Helper()
	// pid (comm) state ppid ...: the fields after comm start at the 3rd.
	rest := stat[strings.LastIndexByte(stat, ')')+1:]
	fields := strings.Fields(rest)
	require.Greater(t, len(fields), 19, "stat: %q", stat)
	n, err := strconv.Atoi(fields[19])
	require.NoError(t, err)
	return n
}

// The sandbox helper does not start when the session opens (it would take
// CPU from a first turn that runs no command) but is still started ahead
// of the session's first command: here the model thinks for a second
// before its run_command call, and the helper the command runs in was
// started 200 ms after the session opened, at least 300 ms before the
// command (started when the call was named, it would be 30-50 ms: its
// start-up, which the command waited for). When exec exits, the helper is
// gone too.
func TestBinaryFirstCommandFindsItsSandboxHelperStarted(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"events": []any{map[string]any{"delayMs": 1000, "toolCall": map[string]any{"id": "c1", "name": "run_command",
			"arguments": map[string]any{"command": "cat /proc/$PPID/stat > helper.stat; cat /proc/self/stat > command.stat"}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	_, stderr, code := runExecBin(t, dir, "", nil, "--mode", "full-access", "--model", "replay/"+script, "look")
	require.Equal(t, 0, code, stderr)
	helper, err := os.ReadFile(filepath.Join(dir, "helper.stat"))
	require.NoError(t, err, stderr)
	command, err := os.ReadFile(filepath.Join(dir, "command.stat"))
	require.NoError(t, err, stderr)
	require.Contains(t, string(helper), "(acp-agent)", "the command's parent is the sandbox helper")
	// Clock ticks are 10 ms (USER_HZ 100).
	started := procStart(t, string(command)) - procStart(t, string(helper))
	assert.GreaterOrEqual(t, started, 30, "the helper started %d0 ms before the first command", started)

	// Nothing is left running: the helper died with the agent.
	pid, err := strconv.Atoi(strings.Fields(string(helper))[0])
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return !processAlive(pid) }, waitBudget(t), 10*time.Millisecond,
		"the sandbox helper %d outlived exec", pid)
}
