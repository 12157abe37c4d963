package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecideFollowsModeThenMemoryThenPolicy(t *testing.T) {
	tests := []struct {
		name       string
		mode       Mode
		policy     PolicyMode
		action     Action
		remembered Decision
		want       Verdict
	}{
		{"reads are free even in read-only", ModeReadOnly, PolicyDeny, ActionRead, DecisionReject, Allow},
		{"planning needs nothing", ModeReadOnly, PolicyAsk, ActionNone, DecisionNone, Allow},
		{"read-only denies edits", ModeReadOnly, PolicyAllow, ActionEdit, DecisionNone, Deny},
		{"read-only denies commands even when remembered", ModeReadOnly, PolicyAsk, ActionExecute, DecisionAllow, Deny},
		{"default asks before edits", ModeDefault, PolicyAsk, ActionEdit, DecisionNone, Ask},
		{"default asks before commands", ModeDefault, PolicyAsk, ActionExecute, DecisionNone, Ask},
		{"default asks before other effects", ModeDefault, PolicyAsk, ActionOther, DecisionNone, Ask},
		{"remembered allow", ModeDefault, PolicyAsk, ActionExecute, DecisionAllow, Allow},
		{"remembered reject cancels without asking", ModeDefault, PolicyAsk, ActionExecute, DecisionReject, Cancel},
		{"remembered reject holds in full access", ModeFullAccess, PolicyAllow, ActionEdit, DecisionReject, Cancel},
		{"accept-edits allows edits", ModeAcceptEdits, PolicyAsk, ActionEdit, DecisionNone, Allow},
		{"accept-edits asks before commands", ModeAcceptEdits, PolicyAsk, ActionExecute, DecisionNone, Ask},
		{"full access allows commands", ModeFullAccess, PolicyAsk, ActionExecute, DecisionNone, Allow},
		{"allow policy allows what would ask", ModeDefault, PolicyAllow, ActionExecute, DecisionNone, Allow},
		{"deny policy cancels what would ask", ModeDefault, PolicyDeny, ActionEdit, DecisionNone, Cancel},
		{"deny policy does not touch free actions", ModeAcceptEdits, PolicyDeny, ActionEdit, DecisionNone, Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Decide(tt.mode, tt.policy, tt.action, tt.remembered))
		})
	}
}

func TestParseModeAndPolicyMode(t *testing.T) {
	for _, m := range Modes {
		got, err := ParseMode(string(m))
		require.NoError(t, err)
		assert.Equal(t, m, got)
	}
	_, err := ParseMode("yolo")
	assert.ErrorContains(t, err, "read-only, default, accept-edits, full-access")
	for _, p := range []string{"ask", "allow", "deny"} {
		_, err := ParsePolicyMode(p)
		assert.NoError(t, err)
	}
	_, err = ParsePolicyMode("maybe")
	assert.ErrorContains(t, err, "ask, allow or deny")
	assert.Equal(t, "cancel", Cancel.String())
	assert.Equal(t, "execute", ActionExecute.String())
}
