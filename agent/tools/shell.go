package tools

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
)

// The shells run_command can use (WorkspaceConfig.Shell).
const (
	// ShellDefault is bash on Unix (sh where there is none); on Windows,
	// PowerShell 7 (pwsh) where it is installed, else Windows PowerShell,
	// else (Nano Server) cmd.exe.
	ShellDefault = ""
	// ShellPwsh is PowerShell 7 (Windows).
	ShellPwsh = "pwsh"
	// ShellPowerShell is Windows PowerShell 5.1 (Windows).
	ShellPowerShell = "powershell"
	// ShellCmd is cmd.exe (Windows).
	ShellCmd = "cmd"
)

// CheckShell refuses a shell this OS cannot use: on Unix only the default
// (bash, whose lines the command policy parses); on Windows the default,
// pwsh, powershell or cmd.
func CheckShell(shell string) error {
	switch shell {
	case ShellDefault:
		return nil
	case ShellPwsh, ShellPowerShell, ShellCmd:
		if goruntime.GOOS == "windows" {
			return nil
		}
		return fmt.Errorf("shell %q is for Windows; on %s commands run with bash", shell, goruntime.GOOS)
	}
	return fmt.Errorf("unknown shell %q: use pwsh, powershell or cmd (Windows), or leave it unset", shell)
}

// shellKind is how a line is run and judged.
type shellKind int

const (
	shellBash       shellKind = iota // bash -c LINE, parsed by the policy
	shellPowerShell                  // pwsh/powershell -EncodedCommand, not parsed
	shellCmdExe                      // cmd.exe /d /s /c "LINE", not parsed
)

// commandShell is the program run_command runs lines with (its absolute
// path, or the name for the editor's terminal to find) and its kind.
func (w *Workspace) commandShell() (string, shellKind) {
	look := policy.NewLookPath(w.cfg.PATH, w.roots[0])
	find := func(names ...string) (string, bool) {
		for _, n := range names {
			if p, err := look(n); err == nil {
				return p, true
			}
		}
		return names[len(names)-1], false
	}
	if goruntime.GOOS != "windows" {
		// bash, because the policy parses lines as bash (in dash,
		// "ls &>/dev/null" means "run ls in the background"); sh only
		// where there is no bash.
		if p, ok := find("bash"); ok {
			return p, shellBash
		}
		return "/bin/sh", shellBash
	}
	switch w.cfg.Shell {
	case ShellCmd:
		p, _ := find("cmd")
		return p, shellCmdExe
	case ShellPowerShell:
		p, _ := find("powershell")
		return p, shellPowerShell
	case ShellPwsh:
		p, _ := find("pwsh")
		return p, shellPowerShell
	}
	if p, ok := find("pwsh", "powershell"); ok {
		return p, shellPowerShell
	}
	// No PowerShell at all (Nano Server images): cmd.exe, which
	// every Windows has.
	if p, ok := find("cmd"); ok {
		return p, shellCmdExe
	}
	return "powershell", shellPowerShell
}

// shellInvocation is how run_command's description and the system
// prompt name the shell.
func (w *Workspace) shellInvocation() string {
	if goruntime.GOOS == "windows" {
		// A shell chosen by name is named whatever the search finds.
		switch w.cfg.Shell {
		case ShellCmd:
			return "cmd.exe /c"
		case ShellPowerShell, ShellPwsh:
			return "PowerShell"
		}
	}
	// A PATH search is a stat per PATH directory before the one that has
	// the shell (a dozen or more), at every session's start and first
	// model request. What it found for this PATH is looked at again
	// instead (one stat): while it is still there, a new search finds it
	// or a shell of the same name earlier in the PATH, and names the
	// shell the same. Only a search that found the shell it prefers is
	// kept: the fallbacks (sh, cmd.exe) are searched for again each time,
	// so a shell installed since is named.
	key := shellKey{path: w.cfg.PATH, shell: w.cfg.Shell}
	if v, ok := foundShells.Load(key); ok {
		f := v.(foundShell)
		if p, err := policy.NewLookPath("", "")(f.path); err == nil && p == f.path {
			return f.invocation
		}
	}
	p, kind := w.commandShell()
	var inv string
	switch kind {
	case shellCmdExe:
		inv = "cmd.exe /c"
	case shellPowerShell:
		inv = "PowerShell"
	default:
		inv = filepath.Base(p) + " -c"
	}
	if preferred := (kind == shellBash && filepath.Base(p) == "bash") || kind == shellPowerShell; preferred && filepath.IsAbs(p) {
		foundShells.Store(key, foundShell{path: p, invocation: inv})
	}
	return inv
}

// foundShells are shellInvocation's last searches that found the shell,
// by PATH and configured shell (a process has one or two of them).
var foundShells sync.Map // shellKey → foundShell

type shellKey struct{ path, shell string }

type foundShell struct{ path, invocation string }

// shellName names the shell for the model and the user.
func (w *Workspace) shellName() string {
	switch _, kind := w.commandShell(); kind {
	case shellCmdExe:
		return "cmd.exe"
	case shellPowerShell:
		return "PowerShell"
	}
	return "bash"
}

// parseLine judges line for the permission policy: bash lines are
// parsed; PowerShell and cmd.exe lines are not (the policy cannot parse
// them), so they always ask unless the session is in full-access mode,
// and an approval covers exactly that line.
func (w *Workspace) parseLine(line, cwd string) (policy.CommandLine, error) {
	_, kind := w.commandShell()
	switch kind {
	case shellPowerShell:
		return policy.UnparsedCommandLine(line, "PowerShell")
	case shellCmdExe:
		if strings.ContainsAny(line, "\r\n") {
			return policy.CommandLine{Source: line}, fmt.Errorf("%w: cmd.exe runs one line; use && to chain commands", policy.ErrCommandParse)
		}
		return policy.UnparsedCommandLine(line, "cmd.exe")
	}
	return policy.ParseCommandLine(line, policy.NewLookPath(w.cfg.PATH, cwd))
}

// commandSpec is the process that runs line in cwd.
func (w *Workspace) commandSpec(line, cwd string) runtime.CommandSpec {
	shell, kind := w.commandShell()
	switch kind {
	case shellPowerShell:
		return runtime.CommandSpec{Command: shell, Cwd: cwd, Args: []string{
			"-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass",
			"-EncodedCommand", powerShellEncoded(line),
		}}
	case shellCmdExe:
		// /s with the line in quotes: cmd.exe strips the outer quotes and
		// runs the rest as typed. Go's argument quoting would change it,
		// so the command line is given whole.
		return runtime.CommandSpec{Command: shell, Cwd: cwd, Args: []string{"/d", "/s", "/c", line},
			CmdLine: `cmd.exe /d /s /c "` + line + `"`}
	}
	return runtime.CommandSpec{Command: shell, Args: []string{"-c", line}, Cwd: cwd}
}

// powerShellPrologue makes output UTF-8 and the exit code the line's:
// the last native program's code when the line failed, 1 when a cmdlet
// did, 0 otherwise (PowerShell's own -Command exit codes lose it).
const (
	powerShellPrologue = "$ProgressPreference = 'SilentlyContinue'\n" +
		"[Console]::OutputEncoding = [System.Text.UTF8Encoding]::new($false)\n" +
		"$OutputEncoding = [Console]::OutputEncoding\n"
	powerShellEpilogue = "\nif (-not $?) { if ($LASTEXITCODE) { exit $LASTEXITCODE } else { exit 1 } }\nexit 0\n"
)

// powerShellEncoded is line in PowerShell's -EncodedCommand form (base64
// of UTF-16LE): no quoting of the line can go wrong on its way through
// the Windows command line.
func powerShellEncoded(line string) string {
	script := powerShellPrologue + line + powerShellEpilogue
	u := utf16.Encode([]rune(script))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		b[2*i], b[2*i+1] = byte(c), byte(c>>8)
	}
	return base64.StdEncoding.EncodeToString(b)
}
