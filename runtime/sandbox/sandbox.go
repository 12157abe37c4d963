package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// HelperArg is argv[1] of the helper.
const HelperArg = "__acp-agent-sandbox"

// Policy is what a confined command may do.
type Policy struct {
	// WritableRoots are the workspace roots: writable, except their .git
	// (unless AllowGitWrites).
	WritableRoots []string `json:"writableRoots"`
	// ExtraWritable are more writable paths (toolchain caches, the
	// configured extra paths); missing ones are skipped.
	ExtraWritable []string `json:"extraWritable,omitempty"`
	// DeniedPaths are never readable or writable (the user's secrets, the
	// agent's own config, sessions and logs); missing ones are skipped.
	// The secrets files under the writable roots (.env, .env.* at any
	// depth, templates excepted) are always denied too.
	DeniedPaths []string `json:"deniedPaths,omitempty"`
	// ProtectedPaths stay readable but are never written, created,
	// renamed, removed or replaced (the user's shell start-up files, git's
	// global config: what the user's programs later run unconfined). Only
	// those inside a writable path matter (everything else is read-only
	// already); one that does not exist yet keeps the directory where it
	// would be created from getting new entries (Linux).
	ProtectedPaths []string `json:"protectedPaths,omitempty"`
	// Network allows endpoints: sockets of every family, TCP bind and
	// connect, SysV IPC and POSIX message queues. Without it a command
	// has AF_UNIX stream and seqpacket pairs only.
	Network bool `json:"network,omitempty"`
	// AllowGitWrites makes .git in the writable roots writable.
	AllowGitWrites bool `json:"allowGitWrites,omitempty"`
	// TempDir is writable and is the command's TMPDIR.
	TempDir string `json:"tempDir,omitempty"`
	// SecretsCache is a directory where helpers keep, between processes,
	// what they listed looking for the secrets files under the writable
	// roots (one file per set of roots), so that a new helper reads again
	// only the directories that changed (Linux). It is used only when it
	// lies under one of DeniedPaths, where no command can write it; "":
	// nothing is kept.
	SecretsCache string `json:"secretsCache,omitempty"`
}

// Status says whether commands can be confined here.
type Status struct {
	Available bool
	// ABI is the kernel's Landlock ABI version (0 when missing).
	ABI int
	// Reason explains an unavailable sandbox.
	Reason string
	// Mechanism names what confines commands where it is not Landlock
	// ("Seatbelt, sandbox-exec" on macOS).
	Mechanism string
	// Masks says how denied paths are masked by mount ("privileged",
	// "user namespace"); empty when they are granted around, and then
	// Limit says why and what that costs (Linux).
	Masks string
	Limit string
}

func (s Status) String() string {
	switch {
	case !s.Available:
		return "unavailable: " + s.Reason
	case s.Mechanism != "":
		return "available (" + s.Mechanism + ")"
	case s.Masks != "":
		return fmt.Sprintf("available (Landlock ABI %d, seccomp, .git and .env masked by mount: %s)", s.ABI, s.Masks)
	case s.Limit != "":
		return fmt.Sprintf("available (Landlock ABI %d, seccomp), limited: %s", s.ABI, s.Limit)
	}
	return fmt.Sprintf("available (Landlock ABI %d, seccomp)", s.ABI)
}

// minABI is the oldest Landlock ABI the sandbox accepts: 4 adds TCP
// rules, so network-off does not rest on seccomp alone.
const minABI = 4

// DefaultDeniedPaths are the secrets no confined command may read, under
// home: SSH, cloud, GPG, netrc, GitHub CLI and Docker credentials.
func DefaultDeniedPaths(home string) []string {
	if home == "" || home == "/" {
		return nil
	}
	var out []string
	for _, p := range []string{".ssh", ".aws", ".gnupg", ".netrc", ".config/gh", ".docker/config.json",
		".config/gcloud", ".kube", ".git-credentials", ".npmrc", ".pypirc", ".azure"} {
		out = append(out, filepath.Join(home, p))
	}
	return out
}

// DefaultProtectedPaths are the start-up and configuration files under
// home that the user's other programs run or obey unconfined: the shells'
// start-up files, git's global configuration (core.hooksPath and aliases
// run on the next git command anywhere), systemd user units and
// environment, desktop autostart entries, fish's configuration, the
// private bin directories a login shell puts first on PATH when they
// exist (~/bin, ~/.local/bin: Debian's and Fedora's ~/.profile and
// ~/.bashrc), the start-up files of vim, Neovim, Emacs and Zed, which
// run code when the user opens the editor, and the configuration files
// of man, tmux, screen, gdb, cargo and Mercurial, which name programs
// those run, the files distributions' ~/.bashrc sources (~/.bash_aliases,
// ~/.bashrc.d), and the start-up files of sqlite3, psql, wget, mysql,
// less, irb and R, which run what they say; also under xdgConfig ($XDG_CONFIG_HOME) when it is set
// elsewhere. pathList (the agent's PATH, the user's login PATH as the
// editor passed it on) adds its entries that are per-user tool
// directories under home (PathProtectedPaths). On Windows, its own
// start-up places too: the Startup folder, PowerShell's profile and
// module directories, and the PATH entries under home\AppData.
func DefaultProtectedPaths(home, xdgConfig, pathList string) []string {
	if home == "" || home == "/" {
		return nil
	}
	var out []string
	for _, p := range []string{".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
		".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".gitconfig", ".pam_environment",
		".xprofile", ".xsessionrc", ".xinitrc", "bin", ".local/bin", ".vimrc", ".gvimrc", ".vim", ".emacs", ".emacs.el", ".emacs.d",
		// Configuration that names programs the tool runs: man-db's
		// DEFINE, tmux's run-shell, screen's exec, gdb's shell, cargo's
		// rustc-wrapper and runners, Mercurial's hooks.
		".manpath", ".tmux.conf", ".screenrc", ".gdbinit", ".cargo/config.toml", ".cargo/config", ".hgrc",
		// Sourced by the shells' start-up files as distributions ship
		// them: Debian's and Ubuntu's ~/.bashrc sources ~/.bash_aliases,
		// Fedora's every file of ~/.bashrc.d.
		".bash_aliases", ".bashrc.d",
		// Start-up files of tools that run what they say: sqlite3's
		// dot-commands (.shell) and psql's meta-commands (\!), wget's
		// use_askpass, the mysql client's pager and plugins, less's
		// LESSOPEN (#env in a lesskey file), Ruby's and R's start-up
		// code.
		".sqliterc", ".psqlrc", ".wgetrc", ".my.cnf", ".lesskey", ".irbrc", ".Rprofile"} {
		out = append(out, filepath.Join(home, filepath.FromSlash(p)))
	}
	configs := []string{filepath.Join(home, ".config")}
	if xdgConfig != "" && filepath.IsAbs(xdgConfig) && filepath.Clean(xdgConfig) != configs[0] {
		configs = append(configs, filepath.Clean(xdgConfig))
	}
	for _, c := range configs {
		for _, p := range []string{"git", "systemd", "environment.d", "autostart", "fish", "nvim", "emacs", "zed", "tmux", "gdb", "lesskey"} {
			out = append(out, filepath.Join(c, p))
		}
	}
	for _, p := range append(PathProtectedPaths(home, pathList), osProtectedPaths(home, pathList)...) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// PathProtectedPaths are the entries of pathList (a PATH) that are
// per-user tool directories under home: a program written there runs
// instead of the system's the next time the user's shell looks a name
// up. Taken are an entry right below home (~/bin, ~/scripts) and one
// two levels down under a dot-directory or ~/go (~/.cargo/bin,
// ~/go/bin, ~/.deno/bin, ~/.npm-global/bin); not entries deeper in a
// project (~/proj/node_modules/.bin, which npm install must write), and
// never home itself.
func PathProtectedPaths(home, pathList string) []string {
	if home == "" || !filepath.IsAbs(home) {
		return nil
	}
	home = filepath.Clean(home)
	var out []string
	for _, e := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(e) {
			continue
		}
		e = filepath.Clean(e)
		rel, err := filepath.Rel(home, e)
		if err != nil || rel == "." || !filepath.IsLocal(rel) {
			continue
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if (len(parts) == 1 || len(parts) == 2 && (strings.HasPrefix(parts[0], ".") || parts[0] == "go")) && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// DefaultCaches are the toolchain caches a confined build may write, under
// home, so go test, npm test, pytest and cargo test work inside.
func DefaultCaches(home string) []string {
	if home == "" || home == "/" {
		return nil
	}
	var out []string
	for _, p := range []string{".cache", "go/pkg/mod", ".npm", ".cargo/registry", ".cargo/git", ".rustup/tmp"} {
		out = append(out, filepath.Join(home, p))
	}
	return out
}

// Request is one command for a Launcher: the program's resolved path, its
// argv (argv[0] as the user wrote it), the complete environment and the
// absolute working directory, confined by Policy.
type Request struct {
	Policy Policy   `json:"policy"`
	Path   string   `json:"path"`
	Argv   []string `json:"argv"`
	Env    []string `json:"env"`
	Dir    string   `json:"dir"`
	// Cgroup says a fourth descriptor comes with the request: a cgroup v2
	// directory the command starts in.
	Cgroup bool `json:"cgroup,omitempty"`
}

// validate refuses what the helper must never guess about: relative
// paths (they would resolve against the helper's own cwd) and an empty
// command.
func (r Request) validate() error {
	if !filepath.IsAbs(r.Path) || len(r.Argv) == 0 {
		return fmt.Errorf("sandbox request: program %q is not an absolute path with an argv", r.Path)
	}
	if !filepath.IsAbs(r.Dir) {
		return fmt.Errorf("sandbox request: working directory %q is not absolute", r.Dir)
	}
	p := r.Policy
	for _, list := range [][]string{p.WritableRoots, p.ExtraWritable, p.DeniedPaths, p.ProtectedPaths} {
		for _, x := range list {
			if !filepath.IsAbs(x) {
				return fmt.Errorf("sandbox policy: %q is not absolute", x)
			}
		}
	}
	if p.TempDir != "" && !filepath.IsAbs(p.TempDir) {
		return fmt.Errorf("sandbox policy: temporary directory %q is not absolute", p.TempDir)
	}
	return nil
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// grantsAround is the set of paths to grant so that all of bases is
// covered except the excluded paths (and what is below them): a granted
// directory that holds an excluded path is replaced by its entries,
// except the one leading to the excluded path, recursively; a base inside
// an excluded path is dropped. Missing excluded paths exclude nothing.
// expanded are the directories so replaced.
func grantsAround(bases, excluded []string) (grants, expanded []string) {
	return grantsAroundAll(bases, excluded, nil)
}

// grantsAroundAll is grantsAround where the paths of absentToo are
// excluded even while missing: the directory that would hold one (or the
// missing directory leading to it) is replaced by its entries, so that
// nothing new, that path included, can be created directly in it.
func grantsAroundAll(bases, excluded, absentToo []string) (grants, expanded []string) {
	set := map[string]bool{}
	for _, b := range bases {
		set[filepath.Clean(b)] = true
	}
	exp := map[string]bool{}
	gone := map[string]bool{}
	for _, d := range append(slices.Clone(excluded), absentToo...) {
		d = filepath.Clean(d)
		if _, err := os.Lstat(d); err != nil && !slices.Contains(absentToo, d) {
			continue
		}
		gone[d] = true
		// Grants are disjoint but for nested bases: every grant holding
		// d is one of its ancestors; expand each, nearest first.
		for p := filepath.Dir(d); ; p = filepath.Dir(p) {
			if set[p] {
				delete(set, p)
				expandAround(set, exp, p, d)
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	}
	// Drop what lies in an excluded path (d itself, or a base below it).
	for g := range set {
		for p := g; ; p = filepath.Dir(p) {
			if gone[p] {
				delete(set, g)
				break
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	}
	return sortedKeys(set), sortedKeys(exp)
}

// listable are the expanded directories that may still be listed: those
// with no excluded directory below them (Landlock's read-dir right on a
// directory reaches every directory below it; a listing shows names, and
// the files' content stays ungranted).
func listable(expanded, excluded []string) []string {
	var dirs []string
	for _, d := range excluded {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			dirs = append(dirs, filepath.Clean(d))
		}
	}
	var out []string
	for _, e := range expanded {
		if !slices.ContainsFunc(dirs, func(d string) bool { return within(e, d) }) {
			out = append(out, e)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func expandAround(grants, expanded map[string]bool, dir, denied string) {
	if dir == denied {
		return
	}
	// A symlink on the way is not listed: its entries, granted by a
	// spelling through it, would grant what it leads to whole, which
	// may be a directory another excluded path's real spelling goes
	// around (~/secrets linked to dotfiles, which holds docker/ with a
	// missing config.json to keep) or one outside every base. Each
	// excluded path's real spelling is excluded too, and goes around
	// the directory itself.
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return
	}
	expanded[dir] = true
	rel, _ := filepath.Rel(dir, denied)
	next := filepath.Join(dir, strings.Split(rel, string(filepath.Separator))[0])
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if p == next {
			expandAround(grants, expanded, p, denied)
			continue
		}
		grants[p] = true
	}
}
