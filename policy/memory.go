package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/acp-agent/acp-agent/internal/markdown"
)

// Decision is a remembered permission answer.
type Decision int

const (
	// DecisionNone means nothing is remembered: ask.
	DecisionNone Decision = iota
	// DecisionAllow is a remembered allow_always.
	DecisionAllow
	// DecisionReject is a remembered reject_always.
	DecisionReject
)

// String returns "none", "allow" or "reject".
func (d Decision) String() string {
	switch d {
	case DecisionAllow:
		return "allow"
	case DecisionReject:
		return "reject"
	default:
		return "none"
	}
}

// OperandInfo is where a path-like word of a command leads.
type OperandInfo struct {
	// Inside is true when the word, read as a path relative to the
	// command's directory, resolves (through symlinks) inside the
	// workspace roots and outside the denied names, and is not a file
	// with more than one hard link. A word starting with "~" never is.
	Inside bool
	// Dir is true when it names an existing directory.
	Dir bool
	// HoldsDenied is true for a directory with one of the paths the file
	// tools never read or list (FS.DeniedBelow: ~/.ssh, the agent's state
	// directory, ...) below it, as written or resolved: a program that
	// lists or walks it would show what those tools hide.
	HoldsDenied bool
}

// CommandContext is what a remembered command decision depends on besides
// the line: where it runs and how its path operands are judged.
type CommandContext struct {
	// Dir is the absolute working directory the line runs in. Exact
	// approvals and git approvals hold only in this directory.
	Dir string
	// Path is the fixed PATH the line was resolved with ("" means
	// DefaultPath); only programs directly in its directories can get a
	// scope wider than their exact arguments.
	Path string
	// Operand judges a path-like word; nil means no word is inside, so
	// nothing gets a scope wider than its exact arguments.
	Operand func(dir, word string) OperandInfo
	// RepoHoldsDenied reports whether the git repository that holds dir
	// has a denied path inside its working tree (the home directory as a
	// repository, with ~/.ssh in it): git's read-only subcommands show the
	// whole tree (status -uall lists every untracked name, diff and show
	// print tracked contents), so there git lines are remembered exactly.
	// nil means no.
	RepoHoldsDenied func(dir string) bool
}

func (ctx CommandContext) operand(word string) OperandInfo {
	if ctx.Operand == nil || ctx.Dir == "" {
		return OperandInfo{}
	}
	return ctx.Operand(ctx.Dir, word)
}

// Approval kinds.
const (
	// ApprovalExact covers one simple command with exactly these
	// arguments (after quote removal), this program and this directory.
	ApprovalExact = "exact"
	// ApprovalProgram covers a read-only program (readOnlyPrograms) with
	// any arguments its rule accepts, in any directory, while every
	// path operand is inside the workspace.
	ApprovalProgram = "program"
	// ApprovalGit covers a read-only git subcommand with any read-only
	// options in this directory.
	ApprovalGit = "git"
	// ApprovalLine covers this exact line in this directory: lines that
	// change directory (cd, pushd, popd) are remembered only whole.
	ApprovalLine = "line"
	// ApprovalRejectKey rejects a program with these leading words
	// (SimpleCommand.Key) anywhere.
	ApprovalRejectKey = "reject-key"
	// ApprovalRejectLine rejects this exact line anywhere.
	ApprovalRejectLine = "reject-line"
)

// Approval is one remembered entry: what an allow_always or a
// reject_always stored. Sessions persist them as they are, so a reload
// never widens what the user was shown.
type Approval struct {
	Kind    string   `json:"kind"`
	Dir     string   `json:"dir,omitempty"`
	Program string   `json:"program,omitempty"`
	Args    []string `json:"args,omitempty"`
	Line    string   `json:"line,omitempty"`
	// Target is the file a program that is a symlink led to when the
	// approval was given (exact, program and git approvals): a link in
	// a directory of the PATH swapped for one to another file is another
	// program, and is asked about again. Empty for programs that are not
	// symlinks.
	Target string `json:"target,omitempty"`
}

func (a Approval) key() string {
	k := strings.Join(append([]string{a.Kind, a.Dir, a.Program, a.Line}, a.Args...), "\x00")
	if a.Target != "" {
		k += "\x00\x00target:" + a.Target
	}
	return k
}

// CommandMemory remembers allow_always and reject_always answers for
// command lines. An allow covers what the user was shown, with the scope
// the permission option names (DescribeApproval):
//
//   - by default, each simple command of the line exactly: the same
//     program (equivalent spellings match: 'ls', \ls and /usr/bin/ls when
//     ls resolves there), the same arguments after quote removal, in the
//     same working directory;
//   - for the read-only programs of readOnlyPrograms (cat, head, ls,
//     grep, find, …), the program with any arguments its rule accepts
//     (no writing or command-running options), as long as every
//     path-like word resolves inside the workspace, outside the denied
//     paths, and no directory ls or find lists or walks holds a denied
//     path (OperandInfo.HoldsDenied);
//   - for git's read-only subcommands (status, diff, log, show, and
//     listing branch, tag, remote -v), the subcommand with any read-only
//     options, in the same directory, unless its repository holds a
//     denied path (CommandContext.RepoHoldsDenied);
//   - a line that changes directory (cd, pushd, popd) only as the exact
//     line in the same directory.
//
// The wide scopes count only in lines made of read-only programs and
// read-only git subcommands: another command of the line could change
// the files between the check and the read.
//
// A line is allowed only when it has no Risks and every simple command
// is covered. A reject_always rejects each command's program with its
// leading words (SimpleCommand.Key) and the exact line, anywhere:
// rejects may be broad, allows may not.
//
// The zero value is ready to use and safe for concurrent use. One memory
// belongs to one session; drop it to forget (session/delete, logout).
type CommandMemory struct {
	mu      sync.Mutex
	entries map[string]Decision
}

// Remember stores d for cl run in ctx.Dir and returns the approvals it
// stored, for persistence (Restore puts them back).
//
// A line with Risks is never allowed by memory: its commands do not
// describe everything it runs ("ls $(evil)" lists only ls and evil, not
// what evil's output does), so an allow_always of it stores nothing; a
// reject_always of it stores its exact source only. DecisionNone forgets
// what an allow or reject of this line would store.
func (m *CommandMemory) Remember(cl CommandLine, ctx CommandContext, d Decision) []Approval {
	var as []Approval
	switch d {
	case DecisionReject:
		as = append(as, Approval{Kind: ApprovalRejectLine, Line: cl.Source})
		if len(cl.Risks) == 0 {
			for _, c := range cl.Commands {
				as = append(as, Approval{Kind: ApprovalRejectKey, Program: c.Key})
			}
		}
	case DecisionAllow:
		as = allowApprovals(cl, ctx)
		// The commands with a wide scope are remembered exactly too: in a
		// line with a command that is not read-only, only exact
		// approvals count (see Lookup).
		for i, a := range slices.Clone(as) {
			if a.Kind == ApprovalProgram || a.Kind == ApprovalGit {
				as = append(as, exactApproval(cl.Commands[i], ctx))
			}
		}
	default:
		as = append(allowApprovals(cl, ctx), Approval{Kind: ApprovalRejectLine, Line: cl.Source})
		for _, c := range cl.Commands {
			as = append(as, Approval{Kind: ApprovalRejectKey, Program: c.Key})
		}
	}
	m.Restore(as, d)
	if d == DecisionNone {
		return nil
	}
	return as
}

// Restore stores approvals read back from a session file (what Remember
// returned) with decision d.
func (m *CommandMemory) Restore(as []Approval, d Decision) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = make(map[string]Decision)
	}
	for _, a := range as {
		k := a.key()
		switch {
		case d == DecisionNone:
			delete(m.entries, k)
		case d == DecisionReject && (a.Kind == ApprovalRejectKey || a.Kind == ApprovalRejectLine):
			m.entries[k] = DecisionReject
		case d == DecisionAllow && a.Kind != ApprovalRejectKey && a.Kind != ApprovalRejectLine:
			m.entries[k] = DecisionAllow
		}
	}
}

// Reset forgets everything.
func (m *CommandMemory) Reset() {
	m.mu.Lock()
	m.entries = nil
	m.mu.Unlock()
}

// allowApprovals is what an allow_always of cl in ctx stores; nil when
// the line cannot be remembered.
func allowApprovals(cl CommandLine, ctx CommandContext) []Approval {
	if cl.Unparsed && ctx.Dir != "" {
		// Nothing is known of what it runs: exactly this line, here.
		return []Approval{{Kind: ApprovalLine, Dir: ctx.Dir, Line: cl.Source}}
	}
	if len(cl.Risks) > 0 || len(cl.Commands) == 0 || ctx.Dir == "" {
		return nil
	}
	if changesDir(cl) {
		return []Approval{{Kind: ApprovalLine, Dir: ctx.Dir, Line: cl.Source}}
	}
	as := make([]Approval, 0, len(cl.Commands))
	for _, c := range cl.Commands {
		as = append(as, scopeOf(c, ctx))
	}
	return as
}

// Lookup returns DecisionReject if the line or any of its commands has a
// remembered reject; DecisionAllow only if the line has no Risks, has at
// least one command, and every command is covered by a remembered allow
// (see CommandMemory); DecisionNone otherwise.
func (m *CommandMemory) Lookup(cl CommandLine, ctx CommandContext) Decision {
	// The approvals that would cover each command are worked out before
	// the lock is taken: ctx.Operand is the caller's code and does I/O.
	var exact, wide []string
	line := ""
	allowable := len(cl.Risks) == 0 && len(cl.Commands) > 0 && ctx.Dir != ""
	if cl.Unparsed && ctx.Dir != "" {
		allowable = true
		line = Approval{Kind: ApprovalLine, Dir: ctx.Dir, Line: cl.Source}.key()
	} else if allowable && changesDir(cl) {
		line = Approval{Kind: ApprovalLine, Dir: ctx.Dir, Line: cl.Source}.key()
	} else if allowable {
		for _, c := range cl.Commands {
			exact = append(exact, exactApproval(c, ctx).key())
			w := ""
			if s := scopeOf(c, ctx); s.Kind != ApprovalExact {
				w = s.key()
			}
			wide = append(wide, w)
		}
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries[Approval{Kind: ApprovalRejectLine, Line: cl.Source}.key()] == DecisionReject {
		return DecisionReject
	}
	for _, c := range cl.Commands {
		if m.entries[Approval{Kind: ApprovalRejectKey, Program: c.Key}.key()] == DecisionReject {
			return DecisionReject
		}
	}
	switch {
	case !allowable:
		return DecisionNone
	case line != "":
		if m.entries[line] == DecisionAllow {
			return DecisionAllow
		}
		return DecisionNone
	}
	// A wide scope was judged on the files as they are now; a command
	// of the same line that is not read-only (git checkout, cp, ln) can
	// change them before the read-only one runs (a checkout that turns a
	// file into a link to ~/.ssh). So wide scopes count only in lines
	// whose every command has one.
	readOnly := !slices.Contains(wide, "")
	for i := range exact {
		if m.entries[exact[i]] != DecisionAllow && (!readOnly || m.entries[wide[i]] != DecisionAllow) {
			return DecisionNone
		}
	}
	return DecisionAllow
}

// DescribeApproval names in words what an allow_always of cl in ctx would
// cover, for the permission option ("Always allow `git status` in this
// folder"); folder is how the directory is shown. ok is false when the
// line cannot be remembered (it has Risks or runs nothing).
func DescribeApproval(cl CommandLine, ctx CommandContext, folder string) (string, bool) {
	as := allowApprovals(cl, ctx)
	if len(as) == 0 {
		return "", false
	}
	where := "in this folder"
	if folder != "" && folder != "." {
		where = "in the folder " + folder
	}
	if cl.Unparsed {
		return fmt.Sprintf("Always allow exactly %s, %s", markdown.Code(clip(cl.Source)), where), true
	}
	if as[0].Kind == ApprovalLine {
		return fmt.Sprintf("Always allow exactly this line, %s", where), true
	}
	var parts []string
	seen := map[string]bool{}
	for i, a := range as {
		var p string
		switch a.Kind {
		case ApprovalProgram:
			rule := readOnlyPrograms()[a.Program]
			if rule.noPaths {
				p = markdown.Code(a.Program) + " (any arguments)"
			} else {
				p = markdown.Code(a.Program) + " (any files in the workspace)"
			}
		case ApprovalGit:
			p = markdown.Code("git "+a.Program) + " " + where
		default:
			c := cl.Commands[i]
			p = markdown.Code(clip(displayArgv(c))) + " exactly, " + where
		}
		if !seen[p] {
			seen[p] = true
			parts = append(parts, p)
		}
	}
	return "Always allow " + strings.Join(parts, "; "), true
}

// clip bounds what an option name quotes; the title shows the full line.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// displayArgv shows c's argv the way a shell would read it back.
func displayArgv(c SimpleCommand) string {
	words := []string{shellQuote(c.Name)}
	for i, a := range c.Args {
		if slices.Contains(c.HomeArgs, i) {
			rest := strings.TrimPrefix(a, "~")
			if rest != "" {
				rest = shellQuote(rest)
			}
			words = append(words, "~"+rest)
			continue
		}
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

func shellQuote(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// changesDir reports whether a command of cl changes the directory later
// commands run in.
func changesDir(cl CommandLine) bool {
	for _, c := range cl.Commands {
		switch c.Name {
		case "cd", "pushd", "popd":
			return true
		}
	}
	return false
}

// program is what identifies the program of c: the file it resolved to,
// else its name (a builtin, or a name that runs nothing).
func program(c SimpleCommand) string {
	if c.Resolved != "" {
		return c.Resolved
	}
	return c.Name
}

func exactApproval(c SimpleCommand, ctx CommandContext) Approval {
	args := slices.Clone(c.Args)
	for _, i := range c.HomeArgs {
		// "~" expanded by the shell is not the literal '~'.
		args[i] = homePrefix + args[i]
	}
	return Approval{Kind: ApprovalExact, Dir: ctx.Dir, Program: program(c), Args: args, Target: linkTarget(c)}
}

// linkTarget is the file c's program leads to when it is a symlink ("" when
// it is not, or is a builtin); a link that does not resolve gets a marker
// no approval was stored with.
func linkTarget(c SimpleCommand) string {
	if c.Resolved == "" {
		return ""
	}
	fi, err := os.Lstat(c.Resolved)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return ""
	}
	real, err := filepath.EvalSymlinks(c.Resolved)
	if err != nil {
		return "\x00unresolved"
	}
	return real
}

// homePrefix marks, in an exact approval, an argument whose leading "~"
// the shell expands.
const homePrefix = "\x00home:"

// scopeOf is the widest approval c may get in ctx: a read-only program
// scope, a git read-only subcommand scope, else exactly c.
func scopeOf(c SimpleCommand, ctx CommandContext) Approval {
	// The working directory itself must resolve inside: "ls" with no
	// operand lists it.
	if base, ok := trustedProgram(c, ctx.Path); ok && ctx.operand(".").Inside {
		if rule, ok := readOnlyPrograms()[base]; ok && rule.accepts(c.Args, ctx) {
			return Approval{Kind: ApprovalProgram, Program: base, Target: linkTarget(c)}
		}
		if base == "git" && (ctx.RepoHoldsDenied == nil || !ctx.RepoHoldsDenied(ctx.Dir)) {
			if sub, ok := gitReadOnly(c.Args, ctx); ok {
				return Approval{Kind: ApprovalGit, Dir: ctx.Dir, Program: sub, Target: linkTarget(c)}
			}
		}
	}
	return exactApproval(c, ctx)
}

// trustedProgram returns the base name of c's program when it is a file
// directly in a directory of path, or a shell builtin written as a bare
// name: the only programs whose name says what they do.
func trustedProgram(c SimpleCommand, path string) (string, bool) {
	if c.Resolved == "" {
		if isShellBuiltin(c.Name) {
			return c.Name, true
		}
		return "", false
	}
	if !pathDirs(path)[filepath.Dir(c.Resolved)] {
		return "", false
	}
	return filepath.Base(c.Resolved), true
}
