package host

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/policy"
)

// ToolExitPlanMode is the tool a read-only (plan mode) session proposes
// its plan with: the user approves it, switching the session to a mode
// that can carry it out, or keeps planning.
const ToolExitPlanMode = "exit_plan_mode"

type exitPlanArgs struct {
	Plan    string `json:"plan" jsonschema:"the plan, in Markdown: what you will change, where, and how you will check it" schema:"minLength=1,maxLength=100000"`
	Entries []struct {
		Content  string `json:"content" schema:"minLength=1"`
		Priority string `json:"priority,omitempty" schema:"enum=high|medium|low"`
	} `json:"entries,omitempty" jsonschema:"the plan's steps as a checklist, in order" schema:"maxItems=100"`
}

// The answers to a proposed plan (the shape claude-agent-acp sends, which
// Zed renders for a switch_mode tool call): each approving option's id is
// the mode the session switches to; the reject option keeps read-only.
var planOptions = []agent.PermissionOption{
	{ID: string(policy.ModeAcceptEdits), Name: "Yes, and auto-accept edits", Kind: agent.PermissionAllowAlways},
	{ID: string(policy.ModeDefault), Name: "Yes, and manually approve edits", Kind: agent.PermissionAllowOnce},
	{ID: string(policy.ModeReadOnly), Name: "No, keep planning", Kind: agent.PermissionRejectOnce},
}

// planTitle is the proposal's tool call title.
const planTitle = "Ready to code?"

// exitPlanModeTool proposes the plan of a read-only session to the user
// (offered in read-only mode only): a tool call of kind switch_mode whose
// permission request carries the plan, as Markdown content and as the
// call's raw input with its entries.
func (hs *Session) exitPlanModeTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[exitPlanArgs]{
		Name: ToolExitPlanMode,
		Description: "In read-only (plan) mode, present your finished plan to the user for approval. Investigate first (read, search), then call this once with the whole plan in Markdown and, optionally, its steps as entries. " +
			"If the user approves, the session switches to a mode that can make changes and you carry out the plan in the same turn; if not, the session stays read-only and the turn ends so the user can say what to change. " +
			"Do not use it for questions or reviews that need no changes.\n" +
			`Example: {"plan": "## Make session writes atomic\n1. Write to a temporary file in store.go\n2. Rename it over the old file\n3. Run go test ./persistence/", "entries": [{"content": "Write to a temporary file"}, {"content": "Rename it over the old file"}, {"content": "Run the store tests"}]}`,
		ShortDescription: "Ask the user to approve the plan",
		Modes:            []policy.Mode{policy.ModeReadOnly},
		Describe: func(a exitPlanArgs) (agent.ToolCallInfo, error) {
			return agent.ToolCallInfo{Kind: agent.ToolKindSwitchMode, Title: planTitle, Action: policy.ActionNone,
				Preview: []agent.ToolContent{agent.TextContent(a.Plan)}}, nil
		},
		Run: hs.proposePlan,
	})
}

// proposePlan shows the plan (plan_update with its Markdown, or the
// entries to clients without plan operations), asks the user, and on
// approval switches the mode (current_mode_update) and lets the turn go
// on; otherwise the session stays read-only and the turn ends.
func (hs *Session) proposePlan(ctx context.Context, a exitPlanArgs) (agent.ToolResult, error) {
	if m := hs.s.Mode(); m != policy.ModeReadOnly {
		return agent.ToolResult{}, fmt.Errorf("the session is in %s mode, not read-only: there is no plan to approve, carry on with the task", m)
	}
	plan := agent.Plan{Markdown: a.Plan}
	for _, e := range a.Entries {
		plan.Entries = append(plan.Entries, agent.PlanEntry{Content: e.Content, Priority: cmp.Or(e.Priority, "medium"), Status: "pending"})
	}
	agent.SendPlan(ctx, plan)

	// Leaving read-only is the user's decision, whatever the permission
	// policy: with allow, the model could otherwise lift the read-only
	// mode the user chose, and allow would then let everything through.
	chosen := policy.ModeReadOnly
	switch hs.h.cfg.PermissionPolicy {
	case policy.PolicyAllow, policy.PolicyDeny:
	default:
		raw, _ := json.Marshal(a)
		resp, err := hs.c.RequestPermission(ctx, agent.PermissionRequest{
			SessionID: hs.s.ID(),
			ToolCall: agent.ToolCallUpdate{ID: agent.RunningToolCallID(ctx), Title: planTitle, Kind: agent.ToolKindSwitchMode,
				Status: agent.ToolPending, RawInput: raw, Content: []agent.ToolContent{agent.TextContent(a.Plan)}},
			Options: planOptions,
		})
		switch {
		case err != nil && ctx.Err() != nil:
			return agent.ToolResult{}, context.Cause(ctx)
		case err != nil:
			return agent.ToolResult{}, fmt.Errorf("asking the user to approve the plan failed: %w", err)
		case resp.Cancelled:
			return agent.ToolResult{}, agent.ErrPermissionCancelled
		}
		// An answer that is not one of the options keeps read-only
		// (fail closed).
		if slices.ContainsFunc(planOptions, func(o agent.PermissionOption) bool { return o.ID == resp.OptionID }) {
			chosen = policy.Mode(resp.OptionID)
		} else {
			chosen = policy.ModeReadOnly
		}
	}
	if chosen == policy.ModeReadOnly {
		return agent.ToolResult{
			Text:    "The user did not approve the plan; the session stays in read-only mode. Wait for the user to say what to change, then revise the plan.",
			IsError: true,
			EndTurn: "The plan was not approved, so the session stays in read-only mode. Say what to change and the plan will be revised.",
		}, nil
	}
	if err := hs.SetMode(string(chosen)); err != nil {
		return agent.ToolResult{}, err
	}
	return agent.ToolResult{Text: fmt.Sprintf("The user approved the plan and switched the session to %s mode. Carry out the plan now, step by step, keeping its checklist with update_plan.", chosen)}, nil
}
