package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"golang.org/x/sys/windows"
)

// mkfifo: Windows has no named pipes in the file system; the test's
// Unix attacks do not apply.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	t.Skip("FIFOs in the file system are Unix")
}

// processAlive reports whether process pid still runs.
func processAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, _ := windows.WaitForSingleObject(h, 0)
	return ev == uint32(windows.WAIT_TIMEOUT)
}

// killPID ends process pid at once (TerminateProcess).
func killPID(pid int) {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return
	}
	defer windows.CloseHandle(h)
	_ = windows.TerminateProcess(h, 1)
}

// needsBash skips a test whose command lines are bash, or whose checks
// are the bash command policy's: on Windows lines go to PowerShell or
// cmd.exe and are judged unparsed (each asks; approvals are exact), which
// the Windows tests cover.
func needsBash(t *testing.T) {
	t.Helper()
	t.Skip("bash command lines and their policy; Windows runs PowerShell or cmd.exe")
}

// needsSignals skips a test that sends the agent SIGINT or SIGTERM:
// Windows processes get neither from another process.
func needsSignals(t *testing.T) {
	t.Helper()
	t.Skip("Unix signals")
}

// killedByTest reports whether the agent ended as Process.Kill ends it
// (TerminateProcess, exit code 1); the agent itself exits 0 or 2.
func killedByTest(ee *exec.ExitError) bool { return ee.ExitCode() == 1 }

// stoppable starts cmd in a process group of its own, which askToStop
// can send CTRL_BREAK_EVENT to without reaching this test process.
func stoppable(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// askToStop sends p (started stoppable) CTRL_BREAK_EVENT, Ctrl+Break in
// its console, which Go delivers as os.Interrupt. It fails where the
// test has no console, and under Wine, whose GenerateConsoleCtrlEvent
// sends no CTRL_BREAK_EVENT.
func askToStop(p *os.Process) error {
	return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(p.Pid))
}

// shLine is a test's command line for the shell the agent runs: cmd.exe
// here (with shellArgs), bash on Unix.
func shLine(_, cmd string) string { return cmd }

// echoed is what the shell's echo writes for text: cmd.exe ends lines
// with CRLF.
func echoed(text string) string { return text + "\r\n" }

// shellArgs are the agent's flags for shLine's shell: cmd.exe also where
// PowerShell is installed, because the lines are cmd.exe's.
func shellArgs(t *testing.T) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shell.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"shell": "cmd"}`), 0o600))
	return []string{"--config", path}
}
