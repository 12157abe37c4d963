package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/prompts"
	"github.com/acp-agent/acp-agent/internal/markdown"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
)

// The built-in tool names.
const (
	ToolReadFile      = "read_file"
	ToolWriteFile     = "write_file"
	ToolEditFile      = "edit_file"
	ToolListDirectory = "list_directory"
	ToolGlob          = "glob"
	ToolGrep          = "grep"
	ToolRunCommand    = "run_command"
	ToolUpdatePlan    = "update_plan"
	ToolSkill         = "skill"
	ToolMultiEdit     = "multi_edit"
	ToolApplyPatch    = "apply_patch"
	ToolWebFetch      = "web_fetch"
	ToolBackground    = "background_command"
	ToolAskUser       = "ask_user"
)

// builtins is the one list of the built-in tools, in the order they are
// offered: each name with the method that makes the tool, whether a
// workspace offers it at all (nil: always), and the schema of its
// arguments (agent.SchemaFor of the type the tool takes: what
// PrepareSchemas infers ahead of the first session).
var builtins = []struct {
	name    string
	make    func(*Workspace) agent.Tool
	offered func(*Workspace) bool
	schema  func() json.RawMessage
}{
	{ToolReadFile, (*Workspace).readFileTool, nil, agent.SchemaFor[readArgs]},
	{ToolWriteFile, (*Workspace).writeFileTool, nil, agent.SchemaFor[writeArgs]},
	{ToolEditFile, (*Workspace).editFileTool, nil, agent.SchemaFor[editArgs]},
	{ToolMultiEdit, (*Workspace).multiEditTool, nil, agent.SchemaFor[multiEditArgs]},
	{ToolApplyPatch, (*Workspace).applyPatchTool, nil, agent.SchemaFor[patchArgs]},
	{ToolListDirectory, (*Workspace).listDirectoryTool, nil, agent.SchemaFor[pathArgs]},
	{ToolGlob, (*Workspace).globTool, nil, agent.SchemaFor[globArgs]},
	{ToolGrep, (*Workspace).grepTool, nil, agent.SchemaFor[grepArgs]},
	{ToolRunCommand, (*Workspace).runCommandTool, nil, agent.SchemaFor[commandArgs]},
	{ToolBackground, (*Workspace).backgroundTool, nil, agent.SchemaFor[backgroundArgs]},
	{ToolUpdatePlan, (*Workspace).updatePlanTool, nil, agent.SchemaFor[planArgs]},
	{ToolWebFetch, (*Workspace).webFetchTool, nil, agent.SchemaFor[fetchArgs]},
	{ToolAskUser, (*Workspace).askUserTool, nil, agent.SchemaFor[askArgs]},
	// Only where there are skills: its description points at them.
	{ToolSkill, (*Workspace).skillTool, func(w *Workspace) bool { return len(w.Prompts().Skills) > 0 }, agent.SchemaFor[skillArgs]},
}

// PrepareSchemas infers the argument schemas of the built-in tools,
// which the process keeps (agent.SchemaFor): 1.5–2 ms of reflection and
// JSON that the first session's start would otherwise spend while its
// client waits. A program calls it at start-up, beside other work. Safe
// for concurrent use, with sessions starting too.
func PrepareSchemas() {
	for _, b := range builtins {
		b.schema()
	}
}

// BuiltinToolNames lists the names of every built-in tool, in the order
// BuiltinTools offers them.
func BuiltinToolNames() []string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.name
	}
	return names
}

// Limits of the built-in tools' output to the model.
const (
	maxListEntries = 1000
	maxGlobResults = 500
	maxGrepMatches = 200
)

// BuiltinTools returns the coding tools working in w: reading, writing and
// editing files, listing, finding and searching, running commands,
// keeping the plan, fetching, asking the user and, where there are
// skills, loading them.
func BuiltinTools(w *Workspace) []agent.Tool {
	tools := make([]agent.Tool, 0, len(builtins))
	for _, b := range builtins {
		if b.offered == nil || b.offered(w) {
			tools = append(tools, b.make(w))
		}
	}
	return tools
}

type skillArgs struct {
	Name string `json:"name" jsonschema:"the skill's name" schema:"minLength=1"`
	File string `json:"file,omitempty" jsonschema:"a file of the skill's folder, relative to it"`
}

// skillTool loads a skill's instructions (or a file of its folder) when
// the model decides to use it: only names and descriptions are in the
// context until then.
func (w *Workspace) skillTool() agent.Tool {
	find := func(name string) (prompts.Skill, error) {
		lib := w.Prompts()
		for _, sk := range lib.Skills {
			if sk.Name == name {
				return sk, nil
			}
		}
		return prompts.Skill{}, fmt.Errorf("there is no skill %q; the skills are listed in your instructions", name)
	}
	return agent.NewTool(agent.TypedTool[skillArgs]{
		Name: ToolSkill,
		Description: "Load a skill's instructions by name, before doing the kind of task it is for (the skills are listed in your instructions). " +
			"With file, read one of the files in the skill's folder that its instructions name.\n" +
			`Example: {"name": "pdf"}, then {"name": "pdf", "file": "reference.md"} for a file its instructions name`,
		ShortDescription: "Load a skill's instructions",
		Describe: func(a skillArgs) (agent.ToolCallInfo, error) {
			title := "Use the skill " + markdown.Code(a.Name)
			if a.File != "" {
				title += " (" + markdown.Code(a.File) + ")"
			}
			return agent.ToolCallInfo{Kind: agent.ToolKindRead, Title: title, Action: policy.ActionRead}, nil
		},
		Run: func(_ context.Context, a skillArgs) (agent.ToolResult, error) {
			sk, err := find(a.Name)
			if err != nil {
				return agent.ToolResult{}, err
			}
			if a.File != "" {
				text, err := sk.ReadFile(a.File)
				if err != nil {
					return agent.ToolResult{}, fmt.Errorf("reading %s of the skill %s: %w", a.File, a.Name, err)
				}
				return agent.ToolResult{Text: text}, nil
			}
			body, err := sk.Body()
			if err != nil {
				return agent.ToolResult{}, fmt.Errorf("reading the skill %s: %w", a.Name, err)
			}
			text := "# Skill " + sk.Name + "\n\n" + body
			if files := sk.Files(); len(files) > 0 {
				text += "\n\nFiles in the skill's folder (read one with this tool's file argument): " + strings.Join(files, ", ")
			}
			return agent.ToolResult{Text: text}, nil
		},
	})
}

// pathCall describes a call on one path, checked for access: reads are
// ActionRead, writes ActionEdit.
func (w *Workspace) pathCall(path string, kind agent.ToolKind, title string, line int, access policy.Access) (agent.ToolCallInfo, error) {
	action := policy.ActionRead
	if access == policy.AccessWrite {
		action = policy.ActionEdit
	}
	return agent.ToolCallInfo{Kind: kind, Title: title, Locations: location(path, line), Action: action}, w.check(path, access)
}

func location(path string, line int) []agent.Location {
	l := agent.Location{Path: path}
	if line > 0 {
		n := uint32(line)
		l.Line = &n
	}
	return []agent.Location{l}
}

type pathArgs struct {
	Path string `json:"path,omitempty" jsonschema:"absolute path, or relative to the workspace root (default: the root)"`
}

func (w *Workspace) listDirectoryTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[pathArgs]{
		Name: ToolListDirectory,
		Description: "List a directory: one entry per line, directories with a trailing /, symlinks marked, file sizes in bytes (at most 1000 entries). " +
			"To find files by name across directories use glob; to find text use grep.\n" +
			`Example: {"path": "internal/server"}`,
		ShortDescription: "List a directory",
		Describe: func(a pathArgs) (agent.ToolCallInfo, error) {
			path := w.abs(cmp.Or(a.Path, w.roots[0]))
			return w.pathCall(path, agent.ToolKindRead, "List "+markdown.Code(w.display(path)), 0, policy.AccessRead)
		},
		Run: func(ctx context.Context, a pathArgs) (agent.ToolResult, error) {
			entries, err := w.local.ListDirectory(ctx, w.abs(cmp.Or(a.Path, w.roots[0])))
			if err != nil {
				return agent.ToolResult{}, err
			}
			var b strings.Builder
			for i, e := range entries {
				if i == maxListEntries {
					fmt.Fprintf(&b, "[... %d more entries not shown ...]\n", len(entries)-i)
					break
				}
				switch {
				case e.IsSymlink:
					fmt.Fprintf(&b, "%s@ (symlink)\n", e.Name)
				case e.IsDir:
					fmt.Fprintf(&b, "%s/\n", e.Name)
				default:
					fmt.Fprintf(&b, "%s (%d bytes)\n", e.Name, e.Size)
				}
			}
			if len(entries) == 0 {
				b.WriteString("(empty directory)")
			}
			return agent.ToolResult{Text: b.String()}, nil
		},
	})
}

type globArgs struct {
	Pattern        string `json:"pattern" schema:"minLength=1"`
	Path           string `json:"path,omitempty" jsonschema:"directory to search from (default: every workspace root)"`
	IncludeIgnored bool   `json:"include_ignored,omitempty" jsonschema:"also list what git ignores"`
}

func (w *Workspace) globTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[globArgs]{
		Name: ToolGlob,
		Description: "Find files and directories by name pattern, relative to path: * and ? within a name, ** across directories, {a,b} alternatives. " +
			"Returns paths relative to the workspace root, sorted, at most 500. What git ignores (.gitignore, .ignore, .git/info/exclude, the global excludes) is left out unless include_ignored is set. " +
			"Use it instead of find or ls -R.\n" +
			`Example: {"pattern": "**/*_test.go", "path": "internal"}`,
		ShortDescription: "Find files by pattern",
		Describe: func(a globArgs) (agent.ToolCallInfo, error) {
			dir := w.abs(cmp.Or(a.Path, w.roots[0]))
			return w.pathCall(dir, agent.ToolKindSearch, fmt.Sprintf("Find %s in %s", markdown.Code(a.Pattern), markdown.Code(w.display(dir))), 0, policy.AccessRead)
		},
		Run: func(ctx context.Context, a globArgs) (agent.ToolResult, error) {
			var paths []string
			truncated := false
			for _, dir := range w.searchRoots(a.Path) {
				if len(paths) >= maxGlobResults {
					truncated = true
					break
				}
				got, cut, err := w.local.GlobWith(ctx, dir, a.Pattern,
					runtime.GlobOptions{Max: maxGlobResults - len(paths), IncludeIgnored: a.IncludeIgnored})
				if err != nil {
					return agent.ToolResult{}, err
				}
				paths, truncated = append(paths, got...), cut
				if cut {
					break
				}
			}
			shown := make([]string, len(paths))
			for i, p := range paths {
				shown[i] = w.display(p)
			}
			text := strings.Join(shown, "\n")
			if len(paths) == 0 {
				text = "No matches."
			}
			if truncated {
				text += fmt.Sprintf("\n[... more than %d matches; use a more specific pattern ...]", maxGlobResults)
			}
			return agent.ToolResult{Text: text}, nil
		},
	})
}

type grepArgs struct {
	Pattern        string `json:"pattern" jsonschema:"regular expression (RE2), or plain text with fixed_strings" schema:"minLength=1"`
	Path           string `json:"path,omitempty" jsonschema:"file or directory (default: every workspace root)"`
	Include        string `json:"include,omitempty" jsonschema:"glob the file names must match, e.g. *.ts"`
	IgnoreCase     bool   `json:"ignore_case,omitempty"`
	FixedStrings   bool   `json:"fixed_strings,omitempty" jsonschema:"match pattern as plain text, not a regular expression"`
	Context        int    `json:"context,omitempty" jsonschema:"lines of context before and after each match" schema:"minimum=0,maximum=10"`
	FilesOnly      bool   `json:"files_only,omitempty" jsonschema:"list only the paths of the files that match"`
	MaxMatches     int    `json:"max_matches,omitempty" schema:"minimum=1,maximum=2000"`
	IncludeIgnored bool   `json:"include_ignored,omitempty" jsonschema:"also search files git ignores"`
}

func (w *Workspace) grepTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[grepArgs]{
		Name: ToolGrep,
		Description: "Search file contents with a regular expression (Go RE2 syntax; set fixed_strings to search for plain text such as \"foo(\") under path (a file or directory). " +
			"include filters file names by glob (e.g. *.go). Returns \"path:line: text\" for each match, paths relative to the workspace root, in path order; " +
			"with context, that many lines around each match (\"path-line- text\", groups separated by --); with files_only, just the files that match. " +
			"At most 200 matches (max_matches up to 2000). Binary files are skipped, and so is what git ignores (.gitignore, .ignore, .git/info/exclude, the global excludes) unless include_ignored is set. " +
			"Use it instead of grep or rg in run_command.\n" +
			`Example: {"pattern": "func \\(s \\*Server\\) Handle", "include": "*.go", "context": 2}`,
		ShortDescription: "Search file contents",
		Describe: func(a grepArgs) (agent.ToolCallInfo, error) {
			path := w.abs(cmp.Or(a.Path, w.roots[0]))
			return w.pathCall(path, agent.ToolKindSearch, fmt.Sprintf("Search %s in %s", markdown.Code(a.Pattern), markdown.Code(w.display(path))), 0, policy.AccessRead)
		},
		Run: func(ctx context.Context, a grepArgs) (agent.ToolResult, error) {
			max := a.MaxMatches
			if max <= 0 {
				max = maxGrepMatches
			}
			pattern := a.Pattern
			if a.FixedStrings {
				pattern = regexp.QuoteMeta(pattern)
			}
			var matches []runtime.GrepMatch
			truncated := false
			for _, dir := range w.searchRoots(a.Path) {
				if len(matches) >= max {
					truncated = true
					break
				}
				got, cut, err := w.local.Grep(ctx, dir, runtime.GrepOptions{
					Pattern: pattern, Include: a.Include, IgnoreCase: a.IgnoreCase, MaxMatches: max - len(matches), IncludeIgnored: a.IncludeIgnored, FilesOnly: a.FilesOnly})
				if err != nil {
					return agent.ToolResult{}, err
				}
				matches, truncated = append(matches, got...), cut
				if cut {
					break
				}
			}
			var b strings.Builder
			switch {
			case a.FilesOnly:
				for _, m := range matches {
					b.WriteString(w.display(m.Path) + "\n")
				}
			case a.Context > 0:
				w.grepContext(ctx, &b, matches, a.Context)
			default:
				for _, m := range matches {
					fmt.Fprintf(&b, "%s:%d: %s\n", w.display(m.Path), m.Line, m.Text)
				}
			}
			if len(matches) == 0 {
				b.WriteString("No matches.")
			}
			if truncated {
				what := "matches"
				if a.FilesOnly {
					what = "files"
				}
				fmt.Fprintf(&b, "[... stopped after %d %s; narrow the pattern, path or include ...]", max, what)
			}
			return agent.ToolResult{Text: b.String()}, nil
		},
	})
}

// searchRoots are where a search without a path looks: the user's
// roots (userRoots); with a path, that path.
func (w *Workspace) searchRoots(path string) []string {
	if path != "" {
		return []string{w.abs(path)}
	}
	return w.userRoots()
}

// grepContext writes matches with n lines of context around each, file
// by file: "path:line: text" for a match, "path-line- text" for context,
// "--" between groups that do not touch.
func (w *Workspace) grepContext(ctx context.Context, b *strings.Builder, matches []runtime.GrepMatch, n int) {
	for i := 0; i < len(matches); {
		j := i
		for j < len(matches) && matches[j].Path == matches[i].Path {
			j++
		}
		path, name := matches[i].Path, w.display(matches[i].Path)
		data, _, err := w.local.ReadFile(ctx, path)
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if err != nil {
			lines = nil
		}
		hit := map[int]bool{}
		for _, m := range matches[i:j] {
			hit[m.Line] = true
		}
		last := 0 // the last line written for this file
		for _, m := range matches[i:j] {
			from, to := max(m.Line-n, last+1, 1), min(m.Line+n, len(lines))
			if lines == nil {
				from, to = m.Line, m.Line
			}
			if from > last+1 && b.Len() > 0 {
				b.WriteString("--\n")
			}
			for l := from; l <= to; l++ {
				text := m.Text
				if lines != nil {
					text = strings.TrimSuffix(lines[l-1], "\r")
					if len(text) > 300 {
						text = llm.Truncate(text, 300)
					}
				}
				sep := "-"
				if hit[l] {
					sep = ":"
				}
				fmt.Fprintf(b, "%s%s%d%s %s\n", name, sep, l, sep, text)
			}
			last = max(last, to)
		}
		i = j
	}
}

type commandArgs struct {
	Command        string `json:"command" jsonschema:"the command line" schema:"minLength=1"`
	Cwd            string `json:"cwd,omitempty" jsonschema:"working directory (default: the workspace root)"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" schema:"minimum=1,maximum=86400"`
	OutsideSandbox bool   `json:"outside_sandbox,omitempty" jsonschema:"run outside the sandbox; always asks the user; only after the sandbox blocked what the command must do"`
	Justification  string `json:"justification,omitempty" jsonschema:"with outside_sandbox: why the command needs to leave the sandbox (shown to the user)"`
	Background     bool   `json:"background,omitempty" jsonschema:"start the command and return at once with an id (a dev server, a watcher); follow and stop it with background_command. It runs until stopped, its timeout, or the end of the session"`
}

// command is a parsed, checked run_command call.
type command struct {
	line    string
	cwd     string
	timeout time.Duration
	parsed  policy.CommandLine
	// outside: the user must allow running it outside the sandbox, for
	// justification.
	outside       bool
	justification string
	// background: started and left running (background_command follows it).
	background bool
}

func (w *Workspace) parseCommand(a commandArgs) (command, error) {
	var err error
	c := command{line: a.Command, cwd: w.abs(cmp.Or(a.Cwd, w.roots[0])), timeout: w.cfg.CommandTimeout, background: a.Background}
	if c.background {
		c.timeout = 0 // a dev server runs until stopped, or the session ends
	}
	if a.OutsideSandbox && w.Sandboxed() {
		if strings.TrimSpace(a.Justification) == "" {
			return c, errors.New("outside_sandbox needs a justification: say why the command cannot run inside the sandbox")
		}
		c.outside, c.justification = true, strings.TrimSpace(a.Justification)
	}
	if a.TimeoutSeconds > 0 {
		c.timeout = time.Duration(a.TimeoutSeconds) * time.Second
	}
	if m := w.cfg.Terminal.MaxRuntime; m > 0 && (c.timeout > m || c.timeout == 0) {
		c.timeout = m
	}
	if err := w.check(c.cwd, policy.AccessRead); err != nil {
		return c, err
	}
	// The directory the command runs in is its real path: a symlink in
	// the workspace that points elsewhere is refused like that elsewhere.
	if c.cwd, err = w.local.CheckDir(c.cwd); err != nil {
		return c, err
	}
	c.parsed, err = w.parseLine(a.Command, c.cwd)
	if err != nil {
		return c, fmt.Errorf("the command cannot be run: %w", err)
	}
	if err := w.cfg.Terminal.Check(c.parsed); err != nil {
		return c, err
	}
	return c, nil
}

func (w *Workspace) runCommandTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[commandArgs]{
		Name: ToolRunCommand,
		Description: "Run a shell command line (" + w.shellInvocation() + ") in the workspace root (or cwd) and return its combined stdout and stderr and its exit status. " +
			"Use it to build, test, run git and the project's tools. Do not use it to read, search or edit files: read_file, grep, glob and the edit tools do that better. " +
			"It runs without a terminal: nothing can answer a prompt, so pass non-interactive flags (--yes, git --no-pager, CI=1) and never start an editor or a pager. " +
			"A command is killed at its timeout (default 2 minutes; timeout_seconds for longer builds). Start servers and watchers with background: true, never in the foreground. " +
			"Long output is cut to its first and last lines (about 32 KiB in all), and the result names a file holding all of it: read or grep that file instead of running the command again; filter noisy output (| tail -50, grep) when you only need part. " +
			"The user may be asked to approve the command; keep lines simple (no command substitution or redirection to files) so approvals can be remembered.\n" +
			`Example: {"command": "go test ./internal/server/ -run TestHandle -count=1", "timeout_seconds": 300}`,
		ShortDescription: "Run a shell command",
		// The sandbox helper starts while the call's arguments stream.
		Coming: w.warm.soon,
		Describe: func(args commandArgs) (agent.ToolCallInfo, error) {
			c, err := w.parseCommand(args)
			info := agent.ToolCallInfo{Kind: agent.ToolKindExecute, Title: markdown.Code(c.line), Action: policy.ActionExecute}
			if err != nil {
				return info, err
			}
			if c.outside {
				info.Escalation = c.justification
				info.Title = "Outside the sandbox: " + markdown.Code(c.line) + " (" + c.justification + ")"
			}
			if c.background {
				info.Title = "In the background: " + info.Title
			}
			info.Command = &c.parsed
			info.CommandContext = &policy.CommandContext{Dir: c.cwd, Path: w.cfg.PATH, Operand: w.operandInfo, RepoHoldsDenied: w.repoHoldsDenied}
			info.CommandFolder = w.display(c.cwd)
			if c.cwd != w.roots[0] {
				info.Locations = location(c.cwd, 0)
			}
			return info, nil
		},
		Run: func(ctx context.Context, args commandArgs) (agent.ToolResult, error) {
			c, err := w.parseCommand(args)
			if err != nil {
				return agent.ToolResult{}, err
			}
			if c.background {
				return w.startBackground(ctx, c)
			}
			var content []agent.ToolContent
			term := w.term
			if c.outside {
				term = w.escapeTerm
			}
			// What the command changes in the workspace can be rewound.
			after, err := w.aroundCommand(ctx)
			if err != nil {
				return agent.ToolResult{}, err
			}
			spec := w.commandSpec(c.line, c.cwd)
			spec.Env = w.editorEnv(term)
			spec.OutputByteLimit, spec.Timeout = w.cfg.OutputByteLimit, c.timeout
			spec.SandboxNetwork = w.cfg.SandboxNetworkInFullAccess && agent.RunningMode(ctx) == policy.ModeFullAccess
			view := w.showCommand(ctx, term, c, &spec)
			if view != nil {
				content = []agent.ToolContent{{TerminalID: view.ID()}}
				agent.ToolProgress(ctx, content)
			}
			res, err := term.Run(ctx, spec, func(id string) {
				// The editor shows the terminal live in the tool call.
				content = []agent.ToolContent{{TerminalID: id}}
				agent.ToolProgress(ctx, content)
			})
			stopped := view != nil && isClosed(view.Stop())
			if view != nil {
				view.Exited(commandExit(res, err))
			}
			// Recorded before the result is returned, also when the
			// command failed to run.
			kept := after()
			if err != nil {
				return agent.ToolResult{}, err
			}
			r := commandResult(c, res, content)
			if stopped {
				r.Text += "\n[stopped by the user: the command was killed before it finished]"
				r.IsError = true
			}
			if w.Sandboxed() && !c.outside {
				r.Text += sandboxBlockedNote(res)
			}
			r.Text += kept
			return r, nil
		},
	})
}

// showCommand shows a command that runs in the agent's own terminal to
// the user as it runs, when the editor has a display for it: its output
// goes to the view, and the view stops it.
func (w *Workspace) showCommand(ctx context.Context, term CommandRunner, c command, spec *runtime.CommandSpec) CommandView {
	if w.commands == nil || (w.termViaEditor && term == w.term) {
		return nil
	}
	view := w.commands.ShowCommand(ctx, c.line, c.cwd)
	spec.Output, spec.Stop = view.Output, view.Stop()
	return view
}

// commandExit is how a command ended, for its view (zero when it did not
// run).
func commandExit(res runtime.CommandResult, err error) CommandExit {
	if err != nil {
		return CommandExit{}
	}
	return CommandExit{ExitCode: res.ExitCode, Signal: res.Signal}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// commandResult is what the model (and, without an editor terminal, the
// user) sees of a finished command.
func commandResult(c command, res runtime.CommandResult, terminal []agent.ToolContent) agent.ToolResult {
	var b strings.Builder
	if res.Truncated {
		b.WriteString("[... the start of the output was dropped: the command printed more than was kept; only its end is below ...]\n")
	}
	b.WriteString(res.Output)
	if res.Output != "" && !strings.HasSuffix(res.Output, "\n") {
		b.WriteByte('\n')
	}
	failed := true
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "[timed out after %v; the command was killed]", c.timeout)
	case res.ExitCode != nil:
		fmt.Fprintf(&b, "[exit code %d]", *res.ExitCode)
		failed = *res.ExitCode != 0
	case res.Signal != "":
		fmt.Fprintf(&b, "[killed by signal %s]", res.Signal)
	default:
		b.WriteString("[exit status unknown]")
	}
	return agent.ToolResult{Text: b.String(), IsError: failed, Content: terminal}
}

type planArgs struct {
	Entries []struct {
		Content  string `json:"content" schema:"minLength=1"`
		Priority string `json:"priority,omitempty" schema:"enum=high|medium|low"`
		Status   string `json:"status" schema:"enum=pending|in_progress|completed"`
	} `json:"entries"`
}

func (w *Workspace) updatePlanTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[planArgs]{
		Name: ToolUpdatePlan,
		Description: "Show your plan for the task to the user as a checklist. Send the complete plan every time (it replaces the previous one). " +
			"Keep exactly one entry in_progress while you work, and mark each completed as soon as it is done, not in a batch at the end; add, drop or reword entries when the plan changes. " +
			"Use it for work of three or more steps or several files; skip it for a question or a single small change. Entries are short actions (\"Add the retry to the client\"), not commentary. An empty list clears the plan.\n" +
			`Example: {"entries": [{"content": "Find where sessions are saved", "status": "completed"}, {"content": "Make the write atomic", "status": "in_progress"}, {"content": "Run the store tests", "status": "pending"}]}`,
		ShortDescription: "Update the task plan",
		Describe: func(planArgs) (agent.ToolCallInfo, error) {
			return agent.ToolCallInfo{Kind: agent.ToolKindThink, Title: "Update plan", Action: policy.ActionNone}, nil
		},
		Run: func(ctx context.Context, a planArgs) (agent.ToolResult, error) {
			inProgress := 0
			for _, e := range a.Entries {
				if e.Status == "in_progress" {
					inProgress++
				}
			}
			if inProgress > 1 {
				return agent.ToolResult{}, fmt.Errorf("%d entries are in_progress; keep exactly one in_progress (the step you are on) and mark the others pending or completed", inProgress)
			}
			plan := agent.Plan{Entries: []agent.PlanEntry{}}
			done := 0
			for _, e := range a.Entries {
				plan.Entries = append(plan.Entries, agent.PlanEntry{Content: e.Content, Priority: cmp.Or(e.Priority, "medium"), Status: e.Status})
				if e.Status == "completed" {
					done++
				}
			}
			agent.SendPlan(ctx, plan)
			if len(plan.Entries) == 0 {
				return agent.ToolResult{Text: "Plan cleared."}, nil
			}
			return agent.ToolResult{Text: fmt.Sprintf("Plan updated: %d entries, %d completed.", len(a.Entries), done)}, nil
		},
	})
}

// sandboxMarkers are what programs print when the sandbox refuses them
// (EACCES, EPERM, EROFS on .git, a refused socket): C programs in
// strerror's words, Go programs in lower case.
var sandboxMarkers = []string{"permission denied", "operation not permitted", "read-only file system"}

// crossDevice is what a rename(2) across a mount's edge prints (EXDEV).
const crossDevice = "cross-device link"

// sandboxBlockedNote tells the model that a failed confined command was
// probably stopped by the sandbox, quoting the line that says so, what
// the sandbox let this command do (as it ran: its network, whether .git
// was writable, whether paths were masked by mount or granted around),
// and how to escalate. An EXDEV is the sandbox's only where it mounts.
func sandboxBlockedNote(res runtime.CommandResult) string {
	conf := res.Confined
	if conf == nil || res.ExitCode != nil && *res.ExitCode == 0 {
		return ""
	}
	const escalate = " If the task truly needs more, call run_command again with outside_sandbox: true and a justification; the user decides."
	for _, line := range strings.Split(res.Output, "\n") {
		lower := strings.ToLower(line)
		quoted := "\n[blocked by the sandbox: " + strings.TrimSpace(line) + "] "
		if conf.Mounts && strings.Contains(lower, crossDevice) {
			return quoted + "In the sandbox each directory that holds a .env file or a denied path is a mount point, so rename(2) cannot move a file into or out of it (EXDEV): " +
				"copy the file and remove the original instead (mv does so by itself)." + escalate
		}
		for _, m := range sandboxMarkers {
			if strings.Contains(lower, m) {
				return quoted + confinementSummary(conf) + escalate
			}
		}
	}
	return ""
}

// confinementSummary says what a confined command could do.
func confinementSummary(conf *runtime.Confinement) string {
	var b strings.Builder
	b.WriteString("Commands run confined: they write only in the workspace")
	if !conf.Policy.AllowGitWrites {
		b.WriteString(" (not its .git, which is read-only)")
	}
	if len(conf.Policy.ExtraWritable) > 0 {
		b.WriteString(", the toolchain caches")
	}
	if conf.Policy.TempDir != "" {
		b.WriteString(", their temporary directory ($TMPDIR)")
	}
	if conf.GrantedAround {
		b.WriteString("; on this system the sandbox cannot mask paths by mount, so nothing new can be created directly in a directory that holds .git, a .env file or a denied path " +
			"(the top of a git repository, for one), though the files already there can be written")
	}
	b.WriteString("; .env files and the user's secrets (~/.ssh, cloud credentials, ...) cannot be read")
	if conf.Policy.Network {
		b.WriteString("; the network is on.")
	} else {
		b.WriteString("; there is no network.")
	}
	return b.String()
}
