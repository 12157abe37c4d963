package policy

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// This file holds the allow and deny lists of commands (Terminal) and
// the error of a refused command.

// Terminal is the seed 002 terminal policy: static allow and deny lists
// plus a runtime cap, applied to every simple command of a line.
//
// Check does not look at CommandLine.Risks: a line can pass Check and
// still need an explicit permission because of its Risks. Callers decide
// in this order: parse error → refuse (or ask); Check error → refuse;
// CommandMemory.Lookup Reject → refuse; Risks → ask, whatever the
// permission mode; Lookup Allow → run; otherwise the permission mode.
type Terminal struct {
	// AllowedCommands, when non-nil, is the only set of commands that may
	// run; an empty non-nil slice allows nothing. Each entry is a program
	// optionally followed by argument words ("go test" matches when
	// Args starts with "test"). The program part matches a command when
	//   - it is an absolute path equal to Resolved, or
	//   - it is a bare name equal to the base name of Resolved and
	//     Resolved lies directly in one of the Path directories (so
	//     "git" matches /usr/bin/git but never ./git or /tmp/x/git), or
	//   - it is a bare name of a bash builtin (cd, echo, pwd, …) and the
	//     command is that builtin, written without a slash.
	AllowedCommands []string
	// DeniedCommands use the same entry syntax but match broadly: the
	// program part also matches the base name of Name or of Resolved in
	// any directory, so denying "rm" also denies ./rm and /tmp/x/rm, and
	// the argument words match anywhere in the arguments, in order, so
	// "git push" also denies "git --no-pager push origin". Each spelling
	// of options is its own word: "rm -rf" does not deny "rm -r -f".
	// Deny is checked first and wins.
	DeniedCommands []string
	// MaxRuntime caps how long a command may run; 0 means no cap. The
	// caller passes it to the runtime as the process timeout.
	MaxRuntime time.Duration
	// Path is the fixed PATH whose directories are trusted for bare-name
	// allow entries; "" means DefaultPath. It must be the path the
	// CommandLine was resolved with.
	Path string
	// EvalSymlinks resolves links for the deny list; nil means
	// filepath.EvalSymlinks.
	EvalSymlinks func(string) (string, error)
}

// ErrCommandDenied is what every Check refusal unwraps to.
var ErrCommandDenied = errors.New("command denied")

// CommandDeniedError is the error Check returns; its text is the seed's
// "Command denied: <cmd>" with the command name as written, followed by
// the Reason when the refusal is not a plain list match.
type CommandDeniedError struct {
	Name string
	// Reason says why a line was refused although no list entry names
	// its programs (they cannot all be resolved statically); "" for a
	// list match.
	Reason string
}

func (e *CommandDeniedError) Error() string {
	if e.Reason != "" {
		return "Command denied: " + e.Name + " (" + e.Reason + ")"
	}
	return "Command denied: " + e.Name
}

// Unwrap returns ErrCommandDenied.
func (e *CommandDeniedError) Unwrap() error { return ErrCommandDenied }

// Check applies the deny list, then the allow list, to every simple
// command of cl and returns a *CommandDeniedError for the first command
// refused. A line with no commands passes (it runs nothing; its Risks
// still apply).
//
// A list only means something if every program a line runs is known
// before it runs. So, with either list configured, a line whose programs
// cannot all be resolved statically (CommandLine.Opaque: env rm, bash -c,
// $(echo rm) x, eval, functions, …) is refused, with the reason. With a
// deny list configured, a program named by a path must also lie directly
// in one of the Path directories: ./rm, /tmp/x/rm or a workspace script
// could be a copy of, or a link to, a denied program (a copy cannot be
// recognised reliably: appending a byte changes its hash but not what it
// does), and a link swapped by the line itself cannot be seen at all.
// A denied entry also matches the base name of the file a symlink in
// those directories points to.
func (t Terminal) Check(cl CommandLine) error {
	dirs := pathDirs(t.Path)
	listed := len(t.DeniedCommands) > 0 || t.AllowedCommands != nil
	for _, c := range cl.Commands {
		for _, e := range t.DeniedCommands {
			if entryMatches(e, c, dirs, true) || t.linkTargetDenied(e, c) {
				return &CommandDeniedError{Name: c.Name}
			}
		}
		if len(t.DeniedCommands) > 0 && strings.Contains(c.Name, "/") && !dirs[filepath.Dir(t.absName(c))] {
			return &CommandDeniedError{Name: c.Name, Reason: "with deniedCommands set, a program named by a path must lie directly in one of the PATH directories " +
				strings.Join(sortedKeys(dirs), ", ") + ": elsewhere it could be a copy of, or a link to, a denied program"}
		}
		if t.AllowedCommands == nil {
			continue
		}
		allowed := false
		for _, e := range t.AllowedCommands {
			if entryMatches(e, c, dirs, false) || runnerEntryNames(e, c, cl, dirs) {
				allowed = true
				break
			}
		}
		if !allowed {
			return &CommandDeniedError{Name: c.Name}
		}
	}
	if listed && len(cl.Opaque) > 0 {
		name := cl.Source
		if len(cl.Commands) > 0 {
			name = cl.Commands[0].Name
		}
		return &CommandDeniedError{Name: name, Reason: "with allowedCommands or deniedCommands set, every program a line runs must be known before it runs, and here it is not: " + cl.Opaque[0]}
	}
	return nil
}

// absName is the cleaned absolute path a slash name runs (Resolved, or
// Name when nothing resolved: a relative name stays relative, which no
// PATH directory equals).
func (t Terminal) absName(c SimpleCommand) string {
	if c.Resolved != "" {
		return c.Resolved
	}
	return filepath.Clean(c.Name)
}

// linkTargetDenied reports whether the program c resolved to is a
// symlink whose target's base name deny entry e names ("rm" denies a
// /usr/local/bin/del -> /usr/bin/rm).
func (t Terminal) linkTargetDenied(e string, c SimpleCommand) bool {
	if c.Resolved == "" {
		return false
	}
	eval := t.EvalSymlinks
	if eval == nil {
		eval = filepath.EvalSymlinks
	}
	real, err := eval(c.Resolved)
	if err != nil || real == c.Resolved {
		return false
	}
	rc := c
	rc.Name, rc.Resolved = filepath.Base(real), real
	return entryMatches(e, rc, nil, true)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func pathDirs(path string) map[string]bool {
	if path == "" {
		path = DefaultPath
	}
	dirs := make(map[string]bool)
	for _, d := range filepath.SplitList(path) {
		if d != "" && filepath.IsAbs(d) {
			dirs[filepath.Clean(d)] = true
		}
	}
	return dirs
}

// entryMatches reports whether list entry e ("prog [args…]") matches c.
// broad selects the deny-list reading (see Terminal.DeniedCommands).
// runnerEntryNames reports whether allow entry e names c as the command
// of the runner that runs it: "npx prettier" allows the prettier of npx
// prettier --write . (a program of the project, often on no PATH, so no
// entry of its own could name it), "uv run pytest" the pytest of uv run
// pytest -x; "npx" and "uv run" name no command and allow none.
func runnerEntryNames(e string, c SimpleCommand, cl CommandLine, dirs map[string]bool) bool {
	if c.runner < 1 || c.runner > len(cl.Commands) {
		return false
	}
	return len(strings.Fields(e)) > c.runnerAt+1 && entryMatches(e, cl.Commands[c.runner-1], dirs, false)
}

func entryMatches(e string, c SimpleCommand, dirs map[string]bool, broad bool) bool {
	words := strings.Fields(e)
	if len(words) == 0 {
		return false
	}
	if !programMatches(words[0], c, dirs, broad) {
		return false
	}
	rest := words[1:]
	if broad {
		// A deny entry's words match anywhere in order, so options put
		// in front ("git --no-pager push", "git -P push") do not slip
		// past "git push".
		i := 0
		for _, a := range c.Args {
			if i < len(rest) && a == rest[i] {
				i++
			}
		}
		return i == len(rest)
	}
	if len(rest) > len(c.Args) {
		return false
	}
	for i, w := range rest {
		if c.Args[i] != w {
			return false
		}
	}
	return true
}

func programMatches(prog string, c SimpleCommand, dirs map[string]bool, broad bool) bool {
	if strings.Contains(prog, "/") {
		prog = filepath.Clean(prog)
		if c.Resolved != "" && c.Resolved == prog {
			return true
		}
		return broad && filepath.Clean(c.Name) == prog
	}
	if broad {
		return filepath.Base(c.Name) == prog || (c.Resolved != "" && filepath.Base(c.Resolved) == prog)
	}
	if c.Resolved != "" {
		return filepath.Base(c.Resolved) == prog && dirs[filepath.Dir(c.Resolved)]
	}
	return c.Name == prog && isShellBuiltin(prog)
}
