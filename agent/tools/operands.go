package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
)

// operandInfo judges a path-like word of a command run in dir, for the
// wide approval scope of read-only programs: inside means the path,
// resolved through every symlink, is inside the workspace roots and not
// under a denied name, and is not a file with several hard links (one
// can be a link to a file outside). "~…" is never inside: the shell
// expands it to the home directory. A directory also says whether a
// denied path lies below it (holdsDenied).
func (w *Workspace) operandInfo(dir, word string) policy.OperandInfo {
	if word == "" || strings.HasPrefix(word, "~") || strings.IndexByte(word, 0) >= 0 {
		return policy.OperandInfo{}
	}
	p := word
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	real, err := realPath(p)
	if err != nil || protectedName(p) || protectedName(real) || w.check(p, policy.AccessRead) != nil || !w.realInside(real) {
		return policy.OperandInfo{}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return policy.OperandInfo{Inside: true} // does not exist (yet)
	}
	if fi.Mode().IsRegular() && runtime.LinkCount(fi) > 1 {
		return policy.OperandInfo{}
	}
	info := policy.OperandInfo{Inside: true, Dir: fi.IsDir()}
	if info.Dir {
		info.HoldsDenied = w.holdsDenied(p, real)
	}
	return info
}

// holdsDenied reports whether a directory, as written (p) or resolved
// (real), has one of the denied paths the file tools never list below
// it (policy.FS.DeniedBelow: ~/.ssh or the state directory under the
// home directory as the workspace). The policy holds each denied path as
// configured and as resolved; below a real path outside the roots (a
// root reached through a symlink), any of them counts.
func (w *Workspace) holdsDenied(p, real string) bool {
	pol := w.local.Policy()
	_, below := pol.DeniedBelow(p)
	if !below {
		_, below = pol.DeniedBelow(real)
	}
	return below
}

// repoHoldsDenied reports whether the git repository holding dir (the
// nearest directory at or above it with a .git) has a denied path below
// its top, as holdsDenied judges a directory; false outside a repository.
func (w *Workspace) repoHoldsDenied(dir string) bool {
	top, _ := gitState(dir)
	if top == "" {
		return false
	}
	real, err := realPath(top)
	if err != nil {
		return true
	}
	return w.holdsDenied(top, real)
}

// protectedName reports whether a component of p is .git, .env or
// .env.*, at any depth: names whose contents a wide approval never
// covers, whatever the workspace's denied prefixes say.
func protectedName(p string) bool {
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		c = strings.ToLower(c)
		if c == ".git" || c == ".env" || strings.HasPrefix(c, ".env.") {
			return true
		}
	}
	return false
}

// realInside checks a real path against the rules, also when a root is
// itself reached through a symlink.
func (w *Workspace) realInside(real string) bool {
	if w.check(real, policy.AccessRead) == nil {
		return true
	}
	for _, r := range w.roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil || rr == r {
			continue
		}
		if rel, err := filepath.Rel(rr, real); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			return w.check(filepath.Join(r, rel), policy.AccessRead) == nil
		}
	}
	return false
}

// realPath resolves every symlink of p; for a path that does not exist,
// its longest existing parent is resolved and the rest appended. A link
// that exists but cannot be resolved (dangling, a loop) is an error.
func realPath(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	if _, lerr := os.Lstat(p); lerr == nil || !errors.Is(lerr, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(p)
	if parent == p {
		return "", err
	}
	rp, err := realPath(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(rp, filepath.Base(p)), nil
}
