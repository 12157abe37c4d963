package tools_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/tools"
)

// update rewrites the golden files: go test ./agent/tools -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenDir holds each built-in tool's argument schema as the model gets
// it, one file per tool (the task tool's is agent/acpagent's).
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "tools")

// The argument schemas the model is offered are pinned: a change to an
// argument struct that changes what the model sees shows here, compared
// as JSON values.
func TestToolSchemasMatchTheGoldenFiles(t *testing.T) {
	ws := t.TempDir()
	skill := filepath.Join(ws, ".agents", "skills", "demo", "SKILL.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(skill), 0o755))
	require.NoError(t, os.WriteFile(skill, []byte("---\nname: demo\ndescription: A demo skill\n---\nDo the demo."), 0o644))
	w, err := tools.NewWorkspace(ws, nil, tools.WorkspaceConfig{}, tools.Editor{})
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	all := w.Tools()
	require.Len(t, all, 14, "every built-in tool, the skill tool included")
	for _, tool := range all {
		t.Run(tool.Name, func(t *testing.T) {
			compareGolden(t, filepath.Join(goldenDir, tool.Name+".json"), tool.Parameters)
		})
	}
}

func compareGolden(t *testing.T, path string, got json.RawMessage) {
	t.Helper()
	if *update {
		// Keys sorted, so a diff of the file shows what changed.
		var v any
		require.NoError(t, json.Unmarshal(got, &v))
		b, err := json.MarshalIndent(v, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to write it")
	assert.JSONEq(t, string(want), string(got))
}
