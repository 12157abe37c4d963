package policy

import (
	"fmt"
	"strings"
)

// Action is what a tool call does, for permission purposes.
type Action int

const (
	// ActionNone needs no permission (planning, thinking).
	ActionNone Action = iota
	// ActionRead reads inside the workspace (files, listings, searches).
	ActionRead
	// ActionEdit changes files.
	ActionEdit
	// ActionExecute runs a command.
	ActionExecute
	// ActionOther is anything else with effects outside the agent (MCP
	// tools, fetches): treated like a command.
	ActionOther
)

func (a Action) String() string {
	switch a {
	case ActionNone:
		return "none"
	case ActionRead:
		return "read"
	case ActionEdit:
		return "edit"
	case ActionExecute:
		return "execute"
	}
	return "other"
}

// Mode is a session mode (ACP session/set_mode).
type Mode string

// The session modes, from most to least restricted.
const (
	// ModeReadOnly plans: reads only; no edits, no commands.
	ModeReadOnly Mode = "read-only"
	// ModeDefault reads freely and asks before edits and commands.
	ModeDefault Mode = "default"
	// ModeAcceptEdits edits freely and asks before commands.
	ModeAcceptEdits Mode = "accept-edits"
	// ModeFullAccess runs everything without asking (the filesystem and
	// terminal rules still apply).
	ModeFullAccess Mode = "full-access"
)

// Modes lists the modes in the order they are offered.
var Modes = []Mode{ModeReadOnly, ModeDefault, ModeAcceptEdits, ModeFullAccess}

// ParseMode checks a mode id.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown mode %q; modes are %s", s, strings.Join(names, ", "))
}

// PolicyMode is the seed's permission policy mode: what happens to a tool
// call that the session mode says to ask about.
type PolicyMode string

const (
	// PolicyAsk asks the client (session/request_permission).
	PolicyAsk PolicyMode = "ask"
	// PolicyAllow allows without asking (allow_once).
	PolicyAllow PolicyMode = "allow"
	// PolicyDeny answers "cancelled" without asking.
	PolicyDeny PolicyMode = "deny"
)

// ParsePolicyMode checks a policy mode.
func ParsePolicyMode(s string) (PolicyMode, error) {
	switch PolicyMode(s) {
	case PolicyAsk, PolicyAllow, PolicyDeny:
		return PolicyMode(s), nil
	}
	return "", fmt.Errorf("unknown permission mode %q; use ask, allow or deny", s)
}

// Verdict is what to do with a tool call.
type Verdict int

const (
	// Allow runs the call.
	Allow Verdict = iota
	// Ask asks the user.
	Ask
	// Deny refuses the call because of the session mode; the model is told.
	Deny
	// Cancel refuses without asking and ends the turn (a remembered
	// reject_always, or the deny policy mode): the seed's "cancelled".
	Cancel
)

func (v Verdict) String() string {
	return [...]string{"allow", "ask", "deny", "cancel"}[v]
}

// Decide is the permission decision for a call doing a, in order:
//
//  1. the session mode: reads are free; read-only denies edits and
//     commands outright (a remembered allow never gets past plan mode);
//     full-access allows everything; accept-edits allows edits;
//  2. a remembered decision (remembered): reject_always cancels,
//     allow_always allows;
//  3. the policy mode: allow, cancel, or ask. A risky call (a command
//     line with Risks: ;-chains are fine, but $(…), redirections to
//     files, trampolines, … are not) is never allowed by the allow
//     policy: it asks, as it would in the ask policy.
//
// Step 2 comes before the modes that allow freely as well, so a
// remembered reject_always holds in full-access mode too. Full-access
// allows risky calls: the user chose to be asked nothing.
func Decide(mode Mode, policy PolicyMode, a Action, remembered Decision, risky bool) Verdict {
	if a == ActionNone || a == ActionRead {
		return Allow
	}
	if mode == ModeReadOnly {
		return Deny
	}
	switch remembered {
	case DecisionReject:
		return Cancel
	case DecisionAllow:
		return Allow
	}
	if mode == ModeFullAccess || (mode == ModeAcceptEdits && a == ActionEdit) {
		return Allow
	}
	switch policy {
	case PolicyAllow:
		if risky {
			return Ask
		}
		return Allow
	case PolicyDeny:
		return Cancel
	}
	return Ask
}
