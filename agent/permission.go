package agent

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/telemetry"
)

// PermissionRequester asks the user to allow a tool call
// (*acp.ClientConn is one).
type PermissionRequester interface {
	RequestPermission(ctx context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error)
}

// ErrPermissionCancelled ends a turn whose tool call was answered
// "cancelled": by the client (it answers so on session/cancel), by a
// remembered reject_always, or by the deny permission policy. It is a
// cancellation: errors.Is(err, context.Canceled) holds.
var ErrPermissionCancelled = fmt.Errorf("agent: permission cancelled: %w", context.Canceled)

// The permission options offered with every request (seed 002). Their ids
// equal their kinds.
var permissionOptions = []acp.PermissionOption{
	{OptionID: "allow_once", Name: "Allow once", Kind: acp.PermissionOptionKindAllowOnce},
	{OptionID: "allow_always", Name: "Always allow", Kind: acp.PermissionOptionKindAllowAlways},
	{OptionID: "reject_once", Name: "Reject once", Kind: acp.PermissionOptionKindRejectOnce},
	{OptionID: "reject_always", Name: "Always reject", Kind: acp.PermissionOptionKindRejectAlways},
}

// permissions is a session's mode and remembered decisions. Remembered
// decisions have a scope per action: edits, the whole session; commands,
// each simple command's program and subcommand (policy.CommandMemory);
// other tools, the tool's name.
type permissions struct {
	mu    sync.Mutex
	mode  policy.Mode
	edits policy.Decision
	other map[string]policy.Decision
	cmds  policy.CommandMemory
	// history is every remember call, in order, so a fork can replay it.
	history []rememberedCall
}

type rememberedCall struct {
	tool string
	info ToolCallInfo
	d    policy.Decision
}

func (p *permissions) Mode() policy.Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

func (p *permissions) setMode(m policy.Mode) {
	p.mu.Lock()
	p.mode = m
	p.mu.Unlock()
}

func (p *permissions) remembered(tool string, info ToolCallInfo) policy.Decision {
	switch info.Action {
	case policy.ActionEdit:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.edits
	case policy.ActionExecute:
		if info.Command != nil {
			return p.cmds.Lookup(*info.Command)
		}
	case policy.ActionOther:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.other[tool]
	}
	return policy.DecisionNone
}

func (p *permissions) remember(tool string, info ToolCallInfo, d policy.Decision) {
	p.mu.Lock()
	p.history = append(p.history, rememberedCall{tool, info, d})
	p.mu.Unlock()
	switch info.Action {
	case policy.ActionEdit:
		p.mu.Lock()
		p.edits = d
		p.mu.Unlock()
	case policy.ActionExecute:
		if info.Command != nil {
			p.cmds.Remember(*info.Command, d)
		}
	case policy.ActionOther:
		p.mu.Lock()
		if p.other == nil {
			p.other = map[string]policy.Decision{}
		}
		p.other[tool] = d
		p.mu.Unlock()
	}
}

// forFork is the permissions of a fork: the same mode and a copy of what
// is remembered, after which the two never affect each other.
func (p *permissions) forFork() *permissions {
	p.mu.Lock()
	history := slices.Clone(p.history)
	c := &permissions{mode: p.mode}
	p.mu.Unlock()
	for _, h := range history {
		c.remember(h.tool, h.info, h.d)
	}
	return c
}

// permit is the outcome of authorize.
type permit int

const (
	permitted permit = iota
	deniedByMode
	rejectedByUser
	permissionCancelled
)

// authorize decides whether call may run: the session mode, then a
// remembered decision, then the permission policy, and if that says ask,
// the user. Failing to ask (no client, an error) rejects: permission
// fails closed.
func (s *Session) authorize(ctx context.Context, call toolCallView, info ToolCallInfo) (permit, string) {
	mode := s.perms.Mode()
	v := policy.Decide(mode, s.cfg.PermissionPolicy, info.Action, s.perms.remembered(call.name, info))
	switch v {
	case policy.Allow:
		return permitted, ""
	case policy.Deny:
		return deniedByMode, fmt.Sprintf("Error: the session is in %s mode, which does not allow %s tool calls. Do not retry; describe what you would do instead, or ask the user to switch modes.", mode, info.Action)
	case policy.Cancel:
		return permissionCancelled, ""
	}
	if s.cfg.Permissions == nil {
		return rejectedByUser, "Error: this tool call needs the user's permission, and there is no client to ask. It was not run."
	}
	req := &acp.RequestPermissionRequest{
		SessionID: acp.SessionId(s.id),
		ToolCall: acp.ToolCallUpdate{ToolCallID: acp.ToolCallId(call.id), Title: info.Title, Kind: info.Kind,
			Status: acp.ToolCallStatusPending, Locations: info.Locations, RawInput: call.rawInput},
		Options: permissionOptions,
	}
	resp, err := s.cfg.Permissions.RequestPermission(ctx, req)
	switch {
	case err != nil && ctx.Err() != nil:
		return permissionCancelled, ""
	case err != nil:
		s.log.Warn("permission request failed; rejecting the tool call", "tool", call.name, "error", err)
		return rejectedByUser, "Error: asking the user for permission failed, so this tool call was not run: " + err.Error()
	case resp.Outcome.Cancelled != nil:
		return permissionCancelled, ""
	case resp.Outcome.Selected == nil:
		return rejectedByUser, "Error: the user did not allow this tool call. It was not run."
	}
	switch acp.PermissionOptionKind(resp.Outcome.Selected.OptionID) {
	case acp.PermissionOptionKindAllowOnce:
		return permitted, ""
	case acp.PermissionOptionKindAllowAlways:
		s.remember(call.name, info, policy.DecisionAllow)
		return permitted, ""
	case acp.PermissionOptionKindRejectAlways:
		s.remember(call.name, info, policy.DecisionReject)
	case acp.PermissionOptionKindRejectOnce:
	default:
		// Not an option we offered: fail closed.
		s.log.Warn("permission answer names an unknown option; rejecting", "option", resp.Outcome.Selected.OptionID)
	}
	return rejectedByUser, "The user rejected this tool call; it was not run. Do not retry it; ask the user how to proceed if you need it."
}

// remember stores a remembered decision, and journals it so it survives a
// restart with the session.
func (s *Session) remember(tool string, info ToolCallInfo, d policy.Decision) {
	s.perms.remember(tool, info, d)
	s.journalWrite(permissionRecord(tool, info, d), false)
}

// permissionRecord is the session-file record of a remembered decision.
func permissionRecord(tool string, info ToolCallInfo, d policy.Decision) record {
	r := record{Type: recPermission, Decision: d.String()}
	switch info.Action {
	case policy.ActionEdit:
		r.Scope = "edits"
	case policy.ActionExecute:
		r.Scope, r.Command = "command", info.Command
	default:
		r.Scope, r.Tool = "tool", tool
	}
	return r
}

// rememberedHistory is every remembered decision, in order.
func (p *permissions) rememberedHistory() []rememberedCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.history)
}

// restore applies a remembered decision read back from the session file.
func (p *permissions) restore(r *record) {
	d := map[string]policy.Decision{"allow": policy.DecisionAllow, "reject": policy.DecisionReject}[r.Decision]
	switch r.Scope {
	case "edits":
		p.remember("", ToolCallInfo{Action: policy.ActionEdit}, d)
	case "command":
		if r.Command != nil {
			p.remember("", ToolCallInfo{Action: policy.ActionExecute, Command: r.Command}, d)
		}
	case "tool":
		p.remember(r.Tool, ToolCallInfo{Action: policy.ActionOther}, d)
	}
}

// toolCallView is what authorize needs of a call.
type toolCallView struct {
	id, name string
	rawInput []byte
}

// denied reports a refused call to telemetry.
func (s *Session) denied(it *item, tool string, why permit) {
	reason := map[permit]string{deniedByMode: "mode", rejectedByUser: "rejected", permissionCancelled: "cancelled"}[why]
	s.emit(it, telemetry.EventPromptPermissionDenied, "tool", tool, "reason", reason)
}
