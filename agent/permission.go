package agent

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/acp-agent/acp-agent/internal/markdown"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/telemetry"
)

// PermissionRequester asks the user to allow a tool call.
type PermissionRequester interface {
	RequestPermission(ctx context.Context, req PermissionRequest) (PermissionAnswer, error)
}

// PermissionRequest asks about one tool call: what it is and the options
// the user may choose from.
type PermissionRequest struct {
	SessionID string
	ToolCall  ToolCallUpdate
	Options   []PermissionOption
}

// PermissionOption is one answer offered; its ID is what the answer
// names.
type PermissionOption struct {
	ID   string
	Name string
	Kind PermissionKind
}

// PermissionKind is what choosing an option means.
type PermissionKind string

const (
	PermissionAllowOnce    PermissionKind = "allow_once"
	PermissionAllowAlways  PermissionKind = "allow_always"
	PermissionRejectOnce   PermissionKind = "reject_once"
	PermissionRejectAlways PermissionKind = "reject_always"
)

// PermissionAnswer is the user's answer: the option chosen, or Cancelled
// (the turn was cancelled). Neither means nothing was chosen.
type PermissionAnswer struct {
	OptionID  string
	Cancelled bool
	// Reason, if set, says who rejected the call when it was not the
	// user (a client answering by its settings, such as acp-agent exec
	// --allow none); the model is told that instead of "the user".
	Reason string
}

// ErrPermissionCancelled ends a turn whose tool call was answered
// "cancelled": by the client (it answers so on session/cancel), by a
// remembered reject_always, or by the deny permission policy. It is a
// cancellation: errors.Is(err, context.Canceled) holds.
var ErrPermissionCancelled = fmt.Errorf("agent: permission cancelled: %w", context.Canceled)

// The permission options offered (seed 002). Their ids equal their kinds.
// The allow_always and reject_always options name what they will cover
// (permissionOptions).
var (
	optAllowOnce    = PermissionOption{ID: "allow_once", Name: "Allow once", Kind: PermissionAllowOnce}
	optAllowAlways  = PermissionOption{ID: "allow_always", Name: "Always allow", Kind: PermissionAllowAlways}
	optRejectOnce   = PermissionOption{ID: "reject_once", Name: "Reject once", Kind: PermissionRejectOnce}
	optRejectAlways = PermissionOption{ID: "reject_always", Name: "Always reject", Kind: PermissionRejectAlways}
)

// permissionOptions are the options offered for a call: allow_always
// and reject_always name their scope in words ("Always allow `git status` in this folder",
// "Always allow edits in this session"), and is left out for a command
// line that memory never allows (one with Risks), so nothing offered
// promises more than it does.
func permissionOptions(tool string, info ToolCallInfo) []PermissionOption {
	never := optRejectAlways
	never.Name = "Always reject " + rejectScope(tool, info) + " in this session"
	always := optAllowAlways
	switch info.Action {
	case policy.ActionEdit:
		always.Name = "Always allow file edits in this session"
	case policy.ActionExecute:
		if info.Command == nil {
			break
		}
		name, ok := policy.DescribeApproval(*info.Command, commandContext(info), info.CommandFolder)
		if !ok {
			return []PermissionOption{optAllowOnce, optRejectOnce, never}
		}
		always.Name = name
	default:
		always.Name = "Always allow the tool " + markdown.Code(tool) + " in this session"
	}
	return []PermissionOption{optAllowOnce, always, optRejectOnce, never}
}

// rejectScope names what a remembered reject_always covers, for the
// result of a call it stopped.
func rejectScope(tool string, info ToolCallInfo) string {
	switch {
	case info.Action == policy.ActionEdit:
		return "file edits"
	case info.Action == policy.ActionExecute && info.Command != nil:
		return "commands like this one"
	}
	return "the tool " + markdown.Code(tool)
}

func commandContext(info ToolCallInfo) policy.CommandContext {
	if info.CommandContext == nil {
		return policy.CommandContext{}
	}
	return *info.CommandContext
}

// permissions is a session's mode and remembered decisions. Remembered
// decisions have a scope per action: edits, the whole session; commands,
// what policy.CommandMemory stores (each simple command exactly, in its
// directory, or a read-only program or git subcommand more widely);
// other tools, the tool's name.
type permissions struct {
	mu    sync.Mutex
	mode  policy.Mode
	edits policy.Decision
	other map[string]policy.Decision
	cmds  policy.CommandMemory
	// history is every remembered decision, in order, so a rewrite of
	// the session's storage keeps them.
	history []RememberedDecision
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
			return p.cmds.Lookup(*info.Command, commandContext(info))
		}
	case policy.ActionOther:
		p.mu.Lock()
		defer p.mu.Unlock()
		// A reject is kept under the tool's name and covers it whatever
		// it says it does; an allow covers only the definition the user
		// saw (ApprovalKey), so one kept under the name of a tool that
		// has a key (an MCP tool's, written before keys) does not count.
		if d := p.other[tool]; d == policy.DecisionReject || info.ApprovalKey == "" {
			return d
		}
		return p.other[info.ApprovalKey]
	}
	return policy.DecisionNone
}

// remember stores a decision and returns it as it is stored.
func (p *permissions) remember(tool string, info ToolCallInfo, d policy.Decision) RememberedDecision {
	r := RememberedDecision{Decision: d.String()}
	switch info.Action {
	case policy.ActionEdit:
		r.Scope = ScopeEdits
		p.mu.Lock()
		p.edits = d
		p.mu.Unlock()
	case policy.ActionExecute:
		if info.Command == nil {
			return r
		}
		ctx := commandContext(info)
		r.Scope, r.Command, r.Dir = ScopeCommandApprovals, info.Command, ctx.Dir
		r.Approvals = p.cmds.Remember(*info.Command, ctx, d)
	default:
		key := tool
		if d == policy.DecisionAllow {
			// Only an allow is narrowed to the definition: a server
			// that changes a rejected tool's description must not get
			// it asked about (or, in full-access mode, run) again.
			key = cmp.Or(info.ApprovalKey, tool)
		}
		r.Scope, r.Tool = ScopeTool, key
		p.setOther(key, d)
	}
	p.mu.Lock()
	p.history = append(p.history, r)
	p.mu.Unlock()
	return r
}

func (p *permissions) setOther(tool string, d policy.Decision) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.other == nil {
		p.other = map[string]policy.Decision{}
	}
	p.other[tool] = d
}

// forFork is the permissions of a fork: the same mode and nothing
// remembered (docs/security.md, "Forks").
func (p *permissions) forFork() *permissions {
	return &permissions{mode: p.Mode()}
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
	risky := info.Command != nil && (len(info.Command.Risks) > 0 || info.Command.Chained)
	remembered := s.perms.remembered(call.name, info)
	v := policy.Decide(mode, s.cfg.PermissionPolicy, info.Action, remembered, risky)
	if info.Escalation != "" && v != policy.Deny {
		// Outside the sandbox: only the user, every time.
		v = policy.Ask
	}
	if v == policy.Ask && info.Action == policy.ActionExecute && info.Escalation == "" && s.sandboxAutoApproves(mode) {
		// Confined commands run without a question when the user chose
		// the sandbox as the boundary (sandbox.autoApprove).
		v = policy.Allow
	}
	if v == policy.Allow && info.Action == policy.ActionExecute && s.sandboxMissing() != "" {
		// The user asked for a sandbox this machine cannot give: never
		// pretend to be confined; every command asks.
		s.noticeSandboxMissing(ctx)
		v = policy.Ask
	}
	if info.Action == policy.ActionExecute && v != policy.Deny {
		s.noticeUnconfined(ctx)
	}
	switch v {
	case policy.Allow:
		return permitted, ""
	case policy.Deny:
		return deniedByMode, fmt.Sprintf("Error: the session is in %s mode, which does not allow %s tool calls. Do not retry; describe what you would do instead, or ask the user to switch modes.", mode, info.Action)
	case policy.Cancel:
		// The turn ends as if cancelled (seed 002); the call says why, so
		// the user sees it was their standing answer, not a cancel.
		if remembered == policy.DecisionReject {
			return permissionCancelled, fmt.Sprintf("Error: not run: the user chose \"Always reject\" for %s in this session, so the turn stopped. Do not retry it; say what you would have done instead.", rejectScope(call.name, info))
		}
		return permissionCancelled, "Error: not run: the agent runs with --permission deny, which rejects every tool call that would ask the user, so the turn stopped. Do not retry it; say what you would have done instead."
	}
	if s.cfg.Permissions == nil {
		return rejectedByUser, "Error: this tool call needs the user's permission, and there is no client to ask. It was not run."
	}
	req := PermissionRequest{
		SessionID: s.id,
		ToolCall: ToolCallUpdate{ID: call.id, Title: info.Title, Kind: info.Kind,
			Status: ToolPending, Locations: info.Locations, RawInput: call.rawInput, Content: info.Preview},
		Options: permissionOptions(call.name, info),
	}
	if info.Escalation != "" {
		// Never remembered beyond what the user chose.
		req.Options = []PermissionOption{
			{ID: "allow_once", Name: "Allow once, outside the sandbox", Kind: PermissionAllowOnce},
			{ID: "reject_once", Name: "Reject", Kind: PermissionRejectOnce},
		}
	}
	resp, err := s.cfg.Permissions.RequestPermission(ctx, req)
	switch {
	case err != nil && ctx.Err() != nil:
		return permissionCancelled, ""
	case err != nil:
		s.log.Warn("permission request failed; rejecting the tool call", "tool", call.name, "error", err)
		return rejectedByUser, "Error: asking the user for permission failed, so this tool call was not run: " + err.Error()
	case resp.Cancelled:
		return permissionCancelled, ""
	case resp.OptionID == "":
		return rejectedByUser, "Error: the user did not allow this tool call. It was not run."
	}
	var chosen PermissionKind
	if i := slices.IndexFunc(req.Options, func(o PermissionOption) bool { return o.ID == resp.OptionID }); i >= 0 {
		chosen = req.Options[i].Kind
	}
	switch chosen {
	case PermissionAllowOnce:
		return permitted, ""
	case PermissionAllowAlways:
		s.remember(call.name, info, policy.DecisionAllow)
		return permitted, ""
	case PermissionRejectAlways:
		s.remember(call.name, info, policy.DecisionReject)
	case PermissionRejectOnce:
	default:
		// Not an option we offered: fail closed.
		s.log.Warn("permission answer names an unknown option; rejecting", "option", resp.OptionID)
	}
	if resp.Reason != "" {
		return rejectedByUser, "This tool call was rejected (" + resp.Reason + "); it was not run. Do not retry it; say what you would have done instead."
	}
	return rejectedByUser, "The user rejected this tool call; it was not run. Do not retry it; ask the user how to proceed if you need it."
}

// remember stores a remembered decision, and journals it so it survives a
// restart with the session.
func (s *Session) remember(tool string, info ToolCallInfo, d policy.Decision) {
	r := s.perms.remember(tool, info, d)
	if j := s.cfg.Journal; j != nil {
		j.Remember(r)
	}
}

// rememberedHistory is every remembered decision, in order.
func (p *permissions) rememberedHistory() []RememberedDecision {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.history)
}

// restore applies a remembered decision read back from storage.
func (p *permissions) restore(r RememberedDecision) {
	d := map[string]policy.Decision{"allow": policy.DecisionAllow, "reject": policy.DecisionReject}[r.Decision]
	keep := true
	switch r.Scope {
	case ScopeForget:
		p.mu.Lock()
		p.edits, p.other, p.history = policy.DecisionNone, nil, nil
		p.mu.Unlock()
		p.cmds.Reset()
		return
	case ScopeEdits:
		p.mu.Lock()
		p.edits = d
		p.mu.Unlock()
	case ScopeCommandApprovals:
		p.cmds.Restore(r.Approvals, d)
	case ScopeCommand:
		// The old format: never widened, so only its rejects count.
		if r.Command == nil || d != policy.DecisionReject {
			return
		}
		r.Scope, r.Approvals = ScopeCommandApprovals, p.cmds.Remember(*r.Command, policy.CommandContext{}, d)
	case ScopeTool:
		p.setOther(r.Tool, d)
	default:
		keep = false
	}
	if keep {
		p.mu.Lock()
		p.history = append(p.history, r)
		p.mu.Unlock()
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
	s.telemetryEvent(it, telemetry.EventPromptPermissionDenied, "tool", tool, "reason", reason)
}

// sandboxMissing is why the session's commands cannot be confined although
// the sandbox was asked for ("" when they are, or it was not asked for).
func (s *Session) sandboxMissing() string {
	if w := s.cfg.Workspace; w != nil {
		return w.SandboxMissing()
	}
	return ""
}

// noticeSandboxMissing tells the user, once per session, that commands
// run unconfined and therefore ask.
func (s *Session) noticeSandboxMissing(ctx context.Context) {
	s.sandboxNotice.Do(func() {
		s.update(ctx, Update{Kind: UpdateNotice, Notice: &Notice{Severity: "warning", Title: "Commands are not sandboxed",
			Description: "Commands cannot be sandboxed here (" + s.sandboxMissing() + "), so every command asks for permission."}})
	})
}

// unconfinedNoticer is a Workspace whose commands run unconfined where
// no sandbox exists (Windows): Unconfined says so, for the session to
// tell the user once, at the first command. Commands are not made to
// ask by it (SandboxMissing does that).
type unconfinedNoticer interface {
	Unconfined() string
}

// noticeUnconfined tells the user, once per session, that commands run
// without a sandbox here.
func (s *Session) noticeUnconfined(ctx context.Context) {
	n, ok := s.cfg.Workspace.(unconfinedNoticer)
	if !ok || n.Unconfined() == "" {
		return
	}
	s.sandboxNotice.Do(func() {
		s.update(ctx, Update{Kind: UpdateMessage, Text: "Note: " + n.Unconfined() + "\n\n"})
	})
}

// sandboxAutoApproves reports whether confined commands run without asking
// in mode: the workspace confines them and the user set
// sandbox.autoApprove; read-only still refuses commands (Decide denies
// before this is asked).
func (s *Session) sandboxAutoApproves(mode policy.Mode) bool {
	w := s.cfg.Workspace
	return w != nil && w.SandboxAutoApproves(mode)
}
