package prompts

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
)

// Limits on what a repository can make the agent load.
const (
	MaxFileBytes = 64 << 10 // one command or SKILL.md
	MaxCommands  = 200      // commands (skills included) per library
	maxDepth     = 4        // subfolders of a commands directory
)

// Command is a slash command defined by a Markdown file: /Name runs Body
// as the prompt, with $ARGUMENTS and $1…$9 substituted.
type Command struct {
	Name         string
	Description  string
	ArgumentHint string
	Body         string
	Path         string
}

// Skill is a folder with a SKILL.md: its name and description go into
// the context, its body only when the model uses it.
type Skill struct {
	Name        string
	Description string
	Dir         string
	Path        string // its SKILL.md
	// Root is the workspace root a repository's skill must really be
	// inside, under the file tools' rules ("" for the user's own).
	Root string
	// Denied are the paths the file tools never read (Dirs.Denied).
	Denied []string
}

// Dirs are where a library looks, in precedence order (the first
// definition of a name wins).
type Dirs struct {
	Commands []string // directories of *.md commands (subfolders give dir:name)
	Skills   []string // directories of skill folders
	// Confined maps a repository's directories to the workspace root
	// they and their files must really be inside, under the rules the
	// file tools apply there (no symlink leading out, no .git or .env,
	// no hard links). The user's own directories are not in it.
	Confined map[string]string
	// Denied are the paths the file tools never read (policy.FS.
	// DeniedPaths): a repository's directory or file leading under one
	// is not read.
	Denied []string
}

// ProjectDirs are the directories of root: .acp-agent/commands,
// .claude/commands; .agents/skills, .claude/skills. They are confined to
// root.
func ProjectDirs(root string) Dirs {
	d := Dirs{
		Commands: []string{filepath.Join(root, ".acp-agent", "commands"), filepath.Join(root, ".claude", "commands")},
		Skills:   []string{filepath.Join(root, ".agents", "skills"), filepath.Join(root, ".claude", "skills")},
		Confined: map[string]string{},
	}
	for _, dir := range append(slices.Clone(d.Commands), d.Skills...) {
		d.Confined[dir] = root
	}
	return d
}

// UserDirs are the user's own: $XDG_CONFIG_HOME/acp-agent/{commands,
// skills}, ~/.claude/{commands,skills} and ~/.agents/skills.
func UserDirs(configDir, home string) Dirs {
	var d Dirs
	if configDir != "" {
		d.Commands = append(d.Commands, filepath.Join(configDir, "commands"))
		d.Skills = append(d.Skills, filepath.Join(configDir, "skills"))
	}
	if home != "" {
		d.Commands = append(d.Commands, filepath.Join(home, ".claude", "commands"))
		d.Skills = append(d.Skills, filepath.Join(home, ".agents", "skills"), filepath.Join(home, ".claude", "skills"))
	}
	return d
}

// Join is d's directories, then e's (project before user).
func (d Dirs) Join(e Dirs) Dirs {
	j := Dirs{Commands: append(slices.Clone(d.Commands), e.Commands...), Skills: append(slices.Clone(d.Skills), e.Skills...),
		Confined: maps.Clone(d.Confined), Denied: append(slices.Clone(d.Denied), e.Denied...)}
	if j.Confined == nil {
		j.Confined = map[string]string{}
	}
	maps.Copy(j.Confined, e.Confined)
	return j
}

// confinedDir checks a repository's directory: it must really be inside
// its root (a symlinked commands or skills directory leading out is not
// followed). It returns the root ("" for a directory of the user's) and
// whether the directory may be read.
func (d Dirs) confinedDir(dir string, lib *Library) (string, bool) {
	root := d.Confined[dir]
	if root == "" {
		return "", true
	}
	if _, err := os.Lstat(dir); err != nil {
		return root, false
	}
	if err := runtime.InsideRoot(dir, root, d.Denied); err != nil {
		lib.Notices = append(lib.Notices, fmt.Sprintf("%s was not read: %v.", dir, err))
		return root, false
	}
	return root, true
}

// Library is what a set of directories defines, read at one moment.
type Library struct {
	Commands []Command
	Skills   []Skill
	// Notices say what was skipped and why (a file too large, a symlink
	// leading out of its directory, a bad name).
	Notices []string
}

var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })

// Load reads the commands and skills of dirs. Every file must really be a
// regular file inside the directory it was found in (a symlink leading
// out is refused: a repository cannot make the agent read a secret into
// a prompt), at most MaxFileBytes; names are letters, digits, '_', '.'
// and '-' (subfolders joined with ':'); at most MaxCommands are kept.
func Load(dirs Dirs) Library {
	var lib Library
	seen := map[string]bool{}
	add := func(c Command) {
		if seen[c.Name] {
			return
		}
		if len(lib.Commands)+len(lib.Skills) >= MaxCommands {
			lib.Notices = append(lib.Notices, fmt.Sprintf("%s was left out: a library holds at most %d commands and skills.", c.Path, MaxCommands))
			return
		}
		seen[c.Name] = true
		lib.Commands = append(lib.Commands, c)
	}
	for _, dir := range dirs.Commands {
		if root, ok := dirs.confinedDir(dir, &lib); ok {
			walkCommands(dir, dir, root, dirs.Denied, nil, 0, &lib, add)
		}
	}
	for _, dir := range dirs.Skills {
		root, ok := dirs.confinedDir(dir, &lib)
		if !ok {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || !validName().MatchString(e.Name()) {
				continue
			}
			path := filepath.Join(dir, e.Name(), "SKILL.md")
			text, err := readInside(path, dir, root, dirs.Denied)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				lib.Notices = append(lib.Notices, fmt.Sprintf("The skill %s was not read: %v.", path, err))
				continue
			}
			meta, _ := frontmatter(text)
			name := meta["name"]
			if name == "" {
				name = e.Name()
			}
			if !validName().MatchString(name) || seen[name] {
				continue
			}
			if len(lib.Commands)+len(lib.Skills) >= MaxCommands {
				lib.Notices = append(lib.Notices, fmt.Sprintf("%s was left out: a library holds at most %d commands and skills.", path, MaxCommands))
				continue
			}
			seen[name] = true
			lib.Skills = append(lib.Skills, Skill{Name: name, Description: oneLine(meta["description"]), Dir: filepath.Join(dir, e.Name()), Path: path, Root: root, Denied: dirs.Denied})
		}
	}
	return lib
}

func walkCommands(base, dir, root string, denied, prefix []string, depth int, lib *Library, add func(Command)) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			if depth < maxDepth && validName().MatchString(e.Name()) {
				walkCommands(base, path, root, denied, append(slices.Clone(prefix), e.Name()), depth+1, lib, add)
			}
		case strings.HasSuffix(e.Name(), ".md"):
			stem := strings.TrimSuffix(e.Name(), ".md")
			if !validName().MatchString(stem) {
				lib.Notices = append(lib.Notices, fmt.Sprintf("The command file %s was skipped: its name is not a command name.", path))
				continue
			}
			text, err := readInside(path, base, root, denied)
			if err != nil {
				lib.Notices = append(lib.Notices, fmt.Sprintf("The command file %s was not read: %v.", path, err))
				continue
			}
			meta, body := frontmatter(text)
			add(Command{Name: strings.Join(append(slices.Clone(prefix), stem), ":"), Description: oneLine(meta["description"]),
				ArgumentHint: oneLine(meta["argument-hint"]), Body: body, Path: path})
		}
	}
}

// readInside reads path, which must resolve to a regular file of at most
// MaxFileBytes inside dir, and with root (a repository's file) also
// inside root under the file tools' rules.
func readInside(path, dir, root string, denied []string) (string, error) {
	read := runtime.ReadRegularFile
	if root != "" {
		read = func(path, dir string, limit int64) ([]byte, int64, error) {
			return runtime.ReadWorkspaceFile(path, dir, root, denied, limit)
		}
	}
	data, size, err := read(path, dir, MaxFileBytes+1)
	if err != nil {
		return "", err
	}
	if size > MaxFileBytes {
		return "", fmt.Errorf("it is %d bytes, more than %d", size, MaxFileBytes)
	}
	return strings.ToValidUTF8(string(data), "\uFFFD"), nil
}

// frontmatter splits "---\nkey: value\n---\nbody": simple one-line keys
// (quotes around a value are removed); without a frontmatter the whole
// text is the body.
func frontmatter(text string) (map[string]string, string) {
	meta := map[string]string{}
	text = strings.TrimPrefix(text, "\uFEFF")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		rest, ok = strings.CutPrefix(text, "---\r\n")
	}
	if !ok {
		return meta, text
	}
	end := strings.Index(rest, "\n---")
	if end < 0 {
		return meta, text
	}
	for _, line := range strings.Split(rest[:end], "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if !ok || strings.HasPrefix(k, " ") || strings.HasPrefix(k, "\t") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			if u, err := strconv.Unquote(`"` + v[1:len(v)-1] + `"`); err == nil {
				v = u
			} else {
				v = v[1 : len(v)-1]
			}
		}
		meta[strings.ToLower(strings.TrimSpace(k))] = v
	}
	body := rest[end+len("\n---"):]
	body = strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(body, "\r"), "\n"), "\r\n")
	return meta, body
}

// oneLine keeps a description to one line of at most 200 characters.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if utf8.RuneCountInString(s) > 200 {
		s = string([]rune(s)[:199]) + "…"
	}
	return s
}

var argRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$(ARGUMENTS|[1-9])`) })

// Expand substitutes $ARGUMENTS (the whole argument text) and $1…$9 (its
// words; quotes group words) in body, in one pass: what the arguments
// contain is never expanded again. A body that names no arguments gets
// them appended after a blank line.
func Expand(body, args string) string {
	words := splitArgs(args)
	used := false
	out := argRef().ReplaceAllStringFunc(body, func(m string) string {
		used = true
		if m == "$ARGUMENTS" {
			return args
		}
		i := int(m[1] - '1')
		if i < len(words) {
			return words[i]
		}
		return ""
	})
	if !used && strings.TrimSpace(args) != "" {
		out = strings.TrimRight(out, "\n") + "\n\n" + args
	}
	return out
}

// splitArgs splits on white space; "double" or 'single' quotes group.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote, in = r, true
		case quote == 0 && (r == ' ' || r == '\t' || r == '\n'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// Body reads the skill's SKILL.md without its frontmatter.
func (s Skill) Body() (string, error) {
	text, err := readInside(s.Path, filepath.Dir(s.Dir), s.Root, s.Denied)
	if err != nil {
		return "", err
	}
	_, body := frontmatter(text)
	return body, nil
}

// ReadFile reads a file of the skill's folder, named relative to it: the
// files a SKILL.md points to. Paths leading out of the folder are
// refused, and so are names the file tools never read (.git, .env).
func (s Skill) ReadFile(name string) (string, error) {
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("%q is not a path inside the skill's folder", name)
	}
	if deniedPath(name) {
		return "", fmt.Errorf("%q is a file the tools never read", name)
	}
	return readInside(filepath.Join(s.Dir, name), s.Dir, s.Root, s.Denied)
}

// deniedPath reports whether a relative path names something the file
// tools never read, at any depth.
func deniedPath(rel string) bool {
	return slices.ContainsFunc(strings.Split(filepath.ToSlash(rel), "/"), policy.DeniedName)
}

// Files lists the files of the skill's folder (relative names, at most
// 100, not following symlinks, none the file tools never read), so the
// model knows what it can read.
func (s Skill) Files() []string {
	var out []string
	_ = filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || len(out) >= 100 {
			return filepath.SkipDir
		}
		if path != s.Dir && policy.DeniedName(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			if rel, err := filepath.Rel(s.Dir, path); err == nil && rel != "SKILL.md" {
				out = append(out, rel)
			}
		}
		return nil
	})
	return out
}

// RacyWindow is how much older than a look's start a file's times must
// be for the look's signature to vouch for the content read with it
// (racy git): file times come from a coarse clock (a few milliseconds on
// Linux, seconds on some file systems), so a file rewritten with the
// same size in the clock tick it was read in keeps its stamp.
const RacyWindow = 2 * time.Second

// stampOf is runtime.StampOf; tests model a file system with coarser
// times with it.
var stampOf = runtime.StampOf

// signature is a cheap fingerprint of what dirs hold (names, sizes,
// times, and for files their status change time and inode: a rewrite
// that sets the mtime back, or a same-size file renamed over one, still
// shows), to tell when a library must be read again; racy says that a
// file's times were within window (RacyWindow) of start, the time the
// look started: then an equal signature later does not prove the same
// content, and the library is read again.
func signature(dirs Dirs, start time.Time, window time.Duration) (sig string, racy bool) {
	var b strings.Builder
	limit := start.Add(-window).UnixNano()
	note := func(path string, regular bool) {
		if regular {
			if st, ok := stampOf(path); ok {
				fmt.Fprintf(&b, "%s|%d|%d|%d|%d\n", path, st.Size, st.MTime, st.CTime, st.Ino)
				// The status change time is set to now by every change
				// of the content or of the mtime (touch -d); a program
				// cannot set it. Where there is one it alone says the
				// file changed lately: a future mtime (an archive or a
				// copy from a machine whose clock runs ahead) would make
				// every look racy, and every prompt read the files again.
				changed := st.CTime
				if changed == 0 {
					changed = st.MTime // no status change time (Windows)
				}
				racy = racy || changed >= limit
				return
			}
		}
		if fi, err := os.Lstat(path); err == nil {
			fmt.Fprintf(&b, "%s|%d|%d\n", path, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		note(dir, false)
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			note(p, e.Type().IsRegular())
			if e.IsDir() && depth < maxDepth {
				walk(p, depth+1)
			}
		}
	}
	for _, d := range dirs.Commands {
		walk(d, 0)
	}
	for _, d := range dirs.Skills {
		walk(d, 0)
	}
	return b.String(), racy
}
