package acp

import (
	"encoding/json"
	"fmt"
)

// SessionNotification is the params of the session/update notification
// (agent → client).
type SessionNotification struct {
	SessionID SessionId       `json:"sessionId"`
	Update    SessionUpdate   `json:"update"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// SessionUpdate is one streamed update of a session (tag "sessionUpdate").
// Notice, CompactionUpdate and CompactionSummaryChunk are stable in the SDK
// 2.4.0 schema only; send them only to clients that advertised
// clientCapabilities.session.notices / .compaction.
type SessionUpdate struct {
	UserMessageChunk        *ContentChunk            // "user_message_chunk"
	AgentMessageChunk       *ContentChunk            // "agent_message_chunk"
	AgentThoughtChunk       *ContentChunk            // "agent_thought_chunk"
	ToolCall                *ToolCall                // "tool_call"
	ToolCallUpdate          *ToolCallUpdate          // "tool_call_update"
	Plan                    *Plan                    // "plan"
	AvailableCommandsUpdate *AvailableCommandsUpdate // "available_commands_update"
	CurrentModeUpdate       *CurrentModeUpdate       // "current_mode_update"
	ConfigOptionUpdate      *ConfigOptionUpdate      // "config_option_update"
	SessionInfoUpdate       *SessionInfoUpdate       // "session_info_update"
	UsageUpdate             *UsageUpdate             // "usage_update"
	Notice                  *Notice                  // "notice" (SDK 2.4.0)
	SubagentUpdate          *SubagentUpdate          // "subagent_update" (SDK 2.4.0 unstable)
	PlanUpdate              *PlanUpdate              // "plan_update" (SDK 2.4.0 unstable; clientCapabilities.plan)
	PlanRemoved             *PlanRemoved             // "plan_removed" (SDK 2.4.0 unstable; clientCapabilities.plan)
	SessionMessage          *SessionMessage          // "session_message" (SDK 2.4.0 unstable; subagents)
	SessionMessageChunk     *SessionMessageChunk     // "session_message_chunk" (SDK 2.4.0 unstable; subagents)
	CompactionUpdate        *CompactionUpdate        // "compaction_update" (SDK 2.4.0)
	CompactionSummaryChunk  *CompactionSummaryChunk  // "compaction_summary_chunk" (SDK 2.4.0)
	ExecutionStateUpdate    *ExecutionStateUpdate    // "execution_state_update" (acp-agent extension, opt-in)
	RetryUpdate             *RetryUpdate             // "retry_update" (acp-agent extension, opt-in)
	Unknown                 *UnknownVariant
}

// SessionUpdate tags ("sessionUpdate" values).
const (
	SessionUpdateUserMessageChunk        = "user_message_chunk"
	SessionUpdateAgentMessageChunk       = "agent_message_chunk"
	SessionUpdateAgentThoughtChunk       = "agent_thought_chunk"
	SessionUpdateToolCall                = "tool_call"
	SessionUpdateToolCallUpdate          = "tool_call_update"
	SessionUpdatePlan                    = "plan"
	SessionUpdateAvailableCommandsUpdate = "available_commands_update"
	SessionUpdateCurrentModeUpdate       = "current_mode_update"
	SessionUpdateConfigOptionUpdate      = "config_option_update"
	SessionUpdateSessionInfoUpdate       = "session_info_update"
	SessionUpdateUsageUpdate             = "usage_update"
	SessionUpdateNotice                  = "notice"
	SessionUpdateSubagentUpdate          = "subagent_update"
	SessionUpdatePlanUpdate              = "plan_update"
	SessionUpdatePlanRemoved             = "plan_removed"
	SessionUpdateSessionMessage          = "session_message"
	SessionUpdateSessionMessageChunk     = "session_message_chunk"
	SessionUpdateCompactionUpdate        = "compaction_update"
	SessionUpdateCompactionSummaryChunk  = "compaction_summary_chunk"
	SessionUpdateExecutionStateUpdate    = "execution_state_update"
	SessionUpdateRetryUpdate             = "retry_update"
)

var (
	prefixUserMessageChunk        = unionPrefix("sessionUpdate", SessionUpdateUserMessageChunk)
	prefixAgentMessageChunk       = unionPrefix("sessionUpdate", SessionUpdateAgentMessageChunk)
	prefixAgentThoughtChunk       = unionPrefix("sessionUpdate", SessionUpdateAgentThoughtChunk)
	prefixToolCall                = unionPrefix("sessionUpdate", SessionUpdateToolCall)
	prefixToolCallUpdate          = unionPrefix("sessionUpdate", SessionUpdateToolCallUpdate)
	prefixPlan                    = unionPrefix("sessionUpdate", SessionUpdatePlan)
	prefixAvailableCommandsUpdate = unionPrefix("sessionUpdate", SessionUpdateAvailableCommandsUpdate)
	prefixCurrentModeUpdate       = unionPrefix("sessionUpdate", SessionUpdateCurrentModeUpdate)
	prefixConfigOptionUpdate      = unionPrefix("sessionUpdate", SessionUpdateConfigOptionUpdate)
	prefixSessionInfoUpdate       = unionPrefix("sessionUpdate", SessionUpdateSessionInfoUpdate)
	prefixUsageUpdate             = unionPrefix("sessionUpdate", SessionUpdateUsageUpdate)
	prefixNotice                  = unionPrefix("sessionUpdate", SessionUpdateNotice)
	prefixSubagentUpdate          = unionPrefix("sessionUpdate", SessionUpdateSubagentUpdate)
	prefixPlanUpdate              = unionPrefix("sessionUpdate", SessionUpdatePlanUpdate)
	prefixPlanRemoved             = unionPrefix("sessionUpdate", SessionUpdatePlanRemoved)
	prefixSessionMessage          = unionPrefix("sessionUpdate", SessionUpdateSessionMessage)
	prefixSessionMessageChunk     = unionPrefix("sessionUpdate", SessionUpdateSessionMessageChunk)
	prefixCompactionUpdate        = unionPrefix("sessionUpdate", SessionUpdateCompactionUpdate)
	prefixCompactionSummaryChunk  = unionPrefix("sessionUpdate", SessionUpdateCompactionSummaryChunk)
	prefixExecutionStateUpdate    = unionPrefix("sessionUpdate", SessionUpdateExecutionStateUpdate)
	prefixRetryUpdate             = unionPrefix("sessionUpdate", SessionUpdateRetryUpdate)
)

// AgentMessageChunk returns an agent_message_chunk update with a text block.
func AgentMessageChunk(text string) SessionUpdate {
	return SessionUpdate{AgentMessageChunk: &ContentChunk{Content: TextBlock(text)}}
}

// AgentThoughtChunk returns an agent_thought_chunk update with a text block.
func AgentThoughtChunk(text string) SessionUpdate {
	return SessionUpdate{AgentThoughtChunk: &ContentChunk{Content: TextBlock(text)}}
}

// UserMessageChunk returns a user_message_chunk update (used when replaying
// history on session/load).
func UserMessageChunk(block ContentBlock) SessionUpdate {
	return SessionUpdate{UserMessageChunk: &ContentChunk{Content: block}}
}

// Tag returns the "sessionUpdate" value of the set variant, or "" when none
// is set.
func (u SessionUpdate) Tag() string {
	switch {
	case u.UserMessageChunk != nil:
		return SessionUpdateUserMessageChunk
	case u.AgentMessageChunk != nil:
		return SessionUpdateAgentMessageChunk
	case u.AgentThoughtChunk != nil:
		return SessionUpdateAgentThoughtChunk
	case u.ToolCall != nil:
		return SessionUpdateToolCall
	case u.ToolCallUpdate != nil:
		return SessionUpdateToolCallUpdate
	case u.Plan != nil:
		return SessionUpdatePlan
	case u.AvailableCommandsUpdate != nil:
		return SessionUpdateAvailableCommandsUpdate
	case u.CurrentModeUpdate != nil:
		return SessionUpdateCurrentModeUpdate
	case u.ConfigOptionUpdate != nil:
		return SessionUpdateConfigOptionUpdate
	case u.SessionInfoUpdate != nil:
		return SessionUpdateSessionInfoUpdate
	case u.UsageUpdate != nil:
		return SessionUpdateUsageUpdate
	case u.Notice != nil:
		return SessionUpdateNotice
	case u.SubagentUpdate != nil:
		return SessionUpdateSubagentUpdate
	case u.PlanUpdate != nil:
		return SessionUpdatePlanUpdate
	case u.PlanRemoved != nil:
		return SessionUpdatePlanRemoved
	case u.SessionMessage != nil:
		return SessionUpdateSessionMessage
	case u.SessionMessageChunk != nil:
		return SessionUpdateSessionMessageChunk
	case u.CompactionUpdate != nil:
		return SessionUpdateCompactionUpdate
	case u.CompactionSummaryChunk != nil:
		return SessionUpdateCompactionSummaryChunk
	case u.ExecutionStateUpdate != nil:
		return SessionUpdateExecutionStateUpdate
	case u.RetryUpdate != nil:
		return SessionUpdateRetryUpdate
	case u.Unknown != nil:
		return u.Unknown.Tag
	}
	return ""
}

// MarshalJSON encodes the set variant with its "sessionUpdate".
func (u SessionUpdate) MarshalJSON() ([]byte, error) {
	return u.appendJSON(make([]byte, 0, u.sizeHint()))
}

// appendUpdateLine appends the whole wire line of a session/update
// notification for u, newline included. The outbox writes updates with it
// instead of jsonrpc2's Notify, which marshals params through a map and has
// encoding/json re-validate them: on the streaming hot path that costs more
// than everything else together.
func appendUpdateLine(dst []byte, sessionID string, u *SessionUpdate) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`...)
	dst = appendJSONString(dst, sessionID)
	dst = append(dst, `,"update":`...)
	dst, err := u.appendJSON(dst)
	if err != nil {
		return dst, err
	}
	return append(dst, "}}\n"...), nil
}

// sizeHint estimates the encoded size, to allocate the buffer once.
func (u *SessionUpdate) sizeHint() int {
	for _, c := range [...]*ContentChunk{u.AgentMessageChunk, u.AgentThoughtChunk, u.UserMessageChunk} {
		if c != nil && c.Content.Text != nil {
			return 80 + len(c.MessageID) + len(c.Content.Text.Text) + len(c.Content.Text.Text)/8
		}
	}
	return 256
}

func (u *SessionUpdate) appendJSON(dst []byte) ([]byte, error) {
	var b []byte
	var err error
	switch {
	case u.UserMessageChunk != nil:
		return appendChunk(dst, prefixUserMessageChunk, u.UserMessageChunk)
	case u.AgentMessageChunk != nil:
		return appendChunk(dst, prefixAgentMessageChunk, u.AgentMessageChunk)
	case u.AgentThoughtChunk != nil:
		return appendChunk(dst, prefixAgentThoughtChunk, u.AgentThoughtChunk)
	case u.ToolCall != nil:
		b, err = marshalTagged(prefixToolCall, u.ToolCall)
	case u.ToolCallUpdate != nil:
		b, err = marshalTagged(prefixToolCallUpdate, u.ToolCallUpdate)
	case u.Plan != nil:
		b, err = marshalTagged(prefixPlan, u.Plan)
	case u.AvailableCommandsUpdate != nil:
		b, err = marshalTagged(prefixAvailableCommandsUpdate, u.AvailableCommandsUpdate)
	case u.CurrentModeUpdate != nil:
		b, err = marshalTagged(prefixCurrentModeUpdate, u.CurrentModeUpdate)
	case u.ConfigOptionUpdate != nil:
		b, err = marshalTagged(prefixConfigOptionUpdate, u.ConfigOptionUpdate)
	case u.SessionInfoUpdate != nil:
		b, err = marshalTagged(prefixSessionInfoUpdate, u.SessionInfoUpdate)
	case u.UsageUpdate != nil:
		b, err = marshalTagged(prefixUsageUpdate, u.UsageUpdate)
	case u.Notice != nil:
		b, err = marshalTagged(prefixNotice, u.Notice)
	case u.SubagentUpdate != nil:
		b, err = marshalTagged(prefixSubagentUpdate, u.SubagentUpdate)
	case u.PlanUpdate != nil:
		b, err = marshalTagged(prefixPlanUpdate, u.PlanUpdate)
	case u.PlanRemoved != nil:
		b, err = marshalTagged(prefixPlanRemoved, u.PlanRemoved)
	case u.SessionMessage != nil:
		b, err = marshalTagged(prefixSessionMessage, u.SessionMessage)
	case u.SessionMessageChunk != nil:
		b, err = marshalTagged(prefixSessionMessageChunk, u.SessionMessageChunk)
	case u.CompactionUpdate != nil:
		b, err = marshalTagged(prefixCompactionUpdate, u.CompactionUpdate)
	case u.CompactionSummaryChunk != nil:
		b, err = marshalTagged(prefixCompactionSummaryChunk, u.CompactionSummaryChunk)
	case u.ExecutionStateUpdate != nil:
		b, err = marshalTagged(prefixExecutionStateUpdate, u.ExecutionStateUpdate)
	case u.RetryUpdate != nil:
		b, err = marshalTagged(prefixRetryUpdate, u.RetryUpdate)
	case u.Unknown != nil:
		b, err = u.Unknown.marshal("SessionUpdate")
	default:
		err = emptyUnionError("SessionUpdate")
	}
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// appendChunk writes a content chunk variant directly (the streaming hot
// path), in the member order of the generic encoding.
func appendChunk(dst []byte, prefix string, c *ContentChunk) ([]byte, error) {
	if c.Meta != nil {
		b, err := marshalTagged(prefix, c)
		if err != nil {
			return nil, err
		}
		return append(dst, b...), nil
	}
	dst = append(dst, prefix...)
	dst = append(dst, `,"content":`...)
	dst, err := c.Content.appendJSON(dst)
	if err != nil {
		return nil, err
	}
	if c.MessageID != "" {
		dst = append(dst, `,"messageId":`...)
		dst = appendJSONString(dst, c.MessageID)
	}
	return append(dst, '}'), nil
}

// UnmarshalJSON decodes by "sessionUpdate"; unknown values go to Unknown.
func (u *SessionUpdate) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	tag, err := requireTag(data, "sessionUpdate", "update")
	if err != nil {
		return err
	}
	*u = SessionUpdate{}
	switch tag {
	case SessionUpdateUserMessageChunk:
		u.UserMessageChunk, err = decodeVariant[ContentChunk](data)
	case SessionUpdateAgentMessageChunk:
		u.AgentMessageChunk, err = decodeVariant[ContentChunk](data)
	case SessionUpdateAgentThoughtChunk:
		u.AgentThoughtChunk, err = decodeVariant[ContentChunk](data)
	case SessionUpdateToolCall:
		u.ToolCall, err = decodeVariant[ToolCall](data)
	case SessionUpdateToolCallUpdate:
		u.ToolCallUpdate, err = decodeVariant[ToolCallUpdate](data)
	case SessionUpdatePlan:
		u.Plan, err = decodeVariant[Plan](data)
	case SessionUpdateAvailableCommandsUpdate:
		u.AvailableCommandsUpdate, err = decodeVariant[AvailableCommandsUpdate](data)
	case SessionUpdateCurrentModeUpdate:
		u.CurrentModeUpdate, err = decodeVariant[CurrentModeUpdate](data)
	case SessionUpdateConfigOptionUpdate:
		u.ConfigOptionUpdate, err = decodeVariant[ConfigOptionUpdate](data)
	case SessionUpdateSessionInfoUpdate:
		u.SessionInfoUpdate, err = decodeVariant[SessionInfoUpdate](data)
	case SessionUpdateUsageUpdate:
		u.UsageUpdate, err = decodeVariant[UsageUpdate](data)
	case SessionUpdateNotice:
		u.Notice, err = decodeVariant[Notice](data)
	case SessionUpdateSubagentUpdate:
		u.SubagentUpdate, err = decodeVariant[SubagentUpdate](data)
	case SessionUpdatePlanUpdate:
		u.PlanUpdate, err = decodeVariant[PlanUpdate](data)
	case SessionUpdatePlanRemoved:
		u.PlanRemoved, err = decodeVariant[PlanRemoved](data)
	case SessionUpdateSessionMessage:
		u.SessionMessage, err = decodeVariant[SessionMessage](data)
	case SessionUpdateSessionMessageChunk:
		u.SessionMessageChunk, err = decodeVariant[SessionMessageChunk](data)
	case SessionUpdateCompactionUpdate:
		u.CompactionUpdate, err = decodeVariant[CompactionUpdate](data)
	case SessionUpdateCompactionSummaryChunk:
		u.CompactionSummaryChunk, err = decodeVariant[CompactionSummaryChunk](data)
	case SessionUpdateExecutionStateUpdate:
		u.ExecutionStateUpdate, err = decodeVariant[ExecutionStateUpdate](data)
	case SessionUpdateRetryUpdate:
		u.RetryUpdate, err = decodeVariant[RetryUpdate](data)
	default:
		u.Unknown = &UnknownVariant{Tag: tag, Raw: cloneRaw(data)}
	}
	return err
}

// ContentChunk is a streamed piece of a user, agent or thought message.
// Chunks with the same MessageID belong to one message.
type ContentChunk struct {
	Content   ContentBlock    `json:"content"`
	MessageID MessageId       `json:"messageId,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// ToolCall announces a new tool call (session update "tool_call").
type ToolCall struct {
	ToolCallID ToolCallId `json:"toolCallId"`
	Title      string     `json:"title"`
	// Name is the tool's programmatic name (SDK 2.4.0 stable; unstable in
	// the repo schema).
	Name      string             `json:"name,omitempty"`
	Kind      ToolKind           `json:"kind,omitempty"`   // default "other"
	Status    ToolCallStatus     `json:"status,omitempty"` // default "pending"
	Content   []ToolCallContent  `json:"content,omitzero"`
	Locations []ToolCallLocation `json:"locations,omitzero"`
	RawInput  json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput json.RawMessage    `json:"rawOutput,omitempty"`
	Meta      json.RawMessage    `json:"_meta,omitempty"`
}

// ToolCallUpdate changes fields of an existing tool call (session update
// "tool_call_update", and RequestPermissionRequest.toolCall). Empty fields
// are omitted and mean "unchanged". Content and Locations replace the whole
// collection when non-nil: a non-nil empty slice is sent as [] and clears it.
type ToolCallUpdate struct {
	ToolCallID ToolCallId         `json:"toolCallId"`
	Title      string             `json:"title,omitempty"`
	Name       string             `json:"name,omitempty"` // SDK 2.4.0 stable
	Kind       ToolKind           `json:"kind,omitempty"`
	Status     ToolCallStatus     `json:"status,omitempty"`
	Content    []ToolCallContent  `json:"content,omitzero"`
	Locations  []ToolCallLocation `json:"locations,omitzero"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	Meta       json.RawMessage    `json:"_meta,omitempty"`
}

// ToolCallContent is content produced by a tool call (tag "type").
type ToolCallContent struct {
	Content  *Content  // "content"
	Diff     *Diff     // "diff"
	Terminal *Terminal // "terminal"
	Unknown  *UnknownVariant
}

// ToolCallContent tags.
const (
	ToolCallContentContent  = "content"
	ToolCallContentDiff     = "diff"
	ToolCallContentTerminal = "terminal"
)

var (
	prefixToolCallContentContent  = unionPrefix("type", ToolCallContentContent)
	prefixToolCallContentDiff     = unionPrefix("type", ToolCallContentDiff)
	prefixToolCallContentTerminal = unionPrefix("type", ToolCallContentTerminal)
)

// Tag returns the "type" of the set variant, or "" when none is set.
func (c ToolCallContent) Tag() string {
	switch {
	case c.Content != nil:
		return ToolCallContentContent
	case c.Diff != nil:
		return ToolCallContentDiff
	case c.Terminal != nil:
		return ToolCallContentTerminal
	case c.Unknown != nil:
		return c.Unknown.Tag
	}
	return ""
}

// MarshalJSON encodes the set variant with its "type".
func (c ToolCallContent) MarshalJSON() ([]byte, error) {
	switch {
	case c.Content != nil:
		return marshalTagged(prefixToolCallContentContent, c.Content)
	case c.Diff != nil:
		return marshalTagged(prefixToolCallContentDiff, c.Diff)
	case c.Terminal != nil:
		return marshalTagged(prefixToolCallContentTerminal, c.Terminal)
	case c.Unknown != nil:
		return c.Unknown.marshal("ToolCallContent")
	}
	return nil, emptyUnionError("ToolCallContent")
}

// UnmarshalJSON decodes by "type"; unknown types go to Unknown.
func (c *ToolCallContent) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	tag, err := requireTag(data, "type", "tool call content")
	if err != nil {
		return err
	}
	*c = ToolCallContent{}
	switch tag {
	case ToolCallContentContent:
		c.Content, err = decodeVariant[Content](data)
	case ToolCallContentDiff:
		c.Diff, err = decodeVariant[Diff](data)
	case ToolCallContentTerminal:
		c.Terminal, err = decodeVariant[Terminal](data)
	default:
		c.Unknown = &UnknownVariant{Tag: tag, Raw: cloneRaw(data)}
	}
	return err
}

// Content is a content block in a tool call.
type Content struct {
	Content ContentBlock    `json:"content"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// Diff is a file modification shown in a tool call. OldText nil means a new
// file; the schema makes an omitted and a null oldText equivalent, so nil is
// sent as an omitted member.
type Diff struct {
	Path    string          `json:"path"`
	OldText *string         `json:"oldText,omitempty"`
	NewText string          `json:"newText"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// Terminal embeds a terminal's live output in a tool call.
type Terminal struct {
	TerminalID TerminalId      `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// ToolCallLocation is a file (and line, 1-based) a tool call works on.
type ToolCallLocation struct {
	Path string          `json:"path"`
	Line *uint32         `json:"line,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Plan is the agent's complete execution plan; the client replaces its
// plan with each one.
type Plan struct {
	Entries []PlanEntry     `json:"entries"` // required: nil encodes as []
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil Entries as [].
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	p.Entries = nonNil(p.Entries)
	return json.Marshal(plain(p))
}

// PlanEntry is one task of a plan.
type PlanEntry struct {
	Content  string            `json:"content"`
	Priority PlanEntryPriority `json:"priority"`
	Status   PlanEntryStatus   `json:"status"`
	Meta     json.RawMessage   `json:"_meta,omitempty"`
}

// AvailableCommandsUpdate is the complete list of slash commands.
type AvailableCommandsUpdate struct {
	AvailableCommands []AvailableCommand `json:"availableCommands"` // nil encodes as []
	Meta              json.RawMessage    `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil AvailableCommands as [].
func (u AvailableCommandsUpdate) MarshalJSON() ([]byte, error) {
	type plain AvailableCommandsUpdate
	u.AvailableCommands = nonNil(u.AvailableCommands)
	return json.Marshal(plain(u))
}

// AvailableCommand is a slash command the user can run ("/name input").
type AvailableCommand struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Input       *AvailableCommandInput `json:"input,omitempty"`
	Meta        json.RawMessage        `json:"_meta,omitempty"`
}

// AvailableCommandInput describes a command's input. It is an untagged
// union whose only known variant is unstructured text (an object with
// "hint"); other shapes go to Unknown.
type AvailableCommandInput struct {
	Unstructured *UnstructuredCommandInput
	Unknown      *UnknownVariant
}

// MarshalJSON encodes the set variant.
func (i AvailableCommandInput) MarshalJSON() ([]byte, error) {
	switch {
	case i.Unstructured != nil:
		return json.Marshal(i.Unstructured)
	case i.Unknown != nil:
		return i.Unknown.marshal("AvailableCommandInput")
	}
	return nil, emptyUnionError("AvailableCommandInput")
}

// UnmarshalJSON decodes an object with "hint" as Unstructured.
func (i *AvailableCommandInput) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	var probe struct {
		Hint *json.RawMessage `json:"hint"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return fmt.Errorf("input: %w", err)
	}
	*i = AvailableCommandInput{}
	if probe.Hint == nil {
		i.Unknown = &UnknownVariant{Raw: cloneRaw(data)}
		return nil
	}
	var err error
	i.Unstructured, err = decodeVariant[UnstructuredCommandInput](data)
	return err
}

// UnstructuredCommandInput is free-text command input with a hint shown
// while the user has not typed it yet.
type UnstructuredCommandInput struct {
	Hint string          `json:"hint"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// CurrentModeUpdate reports that the session's mode changed.
type CurrentModeUpdate struct {
	CurrentModeID SessionModeId   `json:"currentModeId"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// ConfigOptionUpdate is the complete, current list of config options.
type ConfigOptionUpdate struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"` // nil encodes as []
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil ConfigOptions as [].
func (u ConfigOptionUpdate) MarshalJSON() ([]byte, error) {
	type plain ConfigOptionUpdate
	u.ConfigOptions = nonNil(u.ConfigOptions)
	return json.Marshal(plain(u))
}

// SessionInfoUpdate changes session metadata. For each field, absent means
// unchanged, Null clears it and a value replaces it.
type SessionInfoUpdate struct {
	Title     Nullable[string] `json:"title,omitzero"`
	UpdatedAt Nullable[string] `json:"updatedAt,omitzero"` // ISO 8601
	Meta      json.RawMessage  `json:"_meta,omitempty"`
}

// UsageUpdate reports context window usage (tokens) and optionally cost.
type UsageUpdate struct {
	Used uint64          `json:"used"`
	Size uint64          `json:"size"`
	Cost *Cost           `json:"cost,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Cost is a cumulative session cost.
type Cost struct {
	Amount   float64         `json:"amount"`
	Currency string          `json:"currency"` // ISO 4217, e.g. "USD"
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// SubagentUpdate announces a child session the session created and owns,
// or changes its display metadata or state (SDK 2.4.0 unstable; sent only
// to clients that advertise subagents). The announcement comes before any
// of the child's own traffic.
type SubagentUpdate struct {
	SessionID   SessionId `json:"sessionId"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description,omitempty"`
	// Capabilities are the client's mutations allowed on the child
	// (cancel); never sent means none.
	Capabilities *SubagentSessionCapabilities `json:"capabilities,omitempty"`
	State        *SubagentState               `json:"state,omitempty"`
	CWD          string                       `json:"cwd,omitempty"`
	Meta         json.RawMessage              `json:"_meta,omitempty"`
}

// SubagentSessionCapabilities are the mutations a client may make to a
// child session: Cancel (session/cancel naming the child).
type SubagentSessionCapabilities struct {
	Cancel *struct{} `json:"cancel,omitempty"`
}

// SubagentState is a child's foreground state: running, idle,
// requires_action or unknown.
type SubagentState struct {
	State string `json:"state"`
}

// Notice is a fire-and-forget message for the user (SDK 2.4.0 stable; send
// only when clientCapabilities.session.notices is set).
type Notice struct {
	Severity    NoticeSeverity  `json:"severity"`
	Title       string          `json:"title"` // non-empty
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// CompactionUpdate creates or patches a context compaction (SDK 2.4.0
// stable; send only when clientCapabilities.session.compaction is set).
// Summary, Error and Meta have patch semantics: absent = unchanged, null =
// clear (a nil Meta is absent; json.RawMessage("null") is null).
type CompactionUpdate struct {
	CompactionID CompactionId             `json:"compactionId"`
	Status       CompactionStatus         `json:"status"`
	Summary      Nullable[[]ContentBlock] `json:"summary,omitzero"`
	Error        Nullable[string]         `json:"error,omitzero"`
	Meta         json.RawMessage          `json:"_meta,omitempty"`
}

// CompactionSummaryChunk appends one block to a compaction's summary (SDK
// 2.4.0 stable).
type CompactionSummaryChunk struct {
	CompactionID CompactionId    `json:"compactionId"`
	Content      ContentBlock    `json:"content"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}
