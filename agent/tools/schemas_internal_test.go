package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// PrepareSchemas infers the schemas the tools are made with: the table
// names, for each built-in tool, the very schema its tool carries (a
// wrong type there would leave the first session to infer the right
// one).
func TestPrepareSchemasInfersEachBuiltinToolsSchema(t *testing.T) {
	dir := t.TempDir()
	skill := filepath.Join(dir, ".agents", "skills", "demo", "SKILL.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(skill), 0o755))
	require.NoError(t, os.WriteFile(skill, []byte("---\nname: demo\ndescription: A demo skill\n---\nDo the demo."), 0o644))
	w, err := NewWorkspace(dir, nil, WorkspaceConfig{}, Editor{})
	require.NoError(t, err)
	defer w.Close()
	PrepareSchemas()
	for _, b := range builtins {
		require.JSONEq(t, string(b.schema()), string(b.make(w).Parameters), b.name)
	}
}
