package agent_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/policy"
)

// bareWorkspace is a workspace with no tools of its own and a fixed
// description.
type bareWorkspace struct{}

func (bareWorkspace) Tools() []agent.Tool                  { return nil }
func (bareWorkspace) Describe(policy.Mode) string          { return "- Workspace root: /w\n" }
func (bareWorkspace) SandboxMissing() string               { return "" }
func (bareWorkspace) SandboxAutoApproves(policy.Mode) bool { return false }
func (bareWorkspace) Close() error                         { return nil }

// The system prompt's instructions mention the tools the session's model
// is offered. They are written once per set of tools in a process, so
// sessions with different tools, one after another in the same process,
// each get their own: a set seen before is not reused for another.
func TestInstructionsFollowEachSessionsTools(t *testing.T) {
	lines := map[string]string{
		"update_plan": "keep a plan with update_plan",
		"run_command": "Commands run without a terminal",
		"task":        "Delegate a self-contained search",
		"edit_file":   "Change a file with edit_file",
		"apply_patch": "Change files with apply_patch",
	}
	for _, tools := range [][]string{
		{"update_plan", "run_command", "task", "edit_file"},
		{"apply_patch"},
		{},
		{"update_plan", "run_command", "task", "edit_file"},
		{"run_command", "apply_patch"},
		{"apply_patch"},
	} {
		m := newFakeModel(says("ok"))
		s := newSession(t, m, func(c *agent.SessionConfig) { c.Workspace = bareWorkspace{} })
		rt := &recordingTool{}
		for _, name := range tools {
			require.NoError(t, s.Tools().Register(rt.Tool(name, nil)))
		}
		_, err := s.Prompt(context.Background(), "go")
		require.NoError(t, err)
		sys := m.Request(t, 0).System
		assert.Contains(t, sys, "- Workspace root: /w\n")
		for name, line := range lines {
			if contains(tools, name) {
				assert.Contains(t, sys, line, "offered %v", tools)
			} else {
				assert.NotContains(t, sys, line, "offered %v", tools)
			}
		}
	}
}
