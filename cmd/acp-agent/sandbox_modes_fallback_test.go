//go:build !linux

package main

import (
	"os/exec"
	"testing"
)

// Elsewhere the agent runs as the test's user only (the sandbox tests
// skip where there is no sandbox).
type sandboxMode struct {
	name     string
	uid, gid int
	env      []string
	masks    bool
}

func sandboxModes(t *testing.T) []sandboxMode { return []sandboxMode{{name: "self", uid: -1, gid: -1}} }

func asUser(cmd *exec.Cmd, m sandboxMode) { cmd.Env = append(cmd.Env, m.env...) }

func userDir(t *testing.T, m sandboxMode) string { return t.TempDir() }

func chownTree(t *testing.T, m sandboxMode, dir string) {}
