// Package policy holds the agent's permission rules as pure decisions: no
// I/O (except the command resolver a caller injects), no clocks, and safe
// for concurrent use.
//
// Permissions: Decide turns a session Mode (read-only, default,
// accept-edits, full-access), the seed's PolicyMode (ask, allow, deny), the
// Action of a tool call (read, edit, execute, other) and a remembered
// Decision into a Verdict: allow, ask the user, deny (the mode forbids it;
// the model is told), or cancel (a remembered reject_always, or the deny
// policy: the seed's "cancelled", which ends the turn). Read-only is a hard
// guarantee: nothing remembered gets an edit or a command past it.
//
// Filesystem: FS is the rooted rule set of seed 002 (rootedWithRules).
// Resolve checks a path lexically, in the seed's order: absolute, no NUL,
// valid UTF-8; after filepath.Clean, inside a root (filepath.Rel +
// IsLocal, longest root wins); not under a denied prefix of any root
// containing it; for writes, not under a read-only root. Every refusal is
// a *PathError, "Permission denied: <path>", which unwraps to
// ErrPermissionDenied; its Reason is for logs. Denied prefixes are
// root-relative and "/"-bounded, and compared case-insensitively (ignoring
// trailing dots and spaces and the code points HFS+ ignores), because
// hostile repositories target case-insensitive filesystems. Lexical rules
// cannot see symlinks or hard links: whoever opens files must check the
// real path again, as runtime.LocalFS does.
//
// Commands: ParseCommandLine parses a shell line with mvdan.cc/sh and lists
// every simple command in it (pipelines, chains, subshells, bodies), each
// resolved to the program that would run through a fixed PATH
// (NewLookPath: "./git" and "/tmp/x/git" are never /usr/bin/git). Anything
// the parser cannot prove harmless (substitutions, redirections to files,
// eval, trampolines such as env, xargs, find -exec, sh -c, sudo) is a
// Risk, which always needs an explicit permission. Terminal applies the
// allow and deny lists to every simple command; CheckEnv refuses
// environment variables that inject code (LD_PRELOAD, BASH_ENV, PATH,
// GIT_*, ...). With a list configured, Terminal refuses lines whose programs
// are not all known statically (CommandLine.Opaque: trampolines, eval,
// functions, non-literal names). CommandMemory remembers allow_always per
// simple command exactly (program, arguments, working directory), more
// widely only for read-only programs while their path operands stay inside
// the workspace (and the directories ls and find list hold no denied
// path) and for git's read-only subcommands in one folder, so an
// approval of "git status" never covers "git status; rm -rf ~" or
// "git stash clear", and DescribeApproval names that scope in words.
//
// Network: CheckDialAddress refuses the addresses the agent never
// connects to for a model (web_fetch) or a client (a provider endpoint it
// routes to, an MCP http or sse server it names): link-local and cloud
// metadata addresses, however written (ReachedAddress: zones, IPv4-mapped
// IPv6, NAT64); DialControl applies it to every connection a net.Dialer
// makes, and Dialer is such a dialer.
package policy
