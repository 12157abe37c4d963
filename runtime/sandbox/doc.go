// Package sandbox confines the commands the agent runs, on Linux, with
// Landlock (filesystem, TCP, IPC scopes) and a seccomp filter of its own
// (seccomp_linux.go: the native architecture only, endpoints refused with
// the network off, no way into other processes, namespaces, keyrings,
// io_uring, bpf, mounts, no signal to the helper thread the command was
// forked from, which shares its Landlock domain), under no_new_privs and
// with no capabilities.
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
// paths, the secrets files under the writable roots (.env, .env.* at
// any depth) and the device nodes (the user's terminals, disks) but a
// few; write only to the writable roots (without their .git
// unless AllowGitWrites), the extra writable paths, the temporary
// directory and a few character devices (/dev/null, ...); endpoints
// (sockets, SysV IPC, message queues) only when Network is set. Where the
// helper may mount (the agent as root, or a helper started in a user
// namespace of its own: the agent's ids mapped to themselves, mount
// capabilities in that namespace only), each command's thread gets a
// private mount namespace in which the denied paths are masked by empty
// mode-000 mounts, .git is a read-only bind mount, and the directories
// between a root and a denied path are pinned (mounts_linux.go); Landlock
// then grants / and the roots whole. Elsewhere (no user namespaces, or
// ACP_AGENT_SANDBOX_MOUNTS=off), Landlock only grants, so the rights are
// granted around each denied entry and .git: a directory holding one has
// no rights of its own (nothing new can be created directly in it; one
// holding only denied files stays listable). Probe says whether the
// kernel can confine and how; where it cannot confine, callers must not
// pretend to.
//
// Launcher.Warm (called when a command may be coming) makes sure the process
// has a spare helper, started ahead of the first command and told the
// workspace roots so it lists their secrets files meanwhile; the first
// Launcher that needs a helper and has none idle takes it. The spare is
// no Launcher's until taken: no goroutine reads it, and it ends with the
// process (its socket closes, Pdeathsig SIGTERM: a helper ending so kills
// its command and what that left first) or with StopSpare.
//
// Launcher and Proc are safe for concurrent use; a Launcher owns one
// reader goroutine per helper, and Close ends the helpers (killing their
// commands) and waits for those goroutines. Main is meant to be called
// first thing in main and never returns when it recognises its argv.
package sandbox
