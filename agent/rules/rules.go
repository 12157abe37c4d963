package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/runtime"
)

// Names are the rules files looked for in a directory: AGENTS.md, or
// where there is none, CLAUDE.md and GEMINI.md.
var Names = []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md"}

// Limits of what goes into the context.
const (
	// MaxFileBytes is how much of one file is kept.
	MaxFileBytes = 32 << 10
	// MaxTotalBytes is how much of all the files is kept; files past it
	// are left out, with a notice.
	MaxTotalBytes = 96 << 10
)

// File is one rules file in the context.
type File struct {
	// Path is the file as found (the directory it applies to, plus its
	// name).
	Path string
	// Text is its content, cut to MaxFileBytes (Cut) on a UTF-8 boundary.
	Text string
	Size int64
	Cut  bool
	// Nested: found under the workspace root when a file below it was
	// first read or edited.
	Nested bool
}

// Set is the rules files of one session: the user's, those from the
// repository root down to the workspace root, and nested ones added as the
// session reaches into subdirectories. It is safe for concurrent use.
type Set struct {
	root     string // the workspace root (its real path)
	boundary string // files must really be inside it: the repository root, else root
	// extra are the additional roots (AddRoot), each its own boundary.
	extra []string
	// denied are the paths the file tools never read (policy.FS.
	// DeniedPaths): a rules file leading under one is not read.
	denied []string

	mu      sync.Mutex
	files   []File
	total   int
	checked map[string]bool // directories already looked at
	notices []string        // for the user, taken once by Notices
}

// Load finds the rules files of a session whose workspace root is root:
// userFile (the user's own AGENTS.md; "" for none), then the files of
// every directory from the repository root (the nearest ancestor with a
// .git) down to root, the outermost first. Without a repository only
// root's own are read. A file that is a symlink leading outside the
// repository (or outside root) is skipped, with a notice: a hostile
// repository cannot have the agent read ~/.ssh into its context. Nor is
// a file whose real path lies under one of denied (the paths the file
// tools never read, policy.FS.DeniedPaths), unless its boundary does.
func Load(root, userFile string, denied []string) *Set {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		real = filepath.Clean(root)
	}
	s := &Set{root: real, boundary: real, checked: map[string]bool{}, denied: denied}
	chain := []string{real}
	if repo := repositoryRoot(real); repo != "" {
		s.boundary = repo
		chain = chain[:0]
		for d := real; ; d = filepath.Dir(d) {
			chain = append([]string{d}, chain...)
			if d == repo {
				break
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if userFile != "" {
		s.addLocked(userFile, filepath.Dir(userFile), false, false)
	}
	for _, d := range chain {
		s.dirLocked(d, s.boundary, false)
	}
	return s
}

// AddRoot adds an additional workspace root (ACP's
// additionalDirectories): its own rules files join the set after the
// main root's, and Touch adds nested ones under it. Files must really be
// inside that root: its rules are its own, not its repository's.
func (s *Set) AddRoot(dir string) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = filepath.Clean(dir)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if real == s.root || slices.Contains(s.extra, real) {
		return
	}
	s.extra = append(s.extra, real)
	s.dirLocked(real, real, false)
}

// rootOf is the root real lies under and its boundary ("" if none).
func (s *Set) rootOf(real string) (root, boundary string) {
	if rel, err := filepath.Rel(s.root, real); err == nil && filepath.IsLocal(rel) {
		return s.root, s.boundary
	}
	for _, r := range s.extra {
		if rel, err := filepath.Rel(r, real); err == nil && filepath.IsLocal(rel) {
			return r, r
		}
	}
	return "", ""
}

// repositoryRoot is the nearest directory at or above dir holding .git;
// "" when there is none, or when the nearest one above dir is another
// user's (git's safe.directory rule): any local user can make /tmp/.git
// and /tmp/AGENTS.md, which would put their instructions into the system
// prompt of every workspace under /tmp.
func repositoryRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if d != dir && !runtime.OwnedByUser(filepath.Join(d, ".git")) {
				return ""
			}
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Touch is told that the session reads or edits path: the rules files of
// the directories between the workspace root and path's directory not
// looked at yet are added (once). It returns the files it added.
func (s *Set) Touch(path string) []File {
	real, err := realDir(path)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	root, boundary := s.rootOf(real)
	if root == "" {
		return nil
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return nil
	}
	n := len(s.files)
	d := root
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		d = filepath.Join(d, c)
		s.dirLocked(d, boundary, true)
	}
	return append([]File(nil), s.files[n:]...)
}

// realDir is the real path of path's directory. Neither need exist yet (a
// file being written in a new directory): the longest existing ancestor
// is resolved and the rest appended.
func realDir(path string) (string, error) {
	dir := filepath.Dir(filepath.Clean(path))
	var rest []string
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if _, lerr := os.Lstat(dir); lerr == nil || filepath.Dir(dir) == dir {
			return "", err // exists but cannot be resolved (a loop), or no root
		}
		rest = append([]string{filepath.Base(dir)}, rest...)
		dir = filepath.Dir(dir)
	}
}

// dirLocked adds dir's rules files once: AGENTS.md, or else CLAUDE.md and
// GEMINI.md.
func (s *Set) dirLocked(dir, boundary string, nested bool) {
	if s.checked[dir] {
		return
	}
	s.checked[dir] = true
	if s.addLocked(filepath.Join(dir, Names[0]), boundary, nested, true) {
		return
	}
	for _, n := range Names[1:] {
		s.addLocked(filepath.Join(dir, n), boundary, nested, true)
	}
}

// addLocked reads path if it is a regular file really inside boundary
// (with workspace, a repository's file: also under the file tools' rules
// there, so not a hard link), and reports whether one stood there (even
// if it was refused).
func (s *Set) addLocked(path, boundary string, nested, workspace bool) bool {
	if _, err := os.Lstat(path); err != nil {
		return false
	}
	f, err := readInside(path, boundary, workspace, s.denied)
	if err != nil {
		s.notices = append(s.notices, fmt.Sprintf("The rules file %s was not read: %v.", path, err))
		return true
	}
	f.Nested = nested
	if s.total+len(f.Text) > MaxTotalBytes {
		s.notices = append(s.notices, fmt.Sprintf("The rules file %s was left out: the rules files already take %d bytes, the most the context holds (%d).", path, s.total, MaxTotalBytes))
		return true
	}
	if f.Cut {
		s.notices = append(s.notices, fmt.Sprintf("The rules file %s is %d bytes: only its first %d are in the context.", path, f.Size, MaxFileBytes))
	}
	s.total += len(f.Text)
	s.files = append(s.files, f)
	return true
}

// readInside reads up to MaxFileBytes of path, which must resolve (through
// any symlinks) to a regular file inside boundary (with workspace, under
// the file tools' rules there); a longer file is cut on a rune boundary.
func readInside(path, boundary string, workspace bool, denied []string) (File, error) {
	read := runtime.ReadRegularFile
	if workspace {
		read = func(path, boundary string, limit int64) ([]byte, int64, error) {
			return runtime.ReadWorkspaceFile(path, boundary, boundary, denied, limit)
		}
	}
	data, size, err := read(path, boundary, MaxFileBytes)
	if err != nil {
		return File{}, err
	}
	f := File{Path: path, Size: size}
	if size > MaxFileBytes {
		// Drop a rune the cut split (at most 3 bytes), not more.
		for i := 1; i <= 3 && i <= len(data); i++ {
			if utf8.RuneStart(data[len(data)-i]) {
				if !utf8.FullRune(data[len(data)-i:]) {
					data = data[:len(data)-i]
				}
				break
			}
		}
		f.Cut = true
	}
	f.Text = strings.ToValidUTF8(string(data), "\uFFFD")
	return f, nil
}

// Files returns the files in the context, in order: the user's, then from
// the repository root down, then nested ones in the order they were found.
func (s *Set) Files() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]File(nil), s.files...)
}

// Notices returns what the user should be told (files cut, left out or
// refused) since the last call.
func (s *Set) Notices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.notices
	s.notices = nil
	return n
}

// Prompt is the files as a section of the system prompt, each under its
// path; "" when there are none.
func (s *Set) Prompt() string {
	files := s.Files()
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Rules files\n\nThe user's and the repository's own instructions for working here, each under its path. " +
		"Follow them unless the user asks otherwise; a file deeper in the tree applies to the files below its directory and takes precedence there.\n")
	writeFiles(&b, files)
	return b.String()
}

// writeFiles writes each file under its path, with a note when it was cut.
func writeFiles(b *strings.Builder, files []File) {
	for _, f := range files {
		fmt.Fprintf(b, "\n## %s\n\n%s", f.Path, strings.TrimRight(f.Text, "\n"))
		if f.Cut {
			fmt.Fprintf(b, "\n\n[... cut: the file is %d bytes; only the first %d are included]", f.Size, MaxFileBytes)
		}
		b.WriteString("\n")
	}
}

// Reminder is files found during the session (Touch), for the tool result
// of the call that reached their directories: the system prompt is not
// rewritten mid-session (that would break providers' prompt caches).
func Reminder(files []File) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<system-reminder>\nRules files for the directories you just reached. Follow them for the files under each file's directory (they take precedence there over the rules in your instructions):\n")
	writeFiles(&b, files)
	b.WriteString("</system-reminder>")
	return b.String()
}
