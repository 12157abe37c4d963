package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

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
