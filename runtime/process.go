package runtime

import "os/exec"

// Helpers for processes the agent starts outside a LocalTerminal (MCP
// servers): the OS-specific parts live in process_unix.go and
// process_windows.go.

// PrepareGroup makes cmd, before it starts, the leader of a process group
// of its own (Unix), or a process without a console window in a process
// group of its own (Windows), so signals for the agent's terminal do not
// reach it and KillGroup can end what it leaves behind.
func PrepareGroup(cmd *exec.Cmd) { prepareGroup(cmd) }

// KillGroup kills what is left of the process group led by the (already
// reaped) process pid, on Unix; a group that is gone is not an error.
// Windows has no process groups to signal: it does nothing there.
func KillGroup(pid int) { killGroup(pid) }

// ExitedCleanly reports whether a child's exit error is one a shutdown
// need not report: it exited by itself (with any status) or obeyed
// SIGTERM, rather than being killed or left running.
func ExitedCleanly(err error) bool { return exitedCleanly(err) }

// NotDumpable makes the agent's memory and environment (its API keys)
// unreadable by other processes of the user through /proc or ptrace
// without CAP_SYS_PTRACE (Linux); elsewhere it does nothing.
func NotDumpable() { notDumpable() }
