package acpagent_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/acpagent"
)

// Issue 25 item 3: no sandbox on this kernel reaches the user once per
// session, when the first command asks: a notice update for a client that
// shows notices, a note in the turn for one that does not.
func TestNoSandboxIsToldOnceAsANotice(t *testing.T) {
	noSandbox := func(cfg *acpagent.Config) {
		cfg.Workspace.SandboxUnavailable = "the kernel has no Landlock"
		cfg.Mode = "full-access"
	}
	turn := commandTurn("go", "true", "")
	for _, withNotices := range []bool{true, false} {
		var caps *acp.ClientCapabilities
		if withNotices {
			caps = &acp.ClientCapabilities{Session: &acp.ClientSessionCapabilities{Notices: &acp.NoticeCapabilities{}}}
		}
		c, sid, _ := toolAgent(t, caps, noSandbox, turn)
		var notices, notes int
		for range 2 {
			r := runPrompt(t, c, sid, "go", answerPermission("allow_once"))
			require.Len(t, r.requests, 1, "every command asks without a sandbox")
			for _, u := range r.updates {
				if n := u.Notice; n != nil {
					notices++
					assert.Equal(t, "Commands are not sandboxed", n.Title)
					assert.Contains(t, n.Description, "the kernel has no Landlock")
				}
				if m := u.AgentMessageChunk; m != nil && strings.Contains(m.Content.Text.Text, "Commands are not sandboxed") {
					notes++
				}
			}
		}
		if withNotices {
			assert.Equal(t, 1, notices)
			assert.Zero(t, notes)
		} else {
			assert.Zero(t, notices, "no notice updates to a client that does not take them")
			assert.Equal(t, 1, notes)
		}
	}
}
