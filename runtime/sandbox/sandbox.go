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
	// DeniedPaths are never readable (the user's secrets, the agent's own
	// config, sessions and logs); missing ones are skipped.
	DeniedPaths []string `json:"deniedPaths,omitempty"`
	// Network allows sockets other than Unix ones, TCP bind and connect.
	Network bool `json:"network,omitempty"`
	// AllowGitWrites makes .git in the writable roots writable.
	AllowGitWrites bool `json:"allowGitWrites,omitempty"`
	// TempDir is writable and is the command's TMPDIR.
	TempDir string `json:"tempDir,omitempty"`
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
}

func (s Status) String() string {
	if s.Available && s.Mechanism != "" {
		return "available (" + s.Mechanism + ")"
	}
	if s.Available {
		return fmt.Sprintf("available (Landlock ABI %d, seccomp)", s.ABI)
	}
	return "unavailable: " + s.Reason
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
	for _, list := range [][]string{p.WritableRoots, p.ExtraWritable, p.DeniedPaths} {
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

// readGrants is the set of paths to grant read access so that everything
// is readable except denied (and what is below them): each granted
// directory that holds a denied path is replaced by its entries, except
// the one leading to the denied path, recursively.
func readGrants(denied []string) []string {
	grants := map[string]bool{"/": true}
	for _, d := range denied {
		d = filepath.Clean(d)
		if _, err := os.Lstat(d); err != nil {
			continue
		}
		for g := range grants {
			if within(g, d) {
				delete(grants, g)
				expandAround(grants, g, d)
			}
		}
	}
	out := make([]string, 0, len(grants))
	for g := range grants {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

func expandAround(grants map[string]bool, dir, denied string) {
	if dir == denied {
		return
	}
	rel, _ := filepath.Rel(dir, denied)
	next := filepath.Join(dir, strings.Split(rel, string(filepath.Separator))[0])
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if p == next {
			expandAround(grants, p, denied)
			continue
		}
		grants[p] = true
	}
}
