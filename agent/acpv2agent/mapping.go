package acpv2agent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/acp/acpv2"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/internal/unidiff"
)

// What the core's updates become in v2: chunks stay chunks (with the
// message ids the core gives them), a tool call and its progress are
// tool_call_update upserts, the plan a plan_update of one plan per
// session. The end of a turn and the running state are the client's
// (client.go): they depend on what came before.

// planID is the id of a session's one plan (the update_plan tool's).
const planID = "plan"

// toV2Update maps an update; ok is false for what v2 does not carry
// (execution states and retries: state_update says running and idle;
// the end of a turn is the client's).
func toV2Update(u agent.Update) (acpv2.SessionUpdate, bool) {
	switch u.Kind {
	case agent.UpdateUserMessage:
		// A steer or follow-up joining the conversation, a chunk per part,
		// under the id its entry keeps.
		return acpv2.SessionUpdate{UserMessageChunk: &acpv2.ContentChunk{MessageID: messageID(u.MessageID), Content: textBlock(u.Text)}}, true
	case agent.UpdateMessage:
		return acpv2.SessionUpdate{AgentMessageChunk: &acpv2.ContentChunk{MessageID: messageID(u.MessageID), Content: textBlock(u.Text)}}, true
	case agent.UpdateThought:
		return acpv2.SessionUpdate{AgentThoughtChunk: &acpv2.ContentChunk{MessageID: messageID(u.MessageID), Content: textBlock(u.Text)}}, true
	case agent.UpdateToolCall, agent.UpdateToolCallProgress:
		tc := toolCallUpdate(*u.ToolCall, u.Kind == agent.UpdateToolCall)
		return acpv2.SessionUpdate{ToolCallUpdate: &tc}, true
	case agent.UpdatePlan:
		return acpv2.SessionUpdate{PlanUpdate: planUpdate(u.Plan)}, true
	case agent.UpdateUsage:
		uu := &acpv2.UsageUpdate{Used: u.Usage.Used, Size: u.Usage.Size}
		if c := u.Usage.Cost; c != nil {
			uu.Cost = acpv2.Some(acpv2.Cost{Amount: c.Amount, Currency: c.Currency})
		}
		return acpv2.SessionUpdate{UsageUpdate: uu}, true
	case agent.UpdateTitle:
		info := &acpv2.SessionInfoUpdate{Title: acpv2.Some(u.Title.Title)}
		if !u.Title.UpdatedAt.IsZero() {
			info.UpdatedAt = acpv2.Some(u.Title.UpdatedAt.UTC().Format(time.RFC3339))
		}
		return acpv2.SessionUpdate{SessionInfoUpdate: info}, true
	case agent.UpdateCompaction:
		cu := &acpv2.CompactionUpdate{CompactionID: u.Compaction.ID, Status: acpv2.CompactionStatus(u.Compaction.Status)}
		if u.Compaction.Error != "" {
			cu.Error = u.Compaction.Error
		}
		return acpv2.SessionUpdate{CompactionUpdate: cu}, true
	case agent.UpdateCompactionSummary:
		return acpv2.SessionUpdate{CompactionSummaryChunk: &acpv2.CompactionSummaryChunk{CompactionID: u.Compaction.ID,
			Content: textBlock(u.Compaction.Summary)}}, true
	case agent.UpdateNotice:
		return acpv2.SessionUpdate{Notice: &acpv2.Notice{Severity: acpv2.NoticeSeverity(u.Notice.Severity), Title: u.Notice.Title,
			Description: u.Notice.Description}}, true
	}
	return acpv2.SessionUpdate{}, false
}

// messageID is the core's id of a model response, or a new one (v2
// requires one on every chunk).
func messageID(id string) string {
	if id == "" {
		return uuid.NewString()
	}
	return id
}

func textBlock(text string) acpv2.ContentBlock {
	return acpv2.ContentBlock{Text: &acpv2.TextContent{Text: text}}
}

// toolCallUpdate is a tool call as an upsert: a new one with everything
// known, progress with what changed (the core leaves the rest empty).
func toolCallUpdate(c agent.ToolCallUpdate, isNew bool) acpv2.ToolCallUpdate {
	tc := acpv2.ToolCallUpdate{ToolCallID: c.ID, RawInput: c.RawInput}
	if c.Name != "" {
		tc.Name = acpv2.Some(c.Name)
	}
	if c.Title != "" {
		tc.Title = acpv2.Some(c.Title)
	}
	if c.Kind != "" {
		tc.Kind = acpv2.Some(acpv2.ToolKind(c.Kind))
	}
	if c.Status != "" {
		tc.Status = acpv2.Some(acpv2.ToolCallStatus(c.Status))
	} else if isNew {
		tc.Status = acpv2.Some(acpv2.ToolCallStatusPending)
	}
	if c.Locations != nil {
		tc.Locations = acpv2.Some(toolLocations(c.Locations))
	}
	if c.Content != nil {
		tc.Content = acpv2.Some(toolContent(c.Content))
	}
	return tc
}

func toolLocations(ls []agent.Location) []acpv2.ToolCallLocation {
	out := make([]acpv2.ToolCallLocation, len(ls))
	for i, l := range ls {
		out[i] = acpv2.ToolCallLocation{Path: l.Path, Line: l.Line}
	}
	return out
}

// toolContent maps what a tool call shows; a terminal is one of the
// session's display-only terminals (terminals.go).
func toolContent(cs []agent.ToolContent) []acpv2.ToolCallContent {
	out := make([]acpv2.ToolCallContent, 0, len(cs))
	for _, c := range cs {
		switch {
		case c.Block != nil:
			out = append(out, acpv2.ToolCallContent{Content: &acpv2.Content{Content: contentBlock(*c.Block)}})
		case c.Diff != nil:
			out = append(out, acpv2.ToolCallContent{Diff: diff(c.Diff)})
		case c.TerminalID != "":
			out = append(out, acpv2.ToolCallContent{Terminal: &acpv2.Terminal{TerminalID: c.TerminalID}})
		}
	}
	return out
}

// showsTerminal reports whether cs shows a terminal.
func showsTerminal(cs []agent.ToolContent) bool {
	for _, c := range cs {
		if c.TerminalID != "" {
			return true
		}
	}
	return false
}

// diff is a file change as v2's Diff: the change, and its patch in git's
// format with absolute paths and no a/ b/ prefixes.
func diff(d *agent.Diff) *acpv2.Diff {
	op, old := acpv2.DiffOperationModify, ""
	if d.OldText == nil {
		op = acpv2.DiffOperationAdd
	} else {
		old = *d.OldText
	}
	out := &acpv2.Diff{Changes: []acpv2.DiffChange{{Operation: op, Path: d.Path, FileType: acpv2.DiffFileTypeText}}}
	text := unidiff.Unified(d.Path, old, d.NewText, d.OldText == nil)
	if text == "" {
		return out
	}
	// unidiff writes "--- a/PATH" and "+++ b/PATH" first; git's patch of
	// an absolute path has its own header.
	_, hunks, _ := strings.Cut(text, "\n")
	_, hunks, _ = strings.Cut(hunks, "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git %s %s\n", d.Path, d.Path)
	if d.OldText == nil {
		fmt.Fprintf(&b, "new file mode 100644\n--- /dev/null\n")
	} else {
		fmt.Fprintf(&b, "--- %s\n", d.Path)
	}
	fmt.Fprintf(&b, "+++ %s\n%s", d.Path, hunks)
	out.Patch = &acpv2.DiffPatch{Format: acpv2.DiffPatchFormatGitPatch, Text: b.String()}
	return out
}

func contentBlock(b agent.ContentBlock) acpv2.ContentBlock {
	switch b.Type {
	case agent.BlockImage:
		return acpv2.ContentBlock{Image: &acpv2.ImageContent{Data: b.Data, MimeType: b.MIMEType, URI: b.URI}}
	case agent.BlockAudio:
		return acpv2.ContentBlock{Audio: &acpv2.AudioContent{Data: b.Data, MimeType: b.MIMEType}}
	case agent.BlockResourceLink:
		return acpv2.ContentBlock{ResourceLink: &acpv2.ResourceLink{URI: b.URI, Name: b.Name, Title: b.Title,
			Description: b.Description, MimeType: b.MIMEType, Size: sizeOf(b.Size)}}
	case agent.BlockResource:
		return acpv2.ContentBlock{Resource: &acpv2.EmbeddedResource{Resource: acpv2.EmbeddedResourceResource{
			Text: &acpv2.TextResourceContents{URI: b.URI, Text: b.Text, MimeType: b.MIMEType}}}}
	}
	return textBlock(b.Text)
}

func sizeOf(n *int64) *uint64 {
	if n == nil || *n < 0 {
		return nil
	}
	v := uint64(*n)
	return &v
}

// planUpdate is the session's plan (one per session, planID).
func planUpdate(p *agent.Plan) *acpv2.PlanUpdate {
	items := &acpv2.PlanItems{PlanID: planID, Entries: []acpv2.PlanEntry{}}
	if p != nil {
		for _, e := range p.Entries {
			pr := acpv2.PlanEntryPriority(e.Priority)
			if pr == "" {
				pr = acpv2.PlanEntryPriorityMedium
			}
			items.Entries = append(items.Entries, acpv2.PlanEntry{Content: e.Content, Priority: pr, Status: acpv2.PlanEntryStatus(e.Status)})
		}
	}
	return &acpv2.PlanUpdate{Plan: acpv2.PlanUpdateContent{Items: items}}
}

// configOptions are the host's options ("mode", "model",
// "thought_level") as v2 config options: selects, categorised. v2 has no
// session modes; its mode is the option of category "mode".
func configOptions(opts []host.Option) []acpv2.SessionConfigOption {
	out := make([]acpv2.SessionConfigOption, 0, len(opts))
	for _, o := range opts {
		sel := &acpv2.SessionConfigSelect{CurrentValue: o.Current}
		for _, c := range o.Choices {
			sel.Options.Options = append(sel.Options.Options, acpv2.SessionConfigSelectOption{Value: c.Value, Name: c.Name, Description: c.Description})
		}
		if len(sel.Options.Options) == 0 {
			continue // v2 wants at least one choice
		}
		out = append(out, acpv2.SessionConfigOption{ConfigID: o.ID, Name: o.Name, Description: o.Description,
			Category: acpv2.SessionConfigOptionCategory(o.Category), Select: sel})
	}
	return out
}

// availableCommands are a session's slash commands.
func availableCommands(cmds []host.Command) []acpv2.AvailableCommand {
	out := make([]acpv2.AvailableCommand, 0, len(cmds))
	for _, c := range cmds {
		cmd := &acpv2.Command{Name: c.Name, Description: c.Description}
		if c.Hint != "" {
			cmd.Input = &acpv2.AvailableCommandInput{Text: &acpv2.TextCommandInput{Hint: c.Hint}}
		}
		out = append(out, acpv2.AvailableCommand{Command: cmd})
	}
	return out
}

// mcpServers are the MCP servers a client named, for the host.
func mcpServers(servers []acpv2.McpServer) []host.MCPServer {
	if servers == nil {
		return nil
	}
	out := make([]host.MCPServer, 0, len(servers))
	for _, s := range servers {
		var hs host.MCPServer
		switch {
		case s.Stdio != nil:
			st := &host.MCPStdioServer{Name: s.Stdio.Name, Command: s.Stdio.Command, Args: s.Stdio.Args}
			for _, e := range s.Stdio.Env {
				st.Env = append(st.Env, host.MCPEnvVariable{Name: e.Name, Value: e.Value})
			}
			hs.Stdio = st
		case s.HTTP != nil:
			h := &host.MCPHTTPServer{Name: s.HTTP.Name, URL: s.HTTP.URL}
			for _, hd := range s.HTTP.Headers {
				h.Headers = append(h.Headers, host.MCPHTTPHeader{Name: hd.Name, Value: hd.Value})
			}
			hs.HTTP = h
		default:
			// The server refuses transports the agent did not advertise.
			continue
		}
		out = append(out, hs)
	}
	return out
}

// userContent turns a prompt's blocks into the model's user message:
// text and images pass, resource links and embedded resources become text
// naming their URI.
func userContent(blocks []acpv2.ContentBlock) ([]llm.Part, error) {
	var parts []llm.Part
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, llm.TextPart(b.Text.Text))
		case b.Image != nil:
			parts = append(parts, llm.Part{Type: llm.PartImage, MIMEType: b.Image.MimeType, Data: b.Image.Data})
		case b.ResourceLink != nil:
			l := b.ResourceLink
			parts = append(parts, llm.TextPart(host.ResourceLinkText(l.Name, l.URI, l.MimeType, l.Description)))
		case b.Resource != nil && b.Resource.Resource.Text != nil:
			r := b.Resource.Resource.Text
			parts = append(parts, llm.TextPart(host.ResourceText(r.URI, r.Text)))
		case b.Resource != nil && b.Resource.Resource.Blob != nil:
			r := b.Resource.Resource.Blob
			parts = append(parts, llm.TextPart(host.BinaryResourceText(r.URI, r.MimeType, len(r.Blob))))
		case b.Audio != nil:
			return nil, fmt.Errorf("prompt[%d]: audio content is not supported (session.prompt.audio is not advertised)", i)
		default:
			return nil, fmt.Errorf("prompt[%d]: unsupported content block type %q", i, b.Tag())
		}
	}
	if len(parts) == 0 {
		return nil, errors.New("prompt: must contain at least one content block")
	}
	return parts, nil
}

// userBlocks are a stored user message's parts as content blocks.
func userBlocks(parts []llm.Part) []acpv2.ContentBlock {
	out := make([]acpv2.ContentBlock, 0, len(parts))
	for _, p := range parts {
		if p.Type == llm.PartImage {
			out = append(out, acpv2.ContentBlock{Image: &acpv2.ImageContent{MimeType: p.MIMEType, Data: p.Data}})
			continue
		}
		out = append(out, textBlock(p.Text))
	}
	return out
}

// storedMessageID is the id a replay sends a stored message with: the one
// it was sent with live (Entry.MessageID), or, for a message stored
// without one (files written before ids were kept), an id from its place
// in the file, the same at every replay: "user-N" for the N-th user
// message (what session/prompt answered then), "agent-I" for the entry
// at index I.
func storedMessageID(e *agent.Entry, users, index int) string {
	switch {
	case e.MessageID != "":
		return e.MessageID
	case e.Kind == agent.EntryUser:
		return "user-" + strconv.Itoa(users)
	}
	return "agent-" + strconv.Itoa(index)
}
