package policy

import (
	"errors"
	"path/filepath"
	"strings"
	"time"
)

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
	// any directory, so denying "rm" also denies ./rm and /tmp/x/rm.
	// Deny is checked first and wins.
	DeniedCommands []string
	// MaxRuntime caps how long a command may run; 0 means no cap. The
	// caller passes it to the runtime as the process timeout.
	MaxRuntime time.Duration
	// Path is the fixed PATH whose directories are trusted for bare-name
	// allow entries; "" means DefaultPath. It must be the path the
	// CommandLine was resolved with.
	Path string
}

// ErrCommandDenied is what every Check refusal unwraps to.
var ErrCommandDenied = errors.New("command denied")

// CommandDeniedError is the error Check returns; its text is the seed's
// "Command denied: <cmd>" with the command name as written.
type CommandDeniedError struct {
	Name string
}

func (e *CommandDeniedError) Error() string { return "Command denied: " + e.Name }

// Unwrap returns ErrCommandDenied.
func (e *CommandDeniedError) Unwrap() error { return ErrCommandDenied }

// Check applies the deny list, then the allow list, to every simple
// command of cl and returns a *CommandDeniedError for the first command
// refused. A line with no commands passes (it runs nothing; its Risks
// still apply).
func (t Terminal) Check(cl CommandLine) error {
	dirs := pathDirs(t.Path)
	for _, c := range cl.Commands {
		for _, e := range t.DeniedCommands {
			if entryMatches(e, c, dirs, true) {
				return &CommandDeniedError{Name: c.Name}
			}
		}
		if t.AllowedCommands == nil {
			continue
		}
		allowed := false
		for _, e := range t.AllowedCommands {
			if entryMatches(e, c, dirs, false) {
				allowed = true
				break
			}
		}
		if !allowed {
			return &CommandDeniedError{Name: c.Name}
		}
	}
	return nil
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
func entryMatches(e string, c SimpleCommand, dirs map[string]bool, broad bool) bool {
	words := strings.Fields(e)
	if len(words) == 0 {
		return false
	}
	if !programMatches(words[0], c, dirs, broad) {
		return false
	}
	rest := words[1:]
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
