package main

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// sandboxSelfCheck runs one confined command the way sessions do (a
// helper of this binary) in a scratch git root holding a .env, and says
// whether the helper masked by mount and the command could create a file
// there and not read the .env.
func sandboxSelfCheck() (masked bool, err error) {
	exe, err := os.Executable()
	if err != nil {
		return false, err
	}
	ws, err := os.MkdirTemp("", "acp-agent-doctor-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(ws)
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		return false, err
	}
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("DOCTOR=1\n"), 0o600); err != nil {
		return false, err
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer devNull.Close()
	l := sandbox.NewLauncher(exe)
	defer l.Close()
	// Exit 0: made a file in the root; 3: read the .env.
	script := "touch made 2>/dev/null; if cat .env >/dev/null 2>&1; then exit 3; fi"
	p, err := l.Start(sandbox.Request{Policy: sandbox.Policy{WritableRoots: []string{ws}, TempDir: ws},
		Path: "/bin/sh", Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: ws},
		[]*os.File{devNull, devNull, devNull})
	if err != nil {
		return false, err
	}
	status, err := p.Wait()
	switch {
	case err != nil:
		return false, err
	case status.ExitStatus() == 3:
		return p.Masked(), errors.New("a confined command read the .env of its workspace")
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); err != nil && p.Masked() {
		return true, errors.New("a confined command could not create a file beside .git and .env although they were masked")
	}
	return p.Masked(), nil
}
