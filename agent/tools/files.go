package tools

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/internal/markdown"
	"github.com/acp-agent/acp-agent/policy"
)

// Limits of read_file's pages.
const (
	// readDefaultLines is a page's length when the model gives no limit.
	readDefaultLines = 2000
	// readMaxBytes bounds a page's text: a page ends early, at a whole
	// line, rather than pass the size a tool result is cut at.
	readMaxBytes = 28 << 10
	// readMaxLineBytes cuts a longer line (minified code, data) with a
	// marker.
	readMaxLineBytes = 2000
)

type readArgs struct {
	Path   string `json:"path" jsonschema:"the file, relative to the workspace root (or absolute)"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to read (1-based; default 1)" schema:"minimum=1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"number of lines to read (default 2000)" schema:"minimum=1"`
}

func (w *Workspace) readFileTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[readArgs]{
		Name: ToolReadFile,
		Description: "Read a text file. Lines come numbered (\"     12\\tcode\"; the number and the tab are not part of the file: never copy them into edits), " +
			"up to 2000 lines or about 28 KiB per call; a longer file ends with \"[lines X–Y of N; continue with offset=Z]\": call again with that offset to read on, " +
			"or use grep to find the lines you need first. Lines longer than 2000 bytes are cut with a marker. " +
			"Reads the editor's buffer when the file is open there. Read a file before you edit or overwrite it (write_file refuses to overwrite a file you have not read). " +
			"A PNG, JPEG, GIF or WebP image is returned as an image when the model can see images.\n" +
			`Example: {"path": "internal/server/handler.go", "offset": 120, "limit": 80}`,
		ShortDescription: "Read a text file (numbered lines, in pages)",
		Describe: func(a readArgs) (agent.ToolCallInfo, error) {
			path := w.abs(a.Path)
			title := "Read " + markdown.Code(w.display(path))
			switch {
			case a.Offset > 0 && a.Limit > 0:
				title += fmt.Sprintf(" (lines %d–%d)", a.Offset, a.Offset+a.Limit-1)
			case a.Offset > 0:
				title += fmt.Sprintf(" (from line %d)", a.Offset)
			case a.Limit > 0:
				title += fmt.Sprintf(" (first %d lines)", a.Limit)
			}
			return w.pathCall(path, agent.ToolKindRead, title, a.Offset, policy.AccessRead)
		},
		Run: func(ctx context.Context, a readArgs) (agent.ToolResult, error) {
			path := w.abs(a.Path)
			if isImagePath(a.Path) {
				if res, ok, err := w.readImage(ctx, path); ok || err != nil {
					return res, err
				}
			}
			text, err := w.files.ReadTextFile(ctx, path, 0, 0)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return agent.ToolResult{}, w.missing(ctx, path)
				}
				return agent.ToolResult{}, err
			}
			w.remember(path, text)
			page, err := numberedPage(text, a.Offset, a.Limit, w.display(path))
			if err != nil {
				return agent.ToolResult{}, err
			}
			return agent.ToolResult{Text: page, Windowed: true, Context: w.touchRules(path)}, nil
		},
	})
}

// numberedPage is read_file's page of text: lines from offset (1-based),
// at most limit of them and about readMaxBytes, numbered, each cut at
// readMaxLineBytes, with a last line saying where the page is in the file
// when it is not the whole file.
func numberedPage(text string, offset, limit int, name string) (string, error) {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n := len(lines)
	if n == 0 {
		if offset > 1 {
			return "", fmt.Errorf("offset %d is past the end: %s is empty", offset, name)
		}
		return "[" + name + " is empty]", nil
	}
	offset = max(offset, 1)
	if offset > n {
		return "", fmt.Errorf("offset %d is past the end: %s has %d lines (read from offset=1, or a smaller offset)", offset, name, n)
	}
	if limit <= 0 {
		limit = readDefaultLines
	}
	var b strings.Builder
	last := offset - 1
	for i := offset - 1; i < n && i < offset-1+limit; i++ {
		line := strings.TrimRight(lines[i], "\r\n")
		if len(line) > readMaxLineBytes {
			cut := readMaxLineBytes
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			line = fmt.Sprintf("%s… [line cut: %d more bytes]", line[:cut], len(line)-cut)
		}
		entry := fmt.Sprintf("%6d\t%s\n", i+1, line)
		if b.Len() > 0 && b.Len()+len(entry) > readMaxBytes {
			break
		}
		b.WriteString(entry)
		last = i + 1
	}
	switch {
	case last < n:
		fmt.Fprintf(&b, "[lines %d–%d of %d; continue with offset=%d]", offset, last, n, last+1)
	case offset > 1:
		fmt.Fprintf(&b, "[lines %d–%d of %d; end of file]", offset, last, n)
	}
	return b.String(), nil
}

// missing is the error for a file that does not exist: with the names
// in its directory that look like it, or the directory's own absence.
func (w *Workspace) missing(ctx context.Context, path string) error {
	dir, base := filepath.Split(path)
	entries, err := w.local.ListDirectory(ctx, filepath.Clean(dir))
	if err != nil {
		return fmt.Errorf("%s does not exist (nor does its directory %s); use glob to find the file", w.display(path), w.display(filepath.Clean(dir)))
	}
	var close []string
	for _, e := range entries {
		if similarName(e.Name, base) {
			close = append(close, w.display(e.Path))
		}
	}
	if len(close) > 5 {
		close = close[:5]
	}
	if len(close) == 0 {
		return fmt.Errorf("%s does not exist; use glob or list_directory to find the file", w.display(path))
	}
	return fmt.Errorf("%s does not exist. Did you mean %s?", w.display(path), strings.Join(close, " or "))
}

// similarName reports whether a name in a directory looks like the one
// asked for: the same but for case or extension, one containing the
// other, or at most two edits apart.
func similarName(have, want string) bool {
	h, w := strings.ToLower(have), strings.ToLower(want)
	stem := func(s string) string { return strings.TrimSuffix(s, filepath.Ext(s)) }
	switch {
	case h == w, stem(h) == stem(w) && stem(h) != "":
		return true
	case len(w) >= 4 && strings.Contains(h, w), len(h) >= 4 && strings.Contains(w, h):
		return true
	}
	return editDistance(h, w) <= min(2, len(w)/3)
}

// editDistance is the Levenshtein distance of two short strings, in bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// remember records what the session last saw of a file (read or wrote),
// for write_file's check.
func (w *Workspace) remember(path, content string) {
	sum := sha256.Sum256([]byte(content))
	w.seenMu.Lock()
	defer w.seenMu.Unlock()
	if w.seen == nil {
		w.seen = map[string][sha256.Size]byte{}
	}
	w.seen[filepath.Clean(path)] = sum
}

// checkOverwrite refuses to overwrite an existing file the session has
// not read, or that changed since it last read or wrote it: a whole-file
// write would silently drop what it did not know.
func (w *Workspace) checkOverwrite(path, current string) error {
	w.seenMu.Lock()
	sum, ok := w.seen[filepath.Clean(path)]
	w.seenMu.Unlock()
	switch {
	case !ok:
		return fmt.Errorf("refusing to overwrite %s: it exists and you have not read it in this session. Read it first with read_file, or change it with edit_file", w.display(path))
	case sum != sha256.Sum256([]byte(current)):
		return fmt.Errorf("refusing to overwrite %s: it changed since you last read it (the user, a command or the editor changed it). Read it again, then write it", w.display(path))
	}
	return nil
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

// fileDiff is the diff shown for a change of one file: no old text for a
// new file.
func fileDiff(path, old string, exists bool, updated string) []agent.ToolContent {
	d := &agent.Diff{Path: path, NewText: updated}
	if exists {
		d.OldText = &old
	}
	return []agent.ToolContent{{Diff: d}}
}

// editInfo describes a call that changes one file, with its diff: the
// permission request shows the change before it is approved.
func (w *Workspace) editInfo(path, title string, diff []agent.ToolContent) agent.ToolCallInfo {
	return agent.ToolCallInfo{Kind: agent.ToolKindEdit, Title: title, Locations: location(path, 0), Action: policy.ActionEdit, Preview: diff}
}

type writeArgs struct {
	Path    string `json:"path" jsonschema:"the file, relative to the workspace root (or absolute)"`
	Content string `json:"content" jsonschema:"the complete new content"`
}

// planWrite computes a write_file call: the file's current content and
// whether it may be overwritten.
func (w *Workspace) planWrite(ctx context.Context, a writeArgs) (path, old string, exists bool, err error) {
	path = w.abs(a.Path)
	if err := w.check(path, policy.AccessWrite); err != nil {
		return path, "", false, err
	}
	if old, exists, err = w.current(ctx, path); err != nil {
		return path, "", false, err
	}
	if exists {
		err = w.checkOverwrite(path, old)
	}
	return path, old, exists, err
}

func (w *Workspace) writeFileTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[writeArgs]{
		Name: ToolWriteFile,
		Description: "Create a new file, or replace a whole file, with content (parent directories are created). " +
			"To change part of an existing file use edit_file instead: it is shorter and cannot drop lines by mistake. " +
			"Overwriting an existing file is refused unless you read it in this session and it has not changed since. " +
			"Write the complete content: no placeholders such as \"... rest unchanged ...\".\n" +
			`Example: {"path": "scripts/check.sh", "content": "#!/bin/sh\nset -e\ngo vet ./...\n"}`,
		ShortDescription: "Create or overwrite a file",
		Describe: func(a writeArgs) (agent.ToolCallInfo, error) {
			path, old, exists, err := w.planWrite(context.Background(), a)
			info := w.editInfo(path, "Write "+markdown.Code(w.display(path)), nil)
			if err != nil {
				return info, err
			}
			info.Preview = fileDiff(path, old, exists, a.Content)
			return info, nil
		},
		Run: func(ctx context.Context, a writeArgs) (agent.ToolResult, error) {
			path, old, exists, err := w.planWrite(ctx, a)
			if err != nil {
				return agent.ToolResult{}, err
			}
			if err := w.writeFile(ctx, path, a.Content); err != nil {
				return agent.ToolResult{}, err
			}
			w.remember(path, a.Content)
			verb := "Created"
			if exists {
				verb = "Replaced"
			}
			return agent.ToolResult{
				Text:    fmt.Sprintf("%s %s (%d lines).", verb, w.display(path), lineCount(a.Content)),
				Content: fileDiff(path, old, exists, a.Content), Context: w.touchRules(path),
			}, nil
		},
	})
}

func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

type editArgs struct {
	Path       string `json:"path" jsonschema:"the file, relative to the workspace root (or absolute)"`
	OldString  string `json:"old_string" jsonschema:"the text to replace, as the file has it" schema:"minLength=1"`
	NewString  string `json:"new_string" jsonschema:"the replacement"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence (default false)"`
}

// fileEdit is a planned change of one existing file.
type fileEdit struct {
	path, old string
	out       editOutcome
	// edits and total count multi_edit's edits and replacements; notes
	// say which of its edits matched loosely.
	edits, total int
	notes        []string
}

// existing reads a file that an edit changes: it must exist.
func (w *Workspace) existing(ctx context.Context, path string) (string, error) {
	if err := w.check(path, policy.AccessWrite); err != nil {
		return "", err
	}
	old, exists, err := w.current(ctx, path)
	if err != nil {
		return "", err
	}
	if !exists {
		return "", fmt.Errorf("%s does not exist; use write_file to create it", w.display(path))
	}
	return old, nil
}

// editError says why a replacement failed and what to do.
func editError(err error, name string) error {
	switch {
	case errors.Is(err, errNoMatch):
		return fmt.Errorf("old_string was not found in %s, not even ignoring whitespace and indentation. Read the file again and copy the lines exactly (without read_file's line numbers)", name)
	case errors.Is(err, errAmbiguous):
		return fmt.Errorf("%v in %s; include more surrounding lines to make it unique, or set replace_all", err, name)
	}
	return err
}

func (w *Workspace) planEdit(ctx context.Context, a editArgs) (fileEdit, error) {
	path := w.abs(a.Path)
	old, err := w.existing(ctx, path)
	if err != nil {
		return fileEdit{path: path}, err
	}
	out, err := replaceText(old, a.OldString, a.NewString, a.ReplaceAll)
	if err != nil {
		return fileEdit{path: path}, editError(err, w.display(path))
	}
	return fileEdit{path: path, old: old, out: out, edits: 1, total: out.count}, nil
}

func (w *Workspace) editFileTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[editArgs]{
		Name: ToolEditFile,
		Description: "Replace text in an existing file. old_string must match the file exactly once: copy it from read_file's output without the line-number prefix, " +
			"with enough surrounding lines to be unique; set replace_all to change every occurrence (a rename). " +
			"If the exact text is not found, the match is retried ignoring trailing whitespace, then indentation, then Unicode quotes and dashes (the result says so); " +
			"line endings (LF or CRLF) are kept as the file has them. The result shows the changed lines. Make several changes to one file with multi_edit.\n" +
			`Example: {"path": "pkg/cache/cache.go", "old_string": "func (c *Cache) Get(key string) []byte {\n\tc.mu.Lock()", "new_string": "func (c *Cache) Get(key string) []byte {\n\tc.mu.RLock()"}`,
		ShortDescription: "Replace text in a file",
		Describe: func(a editArgs) (agent.ToolCallInfo, error) {
			e, err := w.planEdit(context.Background(), a)
			info := w.editInfo(e.path, "Edit "+markdown.Code(w.display(e.path)), nil)
			if err != nil {
				return info, err
			}
			info.Preview = fileDiff(e.path, e.old, true, e.out.content)
			info.Locations = location(e.path, e.out.line)
			return info, nil
		},
		Run: func(ctx context.Context, a editArgs) (agent.ToolResult, error) {
			e, err := w.planEdit(ctx, a)
			if err != nil {
				return agent.ToolResult{}, err
			}
			return w.applyEdit(ctx, e, a.NewString)
		},
	})
}

// applyEdit writes a planned edit and says what changed, with the edited
// lines as they are now.
func (w *Workspace) applyEdit(ctx context.Context, e fileEdit, newText string) (agent.ToolResult, error) {
	if err := w.writeFile(ctx, e.path, e.out.content); err != nil {
		return agent.ToolResult{}, err
	}
	w.remember(e.path, e.out.content)
	var text string
	if e.edits > 1 {
		text = fmt.Sprintf("Edited %s: %d edits, %d replacements, the first at line %d.", w.display(e.path), e.edits, e.total, e.out.line)
	} else {
		text = fmt.Sprintf("Edited %s: %s, the first at line %d.", w.display(e.path), agent.Count(e.total, "replacement", "replacements"), e.out.line)
	}
	text += e.out.note()
	if e.edits == 1 {
		text += "\n" + snippet(e.out.content, e.out.line, lineCount(newText))
	}
	return agent.ToolResult{Text: text, Content: fileDiff(e.path, e.old, true, e.out.content), Context: w.touchRules(e.path)}, nil
}

// snippet is the lines around an edit (from line, n lines long), numbered
// like read_file's, so the model can check the result without reading the
// file again.
func snippet(content string, line, n int) string {
	page, err := numberedPage(content, max(line-3, 1), min(n, 40)+6, "")
	if err != nil {
		return ""
	}
	if i := strings.LastIndex(page, "\n["); i >= 0 {
		page = page[:i+1]
	}
	return "The edited lines now read:\n" + strings.TrimRight(page, "\n")
}

type multiEditArgs struct {
	Path  string `json:"path" jsonschema:"the file, relative to the workspace root (or absolute)"`
	Edits []struct {
		OldString  string `json:"old_string" schema:"minLength=1"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all,omitempty"`
	} `json:"edits" schema:"minItems=1,maxItems=100"`
}

func (w *Workspace) planMultiEdit(ctx context.Context, a multiEditArgs) (fileEdit, error) {
	path := w.abs(a.Path)
	old, err := w.existing(ctx, path)
	if err != nil {
		return fileEdit{path: path}, err
	}
	e := fileEdit{path: path, old: old, out: editOutcome{content: old}, edits: len(a.Edits)}
	var notes []string
	for i, ed := range a.Edits {
		out, err := replaceText(e.out.content, ed.OldString, ed.NewString, ed.ReplaceAll)
		if err != nil {
			return fileEdit{path: path}, fmt.Errorf("edit %d of %d: %w; nothing was written", i+1, len(a.Edits), editError(err, w.display(path)))
		}
		if n := out.note(); n != "" {
			notes = append(notes, fmt.Sprintf("edit %d:%s", i+1, n))
		}
		if i == 0 || out.line < e.out.line {
			e.out.line = out.line
		}
		e.out.content, e.total = out.content, e.total+out.count
	}
	e.notes = notes
	return e, nil
}

// multiEditTool applies several replacements to one file, in order, all
// or nothing: if any fails, the file is not written.
func (w *Workspace) multiEditTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[multiEditArgs]{
		Name: ToolMultiEdit,
		Description: "Make several replacements in one file, in order, all or nothing: each edit works on the result of the previous ones, " +
			"and if any old_string is not found (or not unique without replace_all) nothing is written. Each edit matches like edit_file's. " +
			"Prefer it to several edit_file calls on one file.\n" +
			`Example: {"path": "main.go", "edits": [{"old_string": "import \"fmt\"", "new_string": "import (\n\t\"fmt\"\n\t\"os\"\n)"}, {"old_string": "fmt.Println(msg)", "new_string": "fmt.Fprintln(os.Stderr, msg)"}]}`,
		ShortDescription: "Several replacements in one file",
		Describe: func(a multiEditArgs) (agent.ToolCallInfo, error) {
			e, err := w.planMultiEdit(context.Background(), a)
			info := w.editInfo(e.path, fmt.Sprintf("Edit %s (%s)", markdown.Code(w.display(e.path)), agent.Count(len(a.Edits), "change", "changes")), nil)
			if err != nil {
				return info, err
			}
			info.Preview = fileDiff(e.path, e.old, true, e.out.content)
			return info, nil
		},
		Run: func(ctx context.Context, a multiEditArgs) (agent.ToolResult, error) {
			e, err := w.planMultiEdit(ctx, a)
			if err != nil {
				return agent.ToolResult{}, err
			}
			res, err := w.applyEdit(ctx, e, "")
			if err == nil && len(e.notes) > 0 {
				res.Text += " Note: " + strings.Join(e.notes, ";")
			}
			return res, err
		},
	})
}
