package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
	"github.com/acp-agent/acp-agent/runtime/scratch"
)

// Project hooks (agent/acpagent/projecthooks.go) run here: on local
// terminals of their own, confined by the workspace's sandbox exactly
// like its commands (also where the editor runs the commands), with the
// commands' environment (no API keys), and their pinned files in a
// directory only the agent writes.

// hookRunner is a workspace's hook terminals and pin directory, made on
// first use and ended with the workspace.
type hookRunner struct {
	mu      sync.Mutex
	term    *runtime.LocalTerminal // confined when the workspace has a sandbox
	outside *runtime.LocalTerminal // unconfined, for hooks the user let out
	tempDir string                 // term's sandbox temporary directory
	pinDir  string
	notices []string
}

// maxHookStderr bounds the standard error kept of a hook.
const maxHookStderr = 64 << 10

// HookConfinement says how project hooks run here: "confined" (the
// workspace's sandbox), "off" (the user turned the sandbox off: they run
// unconfined, like the commands), or why a sandbox the user asked for is
// unavailable (then every run must be allowed by the user, like an
// escalation).
func (w *Workspace) HookConfinement() string {
	switch {
	case w.cfg.Sandbox != nil:
		return "confined"
	case w.cfg.SandboxUnavailable != "":
		return w.cfg.SandboxUnavailable
	}
	return "off"
}

// HookPath is the fixed PATH project hooks' command names resolve in.
func (w *Workspace) HookPath() string { return w.cfg.PATH }

// Writable are the paths a confined command may write besides the
// temporary directory: the roots that are not read-only and the
// sandbox's extra writable paths. A file a hook runs from there could
// change after the user trusted it.
func (w *Workspace) Writable() []string {
	out := writableRoots(w.roots, w.cfg.ReadOnlyRoots)
	if w.cfg.Sandbox != nil {
		out = append(out, w.cfg.Sandbox.Policy.ExtraWritable...)
	}
	return out
}

// HookPinDir returns the directory for the pinned copies of what project
// hooks run, made on first use: private to the agent, outside every path
// a confined command may write, removed by Close.
func (w *Workspace) HookPinDir() (string, error) {
	w.hooks.mu.Lock()
	defer w.hooks.mu.Unlock()
	if w.hooks.pinDir != "" {
		return w.hooks.pinDir, nil
	}
	dir, err := scratch.MkdirTemp("hooks-")
	if err != nil {
		return "", fmt.Errorf("hook pin directory: %w", err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		for _, p := range append(w.Writable(), w.tempDir) {
			if rp, err := filepath.EvalSymlinks(p); err == nil && p != "" {
				if rel, err := filepath.Rel(rp, real); err == nil && filepath.IsLocal(rel) {
					os.RemoveAll(dir)
					return "", fmt.Errorf("hook pin directory %s would be writable by confined commands (TMPDIR is inside %s)", dir, p)
				}
			}
		}
	}
	w.hooks.pinDir = dir
	return dir, nil
}

// HookResult is how a hook's command ended.
type HookResult struct {
	Stdout, Stderr string
	// ExitCode is nil when the command was killed (TimedOut, or a signal).
	ExitCode *int
	TimedOut bool
}

// RunHook runs line with the workspace's shell (bash -c) in its cwd, input
// on stdin, for at most timeout: confined by the workspace's sandbox like
// its commands, or, with outside (the caller asked the user), unconfined;
// either way with the commands' environment.
func (w *Workspace) RunHook(ctx context.Context, line string, input []byte, outside bool, timeout time.Duration) (HookResult, error) {
	term, err := w.hookTerminal(outside)
	if err != nil {
		return HookResult{}, err
	}
	var stderr bytes.Buffer
	spec := w.commandSpec(line, w.roots[0]) // bash -c; PowerShell or cmd.exe on Windows
	spec.Stdin, spec.Stderr, spec.Timeout = input, &limitedWriter{w: &stderr, n: maxHookStderr}, timeout
	spec.OutputByteLimit = w.cfg.OutputByteLimit
	spec.SandboxNetwork = !outside && w.cfg.SandboxNetworkInFullAccess && agent.RunningMode(ctx) == policy.ModeFullAccess
	res, err := term.Run(ctx, spec, nil)
	if err != nil {
		return HookResult{}, err
	}
	return HookResult{Stdout: res.Output, Stderr: stderr.String(), ExitCode: res.ExitCode, TimedOut: res.TimedOut}, nil
}

func (w *Workspace) hookTerminal(outside bool) (*runtime.LocalTerminal, error) {
	w.hooks.mu.Lock()
	defer w.hooks.mu.Unlock()
	if outside {
		if w.hooks.outside == nil {
			w.hooks.outside = runtime.NewLocalTerminal(runtime.TerminalOptions{})
		}
		return w.hooks.outside, nil
	}
	if w.cfg.Sandbox == nil && w.cfg.SandboxUnavailable != "" {
		return nil, errors.New("the sandbox is unavailable: a project hook runs only when the user allows it, outside")
	}
	if w.hooks.term == nil {
		opts, tmp, err := w.terminalOptions()
		if err != nil {
			return nil, err
		}
		w.hooks.term, w.hooks.tempDir = runtime.NewLocalTerminal(opts), tmp
	}
	return w.hooks.term, nil
}

// close ends the hook terminals and removes their directories.
func (h *hookRunner) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for _, t := range []*runtime.LocalTerminal{h.term, h.outside} {
		if t != nil {
			errs = append(errs, t.Close())
		}
	}
	for _, d := range []string{h.tempDir, h.pinDir} {
		if d != "" {
			errs = append(errs, os.RemoveAll(d))
		}
	}
	return errors.Join(errs...)
}

// limitedWriter keeps the first n bytes and drops the rest without
// failing the writer (the command's stderr must never block).
type limitedWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Notify gives the user a note through the session (Notices): what a
// project hooks file could not do.
func (w *Workspace) Notify(text string) {
	w.hooks.mu.Lock()
	w.hooks.notices = append(w.hooks.notices, text)
	w.hooks.mu.Unlock()
}

func (h *hookRunner) takeNotices() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.notices
	h.notices = nil
	return out
}
