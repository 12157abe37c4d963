package acpv2agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/policy"
)

// v2Client is a session's v2 connection as the host's Client: it maps the
// session's updates (mapping.go), asks its permissions, and keeps the
// session's foreground state, which v2 reports with state_update:
// running when a turn starts, requires_action while it waits for the
// user's answer, idle with the stop reason when it ends.
type v2Client struct {
	a    *Agent
	conn *acp.ClientConnV2

	mu sync.Mutex
	// state is the foreground state last sent: "idle", "running" or
	// "requires_action".
	state string
	// stop is how the turn the session submitted last ended, from its
	// completion (which comes before the turn's end update), for the
	// idle state_update.
	stop *acpv2.IdleStateUpdate
	// turnEnded is told that a turn ended (the session inserts what it
	// held).
	turnEnded func()
	// shown is the content each unfinished tool call shows (its items'
	// JSON), so that what is appended streams as tool_call_content_chunk;
	// cancelled are the calls tool_call/cancel stopped, whose final
	// status is "cancelled".
	shown     map[string][]string
	cancelled map[string]bool

	// terms are the session's display-only terminals.
	terms terminals
}

const (
	stateIdle           = acpv2.StateUpdateTagIdle
	stateRunning        = acpv2.StateUpdateTagRunning
	stateRequiresAction = acpv2.StateUpdateTagRequiresAction
)

var _ host.Client = (*v2Client)(nil)

func (a *Agent) client(conn *acp.ClientConnV2) *v2Client {
	c := &v2Client{a: a, conn: conn, state: stateIdle, shown: map[string][]string{}, cancelled: map[string]bool{}}
	c.terms.cl = c
	return c
}

// inTurn reports whether only a running turn sends updates of kind k:
// one of them while idle means a turn started that the session did not
// submit (a follow-up queued by an extension method), and running comes
// first. (A switch, not a map: nothing to build at package init.)
func inTurn(k agent.UpdateKind) bool {
	switch k {
	case agent.UpdateUserMessage, agent.UpdateMessage, agent.UpdateThought,
		agent.UpdateToolCall, agent.UpdateToolCallProgress, agent.UpdatePlan:
		return true
	}
	return false
}

// Update implements agent.UpdateSink: called by the session's worker, in
// order.
func (c *v2Client) Update(ctx context.Context, u agent.Update) error {
	if u.Kind == agent.UpdateTurnEnded {
		err := c.send(ctx, c.idleUpdate(u.Turn))
		if c.turnEnded != nil {
			c.turnEnded()
		}
		return err
	}
	if inTurn(u.Kind) {
		if su, ok := c.enter(stateRunning, false); ok {
			if err := c.send(ctx, su); err != nil {
				return err
			}
		}
	}
	if u.Kind == agent.UpdateToolCall || u.Kind == agent.UpdateToolCallProgress {
		return c.toolCall(ctx, *u.ToolCall, u.Kind == agent.UpdateToolCall)
	}
	v2u, ok := toV2Update(u)
	if !ok {
		return nil
	}
	return c.send(ctx, v2u)
}

// toolCall sends a tool call's update: content a running call's progress
// appends to what it shows goes as tool_call_content_chunks (content it
// shows already is not sent again); a running call can be cancelled (capabilities.cancel),
// a finished one not, and one tool_call/cancel stopped ends "cancelled".
func (c *v2Client) toolCall(ctx context.Context, call agent.ToolCallUpdate, isNew bool) error {
	tc := toolCallUpdate(call, isNew)
	final := call.Status == agent.ToolCompleted || call.Status == agent.ToolFailed
	var chunks []acpv2.ToolCallContent
	c.mu.Lock()
	if items, ok := tc.Content.Get(); ok {
		prev := c.shown[call.ID]
		cur := make([]string, len(items))
		for i := range items {
			b, _ := json.Marshal(items[i])
			cur[i] = string(b)
		}
		switch {
		case slices.Equal(prev, cur) && !isNew:
			tc.Content = acpv2.Nullable[[]acpv2.ToolCallContent]{} // shown already
		case !isNew && !final && len(cur) > len(prev) && slices.Equal(prev, cur[:len(prev)]):
			// Progress that adds to what the running call shows; a final
			// update carries the call's whole content.
			chunks, tc.Content = items[len(prev):], acpv2.Nullable[[]acpv2.ToolCallContent]{}
		}
		c.shown[call.ID] = cur
	}
	switch {
	case final:
		tc.Capabilities = acpv2.Null[acpv2.ToolCallCapabilities]()
		if c.cancelled[call.ID] && call.Status == agent.ToolFailed {
			// (A call that completed before it could stop says so.)
			tc.Status = acpv2.Some(acpv2.ToolCallStatusCancelled)
		}
		delete(c.shown, call.ID)
		delete(c.cancelled, call.ID)
	case call.Status == agent.ToolInProgress:
		tc.Capabilities = acpv2.Some(acpv2.ToolCallCapabilities{Cancel: &acpv2.ToolCallCancelCapabilities{}})
	}
	c.mu.Unlock()
	if isNew || !tc.Content.IsZero() || !tc.Status.IsZero() || !tc.Capabilities.IsZero() || !tc.Title.IsZero() || !tc.Locations.IsZero() {
		if err := c.send(ctx, acpv2.SessionUpdate{ToolCallUpdate: &tc}); err != nil {
			return err
		}
	}
	for i := range chunks {
		if err := c.send(ctx, acpv2.SessionUpdate{ToolCallContentChunk: &acpv2.ToolCallContentChunk{ToolCallID: call.ID, Content: chunks[i]}}); err != nil {
			return err
		}
	}
	return nil
}

// cancelToolCall serves tool_call/cancel: the call is marked for its
// final status, then stopped.
func (c *v2Client) cancelToolCall(id string, cancel func(string) error) error {
	c.mu.Lock()
	c.cancelled[id] = true
	c.mu.Unlock()
	if err := cancel(id); err != nil {
		c.mu.Lock()
		delete(c.cancelled, id)
		c.mu.Unlock()
		return err
	}
	return nil
}

func (c *v2Client) send(ctx context.Context, u acpv2.SessionUpdate) error {
	return c.conn.Update(ctx, u)
}

// Post implements agent.PostSink: updates sent from outside the worker
// (notices, the title) never wait.
func (c *v2Client) Post(u agent.Update) error {
	v2u, ok := toV2Update(u)
	if !ok {
		return nil
	}
	return c.conn.Post(v2u)
}

func (c *v2Client) post(u acpv2.SessionUpdate) {
	if err := c.conn.Post(u); err != nil {
		c.a.log.Debug("sending update", "session", c.conn.SessionID(), "error", err)
	}
}

// enter moves the foreground state to state and returns its
// state_update, unless it is there already. From idle only running is
// entered, and only when force or the state is idle.
func (c *v2Client) enter(state string, force bool) (acpv2.SessionUpdate, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == state || (!force && state == stateRunning && c.state != stateIdle) {
		return acpv2.SessionUpdate{}, false
	}
	c.state = state
	su := &acpv2.StateUpdate{}
	switch state {
	case stateRunning:
		su.Running = &acpv2.RunningStateUpdate{}
	case stateRequiresAction:
		su.RequiresAction = &acpv2.RequiresActionStateUpdate{}
	}
	return acpv2.SessionUpdate{StateUpdate: su}, true
}

// idle is the state_update that ends a turn: the stop reason the
// session's completion recorded, else the core's.
func (c *v2Client) idleUpdate(end *agent.TurnEnd) acpv2.SessionUpdate {
	c.mu.Lock()
	idle := c.stop
	c.stop = nil
	c.state = stateIdle
	c.mu.Unlock()
	if idle == nil {
		idle = &acpv2.IdleStateUpdate{StopReason: acpv2.StopReasonEndTurn}
		switch {
		case end == nil:
		case end.StopReason != "":
			idle.StopReason = acpv2.StopReason(end.StopReason)
		case end.Err != "":
			idle.StopReason = acpv2.StopReasonError
			idle.Error = &acpv2.Error{Code: acpv2.ErrorCodeInternalError, Message: end.Err}
		}
	}
	if end != nil && (end.Usage.InputTokens > 0 || end.Usage.OutputTokens > 0) {
		idle.Usage = usage(end)
	}
	return acpv2.SessionUpdate{StateUpdate: &acpv2.StateUpdate{Idle: idle}}
}

// setStop records how the session's last submitted turn ended.
func (c *v2Client) setStop(idle *acpv2.IdleStateUpdate) {
	c.mu.Lock()
	c.stop = idle
	c.mu.Unlock()
}

// usage is a turn's token usage (IdleStateUpdate.usage, unstable).
func usage(end *agent.TurnEnd) *acpv2.Usage {
	u := end.Usage
	out := &acpv2.Usage{InputTokens: uint64(max(u.InputTokens, 0)), OutputTokens: uint64(max(u.OutputTokens, 0))}
	out.TotalTokens = out.InputTokens + out.OutputTokens
	opt := func(n int64) *uint64 {
		if n <= 0 {
			return nil
		}
		v := uint64(n)
		return &v
	}
	out.ThoughtTokens, out.CachedReadTokens, out.CachedWriteTokens = opt(u.ReasoningTokens), opt(u.CachedReadTokens), opt(u.CachedWriteTokens)
	return out
}

// RequestPermission implements agent.PermissionRequester with
// session/request_permission about the tool call; while the user has not
// answered, the session requires action.
func (c *v2Client) RequestPermission(ctx context.Context, req agent.PermissionRequest) (agent.PermissionAnswer, error) {
	title := req.ToolCall.Title
	if title == "" {
		title = req.ToolCall.Name
	}
	pr := &acpv2.RequestPermissionRequest{Title: title,
		Subject: &acpv2.RequestPermissionSubject{ToolCall: &acpv2.ToolCallPermissionSubject{ToolCall: toolCallUpdate(req.ToolCall, false)}}}
	for _, o := range req.Options {
		pr.Options = append(pr.Options, acpv2.PermissionOption{OptionID: o.ID, Name: o.Name, Kind: acpv2.PermissionOptionKind(o.Kind)})
	}
	if su, ok := c.enter(stateRequiresAction, true); ok {
		if err := c.send(ctx, su); err != nil {
			return agent.PermissionAnswer{}, err
		}
	}
	resp, err := c.conn.RequestPermission(ctx, pr)
	if su, ok := c.enter(stateRunning, true); ok && ctx.Err() == nil {
		if serr := c.send(ctx, su); serr != nil && err == nil {
			err = serr
		}
	}
	if err != nil {
		return agent.PermissionAnswer{}, err
	}
	switch {
	case resp.Outcome.Selected != nil:
		return agent.PermissionAnswer{OptionID: resp.Outcome.Selected.OptionID}, nil
	case resp.Outcome.Cancelled != nil:
		return agent.PermissionAnswer{Cancelled: true}, nil
	}
	return agent.PermissionAnswer{}, nil // an outcome this version does not know: nothing chosen
}

// Features implements host.Client. v2's notices and compaction updates
// are stable, so every client gets them; subagents stay inside their
// tool call (v2 has no client capability to show them as sessions).
func (c *v2Client) Features() host.Features {
	caps := c.conn.Capabilities()
	return host.Features{Notices: true, Compaction: true,
		ElicitForm: caps.Elicitation != nil && caps.Elicitation.Form != nil,
		ElicitURL:  caps.Elicitation != nil && caps.Elicitation.URL != nil}
}

// Editor implements host.Client: v2 clients offer no files or terminals,
// so every tool runs locally (confined), and the user sees what they did
// in the tool calls, and the commands they run as display-only terminals.
func (c *v2Client) Editor(string) tools.Editor { return tools.Editor{Display: &c.terms} }

// CommandsChanged implements host.Client: available_commands_update.
func (c *v2Client) CommandsChanged(cmds []host.Command) {
	c.post(acpv2.SessionUpdate{AvailableCommandsUpdate: &acpv2.AvailableCommandsUpdate{AvailableCommands: availableCommands(cmds)}})
}

// ModeChanged implements host.Client: v2 has no mode update; the mode is
// the "mode" config option, which OptionsChanged sends.
func (c *v2Client) ModeChanged(policy.Mode) {}

// OptionsChanged implements host.Client: config_option_update.
func (c *v2Client) OptionsChanged(opts []host.Option) {
	c.post(acpv2.SessionUpdate{ConfigOptionUpdate: &acpv2.ConfigOptionUpdate{ConfigOptions: configOptions(opts)}})
}

var _ host.Elicitor = (*v2Client)(nil)

// Elicit implements host.Elicitor with elicitation/create, in the mode
// the MCP server asked for, scoped to the session. A form's schema is the
// server's, decoded into ACP's restricted form schema.
func (c *v2Client) Elicit(ctx context.Context, sessionID string, e host.Elicitation) (host.ElicitationResult, error) {
	req := acpv2.CreateElicitationRequest{Message: e.Message, SessionID: sessionID}
	switch e.Mode {
	case acpv2.ElicitationModeForm:
		var schema acpv2.ElicitationSchema
		if len(e.RequestedSchema) > 0 {
			if err := json.Unmarshal(e.RequestedSchema, &schema); err != nil {
				return host.ElicitationResult{}, fmt.Errorf("the requested schema is not a form schema: %w", err)
			}
		}
		schema.Type = acpv2.ElicitationSchemaTypeObject
		if schema.Properties == nil {
			schema.Properties = map[string]acpv2.ElicitationPropertySchema{}
		}
		req.Form = &acpv2.ElicitationFormMode{RequestedSchema: schema}
	case acpv2.ElicitationModeURL:
		req.URL = &acpv2.ElicitationUrlMode{ElicitationID: e.ElicitationID, URL: e.URL}
	default:
		return host.ElicitationResult{}, fmt.Errorf("elicitation mode %q is not supported", e.Mode)
	}
	var resp acpv2.CreateElicitationResponse
	if err := c.conn.Call(ctx, acpv2.MethodElicitationCreate, &req, &resp); err != nil {
		return host.ElicitationResult{}, err
	}
	switch resp.Action {
	case acpv2.ElicitationActionAccept:
	case acpv2.ElicitationActionDecline:
		return host.ElicitationResult{Action: "decline"}, nil
	default: // cancel, and actions this version does not know (v2: handled as cancel)
		return host.ElicitationResult{Action: "cancel"}, nil
	}
	content := map[string]any{}
	for k, raw := range resp.Content {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			content[k] = v
		}
	}
	return host.ElicitationResult{Action: "accept", Content: content}, nil
}

// ElicitationComplete implements host.Elicitor: elicitation/complete.
func (c *v2Client) ElicitationComplete(server, id string) {
	if id == "" {
		return
	}
	if err := c.conn.Notify(context.Background(), acpv2.MethodElicitationComplete, &acpv2.CompleteElicitationNotification{ElicitationID: id}); err != nil {
		c.a.log.Debug("elicitation/complete", "server", server, "error", err)
	}
}
