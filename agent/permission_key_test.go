package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acp-agent/acp-agent/policy"
)

// Decisions about a tool with an approval key (an MCP tool's digest) as
// a session file gives them back: an allow covers only the definition it
// was given for, a reject covers the tool under every definition, and a
// record written under the name alone before keys existed counts only
// when it is a reject.
func TestRememberedToolDecisionsByKey(t *testing.T) {
	const tool = "mcp__gh__search"
	now := ToolCallInfo{Action: policy.ActionOther, ApprovalKey: tool + "@aaaa"}
	for _, c := range []struct {
		name   string
		record RememberedDecision
		want   policy.Decision
	}{
		{"an allow of this definition", RememberedDecision{Scope: ScopeTool, Tool: tool + "@aaaa", Decision: "allow"}, policy.DecisionAllow},
		{"an allow of another definition", RememberedDecision{Scope: ScopeTool, Tool: tool + "@bbbb", Decision: "allow"}, policy.DecisionNone},
		{"an allow under the name alone (before keys)", RememberedDecision{Scope: ScopeTool, Tool: tool, Decision: "allow"}, policy.DecisionNone},
		{"a reject under the name alone", RememberedDecision{Scope: ScopeTool, Tool: tool, Decision: "reject"}, policy.DecisionReject},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &permissions{}
			p.restore(c.record)
			assert.Equal(t, c.want, p.remembered(tool, now))
		})
	}
	// Answers given now: the reject is kept under the name, so another
	// definition of the tool is rejected too; the allow under the key.
	p := &permissions{}
	assert.Equal(t, tool, p.remember(tool, now, policy.DecisionReject).Tool)
	assert.Equal(t, policy.DecisionReject, p.remembered(tool, ToolCallInfo{Action: policy.ActionOther, ApprovalKey: tool + "@bbbb"}))
	q := &permissions{}
	assert.Equal(t, tool+"@aaaa", q.remember(tool, now, policy.DecisionAllow).Tool)
	assert.Equal(t, policy.DecisionNone, q.remembered(tool, ToolCallInfo{Action: policy.ActionOther, ApprovalKey: tool + "@bbbb"}))
	// A tool without a key (a built-in one): its name, as before.
	r := &permissions{}
	r.restore(RememberedDecision{Scope: ScopeTool, Tool: "web_fetch", Decision: "allow"})
	assert.Equal(t, policy.DecisionAllow, r.remembered("web_fetch", ToolCallInfo{Action: policy.ActionOther}))
}
