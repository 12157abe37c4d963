package tools

import (
	"context"
	"encoding/json"
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
}

var errPatchFormat = errors.New("not a patch in the apply_patch format (*** Begin Patch, *** Add File:/*** Update File:, *** End Patch)")

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
			return nil, fmt.Errorf("line %d: expected *** Add File: or *** Update File:", n)
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
				h.old = append(h.old, line[1:])
			case strings.HasPrefix(line, "+"):
				h.new = append(h.new, line[1:])
			case strings.HasPrefix(line, " "), line == "":
				c := strings.TrimPrefix(line, " ")
				h.old, h.new = append(h.old, c), append(h.new, c)
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
	}
	return out, nil
}

// applyHunks applies an update's hunks to content, in order.
func applyHunks(content string, hunks []hunk, path string) (string, error) {
	lines := strings.Split(content, "\n")
	pos := 0
	for i, h := range hunks {
		if h.anchor != "" {
			j := indexLines(lines, []string{h.anchor}, pos, true)
			if j < 0 {
				return "", fmt.Errorf("%s: hunk %d: the @@ line %q is not in the file", path, i+1, h.anchor)
			}
			pos = j
		}
		if len(h.old) == 0 {
			return "", fmt.Errorf("%s: hunk %d has no context or removed lines to place it", path, i+1)
		}
		at := indexLines(lines, h.old, pos, false)
		if at < 0 {
			return "", fmt.Errorf("%s: hunk %d: its context and removed lines were not found (after the previous hunk); read the file and copy them exactly", path, i+1)
		}
		if again := indexLines(lines, h.old, at+1, false); again >= 0 {
			return "", fmt.Errorf("%s: hunk %d: its lines occur more than once; add context or an @@ line", path, i+1)
		}
		lines = append(lines[:at], append(append([]string(nil), h.new...), lines[at+len(h.old):]...)...)
		pos = at + len(h.new)
	}
	return strings.Join(lines, "\n"), nil
}

// indexLines finds want as consecutive lines of lines at or after from
// (trimmed comparison for an anchor).
func indexLines(lines, want []string, from int, trim bool) int {
	for i := from; i+len(want) <= len(lines); i++ {
		ok := true
		for j, w := range want {
			l := lines[i+j]
			if trim {
				l, w = strings.TrimSpace(l), strings.TrimSpace(w)
			}
			if l != w {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}

// patchChange is one file a patch changes, before and after.
type patchChange struct {
	path     string
	old, new string
	exists   bool
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
			return nil, fmt.Errorf("%s does not exist; add it with *** Add File:", path)
		default:
			if c.new, err = applyHunks(old, f.hunks, path); err != nil {
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
	Patch string `json:"patch"`
}

// applyPatchTool applies a patch over several files, all or nothing: the
// permission request shows every file's diff; if a file cannot be
// written, those already written are put back.
func (w *Workspace) applyPatchTool() agent.Tool {
	return agent.Tool{
		Name: ToolApplyPatch,
		Description: "Apply a patch that adds or changes several files at once, all or nothing. Format:\n" +
			"*** Begin Patch\n*** Add File: path\n+content line\n*** Update File: path\n@@ optional line before the change\n context line\n-removed line\n+added line\n*** End Patch\n" +
			"Paths are absolute or relative to the workspace root. Each hunk's context and removed lines must occur exactly once in the file.",
		ShortDescription: "Add or change several files at once",
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"patch":{"type":"string","minLength":1,"description":"the patch, from *** Begin Patch to *** End Patch"}},
			"required":["patch"],"additionalProperties":false}`),
		Describe: describeWith(func(a patchArgs) (agent.ToolCallInfo, error) {
			changes, err := w.planPatch(context.Background(), a.Patch)
			if err != nil {
				return agent.ToolCallInfo{Kind: agent.ToolKindEdit, Title: "Apply a patch"}, err
			}
			info := agent.ToolCallInfo{Kind: agent.ToolKindEdit, Action: policy.ActionEdit, Preview: diffs(changes)}
			var names []string
			for _, c := range changes {
				names = append(names, w.display(c.path))
				info.Locations = append(info.Locations, agent.Location{Path: c.path})
			}
			info.Title = "Patch " + strings.Join(names, ", ")
			return info, nil
		}),
		Run: runWith(func(ctx context.Context, a patchArgs) (agent.ToolResult, error) {
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
			var note string
			for _, c := range changes {
				note += w.touchRules(c.path)
			}
			return agent.ToolResult{Text: fmt.Sprintf("Patched %s.", agent.Count(len(changes), "file", "files")) + note, Content: diffs(changes)}, nil
		}),
	}
}
