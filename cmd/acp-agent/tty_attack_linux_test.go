//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A confined command run by `acp-agent exec` in the user's terminal
// opened /dev/tty (the agent's controlling terminal, which it shared) and
// wrote to it what exec never prints: an OSC 52 escape that sets the
// clipboard, past exec's replacement of control characters. Commands now
// start in a session of their own, with no controlling terminal: /dev/tty
// is no device for them.
func TestBinaryConfinedCommandHasNoControllingTerminal(t *testing.T) {
	requireSandbox(t)
	master, tty := openPTY(t)
	defer master.Close()
	dir := t.TempDir()
	line := `if exec 3<>/dev/tty; then printf 'TTY-OPEN\033]52;c;cm0gLXJmIH4=\a' >&3; echo TTY-OPENED; else echo TTY-REFUSED; fi`
	script := commandScript(t, map[string]string{"go": line})
	cmd := exec.Command(agentBin, "exec", "--model", "replay/"+script, "--allow", "all", "--sandbox", "on", "go")
	cmd.Dir = dir
	cmd.Env = agentEnv(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, &stderr
	// The user's shell starts exec in the terminal: it is the session's
	// controlling terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, cmd.Start())
	tty.Close()
	var seen syncWriter
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&seen, master)
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "stderr: %s", stderr.String())
	case <-time.After(waitBudget(t)):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("exec did not end")
	}
	master.Close()
	<-copied
	assert.Contains(t, stdout.String(), "TTY-REFUSED", "stdout: %s", stdout.String())
	assert.NotContains(t, seen.String(), "\x1b]52", "a confined command wrote an escape sequence to the user's terminal")
	assert.NotContains(t, seen.String(), "TTY-OPEN")
}

// The user's other terminals (/dev/pts/N: a shell, the editor's terminal
// panel) are the user's files, readable through the sandbox's read grant
// on /: a confined command read what the user typed there (a sudo
// password) before the device nodes but a few harmless ones were taken
// out of the read grants. In every mode.
func TestBinaryConfinedCommandCannotReadTheUsersTerminals(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) { readUsersTerminal(t, m) })
	}
}

func readUsersTerminal(t *testing.T, m sandboxMode) {
	master, tty := openPTY(t)
	defer master.Close()
	defer tty.Close()
	name, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", tty.Fd()))
	require.NoError(t, err)
	if m.uid >= 0 {
		require.NoError(t, os.Chown(name, m.uid, m.gid))
	}
	// The user types a password at a prompt in that terminal.
	_, err = master.Write([]byte("SUDO-PASSWORD-typed\n"))
	require.NoError(t, err)
	dir, home := userDir(t, m), userDir(t, m)
	line := "timeout 5 head -n1 " + name + "; echo READ-DONE"
	model := promptModel(t, map[string][]modelCall{"[go]": {{"run_command", map[string]any{"command": line}}}})
	conn, sid, _ := sandboxSessionAs(t, m, model, dir, home)
	promptE2E(t, conn, sid, "[go]")
	result := toolResults(t, model.body(t, 1))
	require.Contains(t, result, "READ-DONE")
	assert.NotContains(t, result, "SUDO-PASSWORD", "a confined command read the user's terminal")
	// What the user typed is still there for the program reading it.
	fd := int(tty.Fd())
	require.NoError(t, unix.SetNonblock(fd, true))
	buf := make([]byte, 64)
	n, _ := unix.Read(fd, buf)
	assert.True(t, strings.Contains(string(buf[:max(n, 0)]), "SUDO-PASSWORD"), "the terminal kept its input: %q", buf[:max(n, 0)])
}
