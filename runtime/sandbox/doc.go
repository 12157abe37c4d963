// Package sandbox confines the commands the agent runs, on Linux, with
// Landlock (filesystem, TCP, IPC scopes) and seccomp (sockets other than
// Unix, ptrace, process_vm_*, io_uring_*), under no_new_privs.
//
// The agent process is never restricted. A confined command starts as the
// agent's own binary re-executed in a helper mode (Command builds the
// argv; Main runs it): the helper becomes a child subreaper, restricts one
// locked OS thread and forks the command from it, so the restrictions hold
// for the command and everything it starts; when the command exits, the
// helper kills whatever it left behind (setsid grandchildren included,
// since orphans are reparented to the subreaper) and exits with the
// command's status.
//
// What a Policy grants: read and execute everywhere except the denied
// paths (Landlock only grants, so the read set is built by granting
// around each denied entry); write only to the writable roots (without
// their .git unless AllowGitWrites), the extra writable paths, the
// temporary directory and a few character devices (/dev/null, ...);
// network only when Network is set. Probe says whether the kernel can do
// it; where it cannot, callers must not pretend to confine.
//
// Functions here are safe for concurrent use; Main is meant to be called
// first thing in main and never returns when it recognises its argv.
package sandbox
