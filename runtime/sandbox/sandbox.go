package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// HelperArg is argv[1] of the helper.
const (
	HelperArg = "__acp-agent-sandbox"
	// policyEnv carries the JSON policy from the agent to the helper; the
	// helper removes it before the command starts.
	policyEnv = "ACP_AGENT_SANDBOX_POLICY"
)

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
}

func (s Status) String() string {
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

// Command returns the program and argv that run path (argv0 and args its
// argv) confined by p, through exe (the agent's own binary), and the
// environment entries to add.
func Command(exe string, p Policy, path string, argv []string) (string, []string, []string, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return "", nil, nil, err
	}
	args := append([]string{exe, HelperArg, path}, argv...)
	env := []string{policyEnv + "=" + string(data)}
	if p.TempDir != "" {
		env = append(env, "TMPDIR="+p.TempDir)
	}
	return exe, args, env, nil
}

// readPolicy takes the policy from the environment and removes it.
func readPolicy() (Policy, error) {
	raw, ok := os.LookupEnv(policyEnv)
	if !ok {
		return Policy{}, errors.New("no sandbox policy in the environment")
	}
	os.Unsetenv(policyEnv)
	var p Policy
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return Policy{}, fmt.Errorf("sandbox policy: %w", err)
	}
	for _, list := range [][]string{p.WritableRoots, p.ExtraWritable, p.DeniedPaths} {
		for _, x := range list {
			if !filepath.IsAbs(x) {
				return Policy{}, fmt.Errorf("sandbox policy: %q is not absolute", x)
			}
		}
	}
	return p, nil
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
