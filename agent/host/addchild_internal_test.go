package host

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/policy"
)

// A subagent takes its parent's mode when it starts and is listed among
// the parent's children a little later; a narrower mode the user chose
// for the parent in between (narrowChildren did not see the child yet)
// holds for the child once it is listed. A child whose mode is already
// narrower keeps it.
func TestChildListedAfterTheParentNarrowedTakesTheNarrowerMode(t *testing.T) {
	for _, c := range []struct {
		parent, child, want policy.Mode
	}{
		{policy.ModeDefault, policy.ModeFullAccess, policy.ModeDefault},
		{policy.ModeReadOnly, policy.ModeAcceptEdits, policy.ModeReadOnly},
		{policy.ModeFullAccess, policy.ModeDefault, policy.ModeDefault},
	} {
		parent := &Session{s: agent.NewSession(agent.SessionConfig{ToolConfig: agent.ToolConfig{Mode: c.parent}})}
		child := &Session{s: agent.NewSession(agent.SessionConfig{ToolConfig: agent.ToolConfig{Mode: c.child}})}
		parent.addChild(child, false)
		assert.Equal(t, c.want, child.s.Mode(), "parent %s, child %s", c.parent, c.child)
		child.s.Close()
		parent.s.Close()
	}
}
