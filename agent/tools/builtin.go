package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/prompts"
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

var builtinToolNames = []string{ToolReadFile, ToolWriteFile, ToolEditFile, ToolListDirectory, ToolGlob, ToolGrep, ToolRunCommand, ToolUpdatePlan}

// Limits of the built-in tools' output to the model.
const (
	maxListEntries = 1000
	maxGlobResults = 500
	maxGrepMatches = 200
)

// BuiltinTools returns the coding tools working in w: reading, writing and
// editing files, listing, finding and searching, running commands, and
// keeping the plan.
func BuiltinTools(w *Workspace) []agent.Tool {
	tools := []agent.Tool{
		w.readFileTool(), w.writeFileTool(), w.editFileTool(), w.multiEditTool(), w.applyPatchTool(), w.listDirectoryTool(),
		w.globTool(), w.grepTool(), w.runCommandTool(), w.backgroundTool(), updatePlanTool(), w.webFetchTool(), w.askUserTool(),
	}
	if lib := w.loadedPrompts(); len(lib.Skills) > 0 {
		tools = append(tools, w.skillTool())
	}
	return tools
}

type skillArgs struct {
	Name string `json:"name"`
	File string `json:"file"`
}

// skillTool loads a skill's instructions (or a file of its folder) when
// the model decides to use it: only names and descriptions are in the
// context until then.
func (w *Workspace) skillTool() agent.Tool {
	find := func(name string) (prompts.Skill, error) {
		lib := w.loadedPrompts()
		for _, sk := range lib.Skills {
			if sk.Name == name {
				return sk, nil
			}
		}
		return prompts.Skill{}, fmt.Errorf("there is no skill %q; the skills are listed in your instructions", name)
	}
	return agent.Tool{
		Name: ToolSkill,
		Description: "Load a skill's instructions by name, before doing the kind of task it is for (the skills are listed in your instructions). " +
			"With file, read one of the files in the skill's folder that its instructions name.",
		ShortDescription: "Load a skill's instructions",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"name":{"type":"string","minLength":1,"description":"the skill's name"},
			"file":{"type":"string","description":"a file of the skill's folder, relative to it"}},
			"required":["name"],"additionalProperties":false}`),
		Describe: describeWith(func(a skillArgs) (agent.ToolCallInfo, error) {
			title := "Use the skill " + a.Name
			if a.File != "" {
				title += " (" + a.File + ")"
			}
			return agent.ToolCallInfo{Kind: agent.ToolKindRead, Title: title, Action: policy.ActionRead}, nil
		}),
		Run: runWith(func(_ context.Context, a skillArgs) (agent.ToolResult, error) {
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
		}),
	}
}

// decode unmarshals schema-checked arguments.
func decode[T any](args json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(args, &v); err != nil {
		return v, fmt.Errorf("invalid arguments: %w", err)
	}
	return v, nil
}

// describeWith and runWith decode the (schema-checked) arguments for f.
func describeWith[T any](f func(T) (agent.ToolCallInfo, error)) agent.DescribeFunc {
	return func(args json.RawMessage) (agent.ToolCallInfo, error) {
		a, err := decode[T](args)
		if err != nil {
			return agent.ToolCallInfo{}, err
		}
		return f(a)
	}
}

func runWith[T any](f func(context.Context, T) (agent.ToolResult, error)) agent.ToolFunc {
	return func(ctx context.Context, args json.RawMessage) (agent.ToolResult, error) {
		a, err := decode[T](args)
		if err != nil {
			return agent.ToolResult{}, err
		}
		return f(ctx, a)
	}
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

type readArgs struct {
	Path  string `json:"path"`
	Line  int    `json:"line"`
	Limit int    `json:"limit"`
}

func (w *Workspace) readFileTool() agent.Tool {
	return agent.Tool{
		Name: ToolReadFile,
		Description: "Read a text file. Returns its content; with line (1-based) and/or limit (a number of lines), only that window. " +
			"Reads the editor's buffer when the file is open there. Use it before editing a file. " +
			"A PNG, JPEG, GIF or WebP image is returned as an image when the model can see images.",
		ShortDescription: "Read a text file",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string","description":"absolute path, or relative to the workspace root"},
			"line":{"type":"integer","minimum":1,"description":"first line to read (1-based)"},
			"limit":{"type":"integer","minimum":1,"description":"number of lines to read"}},
			"required":["path"],"additionalProperties":false}`),
		Describe: describeWith(func(a readArgs) (agent.ToolCallInfo, error) {
			path := w.abs(a.Path)
			title := "Read " + w.display(path)
			switch {
			case a.Line > 0 && a.Limit > 0:
				title += fmt.Sprintf(" (lines %d–%d)", a.Line, a.Line+a.Limit-1)
			case a.Line > 0:
				title += fmt.Sprintf(" (from line %d)", a.Line)
			case a.Limit > 0:
				title += fmt.Sprintf(" (first %d lines)", a.Limit)
			}
			return w.pathCall(path, agent.ToolKindRead, title, a.Line, policy.AccessRead)
		}),
		Run: runWith(func(ctx context.Context, a readArgs) (agent.ToolResult, error) {
			if isImagePath(a.Path) {
				if res, ok, err := w.readImage(ctx, w.abs(a.Path)); ok || err != nil {
					return res, err
				}
			}
			text, err := w.files.ReadTextFile(ctx, w.abs(a.Path), a.Line, a.Limit)
			if err != nil {
				return agent.ToolResult{}, err
			}
			if text == "" {
				text = "(empty)"
			}
			return agent.ToolResult{Text: text + w.touchRules(w.abs(a.Path))}, nil
		}),
	}
}

// current returns a file's content before an edit, and whether it exists.
// It reads the editor's buffer when the editor offers reads.
func (w *Workspace) current(ctx context.Context, path string) (string, bool, error) {
	data, exists, err := w.local.ReadFile(ctx, path)
	if err != nil {
		return "", false, err
	}
	if w.readsViaEditor && exists {
		text, err := w.files.ReadTextFile(ctx, path, 0, 0)
		return text, true, err
	}
	return string(data), exists, nil
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (w *Workspace) writeFileTool() agent.Tool {
	return agent.Tool{
		Name:             ToolWriteFile,
		Description:      "Create a file, or replace a whole file, with content. Parent directories are created. Prefer edit_file for changes to an existing file.",
		ShortDescription: "Create or overwrite a file",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string","description":"absolute path, or relative to the workspace root"},
			"content":{"type":"string","description":"the complete new content"}},
			"required":["path","content"],"additionalProperties":false}`),
		Describe: describeWith(func(a writeArgs) (agent.ToolCallInfo, error) {
			path := w.abs(a.Path)
			return w.pathCall(path, agent.ToolKindEdit, "Write "+w.display(path), 0, policy.AccessWrite)
		}),
		Run: runWith(func(ctx context.Context, a writeArgs) (agent.ToolResult, error) {
			path := w.abs(a.Path)
			old, exists, err := w.current(ctx, path)
			if err != nil {
				return agent.ToolResult{}, err
			}
			if err := w.writeFile(ctx, path, a.Content); err != nil {
				return agent.ToolResult{}, err
			}
			diff := &agent.Diff{Path: path, NewText: a.Content}
			verb := "Created"
			if exists {
				diff.OldText, verb = &old, "Replaced"
			}
			return agent.ToolResult{
				Text:    fmt.Sprintf("%s %s (%d bytes).", verb, path, len(a.Content)) + w.touchRules(path),
				Content: []agent.ToolContent{{Diff: diff}},
			}, nil
		}),
	}
}

type editArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

func (w *Workspace) editFileTool() agent.Tool {
	return agent.Tool{
		Name: ToolEditFile,
		Description: "Edit a file by exact string replacement: old_string must occur in the file exactly once (include enough surrounding lines to make it unique), " +
			"or set replace_all to replace every occurrence. Whitespace and indentation must match exactly. Read the file first.",
		ShortDescription: "Replace exact text in a file",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string","description":"absolute path, or relative to the workspace root"},
			"old_string":{"type":"string","minLength":1,"description":"the exact text to replace"},
			"new_string":{"type":"string","description":"the replacement"},
			"replace_all":{"type":"boolean","description":"replace every occurrence (default false)"}},
			"required":["path","old_string","new_string"],"additionalProperties":false}`),
		Describe: describeWith(func(a editArgs) (agent.ToolCallInfo, error) {
			path := w.abs(a.Path)
			return w.pathCall(path, agent.ToolKindEdit, "Edit "+w.display(path), 0, policy.AccessWrite)
		}),
		Run: runWith(func(ctx context.Context, a editArgs) (agent.ToolResult, error) {
			path := w.abs(a.Path)
			old, exists, err := w.current(ctx, path)
			if err != nil {
				return agent.ToolResult{}, err
			}
			if !exists {
				return agent.ToolResult{}, fmt.Errorf("%s does not exist; use write_file to create it", path)
			}
			updated, n, err := replaceExact(old, a.OldString, a.NewString, a.ReplaceAll, path)
			if err != nil {
				return agent.ToolResult{}, err
			}
			if err := w.writeFile(ctx, path, updated); err != nil {
				return agent.ToolResult{}, err
			}
			line := 1 + strings.Count(old[:strings.Index(old, a.OldString)], "\n")
			plural := map[bool]string{true: "s", false: ""}[n > 1]
			return agent.ToolResult{
				Text:    fmt.Sprintf("Replaced %d occurrence%s in %s (first at line %d).", n, plural, path, line) + w.touchRules(path),
				Content: []agent.ToolContent{{Diff: &agent.Diff{Path: path, OldText: &old, NewText: updated}}},
			}, nil
		}),
	}
}

// replaceExact replaces old_string in content (once, which must be the
// only occurrence, or every occurrence with all) and says how many.
func replaceExact(content, oldS, newS string, all bool, path string) (string, int, error) {
	if oldS == newS {
		return "", 0, errors.New("old_string and new_string are the same; nothing to change")
	}
	n := strings.Count(content, oldS)
	switch {
	case n == 0:
		return "", 0, fmt.Errorf("old_string was not found in %s; read the file and copy the text exactly, whitespace included", path)
	case n > 1 && !all:
		return "", 0, fmt.Errorf("old_string occurs %d times in %s; include more surrounding text to make it unique, or set replace_all", n, path)
	}
	return strings.Replace(content, oldS, newS, map[bool]int{true: -1, false: 1}[all]), n, nil
}

type multiEditArgs struct {
	Path  string `json:"path"`
	Edits []struct {
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	} `json:"edits"`
}

// multiEditTool applies several exact replacements to one file, in order,
// all or nothing: if any fails, the file is not written.
func (w *Workspace) multiEditTool() agent.Tool {
	return agent.Tool{
		Name: ToolMultiEdit,
		Description: "Make several exact replacements in one file, in order, all or nothing: each edit works on the result of the previous ones, " +
			"and if any old_string is missing (or not unique without replace_all) nothing is written. Prefer it to several edit_file calls on one file.",
		ShortDescription: "Several exact replacements in one file",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string","description":"absolute path, or relative to the workspace root"},
			"edits":{"type":"array","minItems":1,"maxItems":100,"items":{"type":"object","properties":{
				"old_string":{"type":"string","minLength":1},
				"new_string":{"type":"string"},
				"replace_all":{"type":"boolean"}},
				"required":["old_string","new_string"],"additionalProperties":false}}},
			"required":["path","edits"],"additionalProperties":false}`),
		Describe: describeWith(func(a multiEditArgs) (agent.ToolCallInfo, error) {
			path := w.abs(a.Path)
			return w.pathCall(path, agent.ToolKindEdit, fmt.Sprintf("Edit %s (%d changes)", w.display(path), len(a.Edits)), 0, policy.AccessWrite)
		}),
		Run: runWith(func(ctx context.Context, a multiEditArgs) (agent.ToolResult, error) {
			path := w.abs(a.Path)
			old, exists, err := w.current(ctx, path)
			if err != nil {
				return agent.ToolResult{}, err
			}
			if !exists {
				return agent.ToolResult{}, fmt.Errorf("%s does not exist; use write_file to create it", path)
			}
			updated, total := old, 0
			for i, e := range a.Edits {
				next, n, err := replaceExact(updated, e.OldString, e.NewString, e.ReplaceAll, path)
				if err != nil {
					return agent.ToolResult{}, fmt.Errorf("edit %d of %d: %w; nothing was written", i+1, len(a.Edits), err)
				}
				updated, total = next, total+n
			}
			if err := w.writeFile(ctx, path, updated); err != nil {
				return agent.ToolResult{}, err
			}
			return agent.ToolResult{
				Text:    fmt.Sprintf("Applied %d edits (%d replacements) to %s.", len(a.Edits), total, path) + w.touchRules(path),
				Content: []agent.ToolContent{{Diff: &agent.Diff{Path: path, OldText: &old, NewText: updated}}},
			}, nil
		}),
	}
}

type pathArgs struct {
	Path string `json:"path"`
}

func (w *Workspace) listDirectoryTool() agent.Tool {
	return agent.Tool{
		Name:             ToolListDirectory,
		Description:      "List a directory: one entry per line, directories with a trailing /, symlinks marked, file sizes in bytes.",
		ShortDescription: "List a directory",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string","description":"absolute path, or relative to the workspace root (default: the root)"}},
			"additionalProperties":false}`),
		Describe: describeWith(func(a pathArgs) (agent.ToolCallInfo, error) {
			path := w.abs(cmp.Or(a.Path, w.roots[0]))
			return w.pathCall(path, agent.ToolKindRead, "List "+w.display(path), 0, policy.AccessRead)
		}),
		Run: runWith(func(ctx context.Context, a pathArgs) (agent.ToolResult, error) {
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
		}),
	}
}

type globArgs struct {
	Pattern        string `json:"pattern"`
	Path           string `json:"path"`
	IncludeIgnored bool   `json:"include_ignored"`
}

func (w *Workspace) globTool() agent.Tool {
	return agent.Tool{
		Name:             ToolGlob,
		Description:      "Find files and directories by name pattern, relative to path: * and ? within a name, ** across directories, {a,b} alternatives (e.g. **/*.go, cmd/**/main.go). Returns absolute paths, sorted. What git ignores (.gitignore, .ignore, .git/info/exclude, the global excludes) is left out unless include_ignored is set.",
		ShortDescription: "Find files by pattern",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"pattern":{"type":"string","minLength":1},
			"path":{"type":"string","description":"directory to search from (default: the workspace root)"},
			"include_ignored":{"type":"boolean","description":"also list what git ignores"}},
			"required":["pattern"],"additionalProperties":false}`),
		Describe: describeWith(func(a globArgs) (agent.ToolCallInfo, error) {
			dir := w.abs(cmp.Or(a.Path, w.roots[0]))
			return w.pathCall(dir, agent.ToolKindSearch, fmt.Sprintf("Find %s in %s", a.Pattern, w.display(dir)), 0, policy.AccessRead)
		}),
		Run: runWith(func(ctx context.Context, a globArgs) (agent.ToolResult, error) {
			paths, truncated, err := w.local.GlobWith(ctx, w.abs(cmp.Or(a.Path, w.roots[0])), a.Pattern,
				runtime.GlobOptions{Max: maxGlobResults, IncludeIgnored: a.IncludeIgnored})
			if err != nil {
				return agent.ToolResult{}, err
			}
			text := strings.Join(paths, "\n")
			if len(paths) == 0 {
				text = "No matches."
			}
			if truncated {
				text += fmt.Sprintf("\n[... more than %d matches; use a more specific pattern ...]", maxGlobResults)
			}
			return agent.ToolResult{Text: text}, nil
		}),
	}
}

type grepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Include    string `json:"include"`
	IgnoreCase bool   `json:"ignore_case"`
	MaxMatches int    `json:"max_matches"`
	// IncludeIgnored searches what git ignores too.
	IncludeIgnored bool `json:"include_ignored"`
}

func (w *Workspace) grepTool() agent.Tool {
	return agent.Tool{
		Name: ToolGrep,
		Description: "Search file contents with a regular expression (Go RE2 syntax) under path (a file or directory). " +
			"include filters file names by glob (e.g. *.go). Returns path:line: text, in path order; binary files are skipped, and so is what git ignores (.gitignore, .ignore, .git/info/exclude, the global excludes) unless include_ignored is set.",
		ShortDescription: "Search file contents",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"pattern":{"type":"string","minLength":1},
			"path":{"type":"string","description":"file or directory (default: the workspace root)"},
			"include":{"type":"string","description":"glob the file names must match"},
			"ignore_case":{"type":"boolean"},
			"max_matches":{"type":"integer","minimum":1,"maximum":2000},
			"include_ignored":{"type":"boolean","description":"also search files git ignores"}},
			"required":["pattern"],"additionalProperties":false}`),
		Describe: describeWith(func(a grepArgs) (agent.ToolCallInfo, error) {
			path := w.abs(cmp.Or(a.Path, w.roots[0]))
			return w.pathCall(path, agent.ToolKindSearch, fmt.Sprintf("Search %q in %s", a.Pattern, w.display(path)), 0, policy.AccessRead)
		}),
		Run: runWith(func(ctx context.Context, a grepArgs) (agent.ToolResult, error) {
			max := a.MaxMatches
			if max <= 0 {
				max = maxGrepMatches
			}
			matches, truncated, err := w.local.Grep(ctx, w.abs(cmp.Or(a.Path, w.roots[0])), runtime.GrepOptions{
				Pattern: a.Pattern, Include: a.Include, IgnoreCase: a.IgnoreCase, MaxMatches: max, IncludeIgnored: a.IncludeIgnored})
			if err != nil {
				return agent.ToolResult{}, err
			}
			var b strings.Builder
			for _, m := range matches {
				fmt.Fprintf(&b, "%s:%d: %s\n", m.Path, m.Line, m.Text)
			}
			if len(matches) == 0 {
				b.WriteString("No matches.")
			}
			if truncated {
				fmt.Fprintf(&b, "[... stopped after %d matches; narrow the pattern or path ...]", max)
			}
			return agent.ToolResult{Text: b.String()}, nil
		}),
	}
}

type commandArgs struct {
	Command        string `json:"command"`
	Cwd            string `json:"cwd"`
	TimeoutSeconds int    `json:"timeout_seconds"`
	OutsideSandbox bool   `json:"outside_sandbox"`
	Justification  string `json:"justification"`
	Background     bool   `json:"background"`
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

func (w *Workspace) parseCommand(args json.RawMessage) (command, error) {
	a, err := decode[commandArgs](args)
	if err != nil {
		return command{}, err
	}
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
	return agent.Tool{
		Name: ToolRunCommand,
		Description: "Run a shell command line (" + w.shellName() + ") in the workspace and return its combined output and exit status. " +
			"Use it to build, test, run git and the like. Output beyond a limit keeps its end. Commands are killed at their timeout. " +
			"The user may be asked to approve the command; keep lines simple (no command substitution or redirection to files) so approvals can be remembered.",
		ShortDescription: "Run a shell command",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"command":{"type":"string","minLength":1,"description":"the command line"},
			"cwd":{"type":"string","description":"working directory (default: the workspace root)"},
			"timeout_seconds":{"type":"integer","minimum":1,"maximum":86400},
			"outside_sandbox":{"type":"boolean","description":"run outside the sandbox; always asks the user; only after the sandbox blocked what the command must do"},
			"justification":{"type":"string","description":"with outside_sandbox: why the command needs to leave the sandbox (shown to the user)"},
			"background":{"type":"boolean","description":"start the command and return at once with an id (a dev server, a watcher); follow and stop it with background_command. It runs until stopped, its timeout, or the end of the session"}},
			"required":["command"],"additionalProperties":false}`),
		Describe: func(args json.RawMessage) (agent.ToolCallInfo, error) {
			c, err := w.parseCommand(args)
			info := agent.ToolCallInfo{Kind: agent.ToolKindExecute, Title: c.line, Action: policy.ActionExecute}
			if err != nil {
				return info, err
			}
			if c.outside {
				info.Escalation = c.justification
				info.Title = "Outside the sandbox: " + c.line + " (" + c.justification + ")"
			}
			if c.background {
				info.Title = "In the background: " + info.Title
			}
			info.Command = &c.parsed
			info.CommandContext = &policy.CommandContext{Dir: c.cwd, Path: w.cfg.PATH, Operand: w.operandInfo}
			info.CommandFolder = w.display(c.cwd)
			if c.cwd != w.roots[0] {
				info.Locations = location(c.cwd, 0)
			}
			return info, nil
		},
		Run: func(ctx context.Context, args json.RawMessage) (agent.ToolResult, error) {
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
			after := w.aroundCommand(ctx)
			defer after()
			spec := w.commandSpec(c.line, c.cwd)
			spec.OutputByteLimit, spec.Timeout = w.cfg.OutputByteLimit, c.timeout
			spec.SandboxNetwork = w.cfg.SandboxNetworkInFullAccess && agent.RunningMode(ctx) == policy.ModeFullAccess
			res, err := term.Run(ctx, spec, func(id string) {
				// The editor shows the terminal live in the tool call.
				content = []agent.ToolContent{{TerminalID: id}}
				agent.ToolProgress(ctx, content)
			})
			if err != nil {
				return agent.ToolResult{}, err
			}
			r := commandResult(c, res, content)
			if w.Sandboxed() && !c.outside {
				r.Text += sandboxBlockedNote(res)
			}
			return r, nil
		},
	}
}

// commandResult is what the model (and, without an editor terminal, the
// user) sees of a finished command.
func commandResult(c command, res runtime.CommandResult, terminal []agent.ToolContent) agent.ToolResult {
	var b strings.Builder
	if res.Truncated {
		b.WriteString("[... earlier output truncated ...]\n")
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
		Content  string `json:"content"`
		Priority string `json:"priority"`
		Status   string `json:"status"`
	} `json:"entries"`
}

func updatePlanTool() agent.Tool {
	return agent.Tool{
		Name: ToolUpdatePlan,
		Description: "Show your plan for the task to the user as a checklist. Send the complete plan every time (it replaces the previous one), " +
			"marking entries pending, in_progress or completed as you go. Use it for tasks of several steps.",
		ShortDescription: "Update the task plan",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"entries":{"type":"array","items":{"type":"object","properties":{
				"content":{"type":"string","minLength":1},
				"priority":{"enum":["high","medium","low"]},
				"status":{"enum":["pending","in_progress","completed"]}},
				"required":["content","status"],"additionalProperties":false}}},
			"required":["entries"],"additionalProperties":false}`),
		Describe: func(json.RawMessage) (agent.ToolCallInfo, error) {
			return agent.ToolCallInfo{Kind: agent.ToolKindThink, Title: "Update plan", Action: policy.ActionNone}, nil
		},
		Run: runWith(func(ctx context.Context, a planArgs) (agent.ToolResult, error) {
			plan := agent.Plan{Entries: []agent.PlanEntry{}}
			done := 0
			for _, e := range a.Entries {
				plan.Entries = append(plan.Entries, agent.PlanEntry{Content: e.Content, Priority: cmp.Or(e.Priority, "medium"), Status: e.Status})
				if e.Status == "completed" {
					done++
				}
			}
			agent.SendPlan(ctx, plan)
			return agent.ToolResult{Text: fmt.Sprintf("Plan updated: %d entries, %d completed.", len(a.Entries), done)}, nil
		}),
	}
}

// sandboxMarkers are what programs print when the sandbox refuses them
// (EACCES, EPERM, EROFS on .git, a refused socket).
var sandboxMarkers = []string{"Permission denied", "Operation not permitted", "Read-only file system"}

// sandboxBlockedNote tells the model that a failed confined command was
// probably stopped by the sandbox, quoting the line that says so, and how
// to escalate.
func sandboxBlockedNote(res runtime.CommandResult) string {
	if res.ExitCode != nil && *res.ExitCode == 0 {
		return ""
	}
	for _, line := range strings.Split(res.Output, "\n") {
		for _, m := range sandboxMarkers {
			if strings.Contains(line, m) {
				return "\n[blocked by the sandbox: " + strings.TrimSpace(line) + "] Commands run confined: writes only inside the workspace (not .git) and its temporary directory, no network, no secrets. If the task truly needs more, call run_command again with outside_sandbox: true and a justification; the user decides."
			}
		}
	}
	return ""
}
