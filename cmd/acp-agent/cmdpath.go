package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
)

// terminalFile is the config file's "terminal" member: the environment of
// the commands the agent runs (docs/configuration.md).
type terminalFile struct {
	// Path replaces the PATH commands inherit: absolute directories, "~/"
	// for the home directory, and "$PATH" for the inherited PATH.
	Path []string `json:"path"`
	// Env are more variables for commands.
	Env map[string]string `json:"env"`
	// LoginShell: "auto" (ask the login shell for its PATH when the
	// agent was launched with a minimal one, as from the macOS Dock),
	// "always" or "never".
	LoginShell string `json:"loginShell"`
}

var terminalKeys = []string{"path", "env", "loginShell"}

// check validates the member (parseConfig).
func (t *terminalFile) check() error {
	if t == nil {
		return nil
	}
	switch t.LoginShell {
	case "", "auto", "always", "never":
	default:
		return fmt.Errorf(`"terminal.loginShell" %q: want "auto", "always" or "never"`, t.LoginShell)
	}
	for _, e := range t.Path {
		if e != "$PATH" && !filepath.IsAbs(e) && !strings.HasPrefix(e, "~/") {
			return fmt.Errorf(`"terminal.path": %q is not an absolute directory, "~/..." or "$PATH" (relative entries would be searched in the command's directory)`, e)
		}
	}
	for name := range t.Env {
		switch {
		case !validEnvName(name):
			return fmt.Errorf(`"terminal.env": %q is not a variable name`, name)
		case name == "PATH":
			return fmt.Errorf(`"terminal.env": set PATH with "terminal.path" (a list of directories)`)
		case runtime.IsSecretName(name):
			return fmt.Errorf(`"terminal.env": %q looks like a secret, and commands never get secrets: the model could print it`, name)
		}
	}
	return nil
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// env is the configured variables as "NAME=value", sorted.
func (t *terminalFile) env() []string {
	if t == nil {
		return nil
	}
	var out []string
	for k, v := range t.Env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// userPath resolves, once, the PATH the user's commands should get: the
// configured one, else the agent's own PATH (what the editor launched it
// with) or, when that is minimal, the login shell's. The login shell is
// asked on the first call of resolve, Path or notices (the agent calls
// resolve in the background once its initialize response is out:
// startWork); Path waits for it, wait ends it (for the agent's exit).
type userPath struct {
	once sync.Once
	// lookup asks the login shell (nil: the PATH is known already).
	lookup func()
	cancel context.CancelFunc
	path   string
	source string // where path came from, for doctor and the log
	note   string // what the user should know (the login shell failed)
}

// newUserPath resolves the PATH for the settings in getenv and file, or
// prepares the login shell's lookup (resolve runs it).
func newUserPath(getenv func(string) string, file *terminalFile, log *slog.Logger) *userPath {
	ctx, cancel := context.WithCancel(context.Background())
	launch := getenv("PATH")
	u := &userPath{cancel: cancel, path: launch, source: "the agent's environment"}
	mode := "auto"
	if file != nil && file.LoginShell != "" {
		mode = file.LoginShell
	}
	configured := file != nil && len(file.Path) > 0
	shell := getenv("SHELL")
	ask := !configured && (mode == "always" || mode == "auto" && runtime.MinimalPath(launch)) && filepath.IsAbs(shell)
	if !ask {
		if configured {
			u.path, u.source = expandPath(file.Path, launch, getenv("HOME")), "the config file (terminal.path)"
		}
		return u
	}
	u.lookup = func() {
		p, err := runtime.LoginShellPath(ctx, shell, 0)
		if err != nil {
			u.note = "Commands get the PATH the agent was started with (" + launch + "): " + err.Error() + ". Set \"terminal.path\" in the config file to choose it."
			log.Info("login shell PATH", "error", err)
			return
		}
		u.path, u.source = runtime.MergePaths(p, launch), "the login shell ("+shell+")"
		log.Info("login shell PATH", "shell", shell, "path", u.path)
	}
	return u
}

// resolve asks the login shell, if the PATH needs it and nobody did yet,
// and waits for its answer.
func (u *userPath) resolve() {
	u.once.Do(func() {
		if u.lookup != nil {
			u.lookup()
		}
	})
}

// expandPath is the configured path list as a PATH: "$PATH" is the
// inherited one, "~/" the home directory.
func expandPath(entries []string, inherited, home string) string {
	var out []string
	for _, e := range entries {
		switch {
		case e == "$PATH":
			out = append(out, inherited)
		case strings.HasPrefix(e, "~/") && filepath.IsAbs(home):
			out = append(out, filepath.Join(home, e[2:]))
		case strings.HasPrefix(e, "~/"):
			// No home: the entry names nothing.
		default:
			out = append(out, e)
		}
	}
	return strings.Join(out, string(filepath.ListSeparator))
}

// Path is the resolved PATH (waiting for the login shell, at most its
// timeout).
func (u *userPath) Path() string {
	u.resolve()
	return u.path
}

// notices are what the user should know about the PATH (the login shell
// did not answer); it waits for the resolution.
func (u *userPath) notices() []acpagent.Notice {
	u.resolve()
	if u.note == "" {
		return nil
	}
	return []acpagent.Notice{{Severity: host.NoticeWarning, Title: "Commands may not find your tools", Description: u.note}}
}

// wait stops the login shell, if it still runs, and waits for it; a
// lookup not started by then never starts.
func (u *userPath) wait() {
	u.cancel()
	u.once.Do(func() {})
}

// commandPathIn is the PATH commands get in dir, with what was left out.
func (u *userPath) commandPathIn(dir string) (string, []policy.DroppedPathEntry) {
	return policy.CommandPath(u.Path(), []string{dir}, nil)
}

// lookIn finds program on path like the command policy does.
func lookIn(path, program string) (string, bool) {
	p, err := policy.NewLookPath(path, "/")(program)
	if err != nil {
		return "", false
	}
	if _, err := os.Stat(p); err != nil {
		return "", false
	}
	return p, true
}
