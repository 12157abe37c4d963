//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
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

// agentChildren are the pids of pid's children named acp-agent (the
// sandbox helpers are the agent's binary re-executed).
func agentChildren(t *testing.T, pid int) []int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil // the agent is gone
	}
	var out []int
	for _, task := range tasks {
		data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/children")
		for _, f := range strings.Fields(string(data)) {
			comm, _ := os.ReadFile("/proc/" + f + "/comm")
			if strings.TrimSpace(string(comm)) == "acp-agent" {
				n, _ := strconv.Atoi(f)
				out = append(out, n)
			}
		}
	}
	return out
}

// The sandbox helper is started ahead of a first command only where a
// command can run: not in a read-only session (commands are refused
// there) nor where the editor's terminal runs the commands. A read-only
// session switched to full-access still runs its first command confined
// (the helper starts when the call is named). The control: a default
// session starts one 200 ms after it opens.
func TestBinarySandboxHelperIsWarmedOnlyWhereCommandsRun(t *testing.T) {
	requireSandbox(t)
	for _, v := range []struct {
		name string
		mode string
		caps sdk.ClientCapabilities
		want bool
	}{
		{name: "default mode", mode: "default", want: true},
		{name: "read-only mode", mode: "read-only"},
		{name: "editor terminal", mode: "default", caps: sdk.ClientCapabilities{Terminal: true}},
	} {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			model := stepModel(t,
				calls(modelCall{"run_command", map[string]any{"command": "echo ran > marker"}}),
				says("done"))
			cmd := exec.Command(agentBin, "--model", "openai/test-model", "--sandbox", "on", "--mode", v.mode)
			cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
			client := newToolClient(dir, "allow_once")
			conn, sid := startE2EWith(t, cmd, client, dir, v.caps)
			pid := cmd.Process.Pid
			if v.want {
				assert.Eventually(t, func() bool { return len(agentChildren(t, pid)) > 0 }, waitBudget(t), 10*time.Millisecond,
					"the helper is started ahead of the first command (control)")
				return
			}
			// Five times the warm-up delay: a timer that fires late on a
			// loaded machine could hide a helper, never make one appear.
			time.Sleep(5 * 200 * time.Millisecond)
			assert.Empty(t, agentChildren(t, pid), "a helper was started in a session where no command can run")
			if v.mode != "read-only" {
				return
			}
			_, err := conn.SetSessionMode(waitCtx(t), sdk.SetSessionModeRequest{SessionId: sid, ModeId: "full-access"})
			require.NoError(t, err)
			assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "go"))
			data, err := os.ReadFile(filepath.Join(dir, "marker"))
			require.NoError(t, err, "the first command ran after the mode changed")
			assert.Equal(t, "ran\n", string(data))
		})
	}
}
