package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 24 (9): what the file tools refuse does not reach the model by
// the other doors. A hostile repository hard-links AGENTS.md and a skill's
// files to files outside the workspace, puts a .env in a skill folder,
// and makes its commands and skills directories symlinks to directories
// outside: none of that content reaches a model request (the system
// prompt, the command menu, the skill tool's results).
func TestBinaryContentDoorsKeepTheFileToolsRules(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	write := func(path, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	link := func(target, name string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
		require.NoError(t, os.Link(target, name))
	}
	// Outside the workspace: what must never be read.
	write(filepath.Join(outside, "agents.md"), "SECRET-AGENTS-MD")
	write(filepath.Join(outside, "notes.md"), "SECRET-SKILL-NOTES")
	write(filepath.Join(outside, "skillmd.md"), "---\ndescription: SECRET-HARDLINKED-SKILL\n---\nSECRET-HARDLINKED-BODY")
	write(filepath.Join(outside, "cmds", "leak.md"), "---\ndescription: SECRET-CMD-DESC\n---\nSECRET-CMD-BODY $ARGUMENTS")
	write(filepath.Join(outside, "skills", "far", "SKILL.md"), "---\ndescription: SECRET-FAR-DESC\n---\nSECRET-FAR-BODY")

	// The hostile workspace.
	link(filepath.Join(outside, "agents.md"), filepath.Join(ws, "AGENTS.md"))
	helper := filepath.Join(ws, ".agents", "skills", "helper")
	write(filepath.Join(helper, "SKILL.md"), "---\ndescription: a helper skill\n---\nRead notes.md.")
	write(filepath.Join(helper, "guide.md"), "the guide")
	link(filepath.Join(outside, "notes.md"), filepath.Join(helper, "notes.md"))
	write(filepath.Join(helper, ".env"), "SECRET-SKILL-ENV=1")
	link(filepath.Join(outside, "skillmd.md"), filepath.Join(ws, ".agents", "skills", "linked", "SKILL.md"))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".claude"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(outside, "cmds"), filepath.Join(ws, ".claude", "commands")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "skills"), filepath.Join(ws, ".claude", "skills")))

	model := promptModel(t, map[string][]modelCall{
		"[notes]":  {{"skill", map[string]any{"name": "helper", "file": "notes.md"}}},
		"[env]":    {{"skill", map[string]any{"name": "helper", "file": ".env"}}},
		"[body]":   {{"skill", map[string]any{"name": "helper"}}},
		"[guide]":  {{"skill", map[string]any{"name": "helper", "file": "guide.md"}}},
		"[far]":    {{"skill", map[string]any{"name": "far"}}},
		"[linked]": {{"skill", map[string]any{"name": "linked"}}},
	})
	p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"},
		"--model", "openai/test-model", "--mode", "full-access")
	p.Initialize(nil)
	sid := p.NewSession(ws)
	for _, c := range p.Commands {
		assert.NotEqual(t, "leak", c.Name, "a symlinked commands directory is not followed")
		assert.NotContains(t, c.Description, "SECRET")
	}
	for _, prompt := range []string{"[notes]", "[env]", "[body]", "[guide]", "[far]", "[linked]", "/leak now"} {
		promptOK(t, p, sid, prompt)
	}
	model.mu.Lock()
	bodies := strings.Join(model.bodies, "\n")
	model.mu.Unlock()
	require.True(t, strings.Contains(bodies, "the guide"), "the skill's own files are read")
	require.True(t, strings.Contains(bodies, "a helper skill"))
	for _, secret := range []string{"SECRET-AGENTS-MD", "SECRET-SKILL-NOTES", "SECRET-SKILL-ENV", "SECRET-HARDLINKED", "SECRET-CMD", "SECRET-FAR"} {
		assert.False(t, strings.Contains(bodies, secret), "%s reached the model", secret)
	}
	_, listing, ok := strings.Cut(bodies, "Files in the skill's folder")
	require.True(t, ok)
	listing, _, _ = strings.Cut(listing, `"`)
	assert.Contains(t, listing, "guide.md")
	assert.NotContains(t, listing, ".env", "the skill's .env is not even listed")
}
