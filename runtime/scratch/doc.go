// Package scratch provides the agent process's scratch directory under the
// system temporary directory (os.TempDir): the parent of the confined
// commands' TMPDIRs and of the pinned copies of project hooks, so that what
// an agent killed with SIGKILL (an editor quitting hard, the OOM killer)
// leaves there is found and removed by a later agent.
//
// # Layout and liveness
//
// A process's directory is <TMPDIR>/acp-agent-run-<pid>-<random>, mode
// 0700, made on first use (MkdirTemp). Its owner holds an exclusive
// flock(2) on the directory itself for as long as the process lives: the
// kernel drops it when the process dies, however it dies. The directory is
// made under a staging name (.acp-agent-new-…), locked, and only then
// renamed to its final name, so a directory under the final name whose
// lock is free is never one being made: its owner is gone.
//
// RemoveStale, run by every agent in the background after it starts,
// removes the directories whose lock it can take (it holds the lock while
// it removes them), and staging directories left by an agent killed
// between its mkdir and its rename once they are a minute old. It never
// follows a symlink (an entry that is not a directory owned by this user
// is left alone; os.RemoveAll removes links, not their targets), never
// touches a directory whose lock is held (another live agent's), and
// does bounded work: it reads at most MaxListed entries of the temporary
// directory and removes at most MaxRemoved directories per call.
// A directory a command left read-only inside is made writable (by its
// owner, who is this user) so that it can be removed (RemoveAll).
// Directories of older versions (acp-agent-cmd-*, acp-agent-hooks-*),
// which have no lock, are left alone: nothing proves their agent is gone.
//
// Release removes the process's directory when nothing is left in it
// (the workspaces removed their own directories); the agent calls it at
// exit (stdin closed, SIGTERM, SIGINT).
//
// On Windows there is no sandbox and so no command TMPDIR; the directory
// is made the same way but not locked, and RemoveStale does nothing.
//
// # Concurrency
//
// All functions are safe for concurrent use; the process's directory is
// shared by every caller in the process, under one mutex. RemoveStale
// starts no goroutines.
package scratch
