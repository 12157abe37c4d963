package runtime

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxIgnoreFileBytes caps one ignore file; a larger one is not read.
const maxIgnoreFileBytes = 1 << 20

// ignoreRule is one line of a .gitignore-format file.
type ignoreRule struct {
	// re is the rule over the path relative to the file's directory
	// (anchored) or the name; nil for the commonest rules, which need no
	// regexp: the subject is lit (star false), or pre, a run without "/",
	// then suf (star true: "*.log", "build*").
	re            *regexp.Regexp
	lit, pre, suf string
	star          bool
	negate        bool
	dirOnly       bool
	byName        bool // no "/" in the pattern: matches the name at any depth
}

// matches reports whether the rule's pattern matches subject.
func (r *ignoreRule) matches(subject string) bool {
	switch {
	case r.re != nil:
		return r.re.MatchString(subject)
	case !r.star:
		return subject == r.lit
	}
	return len(subject) >= len(r.pre)+len(r.suf) && strings.HasPrefix(subject, r.pre) && strings.HasSuffix(subject, r.suf) &&
		!strings.Contains(subject[len(r.pre):len(subject)-len(r.suf)], "/")
}

// fastRule sets r to match pattern without a regexp if it is a plain
// name or path with at most one "*" (not "**") and no other wildcard or
// escape; what the regexp of ignoreRegexp would match, exactly.
func (r *ignoreRule) fastRule(pattern string) bool {
	if strings.ContainsAny(pattern, "?[\\") || !utf8.ValidString(pattern) {
		return false
	}
	switch strings.Count(pattern, "*") {
	case 0:
		r.lit = pattern
		return true
	case 1:
		r.pre, r.suf, _ = strings.Cut(pattern, "*")
		r.star = true
		return true
	}
	return false
}

// ignoreFile is the rules of one file, for paths below base (slash-
// separated, relative to the ignorer's origin; "" is the origin).
type ignoreFile struct {
	base  string
	slash string // base + "/"
	rules []ignoreRule
}

// parseIgnore compiles gitignore syntax: comments, blank lines, "!"
// negation, a trailing "/" for directories only, a "/" elsewhere anchoring
// the pattern to the file's directory, "*", "?", "[...]" within a
// component and "**" across components. Lines that do not compile are
// skipped.
func parseIgnore(base string, data []byte) ignoreFile {
	f := ignoreFile{base: base, slash: base + "/"}
	for _, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSuffix(raw, "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// Trailing spaces go unless escaped.
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
			line = line[:len(line)-1]
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, "\\!") || strings.HasPrefix(line, "\\#") {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		r.byName = !strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		if !r.fastRule(line) {
			re, err := regexp.Compile("^" + ignoreRegexp(line) + "$")
			if err != nil {
				continue
			}
			r.re = re
		}
		f.rules = append(f.rules, r)
	}
	return f
}

// ignoreRegexp translates one gitignore pattern (no leading "/") to a
// regexp over slash-separated paths.
func ignoreRegexp(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); {
		switch {
		case strings.HasPrefix(p[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 3
		case p[i:] == "**":
			b.WriteString(".*")
			i += 2
		case p[i] == '*':
			b.WriteString("[^/]*")
			i++
		case p[i] == '?':
			b.WriteString("[^/]")
			i++
		case p[i] == '[':
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				i++
				continue
			}
			class := p[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 2
		case p[i] == '\\' && i+1 < len(p):
			b.WriteString(regexp.QuoteMeta(p[i+1 : i+2]))
			i += 2
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			i++
		}
	}
	return b.String()
}

// match says whether f decides about path (relative to the origin):
// matched, and whether it is ignored (false for a negation).
func (f *ignoreFile) match(path string, isDir bool) (decided, ignored bool) {
	rel := path
	if f.base != "" {
		if !strings.HasPrefix(path, f.slash) {
			return false, false
		}
		rel = path[len(f.slash):]
	}
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	for i := len(f.rules) - 1; i >= 0; i-- {
		r := &f.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		subject := rel
		if r.byName {
			subject = name
		}
		if r.matches(subject) {
			return true, !r.negate
		}
	}
	return false, false
}

// ignorer decides which walked paths git would ignore: the global
// excludes file, the repository's .git/info/exclude, and the .gitignore
// and .ignore files from the repository root down (those inside the walk
// are read as the walk reaches their directories). Paths are relative to
// the origin: the repository root, or the walk's start outside a
// repository. A directory ignored is not walked, so nothing below it can
// be re-included, as in git. It is safe for concurrent use.
type ignorer struct {
	prefix string // the walk's start relative to the origin ("" if the same)

	files []ignoreFile // outside the walk, least specific first; fixed after newIgnorer

	mu     sync.Mutex
	chains map[string][]ignoreFile // by walk-relative directory ("" the start): every file that applies inside it
}

// newIgnorer prepares the ignore rules of a walk starting at startReal.
func newIgnorer(startReal, globalExcludes string) *ignorer {
	ig := &ignorer{chains: map[string][]ignoreFile{}}
	if globalExcludes != "" {
		if data, ok := readIgnoreFile(globalExcludes); ok {
			ig.files = append(ig.files, parseIgnore("", data))
		}
	}
	repo := ""
	for d := startReal; ; d = filepath.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			repo = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if repo == "" {
		return ig
	}
	rel, err := filepath.Rel(repo, startReal)
	if err != nil {
		return ig
	}
	if rel != "." {
		ig.prefix = filepath.ToSlash(rel)
	}
	if data, ok := readIgnoreFile(filepath.Join(repo, ".git", "info", "exclude")); ok {
		ig.files = append(ig.files, parseIgnore("", data))
	}
	// The ignore files of the directories from the repository root down
	// to (not including) the start; the start's own are read by the walk.
	if ig.prefix != "" {
		d, base := repo, ""
		for _, c := range strings.Split(ig.prefix, "/") {
			for _, n := range []string{".gitignore", ".ignore"} {
				if data, ok := readIgnoreFile(filepath.Join(d, n)); ok {
					ig.files = append(ig.files, parseIgnore(base, data))
				}
			}
			d, base = filepath.Join(d, c), strings.TrimPrefix(base+"/"+c, "/")
		}
	}
	return ig
}

// ignoreFileNames are the ignore files a walked directory may hold.
var ignoreFileNames = [...]string{".gitignore", ".ignore"}

// readIgnoreFile reads a small regular file, never through a final
// symlink.
func readIgnoreFile(path string) ([]byte, bool) {
	data, size, err := ReadRegularFile(path, "", maxIgnoreFileBytes)
	return data, err == nil && size <= maxIgnoreFileBytes
}

// chain returns the ignore files that apply inside the walked directory
// dirRel, outermost first: its parent's chain (built when the walk listed
// the parent) and its own .gitignore and .ignore, read once through its
// open descriptor if its listing has them (present: ignoreFileNames bits).
func (ig *ignorer) chain(dirRel string, dir *dirHandle, present uint8) []ignoreFile {
	ig.mu.Lock()
	if c, ok := ig.chains[dirRel]; ok {
		ig.mu.Unlock()
		return c
	}
	var parent []ignoreFile
	if dirRel != "" {
		p := ""
		if i := strings.LastIndexByte(dirRel, '/'); i >= 0 {
			p = dirRel[:i]
		}
		parent = ig.chains[p]
	}
	ig.mu.Unlock()
	c := slices.Clip(parent)
	base := ig.origin(dirRel)
	for i, n := range ignoreFileNames {
		if present&(1<<i) == 0 {
			continue
		}
		if data, ok := readAt(dir, n); ok && len(bytes.TrimSpace(data)) > 0 {
			c = append(c, parseIgnore(base, data))
		}
	}
	ig.mu.Lock()
	ig.chains[dirRel] = c
	ig.mu.Unlock()
	return c
}

// origin is a walk-relative path relative to the origin.
func (ig *ignorer) origin(rel string) string {
	switch {
	case ig.prefix == "":
		return rel
	case rel == "":
		return ig.prefix
	}
	return ig.prefix + "/" + rel
}

// ignored reports whether the walked entry e is ignored: the files
// outside the walk decide first, then those of e's directory's chain;
// the last match wins. The entries of one directory are asked about by
// one goroutine at a time (the walk's).
func (ig *ignorer) ignored(e entry) bool {
	parent := ""
	if i := strings.LastIndexByte(e.rel, '/'); i >= 0 {
		parent = e.rel[:i]
	}
	chain := e.dir.ignoreChain
	if !e.dir.chainSet {
		chain = ig.chain(parent, e.dir, e.dir.ignoreFiles)
		e.dir.ignoreChain, e.dir.chainSet = chain, true
	}
	path, isDir := ig.origin(e.rel), e.d.IsDir()
	ignored := false
	for _, fs := range [][]ignoreFile{ig.files, chain} {
		for i := range fs {
			if ok, ign := fs[i].match(path, isDir); ok {
				ignored = ign
			}
		}
	}
	return ignored
}

// globalExcludesFile is git's default global excludes file:
// $XDG_CONFIG_HOME/git/ignore, else ~/.config/git/ignore.
func globalExcludesFile() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "git", "ignore")
	}
	if h := os.Getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "git", "ignore")
	}
	return ""
}
