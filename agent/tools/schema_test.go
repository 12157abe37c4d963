package tools_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/internal/testkit"
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
	w := workspaceWithASkill(t)
	all := w.Tools()
	var names []string
	for _, tool := range all {
		names = append(names, tool.Name)
	}
	require.Equal(t, tools.BuiltinToolNames(), names, "every built-in tool, the skill tool included, made as the table names it")
	for _, tool := range all {
		t.Run(tool.Name, func(t *testing.T) {
			testkit.JSONGolden(t, filepath.Join(goldenDir, tool.Name+".json"), tool.Parameters, *update)
			// A session compiles a built-in tool's schema at its first
			// call, not when it registers it: the schema must compile,
			// as a tool registered with it as its own does at once.
			require.NoError(t, agent.NewToolRegistry().Register(agent.Tool{Name: tool.Name, Parameters: tool.Parameters, Run: tool.Run}))
		})
	}
}

// workspaceWithASkill is a workspace in a temporary directory with one
// skill, so that it offers every built-in tool.
func workspaceWithASkill(t *testing.T) *tools.Workspace {
	t.Helper()
	ws := t.TempDir()
	skill := filepath.Join(ws, ".agents", "skills", "demo", "SKILL.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(skill), 0o755))
	require.NoError(t, os.WriteFile(skill, []byte("---\nname: demo\ndescription: A demo skill\n---\nDo the demo."), 0o644))
	w, err := tools.NewWorkspace(ws, nil, tools.WorkspaceConfig{}, tools.Editor{})
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	return w
}
