package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/prompts"
	"github.com/acp-agent/acp-agent/agent/rules"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
	"github.com/acp-agent/acp-agent/runtime/scratch"
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
	// Display, if set, shows the user the commands run_command runs in
	// the agent's own terminal, as they run (a client with no terminals
	// of its own; unused with Terminal).
	Display CommandDisplay
}

// CommandDisplay shows the commands run_command runs locally as they run
// (ACP v2's display-only terminals).
type CommandDisplay interface {
	// ShowCommand is called, from the tool call's Run (ctx), as command
	// line is about to start in cwd; the view lasts until its Exited.
	ShowCommand(ctx context.Context, line, cwd string) CommandView
}

// CommandView is one command being shown.
type CommandView interface {
	// ID names it, in the tool call's content (a terminal).
	ID() string
	// Output is what the command prints, as it comes, on the goroutine
	// copying it: it must not block and must not keep p.
	Output(p []byte)
	// Stop is closed when the user stops the command; the tool call goes
	// on with what it printed.
	Stop() <-chan struct{}
	// Exited is called once, when the command has ended (or did not
	// start: a zero CommandExit), after the last Output.
	Exited(CommandExit)
}

// CommandExit is how a shown command ended: its exit code, or the signal
// that killed it; neither when unknown.
type CommandExit struct {
	ExitCode *int
	Signal   string
}

// WorkspaceConfig are the rules of the built-in tools' workspace.
type WorkspaceConfig struct {
	// ReadOnlyRoots are directories the tools never write to.
	ReadOnlyRoots []string
	// DeniedPathPrefixes are root-relative paths the tools never read or
	// write; nil means policy.DefaultDeniedPrefixes (.git, .env).
	DeniedPathPrefixes []string
	// DeniedPaths are absolute paths the tools never read, write or list
	// (policy.FS.DeniedPaths): the list the sandbox denies to commands.
	DeniedPaths []string
	// ProtectedPaths are absolute paths the tools read but never write,
	// create or remove (policy.FS.ProtectedPaths): the list the sandbox
	// keeps commands from writing.
	ProtectedPaths []string
	// Terminal is the command allow/deny list and the longest run.
	Terminal policy.Terminal
	// CommandTimeout is a command's default timeout (the model may ask for
	// less or more, up to Terminal.MaxRuntime); 0 means 2 minutes.
	CommandTimeout time.Duration
	// OutputByteLimit is how much of a command's output is kept (the
	// tail); 0 means 4 MiB. The model gets 32 KiB of it, and the whole
	// in a file it can read (agent.MaxToolResultBytes).
	OutputByteLimit int
	// PATH is the user's search path of commands (the agent's own, or
	// the login shell's); empty means policy.DefaultPath. Each workspace
	// makes its command path of it (policy.CommandPath: no empty,
	// relative or workspace entries), which its commands run with and
	// the command policy resolves programs through.
	PATH string
	// UserPath, if set, gives PATH when a workspace opens (it may wait
	// for the login shell, once).
	UserPath func() string
	// Env are more variables of commands ("NAME=value", the config's
	// terminal.env), after PATH, HOME, LANG and TERM.
	Env []string
	// Shell runs run_command's lines (CheckShell): "" is bash on Unix
	// and PowerShell on Windows (cmd.exe where there is none); "pwsh",
	// "powershell" or "cmd" choose on Windows.
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
	// PromptCache shares the command and skill libraries with the other
	// workspaces of the process (a host's sessions): the sessions of one
	// workspace read its files once per change, and one look at the
	// directories serves them all. Nil: the workspace reads its own.
	PromptCache *prompts.Cache
	// KeptOutputDir is where the whole text of long tool results is kept
	// (the session's offload directory, a read-only root): the system
	// prompt names it as such rather than as a workspace directory.
	KeptOutputDir string
	// EditTools chooses the file-changing tools each model is offered:
	// EditToolsAuto (""), EditToolsPatch, EditToolsReplace or
	// EditToolsAll.
	EditTools string
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
	// commands shows local commands as they run (nil: not shown).
	commands CommandDisplay
	// escapeTerm runs the escalations the user allowed, unconfined (nil
	// without a sandbox).
	escapeTerm *runtime.LocalTerminal
	// tempDir is the confined commands' TMPDIR, removed by Close.
	tempDir string
	// localTerm is closed with the workspace (nil when the editor runs
	// the commands).
	localTerm *runtime.LocalTerminal
	// warm starts localTerm's sandbox helper ahead of the first command.
	warm warmer
	// bg are the background commands, which end with the workspace.
	bg background
	// hooks runs the project hooks (hooks.go).
	hooks hookRunner
	// cp keeps files' previous content for rewind (nil: none); scan is
	// the last workspace scan around a command.
	cp   Checkpointer
	scan scanState
	// rules are the session's rules files (nil with NoRules).
	rules *rules.Set
	// promptDirs are where commands and skills are defined; promptLib
	// is their library, shared with the other workspaces of the cache.
	promptDirs prompts.Dirs
	promptLib  *prompts.Shared
	closeLib   sync.Once
	libMu      sync.Mutex
	lib        *prompts.Snapshot // the session's library (nil: not read yet)
	libAt      time.Time         // when the look that found lib started
	libNotices []string          // what the reads skipped, for Notices
	// libWanted is when a prompt arrived whose turn must look at the
	// directories again (PromptArrived; zero: none waits).
	libWanted time.Time
	// libChanged is called when a look before a turn finds the library
	// changed (OnPromptsChanged).
	libChanged func()
	// ask is the editor's question form (nil: none).
	ask func(ctx context.Context, q Question) (Answer, error)
	// viaEditor says which operations go through the client.
	readsViaEditor, writesViaEditor, termViaEditor bool
	// seen is what the session last read or wrote of each file (a
	// content hash), for write_file's check.
	seenMu sync.Mutex
	seen   map[string][32]byte
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
	local, err := runtime.NewLocalFS(policy.FS{Roots: roots, ReadOnlyRoots: cfg.ReadOnlyRoots, DeniedPathPrefixes: denied, DeniedPaths: cfg.DeniedPaths,
		ProtectedPaths: cfg.ProtectedPaths})
	if err != nil {
		return nil, err
	}
	if cfg.CommandTimeout <= 0 {
		cfg.CommandTimeout = 2 * time.Minute
	}
	if cfg.OutputByteLimit <= 0 {
		cfg.OutputByteLimit = 4 << 20
	}
	if cfg.UserPath != nil {
		cfg.PATH = cfg.UserPath()
	}
	if cfg.PATH == "" {
		cfg.PATH = policy.DefaultPath
	}
	// The roots a command could plant programs in, also the read-only
	// ones (a checkout the model cannot write may still hold a bin/).
	cfg.PATH, _ = policy.CommandPath(cfg.PATH, append(slices.Clone(roots), cfg.ReadOnlyRoots...), nil)
	cfg.Terminal.Path = cfg.PATH
	w := &Workspace{cfg: cfg, roots: roots, local: local, files: local}
	if !cfg.NoRules {
		w.rules = rules.Load(cwd, cfg.UserRules, cfg.DeniedPaths)
		// The additional roots' own rules too.
		for _, r := range w.userRoots()[1:] {
			w.rules.AddRoot(r)
		}
	}
	w.promptDirs = prompts.ProjectDirs(cwd).Join(cfg.UserPrompts)
	w.promptDirs.Denied = cfg.DeniedPaths
	if cfg.PromptCache == nil {
		cfg.PromptCache = prompts.NewCache()
	}
	if editor.Reads != nil || editor.Writes != nil {
		w.files = &splitFiles{read: pick(editor.Reads, local), write: pick(editor.Writes, local)}
		w.readsViaEditor, w.writesViaEditor = editor.Reads != nil, editor.Writes != nil
	}
	w.ask = editor.Ask
	w.commands = editor.Display
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
			w.escapeTerm = runtime.NewLocalTerminal(runtime.TerminalOptions{Env: opts.Env})
		}
	}
	// Last: nothing can fail after it, and Close gives it back.
	w.promptLib = cfg.PromptCache.Open(w.promptDirs)
	return w, nil
}

// WarmCommands starts the sandbox helper of the workspace's confined
// terminal ahead of its first command: when the model names a
// run_command call, or warmDelay from now if wanted (the session's
// question, asked then: does it offer run_command in a mode that runs
// commands?) says yes. It does nothing without a confined local terminal
// (the editor runs the commands, or no sandbox), or when called again.
// The session calls it once it is made, so that a session where no
// command can run never starts a helper on a timer.
func (w *Workspace) WarmCommands(wanted func() bool) {
	if w.localTerm != nil && w.cfg.Sandbox != nil {
		w.warm.start(w.localTerm.Warm, warmDelay, wanted)
	}
}

// terminalOptions are the options of a local terminal: confined by the
// sandbox, if there is one, with a temporary directory of its own (tmp,
// which the caller removes).
func (w *Workspace) terminalOptions() (opts runtime.TerminalOptions, tmp string, err error) {
	opts.Env = runtime.CommandEnv(w.cfg.PATH, w.cfg.Env)
	sb := w.cfg.Sandbox
	if sb == nil {
		return opts, "", nil
	}
	// In this process's scratch directory, which a later agent removes
	// if this one is killed (runtime/scratch).
	tmp, err = scratch.MkdirTemp("cmd-")
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

// editorEnv is what a command run in the editor's terminal gets besides
// the editor's own environment: the workspace's command path, which the
// policy resolved its programs through, and the configured variables.
// Local terminals have both in their base environment already.
func (w *Workspace) editorEnv(term CommandRunner) map[string]string {
	if !w.termViaEditor || term != w.term {
		return nil
	}
	env := map[string]string{"PATH": w.cfg.PATH}
	for _, kv := range w.cfg.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// CommandPath is the PATH the workspace's commands run with.
func (w *Workspace) CommandPath() string { return w.cfg.PATH }

// The choices of WorkspaceConfig.EditTools.
const (
	// EditToolsAuto gives apply_patch to the models trained on its
	// format (OpenAI's GPT-5 and codex families, o3, o4) and edit_file,
	// multi_edit and write_file to the others.
	EditToolsAuto = "auto"
	// EditToolsPatch gives every model apply_patch only.
	EditToolsPatch = "patch"
	// EditToolsReplace gives every model edit_file, multi_edit and
	// write_file.
	EditToolsReplace = "replace"
	// EditToolsAll gives every model all four.
	EditToolsAll = "all"
)

// ParseEditTools checks an editTools setting ("" is auto).
func ParseEditTools(s string) (string, error) {
	switch s {
	case "", EditToolsAuto:
		return EditToolsAuto, nil
	case EditToolsPatch, EditToolsReplace, EditToolsAll:
		return s, nil
	}
	return "", fmt.Errorf("editTools %q is not one of auto, patch, replace or all", s)
}

// OffersTool reports whether model is offered tool: the edit tools go by
// the EditTools setting, every other tool to every model. Models trained
// on a format make fewer mistakes in it: OpenAI's trained its recent
// models on apply_patch, others (Claude, Gemini, Qwen, DeepSeek, Llama)
// are at home with search-and-replace edits.
func (w *Workspace) OffersTool(model, tool string) bool {
	switch tool {
	case ToolApplyPatch, ToolEditFile, ToolMultiEdit, ToolWriteFile:
	default:
		return true
	}
	patch := false
	switch w.cfg.EditTools {
	case EditToolsAll:
		return true
	case EditToolsPatch:
		patch = true
	case EditToolsReplace:
	default:
		patch = PatchModel(model)
	}
	return (tool == ToolApplyPatch) == patch
}

// PatchModel reports whether a model (the provider's name for it) was
// trained on apply_patch's format: OpenAI's codex models, GPT-5 and
// later, o3 and o4 (not gpt-4*, whose training on it was partial, nor the
// open-weight gpt-oss).
func PatchModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:] // "openai/gpt-5" as routers name it
	}
	switch {
	case strings.Contains(m, "oss"):
		return false
	case strings.Contains(m, "codex"):
		return true
	case strings.HasPrefix(m, "gpt-"):
		return !strings.HasPrefix(m, "gpt-3") && !strings.HasPrefix(m, "gpt-4")
	case strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
		return true
	}
	return false
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
	w.warm.close()
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
		errs = append(errs, scratch.RemoveAll(w.bg.tempDir))
	}
	w.bg.mu.Unlock()
	errs = append(errs, w.hooks.close())
	if w.tempDir != "" {
		errs = append(errs, scratch.RemoveAll(w.tempDir))
	}
	errs = append(errs, w.local.Close())
	w.closeLib.Do(w.promptLib.Close)
	return errors.Join(errs...)
}

// Local is the workspace's confined local filesystem.
func (w *Workspace) Local() *runtime.LocalFS { return w.local }

// Roots returns the workspace roots, the session's cwd first.
func (w *Workspace) Roots() []string { return w.roots }

// userRoots are the roots the user gave the session: its cwd, then its
// additional directories; not the read-only ones (the agent's own, such
// as the kept outputs), which searches and rules files leave alone.
func (w *Workspace) userRoots() []string {
	out := w.roots[:1:1]
	for _, r := range w.roots[1:] {
		if !slices.ContainsFunc(w.cfg.ReadOnlyRoots, func(ro string) bool { return policy.CanonicalPath(ro) == r }) {
			out = append(out, r)
		}
	}
	return out
}

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

// Prompts returns the commands and skills the session has: what the
// workspace's and the user's directories defined when they were last
// looked at for it (now, the first time). RefreshPrompts and a turn after
// PromptArrived look again; the system prompt, built for every model
// request, and the skill tool do not.
func (w *Workspace) Prompts() prompts.Library {
	w.libMu.Lock()
	snap := w.lib
	w.libMu.Unlock()
	if snap == nil {
		w.refreshPrompts(time.Now())
		w.libMu.Lock()
		snap = w.lib
		w.libMu.Unlock()
	}
	return snap.Library
}

// RefreshPrompts looks at the command and skill directories again (a
// look that starts now, or another session's of the same directories
// that started since) and reports whether what they define changed since
// the session last had it.
func (w *Workspace) RefreshPrompts() bool { return w.refreshPrompts(time.Now()) }

// PromptArrived notes that a user's prompt arrived: its turn looks at the
// command and skill directories again when it starts (TurnStarts), off
// the connection that brought it, with a look that started after now,
// which one look can make for every session of the workspace.
func (w *Workspace) PromptArrived() {
	now := time.Now()
	w.libMu.Lock()
	if now.After(w.libWanted) {
		w.libWanted = now
	}
	w.libMu.Unlock()
}

// OnPromptsChanged sets f, called by TurnStarts when its look finds the
// commands or skills changed (the host tells the client). f runs on the
// session's worker, under no lock of the workspace.
func (w *Workspace) OnPromptsChanged(f func()) {
	w.libMu.Lock()
	w.libChanged = f
	w.libMu.Unlock()
}

// TurnStarts implements the session's turn-start hook: for a prompt that
// arrived since the directories were last looked at (PromptArrived) they
// are looked at again before the turn's skills are described to the
// model, and OnPromptsChanged's f is called if the library changed.
func (w *Workspace) TurnStarts() {
	w.libMu.Lock()
	since, changed := w.libWanted, w.libChanged
	w.libMu.Unlock()
	if since.IsZero() {
		return
	}
	if w.refreshPrompts(since) && changed != nil {
		changed()
	}
}

// refreshPrompts takes the library as found by a look that started at t
// or later, and reports whether the session's changed. A look older than
// the one the session has is not taken (two refreshes of a session may
// end out of order).
func (w *Workspace) refreshPrompts(t time.Time) bool {
	snap, at := w.promptLib.Since(t)
	w.libMu.Lock()
	defer w.libMu.Unlock()
	if !w.libWanted.IsZero() && !w.libWanted.After(at) {
		w.libWanted = time.Time{}
	}
	if w.lib != nil && (w.lib.Signature == snap.Signature || at.Before(w.libAt)) {
		return false
	}
	w.lib, w.libAt = snap, at
	w.libNotices = append(w.libNotices, snap.Library.Notices...)
	return true
}

// touchRules adds the rules files of the directories down to path (once)
// and returns them for the tool result: the model gets them where it
// meets them, and the system prompt (and its cache) stays as it was.
func (w *Workspace) touchRules(path string) string {
	if w.rules == nil {
		return ""
	}
	added := w.rules.Touch(path)
	if len(added) == 0 {
		return ""
	}
	return rules.Reminder(added)
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
	return append(out, w.hooks.takeNotices()...)
}

// Describe implements agent.Workspace: the system prompt's lines about
// the workspace (its environment section: shell, roots, git, what is off
// limits), then the rules files. The mode is the session's to describe.
func (w *Workspace) Describe(policy.Mode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- Shell: run_command runs command lines with %s\n", w.shellInvocation())
	fmt.Fprintf(&b, "- Workspace root (the current directory): %s", w.roots[0])
	// A repository above the root that is another user's (/tmp/.git) is
	// not named: git refuses it too (safe.directory).
	if top, branch := gitState(w.roots[0]); top == "" || (top != w.roots[0] && !runtime.OwnedByUser(filepath.Join(top, ".git"))) {
		b.WriteString(" (not a git repository)")
	} else {
		fmt.Fprintf(&b, " (in a git repository at %s, %s)", top, branch)
	}
	b.WriteString("\n")
	notKept := func(dirs []string) []string {
		return slices.DeleteFunc(slices.Clone(dirs), func(d string) bool { return d == w.cfg.KeptOutputDir })
	}
	if other := notKept(w.roots[1:]); len(other) > 0 {
		fmt.Fprintf(&b, "- Other workspace directories: %s\n", strings.Join(other, ", "))
	}
	if ro := notKept(w.cfg.ReadOnlyRoots); len(ro) > 0 {
		fmt.Fprintf(&b, "- Read-only (never written): %s\n", strings.Join(ro, ", "))
	}
	if w.cfg.KeptOutputDir != "" {
		fmt.Fprintf(&b, "- Long tool outputs are kept whole in %s (read-only): read or grep the file a cut result names\n", w.cfg.KeptOutputDir)
	}
	b.WriteString("- The tools reach only files inside the workspace directories; give paths relative to the workspace root (or absolute). ")
	b.WriteString("Files and directories named .git, .env or .env.* (but for templates such as .env.example) are off limits at any depth")
	var extra []string
	for _, d := range w.local.Policy().DeniedPathPrefixes {
		if d != ".git" && d != ".env" {
			extra = append(extra, d)
		}
	}
	if len(extra) > 0 {
		fmt.Fprintf(&b, ", and so is everything under %s in each workspace directory", strings.Join(extra, ", "))
	}
	if secret := w.deniedInRoots(); len(secret) > 0 {
		fmt.Fprintf(&b, "; so are the user's credentials and the agent's own files: %s", strings.Join(secret, ", "))
		if w.cfg.KeptOutputDir != "" {
			b.WriteString(" (but for the kept tool outputs)")
		}
	}
	b.WriteString(".\n")
	if w.rules != nil {
		if p := w.rules.Prompt(); p != "" {
			b.WriteString("\n" + p)
		}
	}
	return b.String()
}

// deniedInRoots are the denied paths (WorkspaceConfig.DeniedPaths) that
// exist inside a workspace root, as configured: the ones the model could
// otherwise try to reach (the home directory as the workspace).
func (w *Workspace) deniedInRoots() []string {
	var out []string
	for _, d := range w.cfg.DeniedPaths {
		for _, r := range w.userRoots() {
			if rel, err := filepath.Rel(r, d); err == nil && filepath.IsLocal(rel) {
				if _, err := os.Lstat(d); err == nil {
					out = append(out, d)
				}
				break
			}
		}
	}
	return out
}

// LiveDescription is the part of the system prompt that can change during
// a session: the skills defined in files (the session tells the model of a
// change in a reminder).
func (w *Workspace) LiveDescription() string {
	lib := w.Prompts()
	if len(lib.Skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Skills\n\nSkills you can use: call the skill tool with a skill's name to load its instructions before doing that kind of task.\n")
	for _, sk := range lib.Skills {
		fmt.Fprintf(&b, "- %s: %s\n", sk.Name, sk.Description)
	}
	return b.String()
}

// gitState finds the git repository holding dir (the nearest directory at
// or above it with a .git) and says which branch is checked out, from
// .git/HEAD (read directly: no git process, and at most a few bytes of a
// file the repository controls).
func gitState(dir string) (top, branch string) {
	for d := dir; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Lstat(dotgit); err == nil {
			gitDir := dotgit
			if fi.Mode().IsRegular() {
				// A worktree or submodule: "gitdir: <path>".
				line := readSmall(dotgit)
				p, ok := strings.CutPrefix(line, "gitdir:")
				if !ok {
					return d, "branch unknown"
				}
				gitDir = strings.TrimSpace(p)
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(d, gitDir)
				}
			}
			head := readSmall(filepath.Join(gitDir, "HEAD"))
			if ref, ok := strings.CutPrefix(head, "ref: refs/heads/"); ok && printable(ref) {
				return d, "on branch " + ref
			}
			if len(head) >= 7 && printable(head) && !strings.Contains(head, " ") {
				return d, "detached HEAD at " + head[:7]
			}
			return d, "branch unknown"
		}
		if filepath.Dir(d) == d {
			return "", ""
		}
	}
}

// readSmall is the first line of a small file, trimmed ("" when it cannot
// be read). Only a regular file is read, never through a final symlink
// and never waiting on a FIFO: a planted .git/HEAD (here or in a
// directory above, /tmp/.git say) that leads to the agent's stdin or is
// a FIFO would hold the session and swallow the client's next message.
func readSmall(path string) string {
	data, _, err := runtime.ReadRegularFile(path, "", 256)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(line)
}

// printable reports whether s is short, valid text without control
// characters (a branch name from a hostile repository goes into the
// system prompt).
func printable(s string) bool {
	if s == "" || len(s) > 100 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
