package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/prompts"
	"github.com/acp-agent/acp-agent/agent/rules"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
)

// TextFiles reads and writes text files: the editor's, or the local
// confined filesystem.
type TextFiles interface {
	ReadTextFile(ctx context.Context, path string, line, limit int) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// CommandRunner runs a command to its end: in the editor's terminal, or
// locally.
type CommandRunner interface {
	Run(ctx context.Context, spec runtime.CommandSpec, started func(terminalID string)) (runtime.CommandResult, error)
}

// Editor is what the client offers the tools: its file reads and writes
// and its terminal. The protocol adapter builds it from what the client
// advertised; nil members work locally.
type Editor struct {
	// Reads and Writes, if set, give the editor's file access for a
	// workspace whose confined local filesystem is local (the editor's
	// runtime checks every path with it before the editor sees it).
	Reads, Writes func(local *runtime.LocalFS) TextFiles
	// Terminal runs commands in the editor's terminal.
	Terminal CommandRunner
	// Ask, if set, asks the user a question in a form the editor shows
	// (ACP elicitation); without it, ask_user ends the turn with the
	// question and the user's next prompt is the answer.
	Ask func(ctx context.Context, q Question) (Answer, error)
}

// WorkspaceConfig are the rules of the built-in tools' workspace.
type WorkspaceConfig struct {
	// ReadOnlyRoots are directories the tools never write to.
	ReadOnlyRoots []string
	// DeniedPathPrefixes are root-relative paths the tools never read or
	// write; nil means policy.DefaultDeniedPrefixes (.git, .env).
	DeniedPathPrefixes []string
	// Terminal is the command allow/deny list and the longest run.
	Terminal policy.Terminal
	// CommandTimeout is a command's default timeout (the model may ask for
	// less or more, up to Terminal.MaxRuntime); 0 means 2 minutes.
	CommandTimeout time.Duration
	// OutputByteLimit is how much of a command's output is kept (the
	// tail); 0 means 256 KiB.
	OutputByteLimit int
	// PATH is the fixed search path of commands; empty means
	// policy.DefaultPath.
	PATH string
	// Shell runs run_command's lines (CheckShell): "" is bash on Unix
	// and PowerShell on Windows; "pwsh", "powershell" or "cmd" choose
	// on Windows.
	Shell string
	// Sandbox, if set, confines the commands of the local terminal (not
	// the editor's: there the editor decides): its policy gets the
	// session's roots as WritableRoots and a per-session TempDir.
	Sandbox *runtime.Sandbox
	// SandboxNetworkInFullAccess lets confined commands use the network
	// while the session is in full-access mode (the network was not
	// configured either way); in the other modes it stays off.
	SandboxNetworkInFullAccess bool
	// SandboxAutoApprove lets confined commands run without asking (only
	// escalations outside the sandbox ask); the sandbox is then the
	// boundary instead of the user's approval.
	SandboxAutoApprove bool
	// UserRules is the user's own rules file (the config directory's
	// AGENTS.md), read before the repository's; "" for none.
	UserRules string
	// NoRules leaves the rules files (AGENTS.md, ...) out of the context.
	NoRules bool
	// UserPrompts are the user's own command and skill directories
	// (prompts.UserDirs), after the workspace root's own.
	UserPrompts prompts.Dirs
	// SandboxUnavailable, if set, says why commands cannot be confined
	// although the user asked for it: sessions say so once and ask for
	// every command.
	SandboxUnavailable string
	// Unconfined, if set, says that local commands run without a sandbox
	// because the OS has none here (Windows): sessions say so once, at
	// the first command, and commands ask as the mode says.
	Unconfined string
}

// Workspace is where a session's built-in tools work: the session's roots,
// confined by os.Root, and the editor's files and terminals when it offers
// them. Close releases it.
type Workspace struct {
	cfg   WorkspaceConfig
	roots []string // cwd first
	local *runtime.LocalFS
	files TextFiles // editor or local
	term  CommandRunner
	// escapeTerm runs the escalations the user allowed, unconfined (nil
	// without a sandbox).
	escapeTerm *runtime.LocalTerminal
	// tempDir is the confined commands' TMPDIR, removed by Close.
	tempDir string
	// localTerm is closed with the workspace (nil when the editor runs
	// the commands).
	localTerm *runtime.LocalTerminal
	// bg are the background commands, which end with the workspace.
	bg background
	// cp keeps files' previous content for rewind (nil: none); scan is
	// the last workspace scan around a command.
	cp   Checkpointer
	scan scanState
	// rules are the session's rules files (nil with NoRules).
	rules *rules.Set
	// promptDirs are where commands and skills are defined; lib is what
	// they held when libSig was taken.
	promptDirs prompts.Dirs
	libMu      sync.Mutex
	lib        prompts.Library
	libSig     string
	libLoaded  bool
	libNotices []string // what the last reads skipped, for Notices
	// ask is the editor's question form (nil: none).
	ask func(ctx context.Context, q Question) (Answer, error)
	// viaEditor says which operations go through the client.
	readsViaEditor, writesViaEditor, termViaEditor bool
}

// NewWorkspace opens the workspace of a session in cwd (plus extra
// roots). What editor offers is used; everything else is local. Paths are
// checked against the workspace rules before any of them.
func NewWorkspace(cwd string, extra []string, cfg WorkspaceConfig, editor Editor) (*Workspace, error) {
	roots := append([]string{cwd}, extra...)
	for i, r := range roots {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("workspace root %q is not an absolute path", r)
		}
		// One spelling for every comparison (Windows: no \\?\ prefix).
		roots[i] = policy.CanonicalPath(r)
	}
	denied := cfg.DeniedPathPrefixes
	if denied == nil {
		denied = policy.DefaultDeniedPrefixes()
	}
	local, err := runtime.NewLocalFS(policy.FS{Roots: roots, ReadOnlyRoots: cfg.ReadOnlyRoots, DeniedPathPrefixes: denied})
	if err != nil {
		return nil, err
	}
	if cfg.CommandTimeout <= 0 {
		cfg.CommandTimeout = 2 * time.Minute
	}
	if cfg.OutputByteLimit <= 0 {
		cfg.OutputByteLimit = 256 << 10
	}
	if cfg.PATH == "" {
		cfg.PATH = policy.DefaultPath
	}
	w := &Workspace{cfg: cfg, roots: roots, local: local, files: local}
	if !cfg.NoRules {
		w.rules = rules.Load(cwd, cfg.UserRules)
	}
	w.promptDirs = prompts.ProjectDirs(cwd).Join(cfg.UserPrompts)
	if editor.Reads != nil || editor.Writes != nil {
		w.files = &splitFiles{read: pick(editor.Reads, local), write: pick(editor.Writes, local)}
		w.readsViaEditor, w.writesViaEditor = editor.Reads != nil, editor.Writes != nil
	}
	w.ask = editor.Ask
	if editor.Terminal != nil {
		w.term, w.termViaEditor = editor.Terminal, true
	} else {
		opts, tmp, err := w.terminalOptions()
		if err != nil {
			local.Close()
			return nil, err
		}
		w.tempDir = tmp
		w.localTerm = runtime.NewLocalTerminal(opts)
		w.term = w.localTerm
		if opts.Sandbox != nil {
			// Escalations the user allowed run here, unconfined.
			w.escapeTerm = runtime.NewLocalTerminal(runtime.TerminalOptions{})
		}
	}
	return w, nil
}

// terminalOptions are the options of a local terminal: confined by the
// sandbox, if there is one, with a temporary directory of its own (tmp,
// which the caller removes).
func (w *Workspace) terminalOptions() (opts runtime.TerminalOptions, tmp string, err error) {
	sb := w.cfg.Sandbox
	if sb == nil {
		return opts, "", nil
	}
	tmp, err = os.MkdirTemp("", "acp-agent-cmd-")
	if err != nil {
		return opts, "", fmt.Errorf("sandbox temporary directory: %w", err)
	}
	confined := *sb
	confined.Policy.WritableRoots = writableRoots(w.roots, w.cfg.ReadOnlyRoots)
	confined.Policy.TempDir = tmp
	opts.Sandbox = &confined
	return opts, tmp, nil
}

// writableRoots are the roots a confined command may write: every root
// not inside a read-only root.
func writableRoots(roots, readOnly []string) []string {
	var out []string
	for _, r := range roots {
		ro := false
		for _, x := range readOnly {
			if rel, err := filepath.Rel(x, r); err == nil && (rel == "." || filepath.IsLocal(rel)) {
				ro = true
			}
		}
		if !ro {
			out = append(out, r)
		}
	}
	return out
}

// Sandboxed reports whether the workspace's local commands are confined.
func (w *Workspace) Sandboxed() bool { return w.localTerm != nil && w.cfg.Sandbox != nil }

func pick(editor func(*runtime.LocalFS) TextFiles, local *runtime.LocalFS) TextFiles {
	if editor != nil {
		return editor(local)
	}
	return local
}

// splitFiles reads and writes through different runtimes (a client that
// offers only one of the two fs methods).
type splitFiles struct{ read, write TextFiles }

func (f *splitFiles) ReadTextFile(ctx context.Context, path string, line, limit int) (string, error) {
	return f.read.ReadTextFile(ctx, path, line, limit)
}

func (f *splitFiles) WriteTextFile(ctx context.Context, path, content string) error {
	return f.write.WriteTextFile(ctx, path, content)
}

// Close kills the workspace's local commands and releases its roots.
func (w *Workspace) Close() error {
	var errs []error
	if w.localTerm != nil {
		errs = append(errs, w.localTerm.Close())
	}
	if w.escapeTerm != nil {
		errs = append(errs, w.escapeTerm.Close())
	}
	w.bg.mu.Lock()
	if w.bg.term != nil {
		errs = append(errs, w.bg.term.Close())
	}
	if w.bg.tempDir != "" {
		errs = append(errs, os.RemoveAll(w.bg.tempDir))
	}
	w.bg.mu.Unlock()
	if w.tempDir != "" {
		errs = append(errs, os.RemoveAll(w.tempDir))
	}
	errs = append(errs, w.local.Close())
	return errors.Join(errs...)
}

// Local is the workspace's confined local filesystem.
func (w *Workspace) Local() *runtime.LocalFS { return w.local }

// Roots returns the workspace roots, the session's cwd first.
func (w *Workspace) Roots() []string { return w.roots }

// abs resolves a path the model gave: absolute paths as they are,
// relative ones against the cwd. The result is then checked by the
// policy (which refuses anything outside the roots).
func (w *Workspace) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(w.roots[0], p)
}

// check applies the filesystem rules to path for access a.
func (w *Workspace) check(path string, a policy.Access) error {
	_, _, err := w.local.Policy().Resolve(path, a)
	return err
}

// display is path relative to the cwd when it is inside it, for titles.
func (w *Workspace) display(path string) string {
	if rel, err := filepath.Rel(w.roots[0], path); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	if rel, err := filepath.Rel(w.roots[0], path); err == nil && rel == "." {
		return "."
	}
	return path
}

// The agent.Workspace of the built-in tools.
var _ agent.Workspace = (*Workspace)(nil)

// Tools implements agent.Workspace: BuiltinTools.
func (w *Workspace) Tools() []agent.Tool { return BuiltinTools(w) }

// SandboxMissing implements agent.Workspace: the configured reason, for
// local commands only (the editor's terminal is the editor's).
func (w *Workspace) SandboxMissing() string {
	if w.termViaEditor {
		return ""
	}
	return w.cfg.SandboxUnavailable
}

// Unconfined is the configured note that local commands run without a
// sandbox (the editor's terminal is the editor's).
func (w *Workspace) Unconfined() string {
	if w.termViaEditor {
		return ""
	}
	return w.cfg.Unconfined
}

// SandboxAutoApproves implements agent.Workspace: the local commands are
// confined, the user set sandbox.autoApprove, and the mode is not
// read-only (which refuses commands before this is asked).
func (w *Workspace) SandboxAutoApproves(mode policy.Mode) bool {
	return w.Sandboxed() && w.cfg.SandboxAutoApprove && mode != policy.ModeReadOnly
}

// Prompts returns the commands and skills defined in the workspace's and
// the user's directories, read again when those changed, and whether they
// changed since the last call.
func (w *Workspace) Prompts() (prompts.Library, bool) {
	sig := prompts.Signature(w.promptDirs)
	w.libMu.Lock()
	defer w.libMu.Unlock()
	if w.libLoaded && sig == w.libSig {
		return w.lib, false
	}
	w.lib, w.libSig, w.libLoaded = prompts.Load(w.promptDirs), sig, true
	w.libNotices = append(w.libNotices, w.lib.Notices...)
	return w.lib, true
}

// loadedPrompts is the library as last read (read now if never): the
// system prompt, built for every model request, does not look at the
// directories again; Prompts, called once per prompt, does.
func (w *Workspace) loadedPrompts() prompts.Library {
	w.libMu.Lock()
	loaded, lib := w.libLoaded, w.lib
	w.libMu.Unlock()
	if loaded {
		return lib
	}
	lib, _ = w.Prompts()
	return lib
}

// touchRules adds the rules files of the directories down to path (once)
// and tells the model which ones it now has.
func (w *Workspace) touchRules(path string) string {
	if w.rules == nil {
		return ""
	}
	added := w.rules.Touch(path)
	if len(added) == 0 {
		return ""
	}
	names := make([]string, len(added))
	for i, f := range added {
		names[i] = f.Path
	}
	return "\n\n[Rules files added to your instructions, for the files under their directories: " + strings.Join(names, ", ") + "]"
}

// Notices implements the session's optional notices: what the user should
// be told about the rules files (cut, left out, refused).
func (w *Workspace) Notices() []string {
	var out []string
	if w.rules != nil {
		out = w.rules.Notices()
	}
	w.libMu.Lock()
	out = append(out, w.libNotices...)
	w.libNotices = nil
	w.libMu.Unlock()
	return out
}

// Describe implements agent.Workspace: the part of the system prompt
// about the workspace, then the rules files.
func (w *Workspace) Describe(mode policy.Mode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The workspace root (current directory) is %s.", w.roots[0])
	if len(w.roots) > 1 {
		fmt.Fprintf(&b, " Additional workspace directories: %s.", strings.Join(w.roots[1:], ", "))
	}
	b.WriteString(" Tools can only reach files inside the workspace; ")
	b.WriteString("paths may be absolute or relative to the workspace root. ")
	fmt.Fprintf(&b, "Paths under %s are off limits, and so are .git, .env and .env.* at any depth.", strings.Join(w.local.Policy().DeniedPathPrefixes, ", "))
	switch mode {
	case policy.ModeReadOnly:
		b.WriteString(" The session is in read-only (plan) mode: you may read and search, but not edit files or run commands; propose changes instead.")
	case policy.ModeDefault:
		b.WriteString(" Edits and commands need the user's approval, which the editor asks for; reads and searches do not.")
	case policy.ModeAcceptEdits:
		b.WriteString(" File edits are approved; commands need the user's approval.")
	case policy.ModeFullAccess:
		b.WriteString(" Edits and commands run without asking; be careful.")
	}
	if w.rules != nil {
		if p := w.rules.Prompt(); p != "" {
			b.WriteString("\n\n" + p)
		}
	}
	if lib := w.loadedPrompts(); len(lib.Skills) > 0 {
		b.WriteString("\n\n# Skills\n\nSkills you can use: call the skill tool with a skill's name to load its instructions before doing that kind of task.\n")
		for _, sk := range lib.Skills {
			fmt.Fprintf(&b, "- %s: %s\n", sk.Name, sk.Description)
		}
	}
	return b.String()
}
