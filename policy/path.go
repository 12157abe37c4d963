package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DroppedPathEntry is an entry CommandPath left out of a PATH, and why.
type DroppedPathEntry struct {
	Entry  string
	Reason string
}

// CommandPath is the PATH commands run with and programs are resolved
// through (NewLookPath, Terminal.Path, CommandContext.Path): path (the
// user's, as the editor launched the agent with it) without the entries
// that would let a workspace choose which program a name runs:
//
//   - empty and relative entries ("", ".", "bin"): the shell searches
//     them relative to the command's directory, which the model picks;
//   - entries inside a root (lexically, or once symlinks are resolved,
//     also for directories that do not exist yet): a repository's bin/ or
//     node_modules/.bin would otherwise put its own "git" first;
//   - repeated entries (the first one counts for lookups anyway).
//
// The result is cleaned (filepath.Clean) and never empty: when nothing is
// left it is DefaultPath, filtered the same way. roots are absolute;
// evalSymlinks nil means filepath.EvalSymlinks.
func CommandPath(path string, roots []string, evalSymlinks func(string) (string, error)) (string, []DroppedPathEntry) {
	if evalSymlinks == nil {
		evalSymlinks = filepath.EvalSymlinks
	}
	var realRoots []string
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			continue
		}
		r = CanonicalPath(filepath.Clean(r))
		realRoots = append(realRoots, r)
		if real := CanonicalPath(realPath(r, evalSymlinks)); real != r {
			realRoots = append(realRoots, real)
		}
	}
	keep := func(path string) ([]string, []DroppedPathEntry) {
		var kept []string
		var dropped []DroppedPathEntry
		seen := map[string]bool{}
		for _, e := range filepath.SplitList(path) {
			switch {
			case e == "":
				dropped = append(dropped, DroppedPathEntry{e, "empty entries search the command's own directory"})
				continue
			case !filepath.IsAbs(e):
				dropped = append(dropped, DroppedPathEntry{e, "relative entries search inside the command's directory"})
				continue
			}
			c := filepath.Clean(e)
			if seen[c] {
				continue
			}
			seen[c] = true
			// Compared as the policy compares paths: \\?\C:\w is C:\w.
			if under(CanonicalPath(c), realRoots) || under(CanonicalPath(realPath(c, evalSymlinks)), realRoots) {
				dropped = append(dropped, DroppedPathEntry{e, "inside the workspace, where the model can write programs"})
				continue
			}
			kept = append(kept, c)
		}
		return kept, dropped
	}
	kept, dropped := keep(path)
	if len(kept) == 0 {
		kept, _ = keep(DefaultPath)
	}
	return strings.Join(kept, string(filepath.ListSeparator)), dropped
}

// under reports whether p is one of dirs or below one.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, p); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			return true
		}
	}
	return false
}

// RealPath is p with the symlinks of its longest existing ancestor
// resolved and the rest joined (p itself if that fails): where a path
// that may not exist yet really is.
func RealPath(p string) string { return CanonicalPath(realPath(p, filepath.EvalSymlinks)) }

// realPath resolves the symlinks of p's longest existing ancestor and
// joins the rest: a directory that does not exist yet still resolves to
// where it would be created. A dangling symlink on the way is followed
// too (~/.bash_profile -> dotfiles/bash_profile, not there yet): creating
// the path creates its target, so the target is where the path would be.
func realPath(p string, evalSymlinks func(string) (string, error)) string {
	rest := ""
	hops := 0
	for cur := p; ; {
		real, err := evalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest)
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, os.ErrNotExist) {
			return p
		}
		if target, err := os.Readlink(cur); err == nil && hops < 40 {
			hops++
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			cur = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// NewLookPath returns a resolver for ParseCommandLine.
//
// Names without a slash are searched in the fixed path (a colon list; ""
// means DefaultPath). Empty and relative entries in path are skipped, so
// "." can never be searched. A name with a slash is never searched: it
// resolves to its cleaned absolute path (relative to cwd), which makes
// ./git or /tmp/x/git a different program from /usr/bin/git for every
// rule. Only regular files with an execute bit resolve; symlinks are not
// followed, so the result names the file that was asked for (multi-call
// binaries like busybox dispatch on that name).
func NewLookPath(path, cwd string) func(string) (string, error) {
	if path == "" {
		path = DefaultPath
	}
	var dirs []string
	for _, d := range filepath.SplitList(path) {
		if d != "" && filepath.IsAbs(d) {
			dirs = append(dirs, filepath.Clean(d))
		}
	}
	return func(name string) (string, error) {
		if name == "" || strings.IndexByte(name, 0) >= 0 {
			return "", fmt.Errorf("look up %q: %w", name, os.ErrNotExist)
		}
		if hasPathSeparator(name) {
			abs := name
			if !filepath.IsAbs(abs) {
				if !filepath.IsAbs(cwd) {
					return "", fmt.Errorf("look up %q: relative name without an absolute cwd: %w", name, os.ErrNotExist)
				}
				abs = filepath.Join(cwd, abs)
			}
			abs = filepath.Clean(abs)
			var err error
			for _, cand := range executableNames(abs) {
				if err = isExecutable(cand); err == nil {
					return cand, nil
				}
			}
			return "", fmt.Errorf("look up %q: %w", name, err)
		}
		for _, d := range dirs {
			for _, cand := range executableNames(filepath.Join(d, name)) {
				if isExecutable(cand) == nil {
					return cand, nil
				}
			}
		}
		return "", fmt.Errorf("look up %q in %s: %w", name, path, os.ErrNotExist)
	}
}
