package acpagent

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
)

// acpSink maps a session's updates and permission requests onto its ACP
// connection: it is the session's UpdateSink, PostSink and
// PermissionRequester.
type acpSink struct {
	conn *acp.ClientConn
}

func (k acpSink) Update(ctx context.Context, u agent.Update) error {
	au, ok := k.toACP(u)
	if !ok {
		return nil
	}
	return k.conn.Update(ctx, au)
}

// toACP maps u for this client: a notice goes to a client without notice
// updates as a note in the conversation (sessions send notices during a
// turn, where a note is in place).
func (k acpSink) toACP(u agent.Update) (acp.SessionUpdate, bool) {
	if u.Kind == agent.UpdatePlan {
		return k.planUpdate(u.Plan)
	}
	if u.Kind == agent.UpdateNotice && u.Notice != nil {
		if caps := k.conn.Capabilities(); caps.Session == nil || caps.Session.Notices == nil {
			text := "Note: " + u.Notice.Title
			if u.Notice.Description != "" {
				text += ": " + u.Notice.Description
			}
			return acp.AgentMessageChunk(text + "\n\n"), true
		}
	}
	return toACPUpdate(u)
}

func (k acpSink) Post(u agent.Update) error {
	au, ok := k.toACP(u)
	if !ok {
		return nil
	}
	return k.conn.Post(au)
}

func (k acpSink) RequestPermission(ctx context.Context, req agent.PermissionRequest) (agent.PermissionAnswer, error) {
	ar := &acp.RequestPermissionRequest{SessionID: acp.SessionId(k.conn.SessionID()), ToolCall: toACPToolCallUpdate(req.ToolCall)}
	for _, o := range req.Options {
		ar.Options = append(ar.Options, acp.PermissionOption{OptionID: acp.PermissionOptionId(o.ID), Name: o.Name, Kind: acp.PermissionOptionKind(o.Kind)})
	}
	resp, err := k.conn.RequestPermission(ctx, ar)
	if err != nil {
		return agent.PermissionAnswer{}, err
	}
	switch {
	case resp.Outcome.Cancelled != nil:
		return agent.PermissionAnswer{Cancelled: true}, nil
	case resp.Outcome.Selected != nil:
		return agent.PermissionAnswer{OptionID: string(resp.Outcome.Selected.OptionID), Reason: permissionReason(resp.Meta)}, nil
	}
	return agent.PermissionAnswer{}, nil
}

// permissionReason is _meta["acp-agent"].reason of a permission answer:
// who decided when it was not the user (docs/extensions.md), one line of
// at most 200 characters.
func permissionReason(meta json.RawMessage) string {
	var m struct {
		Ext struct {
			Reason string `json:"reason"`
		} `json:"acp-agent"`
	}
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil {
		return ""
	}
	r := strings.Join(strings.Fields(strings.Map(func(c rune) rune {
		if unicode.IsPrint(c) {
			return c
		}
		return ' '
	}, m.Ext.Reason)), " ")
	if rs := []rune(r); len(rs) > 200 {
		r = string(rs[:200])
	}
	return r
}

// toACPUpdate maps an update to its session/update; ok is false for the
// ones ACP does not carry (the end of a turn is the prompt's response).
func toACPUpdate(u agent.Update) (acp.SessionUpdate, bool) {
	switch u.Kind {
	case agent.UpdateUserMessage:
		return acp.UserMessageChunk(acp.TextBlock(u.Text)), true
	case agent.UpdateMessage:
		return acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.TextBlock(u.Text), MessageID: acp.MessageId(u.MessageID)}}, true
	case agent.UpdateThought:
		return acp.SessionUpdate{AgentThoughtChunk: &acp.ContentChunk{Content: acp.TextBlock(u.Text), MessageID: acp.MessageId(u.MessageID)}}, true
	case agent.UpdateToolCall:
		c := u.ToolCall
		return acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: acp.ToolCallId(c.ID), Title: c.Title, Name: c.Name,
			Kind: acp.ToolKind(c.Kind), Status: acp.ToolCallStatus(c.Status), Locations: toACPLocations(c.Locations),
			RawInput: c.RawInput, Content: toACPToolContent(c.Content)}}, true
	case agent.UpdateToolCallProgress:
		tu := toACPToolCallUpdate(*u.ToolCall)
		return acp.SessionUpdate{ToolCallUpdate: &tu}, true
	case agent.UpdatePlan:
		return acp.SessionUpdate{Plan: toACPPlan(u.Plan)}, true
	case agent.UpdateUsage:
		au := &acp.UsageUpdate{Used: u.Usage.Used, Size: u.Usage.Size}
		if c := u.Usage.Cost; c != nil {
			au.Cost = &acp.Cost{Amount: c.Amount, Currency: c.Currency}
		}
		return acp.SessionUpdate{UsageUpdate: au}, true
	case agent.UpdateTitle:
		info := &acp.SessionInfoUpdate{Title: acp.NullableOf(u.Title.Title)}
		if !u.Title.UpdatedAt.IsZero() {
			info.UpdatedAt = acp.NullableOf(u.Title.UpdatedAt.UTC().Format(time.RFC3339))
		}
		return acp.SessionUpdate{SessionInfoUpdate: info}, true
	case agent.UpdateCompaction:
		cu := &acp.CompactionUpdate{CompactionID: acp.CompactionId(u.Compaction.ID), Status: acp.CompactionStatus(u.Compaction.Status)}
		if u.Compaction.Error != "" {
			cu.Error = acp.NullableOf(u.Compaction.Error)
		}
		return acp.SessionUpdate{CompactionUpdate: cu}, true
	case agent.UpdateCompactionSummary:
		return acp.SessionUpdate{CompactionSummaryChunk: &acp.CompactionSummaryChunk{
			CompactionID: acp.CompactionId(u.Compaction.ID), Content: acp.TextBlock(u.Compaction.Summary)}}, true
	case agent.UpdateExecutionState:
		return acp.SessionUpdate{ExecutionStateUpdate: &acp.ExecutionStateUpdate{ExecutionState: acp.ExecutionState{
			State: acp.ExecState(u.State.State), Attempt: u.State.Attempt, Message: u.State.Message}}}, true
	case agent.UpdateRetry:
		return acp.SessionUpdate{RetryUpdate: &acp.RetryUpdate{Retry: acp.RetryInfo{
			Attempt: u.Retry.Attempt, MaxAttempts: u.Retry.MaxAttempts, Reason: u.Retry.Reason}}}, true
	case agent.UpdateNotice:
		return acp.SessionUpdate{Notice: &acp.Notice{Severity: acp.NoticeSeverity(u.Notice.Severity), Title: u.Notice.Title,
			Description: u.Notice.Description}}, true
	}
	return acp.SessionUpdate{}, false
}

func toACPToolCallUpdate(c agent.ToolCallUpdate) acp.ToolCallUpdate {
	return acp.ToolCallUpdate{ToolCallID: acp.ToolCallId(c.ID), Title: c.Title, Kind: acp.ToolKind(c.Kind),
		Status: acp.ToolCallStatus(c.Status), Locations: toACPLocations(c.Locations), RawInput: c.RawInput,
		Content: toACPToolContent(c.Content)}
}

func toACPLocations(ls []agent.Location) []acp.ToolCallLocation {
	if ls == nil {
		return nil
	}
	out := make([]acp.ToolCallLocation, len(ls))
	for i, l := range ls {
		out[i] = acp.ToolCallLocation{Path: l.Path, Line: l.Line}
	}
	return out
}

func toACPToolContent(cs []agent.ToolContent) []acp.ToolCallContent {
	if cs == nil {
		return nil
	}
	out := make([]acp.ToolCallContent, 0, len(cs))
	for _, c := range cs {
		switch {
		case c.Block != nil:
			out = append(out, acp.ToolCallContent{Content: &acp.Content{Content: toACPBlock(*c.Block)}})
		case c.Diff != nil:
			out = append(out, acp.ToolCallContent{Diff: &acp.Diff{Path: c.Diff.Path, OldText: c.Diff.OldText, NewText: c.Diff.NewText}})
		case c.TerminalID != "":
			out = append(out, acp.ToolCallContent{Terminal: &acp.Terminal{TerminalID: acp.TerminalId(c.TerminalID)}})
		}
	}
	return out
}

func toACPBlock(b agent.ContentBlock) acp.ContentBlock {
	switch b.Type {
	case agent.BlockImage:
		return acp.ContentBlock{Image: &acp.ImageContent{Data: b.Data, MimeType: b.MIMEType, URI: b.URI}}
	case agent.BlockAudio:
		return acp.ContentBlock{Audio: &acp.AudioContent{Data: b.Data, MimeType: b.MIMEType}}
	case agent.BlockResourceLink:
		return acp.ContentBlock{ResourceLink: &acp.ResourceLink{URI: b.URI, Name: b.Name, Title: b.Title,
			Description: b.Description, MimeType: b.MIMEType, Size: b.Size}}
	case agent.BlockResource:
		return acp.ContentBlock{Resource: &acp.EmbeddedResource{Resource: acp.EmbeddedResourceResource{
			Text: &acp.TextResourceContents{URI: b.URI, Text: b.Text, MimeType: b.MIMEType}}}}
	}
	return acp.TextBlock(b.Text)
}

// planID is the id of a session's one plan (plan operations).
func planID(sessionID string) acp.PlanId { return "plan-" + sessionID }

// planUpdate maps a plan for this client: a client that advertises
// clientCapabilities.plan gets plan_update under the session's one plan
// id (the text of a proposed plan rather than its entries, when it has
// one) and plan_removed for a cleared plan; the others get the v1 plan
// update of its entries, and nothing for a plan that is only text (they
// see that text in the permission request that proposes it).
func (k acpSink) planUpdate(p *agent.Plan) (acp.SessionUpdate, bool) {
	if p == nil {
		return acp.SessionUpdate{}, false
	}
	if k.conn.Capabilities().Plan == nil {
		if len(p.Entries) == 0 && !p.Empty() {
			return acp.SessionUpdate{}, false
		}
		return acp.SessionUpdate{Plan: toACPPlan(p)}, true
	}
	id := planID(k.conn.SessionID())
	var c acp.PlanUpdateContent
	switch {
	case p.Empty():
		return acp.SessionUpdate{PlanRemoved: &acp.PlanRemoved{PlanID: id}}, true
	case p.Markdown != "":
		c.Markdown = &acp.PlanMarkdown{PlanID: id, Content: p.Markdown}
	case p.URI != "":
		c.File = &acp.PlanFile{PlanID: id, URI: p.URI}
	default:
		c.Items = &acp.PlanItems{PlanID: id, Entries: toACPPlan(p).Entries}
	}
	return acp.SessionUpdate{PlanUpdate: &acp.PlanUpdate{Plan: c}}, true
}

func toACPPlan(p *agent.Plan) *acp.Plan {
	if p == nil {
		return nil
	}
	out := &acp.Plan{Entries: make([]acp.PlanEntry, len(p.Entries))}
	for i, e := range p.Entries {
		out.Entries[i] = acp.PlanEntry{Content: e.Content, Priority: acp.PlanEntryPriority(e.Priority), Status: acp.PlanEntryStatus(e.Status)}
	}
	return out
}
