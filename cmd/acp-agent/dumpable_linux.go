package main

import "golang.org/x/sys/unix"

// notDumpable makes the agent not dumpable: other processes of the user (a
// command the agent ran, among them) cannot read its memory or environment,
// where the API keys are, through /proc or ptrace without CAP_SYS_PTRACE,
// which confined commands do not have.
func notDumpable() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
