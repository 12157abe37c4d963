//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// mkfifo makes a named pipe at path.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(path, 0o644))
}

// processAlive reports whether process pid exists (signal 0).
func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// killPID kills process pid at once (SIGKILL).
func killPID(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

// needsBash does nothing on Unix, where commands are bash lines.
func needsBash(*testing.T) {}

// needsSignals does nothing on Unix.
func needsSignals(*testing.T) {}

// killedByTest reports whether the agent died of a signal, which only a
// test sends.
func killedByTest(ee *exec.ExitError) bool {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

// stoppable does nothing on Unix: askToStop signals the process alone.
func stoppable(*exec.Cmd) {}

// askToStop sends p SIGTERM, as a service manager stops a server.
func askToStop(p *os.Process) error { return p.Signal(syscall.SIGTERM) }

// shLine is a test's command line for the shell the agent runs: bash
// here, cmd.exe on Windows (with shellArgs).
func shLine(bash, _ string) string { return bash }

// echoed is what the shell's echo writes for text.
func echoed(text string) string { return text + "\n" }

// shellArgs are the agent's flags for shLine's shell: none, bash is the
// only one on Unix.
func shellArgs(*testing.T) []string { return nil }
