package policy

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommandPathDropsWhatAWorkspaceCouldPlant(t *testing.T) {
	fs := newFakeSystem(t)
	link := filepath.Join(fs.root, "link-to-work")
	require.NoError(t, os.Symlink(fs.work, link))
	user := filepath.Join(fs.root, "home", "bin")
	require.NoError(t, os.MkdirAll(user, 0o755))
	path := strings.Join([]string{
		filepath.Join(fs.work, "bin"), // a workspace bin/ (does not exist yet)
		".", "bin", "",                // relative and empty entries
		filepath.Join(link, "node_modules", ".bin"), // inside the workspace through a symlink
		user, fs.bin + "/", fs.bin, // a user directory, then the system one twice
		filepath.Join(fs.work, "x", "..", "..", "opt"), // cleans to fs.root/opt: outside, kept
	}, ":")
	got, dropped := CommandPath(path, []string{fs.work}, nil)
	require.Equal(t, strings.Join([]string{user, fs.bin, filepath.Join(fs.root, "opt")}, ":"), got)
	var entries []string
	for _, d := range dropped {
		entries = append(entries, d.Entry)
		require.NotEmpty(t, d.Reason)
	}
	require.Equal(t, []string{filepath.Join(fs.work, "bin"), ".", "bin", "", filepath.Join(link, "node_modules", ".bin")}, entries)

	// Nothing left: the default path, never an empty one (which the
	// shell would read as the current directory).
	got, _ = CommandPath(".:"+fs.work, []string{fs.work}, nil)
	require.Equal(t, DefaultPath, got)
}

// TestCommandPolicyCorpusHasNoBypassWithTheUserPath runs the bypass corpus
// with the PATH a user's editor gives the agent, made into a command path:
// a workspace bin/ holding look-alike programs, relative and empty
// entries, and a user directory. Zero bypasses, as with the fixed path.
func TestCommandPolicyCorpusHasNoBypassWithTheUserPath(t *testing.T) {
	fs := newFakeSystem(t)
	wsBin := filepath.Join(fs.work, "bin")
	require.NoError(t, os.MkdirAll(wsBin, 0o755))
	for _, b := range []string{"git", "ls", "go", "cat", "head"} {
		require.NoError(t, os.WriteFile(filepath.Join(wsBin, b), []byte("#!/bin/sh\n"), 0o755))
	}
	user := filepath.Join(fs.root, "home", "bin")
	require.NoError(t, os.MkdirAll(user, 0o755))
	path, _ := CommandPath(strings.Join([]string{wsBin, ".", "", "x", user, fs.bin}, ":"), []string{fs.work}, nil)
	look := NewLookPath(path, fs.work)
	ctx := fs.ctx()
	ctx.Path = path
	term := Terminal{AllowedCommands: []string{"ls", "git status", "go test"}, Path: path}
	mem := &CommandMemory{}
	for _, l := range []string{"go test ./...", "git status", "ls"} {
		cl, err := ParseCommandLine(l, look)
		require.NoError(t, err)
		require.Equal(t, filepath.Join(fs.bin, strings.Fields(l)[0]), cl.Commands[0].Resolved, "the workspace's bin/ is not searched")
		mem.Remember(cl, ctx, DecisionAllow)
	}
	cases := append(loadCorpus(t, "bypass.txt", fs.evil),
		corpusCase{class: "path", line: "bin/git status"},
		corpusCase{class: "path", line: "./bin/ls"},
		corpusCase{class: "path", line: wsBin + "/go test ./..."},
		corpusCase{class: "path", line: "PATH=bin:$PATH git status"},
		corpusCase{class: "path", line: "PATH=. ls"},
		corpusCase{class: "path", line: "export PATH=" + wsBin + "; git status"},
	)
	bypasses := 0
	for _, c := range cases {
		cl, err := ParseCommandLine(c.line, look)
		if blocked, _ := cannotAutoRun(cl, err, term); !blocked {
			bypasses++
			t.Errorf("%d [%s] %q passes the allow list without risk (commands %q)", c.lineNo, c.class, c.line, names(cl))
			continue
		}
		if err == nil && !sameAsRemembered[c.line] && mem.Lookup(cl, ctx) == DecisionAllow {
			bypasses++
			t.Errorf("%d [%s] %q auto-allowed by memory", c.lineNo, c.class, c.line)
		}
	}
	require.Zero(t, bypasses)
}

// A program in a user directory of the PATH that is a symlink: an
// approval holds for the file it led to; swapped for a link to another
// file, it is another program (asked about again), and a deny list sees
// where the new link leads.
func TestCommandMemorySymlinkSwappedInAUserDirectoryIsAnotherProgram(t *testing.T) {
	fs := newFakeSystem(t)
	user := filepath.Join(fs.root, "home", "bin")
	require.NoError(t, os.MkdirAll(user, 0o755))
	for _, name := range []string{"git", "cat", "tool"} {
		require.NoError(t, os.Symlink(filepath.Join(fs.bin, map[string]string{"git": "git", "cat": "cat", "tool": "python3"}[name]), filepath.Join(user, name)))
	}
	path := user + ":" + fs.bin
	look := NewLookPath(path, fs.work)
	ctx := fs.ctx()
	ctx.Path = path
	parse := func(l string) CommandLine {
		cl, err := ParseCommandLine(l, look)
		require.NoError(t, err)
		return cl
	}
	mem := &CommandMemory{}
	lines := []string{"git status", "cat README", "tool -m pytest"} // a git, a program and an exact approval
	for _, l := range lines {
		cl := parse(l)
		require.Equal(t, user, filepath.Dir(cl.Commands[0].Resolved))
		stored := mem.Remember(cl, ctx, DecisionAllow)
		require.NotEmpty(t, stored)
		require.Equal(t, DecisionAllow, mem.Lookup(parse(l), ctx), l)
	}
	// A restart reads the approvals back as they were stored.
	restored := &CommandMemory{}
	for _, l := range lines {
		restored.Restore(mem.Remember(parse(l), ctx, DecisionAllow), DecisionAllow)
	}
	evil := filepath.Join(fs.evil, "payload")
	require.NoError(t, os.WriteFile(evil, []byte("#!/bin/sh\n"), 0o755))
	for _, name := range []string{"git", "cat", "tool"} {
		p := filepath.Join(user, name)
		require.NoError(t, os.Remove(p))
		require.NoError(t, os.Symlink(evil, p))
	}
	for _, l := range lines {
		require.Equal(t, DecisionNone, mem.Lookup(parse(l), ctx), "%q after the swap", l)
		require.Equal(t, DecisionNone, restored.Lookup(parse(l), ctx), "%q after the swap and a restart", l)
	}
	// A deny list follows the link: denying rm denies a git swapped to rm.
	require.NoError(t, os.Remove(filepath.Join(user, "git")))
	require.NoError(t, os.Symlink(filepath.Join(fs.bin, "rm"), filepath.Join(user, "git")))
	err := Terminal{DeniedCommands: []string{"rm"}, Path: path}.Check(parse("git status"))
	require.ErrorIs(t, err, ErrCommandDenied)
}

// RealPath says where a path would be created: a missing one under a
// symlinked directory is under the link's target, and a dangling link
// (a chain of them, relative or absolute) is its final target.
func TestRealPathOfAMissingPathIsWhereItWouldBeCreated(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "dotfiles", "config"), 0o755))
	require.NoError(t, os.Symlink("dotfiles/config", filepath.Join(dir, ".config")))
	require.NoError(t, os.Symlink("dotfiles/bash_profile", filepath.Join(dir, ".bash_profile")))
	require.NoError(t, os.Symlink(filepath.Join(dir, ".bash_profile"), filepath.Join(dir, "chain")))
	require.NoError(t, os.Symlink("loop2", filepath.Join(dir, "loop1")))
	require.NoError(t, os.Symlink("loop1", filepath.Join(dir, "loop2")))
	for in, want := range map[string]string{
		".config/git":        "dotfiles/config/git",
		".config/git/config": "dotfiles/config/git/config",
		".bash_profile":      "dotfiles/bash_profile",
		"chain":              "dotfiles/bash_profile",
		"missing/x":          "missing/x",
		".config":            "dotfiles/config",
	} {
		assert.Equal(t, filepath.Join(dir, want), RealPath(filepath.Join(dir, in)), in)
	}
	// A loop ends (at the hop limit) somewhere inside dir.
	assert.Contains(t, RealPath(filepath.Join(dir, "loop1")), dir)
}
