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
		risky      bool
	}{
		{"reads are free even in read-only", ModeReadOnly, PolicyDeny, ActionRead, DecisionReject, Allow, false},
		{"planning needs nothing", ModeReadOnly, PolicyAsk, ActionNone, DecisionNone, Allow, false},
		{"read-only denies edits", ModeReadOnly, PolicyAllow, ActionEdit, DecisionNone, Deny, false},
		{"read-only denies commands even when remembered", ModeReadOnly, PolicyAsk, ActionExecute, DecisionAllow, Deny, false},
		{"default asks before edits", ModeDefault, PolicyAsk, ActionEdit, DecisionNone, Ask, false},
		{"default asks before commands", ModeDefault, PolicyAsk, ActionExecute, DecisionNone, Ask, false},
		{"default asks before other effects", ModeDefault, PolicyAsk, ActionOther, DecisionNone, Ask, false},
		{"remembered allow", ModeDefault, PolicyAsk, ActionExecute, DecisionAllow, Allow, false},
		{"remembered reject cancels without asking", ModeDefault, PolicyAsk, ActionExecute, DecisionReject, Cancel, false},
		{"remembered reject holds in full access", ModeFullAccess, PolicyAllow, ActionEdit, DecisionReject, Cancel, false},
		{"accept-edits allows edits", ModeAcceptEdits, PolicyAsk, ActionEdit, DecisionNone, Allow, false},
		{"accept-edits asks before commands", ModeAcceptEdits, PolicyAsk, ActionExecute, DecisionNone, Ask, false},
		{"full access allows commands", ModeFullAccess, PolicyAsk, ActionExecute, DecisionNone, Allow, false},
		{"allow policy allows what would ask", ModeDefault, PolicyAllow, ActionExecute, DecisionNone, Allow, false},
		{"deny policy cancels what would ask", ModeDefault, PolicyDeny, ActionEdit, DecisionNone, Cancel, false},
		{"deny policy does not touch free actions", ModeAcceptEdits, PolicyDeny, ActionEdit, DecisionNone, Allow, false},
		{"allow policy asks about a risky line", ModeDefault, PolicyAllow, ActionExecute, DecisionNone, Ask, true},
		{"deny policy cancels a risky line", ModeDefault, PolicyDeny, ActionExecute, DecisionNone, Cancel, true},
		{"full access runs a risky line", ModeFullAccess, PolicyAllow, ActionExecute, DecisionNone, Allow, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Decide(tt.mode, tt.policy, tt.action, tt.remembered, tt.risky))
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
