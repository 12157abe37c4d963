//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A confined command goes after the sandbox helper that started it: it
// leaves a setsid'd daemon behind and signals each of the helper's
// threads (testdata/killhelper.c) every way Linux has: tgkill, tkill,
// kill and rt_sigqueueinfo with the thread's id, rt_tgsigqueueinfo, a
// pidfd from pidfd_open or a /proc/<tid> directory, and a pipe's SIGIO
// owner (F_SETOWN, F_SETOWN_EX) with F_SETSIG's signal. The thread the
// command was forked from shares the command's Landlock domain, which
// the signal scope lets through: SIGKILL on it took the whole helper, and
// the daemon, reparented past the dead subreaper, outlived the command,
// the session and the agent, in a mount namespace where a .env made
// later is not masked, and read it; SIGSTOP froze the helper, and with
// it the agent's turn past the command's timeout. Signal 0 asks only
// whether each way is permitted, so every way is seen refused on its
// own. Every one must be refused, the command must end as usual, and the
// daemon must be gone when it has: a .env made afterwards is never read.
func TestBinaryConfinedCommandCannotSignalItsHelper(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		for _, sig := range []syscall.Signal{0, syscall.SIGKILL, syscall.SIGSTOP} {
			t.Run(fmt.Sprintf("%s/%d", m.name, sig), func(t *testing.T) { signalHelper(t, m, sig) })
		}
	}
}

func signalHelper(t *testing.T, m sandboxMode, sig syscall.Signal) {
	cc := cCompiler(t, "killhelper.c")
	dir, home := userDir(t, m), userDir(t, m)
	out, err := exec.Command(cc, "-O1", "-o", filepath.Join(dir, "killhelper"), "testdata/killhelper.c").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	chownTree(t, m, dir)
	env, stolen, pidfile := filepath.Join(dir, "sub", ".env"), filepath.Join(dir, "stolen"), filepath.Join(dir, "daemon.pid")
	t.Cleanup(func() {
		if data, err := os.ReadFile(pidfile); err == nil {
			if pid, err := strconv.Atoi(string(data)); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})

	line := fmt.Sprintf("./killhelper %d %s %s %s", sig, env, stolen, pidfile)
	model := promptModel(t, map[string][]modelCall{"[go]": {{"run_command", map[string]any{"command": line, "timeout_seconds": 20}}}})
	conn, sid, _ := sandboxSessionAs(t, m, model, dir, home)
	promptE2EWithin(t, conn, sid, "[go]", 45*time.Second)
	result := toolResults(t, model.body(t, 1))
	for _, l := range regexp.MustCompile(`[a-z_-]+ \d+: SIGNALLED`).FindAllString(result, -1) {
		t.Errorf("a signal reached the helper: %s", l)
	}
	assert.True(t, strings.Contains(result, "COMMAND-ENDS hits=0"), "the command ran to its end: %s", tail(result, 1500))

	data, err := os.ReadFile(pidfile)
	require.NoError(t, err, "the daemon started")
	pid, err := strconv.Atoi(string(data))
	require.NoError(t, err)
	assert.False(t, alive(pid), "the daemon %d outlived its command", pid)

	// A .env the user makes now is the next command's to mask; nothing
	// left from the last one may read it.
	write(t, env, "LATER_SECRET\n")
	chownTree(t, m, env)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && alive(pid) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	got, _ := os.ReadFile(stolen)
	assert.NotContains(t, string(got), "LATER_SECRET", "a daemon left by a confined command read a .env made later")
}

// cCompiler is the machine's C compiler, or skips t, which needs it to
// build program.
func cCompiler(t *testing.T, program string) string {
	t.Helper()
	for _, name := range []string{"cc", "gcc"} {
		if cc, err := exec.LookPath(name); err == nil {
			return cc
		}
	}
	t.Skipf("no C compiler (cc or gcc) to build %s: install gcc to run these attacks", program)
	return ""
}

// toolResults are the tool results in a model request's body.
func toolResults(t *testing.T, body string) string {
	t.Helper()
	return strings.Join(messagesOf(t, body, "tool"), "")
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(s[i+1:], " Z")
}

// A confined command's daemon (setsid, double fork) outlived an agent
// killed with SIGKILL (an editor quitting hard, the OOM killer): the
// helper died with the agent (Pdeathsig SIGKILL), the command with the
// helper, and the daemon, reparented past the dead subreaper, lived on in
// a mount namespace where a .env made later is not masked. The helper
// now ends what its command left when the agent goes, as when a command
// ends. In every mode.
func TestBinaryConfinedDaemonDiesWithAKilledAgent(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) { daemonOfAKilledAgent(t, m) })
	}
}

func daemonOfAKilledAgent(t *testing.T, m sandboxMode) {
	dir, home := userDir(t, m), userDir(t, m)
	pidfile := filepath.Join(dir, "daemon.pid")
	t.Cleanup(func() {
		if data, err := os.ReadFile(pidfile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	line := "setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' < /dev/null > /dev/null 2>&1 & sleep 300"
	model := promptModel(t, map[string][]modelCall{"[go]": {{"run_command", map[string]any{"command": line, "background": true}}}})
	conn, sid, agentPid := sandboxSessionAs(t, m, model, dir, home)
	promptE2E(t, conn, sid, "[go]")
	var pid int
	deadline := time.Now().Add(waitBudget(t))
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(pidfile); err == nil {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(data))); err == nil && alive(pid) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.True(t, pid > 0 && alive(pid), "the daemon started")
	require.NoError(t, syscall.Kill(agentPid, syscall.SIGKILL))
	deadline = time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && alive(pid) {
		time.Sleep(20 * time.Millisecond)
	}
	assert.False(t, alive(pid), "the daemon %d outlived the killed agent", pid)
}
