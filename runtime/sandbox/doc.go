// Package sandbox confines the commands the agent runs, on Linux, with
// Landlock (filesystem, TCP, IPC scopes) and a seccomp filter of its own
// (seccomp_linux.go: the native architecture only, endpoints refused with
// the network off, no way into other processes, namespaces, keyrings,
// io_uring, bpf, mounts), under no_new_privs and with no capabilities.
//
// The agent process is never restricted. A Launcher keeps helper
// processes: the agent's own binary re-executed in a helper mode (Main
// runs it), talking to the agent over a socketpair. A helper is a child
// subreaper and runs one command at a time: for each request it restricts
// a fresh locked OS thread with the request's Policy and forks the command
// from it, so the restrictions hold for the command and everything it
// starts while the helper's other threads stay free; when the command
// exits, the helper kills whatever it left behind (setsid grandchildren
// included, since orphans are reparented to the subreaper), reports the
// wait status, and the restricted thread ends. Helpers are kept for later
// commands, which is what makes a confined command cost about as much as
// an unconfined one. A command started in a cgroup takes one more step:
// clone3 (CLONE_INTO_CGROUP) is refused by the filter, so the thread gets
// everything but the filter and a second stage of the binary loads it and
// execs the command.
//
// What a Policy grants: read and execute everywhere except the denied
// paths and the secrets files under the writable roots (.env, .env.* at
// any depth; Landlock only grants, so the read set is built by granting
// around each denied entry, and a directory holding only denied files
// stays listable); write only to the writable roots (without their .git
// unless AllowGitWrites), the extra writable paths, the temporary
// directory and a few character devices (/dev/null, ...), all around the
// denied entries too; endpoints (sockets, SysV IPC, message queues) only
// when Network is set. Probe says whether the kernel can do
// it; where it cannot, callers must not pretend to confine.
//
// Launcher and Proc are safe for concurrent use; a Launcher owns one
// reader goroutine per helper, and Close ends the helpers (killing their
// commands) and waits for those goroutines. Main is meant to be called
// first thing in main and never returns when it recognises its argv.
package sandbox
