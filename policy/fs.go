package policy

import (
	"errors"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FS is the rooted filesystem rule set (seed 002 rootedWithRules).
//
// The zero value has no roots and therefore refuses every path. FS is a
// plain value: Resolve and DeniedRel never touch the filesystem, so they
// decide on the path text alone. Symlinks, hard links and races are the
// business of whoever opens the file (package runtime re-checks the real
// path of every file it opens against the same rules).
type FS struct {
	// Roots are absolute directories; Roots[0] is the session cwd, the
	// rest are the session's additionalDirectories. A path must be inside
	// one of them.
	Roots []string
	// ReadOnlyRoots are absolute directories under which writes are
	// refused. They do not widen Roots: a read-only root outside every
	// root is simply unreachable.
	ReadOnlyRoots []string
	// DeniedPathPrefixes are relative to each root ("/" is prepended if
	// missing, so ".git" and "/.git" mean the same). A path equal to
	// root/prefix or under it (a "/"-bounded match) is refused for reads
	// and writes. See DeniedRel for how case variants are treated.
	DeniedPathPrefixes []string
	// DeniedPaths are absolute paths never read, written or listed
	// whatever root contains them: the user's credentials (~/.ssh, ...)
	// and the agent's own files (config, state, sessions, logs, serve's
	// token), the list the sandbox denies to commands. One applies to a
	// path only when the root that contains the path (the longest) is
	// not itself that denied path or inside it: a workspace the user
	// opens inside one is the user's choice, and the agent's kept
	// outputs are a read-only root inside its session directory. Paths
	// compare component by component as DeniedRel compares prefixes
	// (case-insensitively, without what case-insensitive filesystems
	// ignore), so "~/.sshx" is not "~/.ssh". Lexical only: whoever
	// checks real paths adds each one's real path too (runtime does).
	DeniedPaths []string
	// ProtectedPaths are absolute paths never written, created or removed
	// (AccessWrite), and read like any other: the user's start-up and
	// configuration files that other programs later run unconfined
	// (~/.bashrc, ~/.gitconfig, ...), the list the sandbox keeps
	// commands from writing. Unlike DeniedPaths they hold whatever root
	// contains them. Compared as DeniedPaths are; lexical only (runtime
	// adds the real paths).
	ProtectedPaths []string
}

// Access says what an operation will do with a path.
type Access int

const (
	// AccessRead covers reads, listings, globs and greps.
	AccessRead Access = iota
	// AccessWrite covers creating, writing and creating parents.
	AccessWrite
)

// String returns "read" or "write".
func (a Access) String() string {
	if a == AccessWrite {
		return "write"
	}
	return "read"
}

// ErrPermissionDenied is what every refusal unwraps to.
var ErrPermissionDenied = errors.New("permission denied")

// Reasons a path is refused, as found in PathError.Reason. Callers log
// them; they must not branch on them (use errors.Is with
// ErrPermissionDenied).
const (
	ReasonNotAbsolute  = "not absolute"
	ReasonNUL          = "NUL byte"
	ReasonInvalidUTF8  = "invalid UTF-8"
	ReasonOutsideRoots = "outside roots"
	ReasonReadOnlyRoot = "read-only root"
	reasonDeniedPrefix = "denied prefix "
	reasonDeniedPath   = "denied path "
	reasonProtected    = "protected path "
)

// PathError is a refusal. Its message is the seed's "Permission denied:
// <path>" with the path as the caller gave it; Reason says which rule
// refused it and is meant for logs, not for the model.
type PathError struct {
	Path   string
	Reason string
	// Hint, when set, follows the message in parentheses: what the model
	// should know about a refusal it cannot work around by another path.
	Hint string
}

// Error returns "Permission denied: <path>". A path holding a NUL, a
// control character or invalid UTF-8 is shown Go-quoted so the message
// itself stays printable and valid UTF-8.
func (e *PathError) Error() string {
	if e.Hint != "" {
		return "Permission denied: " + displayPath(e.Path) + " (" + e.Hint + ")"
	}
	return "Permission denied: " + displayPath(e.Path)
}

// protectedHint is the Hint of a refusal by ProtectedPaths.
const protectedHint = "a protected start-up or configuration file of the user's, which other programs run outside the sandbox: " +
	"the agent never writes it; ask the user to change it"

// Unwrap returns ErrPermissionDenied.
func (e *PathError) Unwrap() error { return ErrPermissionDenied }

func displayPath(p string) string {
	if !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return strconv.Quote(p)
	}
	return p
}

// DefaultDeniedPrefixes returns the prefixes denied when the session does
// not configure any: ".git", because writing .git/config or .git/hooks/*
// gives code execution the next time the user runs git, and reading it
// leaks remotes with embedded credentials; ".env", because by convention
// it holds the project's secrets. Both are "/"-bounded, so ".github" and
// ".envrc" stay allowed.
func DefaultDeniedPrefixes() []string {
	return []string{".git", ".env"}
}

// Resolve checks path lexically, in the seed's order, and returns the root
// that contains it and the root-relative local path to hand to an
// os.Root method.
//
//  1. path must be absolute, hold no NUL byte and be valid UTF-8;
//  2. after filepath.Clean (which folds "." and ".." segments, repeated
//     and trailing slashes) it must lie inside a root: filepath.Rel from
//     the root must be filepath.IsLocal, or the path must be the root
//     itself (rel "."). If roots are nested, the longest containing root
//     is returned;
//  3. it must not fall under a denied prefix of any root that contains it
//     (see DeniedRel);
//  4. it must not be one of DeniedPaths or under one, unless the root
//     returned is that denied path or inside it (see DeniedPaths);
//  5. for AccessWrite, it must not be a read-only root or under one,
//     nor one of ProtectedPaths or under one.
//
// Every refusal is a *PathError naming path as given. Because step 2
// cleans before it compares, "/w/root/sub/../../x" is judged as "/w/x" and
// refused; because it compares with Rel rather than a string prefix,
// "/w/root-evil" is never taken for a child of "/w/root". ".." is folded
// lexically: "/w/root/link/../x" means "/w/root/x" whatever link points
// to, which is also what os.Root will open.
//
// Resolve does not limit path length; the runtime does.
func (p FS) Resolve(path string, a Access) (root, rel string, err error) {
	switch {
	case !filepath.IsAbs(path):
		return "", "", &PathError{Path: path, Reason: ReasonNotAbsolute}
	case strings.IndexByte(path, 0) >= 0:
		return "", "", &PathError{Path: path, Reason: ReasonNUL}
	case !utf8.ValidString(path):
		return "", "", &PathError{Path: path, Reason: ReasonInvalidUTF8}
	}
	clean := CanonicalPath(filepath.Clean(path))

	for _, r := range p.Roots {
		r2, rel2, ok := within(r, clean)
		if !ok {
			continue
		}
		if prefix, denied := p.deniedPrefix(rel2); denied {
			return "", "", &PathError{Path: path, Reason: reasonDeniedPrefix + prefix}
		}
		// Longest root wins so that a nested root (an additional directory
		// inside the cwd) answers for its own subtree.
		if len(r2) > len(root) {
			root, rel = r2, rel2
		}
	}
	if root == "" {
		return "", "", &PathError{Path: path, Reason: ReasonOutsideRoots}
	}
	if d, denied := p.deniedPath(root, clean); denied {
		return "", "", &PathError{Path: path, Reason: reasonDeniedPath + d}
	}
	if a == AccessWrite {
		for _, r := range p.ReadOnlyRoots {
			if _, _, ok := within(r, clean); ok {
				return "", "", &PathError{Path: path, Reason: ReasonReadOnlyRoot}
			}
		}
		for _, x := range p.ProtectedPaths {
			if filepath.IsAbs(x) && insidePath(clean, CanonicalPath(filepath.Clean(x))) {
				return "", "", &PathError{Path: path, Reason: reasonProtected + x, Hint: protectedHint}
			}
		}
	}
	return root, rel, nil
}

// ChildrenByName reports whether, for the clean absolute directory dir
// that Resolve allows, Resolve's answer for each entry dir/name depends
// on the name alone, as ChildNameAllowed gives it: no root is an entry of
// dir, and no denied prefix of a root containing dir names an entry of
// dir (a prefix can only newly match one level down, since dir itself
// is under none). Walks ask once per directory instead of resolving every
// entry's whole path; where it reports false they call Resolve.
func (p FS) ChildrenByName(dir string) bool {
	for _, r := range p.Roots {
		if !filepath.IsAbs(r) {
			continue
		}
		cr := CanonicalPath(filepath.Clean(r))
		if cr != dir && filepath.Dir(cr) == dir {
			return false
		}
		_, rel, ok := within(cr, dir)
		if !ok {
			continue
		}
		// A denied path right below dir: the entry's name alone does not
		// say it is one (nor, for one inside it, which root contains it).
		for _, d := range p.DeniedPaths {
			if !filepath.IsAbs(d) {
				continue
			}
			cd := CanonicalPath(filepath.Clean(d))
			if parent := filepath.Dir(cd); parent != cd && insidePath(parent, dir) && insidePath(dir, parent) {
				return false
			}
		}
		for _, raw := range p.DeniedPathPrefixes {
			pre := normalizePrefix(raw)
			last := pre[strings.LastIndexByte(pre, '/')+1:]
			child := last
			if rel != "." {
				child = filepath.ToSlash(rel) + "/" + last
			}
			if underPrefix(child, pre) {
				return false
			}
		}
	}
	return true
}

// DeniedBelow finds a denied path (DeniedPaths) strictly inside the
// absolute directory dir that Resolve refuses: a command that lists or
// walks dir would show names (or contents) under it that the file tools
// never show. One that Resolve allows (a root is that denied path: the
// user's choice) does not count. A relative dir fails closed. Lexical, as
// Resolve: callers ask again with the real path of dir.
func (p FS) DeniedBelow(dir string) (string, bool) {
	if !filepath.IsAbs(dir) {
		return dir, true
	}
	cdir := CanonicalPath(filepath.Clean(dir))
	for _, d := range p.DeniedPaths {
		if !filepath.IsAbs(d) {
			continue
		}
		cd := CanonicalPath(filepath.Clean(d))
		if !insidePath(cd, cdir) || insidePath(cdir, cd) {
			continue // not below dir, or dir itself (Resolve's to judge)
		}
		if _, _, err := p.Resolve(cd, AccessRead); err != nil {
			return d, true
		}
	}
	return "", false
}

// ChildNameAllowed is Resolve's answer for an entry name of a directory
// for which ChildrenByName holds: a single component, valid UTF-8, no
// NUL, not "." or "..", and not a name DeniedName refuses.
func ChildNameAllowed(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00") &&
		utf8.ValidString(name) && !DeniedName(name)
}

// within reports whether the clean absolute path target is root or inside
// it, and returns the cleaned root and the local relative path.
func within(root, target string) (cleanRoot, rel string, ok bool) {
	if !filepath.IsAbs(root) {
		// A relative root is a configuration error; it contains nothing.
		return "", "", false
	}
	cleanRoot = CanonicalPath(filepath.Clean(root))
	rel, err := filepath.Rel(cleanRoot, target)
	if err != nil {
		return "", "", false
	}
	if rel != "." && !filepath.IsLocal(rel) {
		return "", "", false
	}
	return cleanRoot, rel, true
}

// deniedPath finds the denied path the clean absolute target falls under,
// given root, the clean root Resolve chose for it: one that contains root
// too does not apply (see DeniedPaths).
func (p FS) deniedPath(root, target string) (string, bool) {
	for _, d := range p.DeniedPaths {
		if !filepath.IsAbs(d) {
			// A relative denied path is a configuration error; callers
			// make them absolute.
			continue
		}
		cd := CanonicalPath(filepath.Clean(d))
		if insidePath(target, cd) && !insidePath(root, cd) {
			return d, true
		}
	}
	return "", false
}

// insidePath reports whether the clean absolute path p is dir or inside
// it, comparing volumes case-insensitively and components as underPrefix
// does.
func insidePath(p, dir string) bool {
	vp, vd := filepath.VolumeName(p), filepath.VolumeName(dir)
	if !strings.EqualFold(vp, vd) {
		return false
	}
	rp := strings.Trim(filepath.ToSlash(p[len(vp):]), "/")
	rd := strings.Trim(filepath.ToSlash(dir[len(vd):]), "/")
	switch {
	case rd == "":
		return true // the volume's root holds everything on it
	case rp == "":
		return false
	}
	return underPrefix(rp, rd)
}

// DeniedRel reports whether the root-relative path rel falls under one of
// the denied prefixes: rel equals the prefix or continues it after a "/".
// Package runtime calls it again on the real path of opened files and to
// skip subtrees during walks.
//
// Components are compared case-insensitively (Unicode simple folding) even
// on Linux, and after dropping trailing dots and spaces and the code points
// HFS+ ignores (U+200C..U+200F, U+202A..U+202E, U+206A..U+206F, U+FEFF).
// A hostile repository that targets a case-insensitive filesystem (macOS,
// Windows, or a case-folding ext4 directory) can name ".GIT/config",
// ".git./config" or ".g\u200cit/config" and reach the real .git there; the
// same trick is what git itself guards against (CVE-2014-9390). On Linux
// this may deny a harmless ".GIT" directory, which we accept.
func (p FS) DeniedRel(rel string) bool {
	_, denied := p.deniedPrefix(rel)
	return denied
}

func (p FS) deniedPrefix(rel string) (string, bool) {
	rel = filepath.ToSlash(rel)
	for _, raw := range p.DeniedPathPrefixes {
		if underPrefix(rel, normalizePrefix(raw)) {
			return raw, true
		}
	}
	return deniedComponent(rel)
}

// DeniedName reports whether a single path component is one the agent
// never reads or writes at any depth, whatever the configuration: ".git"
// (a repository's config and hooks run code the next time git runs, a
// planted ".git" file or directory in a subdirectory makes git use it),
// ".env" and ".env.<anything>" (secrets by convention), except the
// templates projects commit on purpose: ".env.example", ".env.sample",
// ".env.template" and ".env.dist". Names are compared as DeniedRel
// compares prefixes: case-insensitively, after dropping what
// case-insensitive filesystems ignore.
func DeniedName(name string) bool {
	f := foldableComponent(name)
	c := strings.ToLower(f)
	if !isASCII(f) {
		// Upper-casing folds what lower-casing does not (the dotless ı
		// is I): Windows compares names upper-cased.
		if u := strings.ToLower(strings.ToUpper(f)); u != c && (u == ".git" || envName(u)) {
			return true
		}
	}
	// osDeniedName: on Windows a short name (GIT~1) can be any long one.
	return c == ".git" || envName(c) || osDeniedName(c)
}

// sameName reports whether two components name the same file on a
// case-insensitive volume: equal under Unicode simple folding, or, with
// letters beyond ASCII, once upper-cased (NTFS compares names through its
// upper-case table, where the dotless ı is I, which folding keeps apart).
func sameName(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	return (!isASCII(a) || !isASCII(b)) && strings.ToUpper(a) == strings.ToUpper(b)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// EnvFileName reports whether name is one of the secrets names DeniedName
// refuses: ".env" and ".env.<anything>" but the templates (the sandbox
// keeps confined commands from reading such files).
func EnvFileName(name string) bool {
	return envName(strings.ToLower(foldableComponent(name)))
}

func envName(c string) bool {
	switch {
	case c == ".env":
		return true
	case strings.HasPrefix(c, ".env."):
		switch c {
		case ".env.example", ".env.sample", ".env.template", ".env.dist":
			return false
		}
		return true
	}
	return false
}

// deniedComponent finds a component of the slash path rel that DeniedName
// refuses.
func deniedComponent(rel string) (string, bool) {
	for rel != "" {
		c, rest, _ := strings.Cut(rel, "/")
		if DeniedName(c) {
			return "name " + c + " (at any depth)", true
		}
		rel = rest
	}
	return "", false
}

// normalizePrefix turns a configured prefix into a clean slash path
// relative to the root. An empty prefix or "/" becomes ".", which denies
// the whole root: a misconfiguration fails closed.
func normalizePrefix(raw string) string {
	return path.Clean(strings.TrimLeft(filepath.ToSlash(raw), "/"))
}

// underPrefix compares rel and prefix component by component, so that a
// case fold that changes byte lengths cannot misalign the "/" boundary.
func underPrefix(rel, prefix string) bool {
	if prefix == "." {
		return true
	}
	if prefix == ".." || strings.HasPrefix(prefix, "../") {
		return false
	}
	for {
		pc, prest, pmore := strings.Cut(prefix, "/")
		rc, rrest, rmore := strings.Cut(rel, "/")
		if !sameName(foldableComponent(pc), foldableComponent(rc)) {
			return false
		}
		if !pmore {
			return true
		}
		if !rmore {
			return false
		}
		prefix, rel = prest, rrest
	}
}

// foldableComponent strips what case-insensitive filesystems ignore in a
// name: HFS+ ignorable code points anywhere, dots and spaces at the end
// (Windows). It allocates only when there is something to strip.
func foldableComponent(c string) string {
	ascii := true
	for i := 0; i < len(c); i++ {
		if c[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		c = strings.Map(func(r rune) rune {
			if hfsIgnorable(r) {
				return -1
			}
			return r
		}, c)
	}
	if trimmed := strings.TrimRight(c, ". "); trimmed != "" {
		return trimmed
	}
	return c
}

func hfsIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f,
		r >= 0x202a && r <= 0x202e,
		r >= 0x206a && r <= 0x206f,
		r == 0xfeff:
		return true
	}
	return false
}
