package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/policy"
)

// The patch format of apply_patch is codex's:
//
//	*** Begin Patch
//	*** Add File: path
//	+line
//	*** Update File: path
//	@@ optional text of a line before the change
//	 context line
//	-removed line
//	+added line
//	*** End Patch
//
// Paths are absolute or relative to the workspace root. Each hunk's
// context and removed lines must occur in the file exactly once (after
// the previous hunk, and after the @@ line when one is given).

// filePatch is one file's part of a patch.
type filePatch struct {
	path  string
	add   bool     // a new file: lines are its content
	lines []string // Add File: the content's lines
	hunks []hunk   // Update File
}

type hunk struct {
	anchor   string // the text after "@@", "" for none
	old, new []string
	// ops are the hunk's lines in order, each ' ' (context), '-' or '+':
	// a context line keeps the file's own text, whatever the patch's copy
	// of it looks like.
	ops []hunkOp
}

type hunkOp struct {
	kind byte
	text string
}

var errPatchFormat = errors.New("not a patch in the apply_patch format (*** Begin Patch, *** Add File:/*** Update File:, *** End Patch)")

// maxPatchHunks bounds the hunks of one file's part of a patch: each is
// sought from the previous one to the end of the file (it must be unique
// there), so a patch's cost is its hunks times the file's lines; 400,000
// one-line hunks (8 MiB of arguments) against a file of a million lines
// never ended.
const maxPatchHunks = 1000

// PatchPaths are the paths an apply_patch patch writes, as it names
// them (none for a patch it would refuse).
func PatchPaths(patch string) []string {
	fps, err := parsePatch(patch)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(fps))
	for _, fp := range fps {
		out = append(out, fp.path)
	}
	return out
}

// parsePatch reads a patch; an empty or malformed one is an error that
// says where.
func parsePatch(text string) ([]filePatch, error) {
	lines := strings.Split(strings.ReplaceAll(strings.TrimSpace(text), "\r\n", "\n"), "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "*** Begin Patch" || strings.TrimSpace(lines[len(lines)-1]) != "*** End Patch" {
		return nil, errPatchFormat
	}
	var out []filePatch
	var cur *filePatch
	var h *hunk
	for i, line := range lines[1 : len(lines)-1] {
		n := i + 2
		switch {
		case strings.HasPrefix(line, "*** Add File: "):
			out = append(out, filePatch{path: strings.TrimSpace(strings.TrimPrefix(line, "*** Add File: ")), add: true})
			cur, h = &out[len(out)-1], nil
		case strings.HasPrefix(line, "*** Update File: "):
			out = append(out, filePatch{path: strings.TrimSpace(strings.TrimPrefix(line, "*** Update File: "))})
			cur, h = &out[len(out)-1], nil
		case strings.HasPrefix(line, "*** Delete File: "), strings.HasPrefix(line, "*** Move to: "):
			return nil, fmt.Errorf("line %d: deleting and moving files is not supported by apply_patch; use run_command", n)
		case cur == nil:
			return nil, fmt.Errorf(`line %d: outside a file: expected "*** Add File:" or "*** Update File:" before it`, n)
		case cur.add:
			if !strings.HasPrefix(line, "+") {
				return nil, fmt.Errorf("line %d: every line of an added file starts with +", n)
			}
			cur.lines = append(cur.lines, line[1:])
		case strings.HasPrefix(line, "@@"):
			cur.hunks = append(cur.hunks, hunk{anchor: strings.TrimSpace(strings.TrimPrefix(line, "@@"))})
			h = &cur.hunks[len(cur.hunks)-1]
		case line == "*** End of File":
		default:
			if h == nil {
				cur.hunks = append(cur.hunks, hunk{})
				h = &cur.hunks[len(cur.hunks)-1]
			}
			switch {
			case strings.HasPrefix(line, "-"):
				h.old, h.ops = append(h.old, line[1:]), append(h.ops, hunkOp{'-', line[1:]})
			case strings.HasPrefix(line, "+"):
				h.new, h.ops = append(h.new, line[1:]), append(h.ops, hunkOp{'+', line[1:]})
			case strings.HasPrefix(line, " "), line == "":
				c := strings.TrimPrefix(line, " ")
				h.old, h.new, h.ops = append(h.old, c), append(h.new, c), append(h.ops, hunkOp{' ', c})
			default:
				return nil, fmt.Errorf("line %d: a hunk line starts with ' ', '-' or '+'", n)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the patch changes no file")
	}
	seen := map[string]bool{}
	for _, f := range out {
		if f.path == "" {
			return nil, errors.New("a file of the patch has no path")
		}
		if seen[f.path] {
			return nil, fmt.Errorf("%s appears twice in the patch", f.path)
		}
		seen[f.path] = true
		if !f.add && len(f.hunks) == 0 {
			return nil, fmt.Errorf("%s: an update with no change", f.path)
		}
		if len(f.hunks) > maxPatchHunks {
			return nil, fmt.Errorf("%s: %d hunks, more than the %d one patch may apply to a file; split the change over several patches, or rewrite the file with write_file", f.path, len(f.hunks), maxPatchHunks)
		}
	}
	return out, nil
}

// applyHunks applies an update's hunks to content, in order. Each hunk's
// context and removed lines are found as codex's apply-patch seeks them
// (exactly, then ignoring trailing whitespace, then indentation, then
// Unicode punctuation), but must be unique at the level that finds them.
// A file whose lines end in CRLF keeps them. notes say which hunks were
// found loosely.
func applyHunks(content string, hunks []hunk, path string) (string, []string, error) {
	crlf := isCRLF(content)
	if crlf {
		content = strings.ReplaceAll(content, "\r\n", "\n")
	}
	lines := strings.Split(content, "\n")
	// out is built as the hunks go (lines[done:] is not copied yet): each
	// hunk's lines are sought in the original lines after the previous
	// hunk, which are what the patched text holds there, so no hunk
	// splices the whole file.
	var out []string
	pos, done := 0, 0
	var notes []string
	for i, h := range hunks {
		if h.anchor != "" {
			j := indexAnchor(lines, h.anchor, pos)
			if j < 0 {
				return "", nil, fmt.Errorf("%s: hunk %d: the @@ line %q is not in the file", path, i+1, h.anchor)
			}
			pos = j
		}
		if len(h.old) == 0 {
			return "", nil, fmt.Errorf("%s: hunk %d has no context or removed lines to place it", path, i+1)
		}
		at, level, err := seekLines(lines, h.old, pos)
		switch {
		case errors.Is(err, errNoMatch):
			return "", nil, fmt.Errorf("%s: hunk %d: its context and removed lines were not found (after the previous hunk), not even ignoring whitespace; read the file and copy them exactly", path, i+1)
		case err != nil:
			return "", nil, fmt.Errorf("%s: hunk %d: %w when %s; add context or an @@ line", path, i+1, err, level)
		}
		if level != matchExact {
			notes = append(notes, fmt.Sprintf("%s: hunk %d was placed %s", path, i+1, level))
		}
		out = append(out, lines[done:at]...)
		out = append(out, hunkLines(h, lines[at:at+len(h.old)], level)...)
		pos, done = at+len(h.old), at+len(h.old)
	}
	text := strings.Join(append(out, lines[done:]...), "\n")
	if crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	return text, notes, nil
}

// hunkLines are the lines that replace a hunk's matched region: its
// context lines as the file has them, its added lines as the patch has
// them (re-indented like the file when indentation was ignored).
func hunkLines(h hunk, region []string, level matchLevel) []string {
	out := make([]string, 0, len(h.new))
	var added []int // indexes in out of the added lines
	k := 0          // the region's line for the next context or removed line
	for _, op := range h.ops {
		switch op.kind {
		case ' ':
			out = append(out, region[k])
			k++
		case '-':
			k++
		default:
			added = append(added, len(out))
			out = append(out, op.text)
		}
	}
	if level >= matchIndentation && len(added) > 0 {
		lines := make([]string, len(added))
		for i, j := range added {
			lines[i] = out[j]
		}
		reindentLines(lines, h.old, region)
		for i, j := range added {
			out[j] = lines[i]
		}
	}
	return out
}

// indexAnchor finds an @@ line at or after from: trimmed, then with
// Unicode punctuation normalised.
func indexAnchor(lines []string, anchor string, from int) int {
	for _, level := range []matchLevel{matchIndentation, matchUnicode} {
		for i := from; i < len(lines); i++ {
			if level.equal(lines[i], anchor) {
				return i
			}
		}
	}
	return -1
}

// patchChange is one file a patch changes, before and after.
type patchChange struct {
	path     string
	old, new string
	exists   bool
	// notes say which hunks were placed loosely.
	notes []string
}

// planPatch parses patch and computes every file's new content from what
// it holds now, checking each path for writing. Nothing is written.
func (w *Workspace) planPatch(ctx context.Context, patch string) ([]patchChange, error) {
	files, err := parsePatch(patch)
	if err != nil {
		return nil, err
	}
	var out []patchChange
	for _, f := range files {
		path := w.abs(f.path)
		if err := w.check(path, policy.AccessWrite); err != nil {
			return nil, err
		}
		old, exists, err := w.current(ctx, path)
		if err != nil {
			return nil, err
		}
		c := patchChange{path: path, old: old, exists: exists}
		switch {
		case f.add && exists:
			return nil, fmt.Errorf("%s already exists; update it instead of adding it", path)
		case f.add:
			c.new = strings.Join(f.lines, "\n")
			if len(f.lines) > 0 {
				c.new += "\n"
			}
		case !exists:
			return nil, fmt.Errorf(`%s does not exist; add it with "*** Add File:" instead`, path)
		default:
			if c.new, c.notes, err = applyHunks(old, f.hunks, w.display(path)); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func diffs(changes []patchChange) []agent.ToolContent {
	var out []agent.ToolContent
	for _, c := range changes {
		d := &agent.Diff{Path: c.path, NewText: c.new}
		if c.exists {
			old := c.old
			d.OldText = &old
		}
		out = append(out, agent.ToolContent{Diff: d})
	}
	return out
}

type patchArgs struct {
	Patch string `json:"patch" jsonschema:"the patch, from *** Begin Patch to *** End Patch" schema:"minLength=1"`
}

// applyPatchTool applies a patch over several files, all or nothing: the
// permission request shows every file's diff; if a file cannot be
// written, those already written are put back.
func (w *Workspace) applyPatchTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[patchArgs]{
		Name: ToolApplyPatch,
		Description: "Add or change files with a patch, all or nothing (if any file cannot be changed, none is). Format:\n" +
			"*** Begin Patch\n*** Add File: path\n+content line\n*** Update File: path\n@@ optional line before the change, e.g. a function's signature\n context line\n-removed line\n+added line\n*** End Patch\n" +
			"Paths are relative to the workspace root (or absolute). In an update, each hunk has about three lines of context before and after the change, copied from the file; " +
			"its context and removed lines must be found once in the file, after the previous hunk (add an @@ line or more context to tell apart code that repeats). " +
			"If they are not found exactly, they are looked for ignoring trailing whitespace, then indentation, then Unicode quotes and dashes, and the result says so. " +
			"Line endings (LF or CRLF) are kept as the file has them. Deleting and moving files is not supported (use run_command).\n" +
			"Example: {\"patch\": \"*** Begin Patch\\n*** Update File: cmd/serve.go\\n@@ func serve() error {\\n \\taddr := cfg.Addr\\n-\\tlog.Printf(\\\"listening\\\")\\n+\\tlog.Printf(\\\"listening on %s\\\", addr)\\n \\treturn http.ListenAndServe(addr, nil)\\n*** End Patch\"}",
		ShortDescription: "Add or change several files at once",
		Describe: func(a patchArgs) (agent.ToolCallInfo, error) {
			changes, err := w.planPatch(context.Background(), a.Patch)
			if err != nil {
				return agent.ToolCallInfo{Kind: agent.ToolKindEdit, Title: "Apply a patch"}, err
			}
			info := agent.ToolCallInfo{Kind: agent.ToolKindEdit, Action: policy.ActionEdit, Preview: diffs(changes)}
			var names []string
			for _, c := range changes {
				names = append(names, agent.Code(w.display(c.path)))
				info.Locations = append(info.Locations, agent.Location{Path: c.path})
			}
			info.Title = "Patch " + strings.Join(names, ", ")
			return info, nil
		},
		Run: func(ctx context.Context, a patchArgs) (agent.ToolResult, error) {
			changes, err := w.planPatch(ctx, a.Patch)
			if err != nil {
				return agent.ToolResult{}, fmt.Errorf("%w; nothing was written", err)
			}
			for i, c := range changes {
				if err := w.writeFile(ctx, c.path, c.new); err != nil {
					// Put back what was written: all or nothing.
					var undo []error
					for _, d := range changes[:i] {
						if d.exists {
							undo = append(undo, w.files.WriteTextFile(context.WithoutCancel(ctx), d.path, d.old))
						} else {
							undo = append(undo, fmt.Errorf("%s was added and stays (the tools do not delete files)", d.path))
						}
					}
					if u := errors.Join(undo...); u != nil {
						return agent.ToolResult{}, fmt.Errorf("writing %s: %w; putting back the files written before it also failed: %v", c.path, err, u)
					}
					return agent.ToolResult{}, fmt.Errorf("writing %s: %w; the files written before it were put back", c.path, err)
				}
			}
			var names, notes []string
			var rules string
			for _, c := range changes {
				verb := "updated"
				if !c.exists {
					verb = "added"
				}
				names = append(names, w.display(c.path)+" ("+verb+")")
				notes = append(notes, c.notes...)
				w.remember(c.path, c.new)
				rules += w.touchRules(c.path)
			}
			text := "Patched " + strings.Join(names, ", ") + "."
			if len(notes) > 0 {
				text += " Note: " + strings.Join(notes, "; ") + "; check the result."
			}
			return agent.ToolResult{Text: text + rules, Content: diffs(changes)}, nil
		},
	})
}
