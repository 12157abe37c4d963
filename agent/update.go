package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// Update is one thing a session reports while it works, in order: chunks
// of the messages, tool calls and their progress, the plan, usage,
// compaction, execution states, the title, and the end of each turn. It
// is the session's one event stream: the UpdateSink gets every update,
// and the Go output stream (Subscribe) is derived from the same ones.
// Exactly the fields its Kind names are set.
type Update struct {
	Kind UpdateKind
	// Text is the chunk of UpdateUserMessage, UpdateMessage and
	// UpdateThought; MessageID groups the chunks of one model response.
	Text      string
	MessageID string
	// ToolCall: UpdateToolCall (a new call) and UpdateToolCallProgress
	// (its ID and what changed).
	ToolCall   *ToolCallUpdate
	Plan       *Plan           // UpdatePlan
	Usage      *ContextUsage   // UpdateUsage
	Title      *TitleChange    // UpdateTitle
	Compaction *Compaction     // UpdateCompaction, UpdateCompactionSummary
	State      *ExecutionState // UpdateExecutionState
	Retry      *RetryInfo      // UpdateRetry
	Notice     *Notice         // UpdateNotice
	Turn       *TurnEnd        // UpdateTurnEnded
}

// UpdateKind names what an Update reports.
type UpdateKind string

const (
	UpdateUserMessage       UpdateKind = "user_message"       // a user message that did not come with a prompt (steer, follow-up)
	UpdateMessage           UpdateKind = "message"            // assistant text
	UpdateThought           UpdateKind = "thought"            // reasoning text
	UpdateToolCall          UpdateKind = "tool_call"          // a tool call was made
	UpdateToolCallProgress  UpdateKind = "tool_call_progress" // a tool call changed: status, content
	UpdatePlan              UpdateKind = "plan"               // the whole plan, replacing the previous one
	UpdateUsage             UpdateKind = "usage"              // context use and cost after a model call
	UpdateTitle             UpdateKind = "title"              // the session's title changed
	UpdateCompaction        UpdateKind = "compaction"         // a compaction started, finished or failed
	UpdateCompactionSummary UpdateKind = "compaction_summary" // the summary a compaction produced
	UpdateExecutionState    UpdateKind = "execution_state"    // a prompt's state (opt-in: SessionConfig.ExecutionStates)
	UpdateRetry             UpdateKind = "retry"              // a model call is retried (opt-in, as above)
	UpdateNotice            UpdateKind = "notice"             // something the user should know (an MCP server failed)
	UpdateTurnEnded         UpdateKind = "turn_ended"         // a turn ended (also when it failed)
	UpdateDeleted           UpdateKind = "deleted"            // the session was deleted; nothing follows
)

// ToolKind says what a tool call does, for the client's icon and grouping.
type ToolKind string

const (
	ToolKindRead       ToolKind = "read"
	ToolKindEdit       ToolKind = "edit"
	ToolKindDelete     ToolKind = "delete"
	ToolKindMove       ToolKind = "move"
	ToolKindSearch     ToolKind = "search"
	ToolKindExecute    ToolKind = "execute"
	ToolKindThink      ToolKind = "think"
	ToolKindFetch      ToolKind = "fetch"
	ToolKindSwitchMode ToolKind = "switch_mode"
	ToolKindOther      ToolKind = "other"
)

// ToolStatus is where a tool call is.
type ToolStatus string

const (
	ToolPending    ToolStatus = "pending"
	ToolInProgress ToolStatus = "in_progress"
	ToolCompleted  ToolStatus = "completed"
	ToolFailed     ToolStatus = "failed"
)

// ToolCallUpdate describes a tool call, or (UpdateToolCallProgress) what
// changed about it: empty fields are unchanged.
type ToolCallUpdate struct {
	ID        string
	Name      string
	Title     string
	Kind      ToolKind
	Status    ToolStatus
	Locations []Location
	// RawInput is the arguments as JSON (a JSON string when the model's
	// arguments were not JSON); Arguments is the model's text.
	RawInput  json.RawMessage
	Arguments string
	Content   []ToolContent
	// Result is what the model gets back, on the update that finishes
	// the call (status completed or failed).
	Result string
}

// Location is a file (and line, 1-based) a tool call works on.
type Location struct {
	Path string
	Line *uint32
}

// ToolContent is one item shown on a tool call: a content block, a diff,
// or a live terminal. Exactly one is set.
type ToolContent struct {
	Block      *ContentBlock
	Diff       *Diff
	TerminalID string
}

// TextContent is tool content holding text.
func TextContent(text string) ToolContent {
	return ToolContent{Block: &ContentBlock{Type: BlockText, Text: text}}
}

// BlockType is the kind of a ContentBlock.
type BlockType string

const (
	BlockText         BlockType = "text"
	BlockImage        BlockType = "image"
	BlockAudio        BlockType = "audio"
	BlockResourceLink BlockType = "resource_link" // a resource named by URI
	BlockResource     BlockType = "resource"      // a text resource, embedded
)

// ContentBlock is content shown to the user: text, an image or audio
// (base64 Data), a link to a resource, or an embedded text resource.
type ContentBlock struct {
	Type BlockType
	// Text is a text block's text or an embedded resource's.
	Text     string
	MIMEType string
	Data     string
	// URI, Name, Title, Description and Size describe a resource.
	URI, Name, Title, Description string
	Size                          *int64
}

// Diff is a file change: OldText nil means a new file.
type Diff struct {
	Path    string
	OldText *string
	NewText string
}

// Plan is the agent's whole execution plan: a checklist (Entries), or a
// text the user reads (Markdown, or a file holding it, named by its URI:
// the plan a read-only session proposes), or both. A session has one
// plan: each replaces the one before, and an empty one clears it.
type Plan struct {
	Entries  []PlanEntry
	Markdown string
	URI      string
}

// Empty reports whether p clears the plan: no entries and no text.
func (p *Plan) Empty() bool {
	return p == nil || (len(p.Entries) == 0 && p.Markdown == "" && p.URI == "")
}

// PlanEntry is one step of a plan. Priority is high, medium or low;
// Status pending, in_progress or completed.
type PlanEntry struct {
	Content  string
	Priority string
	Status   string
}

// ContextUsage is how much of the model's context window the
// conversation uses, and the session's cost so far when the model is
// priced.
type ContextUsage struct {
	Used, Size uint64
	Cost       *Cost
}

// Cost is an amount of money.
type Cost struct {
	Amount   float64
	Currency string
}

// TitleChange is a session's new title.
type TitleChange struct {
	Title     string
	UpdatedAt time.Time
}

// CompactionStatus is where a compaction is.
type CompactionStatus string

const (
	CompactionInProgress CompactionStatus = "in_progress"
	CompactionCompleted  CompactionStatus = "completed"
	CompactionFailed     CompactionStatus = "failed"
)

// Compaction reports a compaction of the history: its status (and error),
// or (UpdateCompactionSummary) the summary it produced.
type Compaction struct {
	ID      string
	Status  CompactionStatus
	Error   string
	Summary string
}

// ExecState is a prompt's execution state.
type ExecState string

const (
	ExecQueued    ExecState = "queued"
	ExecRunning   ExecState = "running"
	ExecRetrying  ExecState = "retrying"
	ExecCompleted ExecState = "completed"
	ExecFailed    ExecState = "failed"
	ExecCancelled ExecState = "cancelled"
	ExecTimedOut  ExecState = "timed_out"
)

// ExecutionState is a prompt's state, with the retry attempt and a
// message where they apply.
type ExecutionState struct {
	State   ExecState
	Attempt *int
	Message string
}

// RetryInfo describes a retry of a model call.
type RetryInfo struct {
	Attempt, MaxAttempts int
	Reason               string
}

// Notice is something to tell the user outside the conversation.
type Notice struct {
	Severity    string // "info", "warning" or "error"
	Title       string
	Description string
}

// TurnEnd is how a turn ended.
type TurnEnd struct {
	StopReason StopReason
	Text       string
	Usage      llm.Usage
	Err        string
	// TotalCost is the session's cost so far (nil while nothing was
	// priced); Duration how long the turn ran.
	TotalCost *float64
	Duration  time.Duration
}

// StopReason is why a turn ended.
type StopReason string

const (
	StopEndTurn         StopReason = "end_turn"
	StopMaxTokens       StopReason = "max_tokens"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopRefusal         StopReason = "refusal"
	StopCancelled       StopReason = "cancelled"
)

// UpdateSink receives a session's updates in order. Update may block
// (backpressure); it fails when ctx is done.
type UpdateSink interface {
	Update(ctx context.Context, u Update) error
}

// PostSink is an UpdateSink that can also queue an update without
// waiting for room. Updates sent from a caller's goroutine (execution
// states, notices) use it when the sink has it, because that goroutine
// may be a connection's read loop, which must never block.
type PostSink interface {
	Post(u Update) error
}
