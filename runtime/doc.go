// Package runtime holds the local filesystem and terminal runtimes that
// the agent's tools use. It knows no protocol: the editor's runtimes
// (fs/* and terminal/*) are the ACP adapter's (agent/acpagent), which
// checks every path with a LocalFS (CheckRead, CheckWrite) before the
// editor sees it.
//
// LocalFS serves files locally, confined to a policy.FS with one os.Root
// per root. Each operation runs policy.FS.Resolve, then the os.Root method
// on the root-relative path, then checks the real path of the opened file
// (/proc/self/fd on Linux; elsewhere EvalSymlinks plus os.SameFile) against
// the same rules, so a symlink into .git or one swapped mid-call does not
// get through. Walks (ListDirectory, Glob, Grep) never follow symlinks and
// open each entry relative to its checked parent only if it is the inode
// that was listed. Writes are atomic (a temporary file in the same
// directory, fsync, rename, directory fsync); each directory is checked
// before it is created; writes refuse symlinks, hard-linked and
// write-protected files, and replace an existing file under its own name
// (a Windows 8.3 short name is checked as the long name it stands for). Reads refuse binary and non-UTF-8 files, files
// over the size cap, and hard-linked files unless WithHardLinkReads.
//
// LocalTerminal runs each command in its own process group with stdin
// from /dev/null and a minimal environment without secrets. A timeout or
// cancellation kills the whole group (SIGTERM, then SIGKILL after a
// grace period), and Wait is bounded even when grandchildren hold the
// output pipe. Output is one tail buffer of OutputByteLimit bytes, cut on
// a UTF-8 boundary, and the pipe keeps draining past the limit so a
// producer never blocks. A grandchild that calls setsid leaves the process
// group; with TerminalOptions.CgroupParent it is killed through its
// cgroup, otherwise only WaitDelay bounds the wait.
//
// Without TerminalOptions.Sandbox a command sees what the agent's user
// sees; with it, the terminal's sandbox.Launcher runs each command in a
// helper process under Landlock and seccomp, and kills everything the
// command left behind when it ends (docs/security.md). The policy decides
// what runs; the runtimes decide how.
//
// Concurrency: LocalFS and LocalTerminal are safe for concurrent use. Every goroutine a LocalTerminal starts is
// waited for by Release or Close.
package runtime
