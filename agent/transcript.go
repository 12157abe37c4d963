package agent

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// EntryKind is the kind of a transcript entry.
type EntryKind string

const (
	// EntryUser is a user message.
	EntryUser EntryKind = "user"
	// EntryAssistant is assistant text (and its reasoning).
	EntryAssistant EntryKind = "assistant"
	// EntryToolCalls is the set of tool calls one model response made.
	EntryToolCalls EntryKind = "tool_calls"
	// EntryToolOutput is the result of one tool call.
	EntryToolOutput EntryKind = "tool_output"
)

// Entry is one item of a session's transcript. Entries are immutable once
// appended, so forks share them instead of copying them.
type Entry struct {
	Kind EntryKind `json:"kind"`
	// Content is the message of EntryUser and EntryAssistant entries (and
	// the output of EntryToolOutput entries, as text).
	Content []llm.Part `json:"-"`
	// Text is Content's text, kept for display and previews.
	Text      string `json:"text,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
	// ReasoningSignature and RedactedReasoning are the provider's opaque
	// tokens for the reasoning, sent back unchanged (Anthropic requires
	// them on tool turns with thinking).
	ReasoningSignature string         `json:"reasoningSignature,omitempty"`
	RedactedReasoning  []string       `json:"redactedReasoning,omitempty"`
	ToolCalls          []llm.ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID, ToolName and IsError describe an EntryToolOutput.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	IsError    bool   `json:"isError,omitempty"`
	// Source says how a user message arrived: "prompt", or a pending
	// source ("prompt_follow_up", "steer", "follow_up").
	Source string    `json:"source,omitempty"`
	Time   time.Time `json:"time"`
	// Reminder, on a user entry, tells the model what changed in the
	// session since its system prompt was built (the mode, the skills):
	// sent as a user-role message before the entry's, never shown as
	// the user's. It is not stored: a loaded session's system prompt is
	// built afresh.
	Reminder string `json:"reminder,omitempty"`
	// Display is how a tool output's call was shown to the client, for
	// session/load to show it again.
	Display *ToolDisplay `json:"-"`
	// Typed, on a user entry a slash command defined in a file (or a
	// skill) expanded to, is the command as the user typed it ("/review
	// main.go"): the model gets the expansion (Content), the user is
	// shown this again (Shown).
	Typed string `json:"-"`
	// MessageID is a user or assistant message's id, the one its updates
	// carried (Update.MessageID, PromptOptions.MessageID): stored, so a
	// replay shows the message under the same id ("" in files written
	// before ids were kept).
	MessageID string `json:"-"`
}

// forkable reports whether a fork can start from e: a user message with
// text the user wrote (not blank, not only images, not a summary).
func (e *Entry) forkable() bool {
	return e.Kind == EntryUser && e.Source != SourceSummary && strings.TrimSpace(e.Text) != ""
}

// UserEntry returns a user entry with text.
func UserEntry(text string) Entry {
	return Entry{Kind: EntryUser, Content: []llm.Part{llm.TextPart(text)}, Text: text, Source: "prompt", Time: time.Now()}
}

// AssistantEntry returns an assistant entry with text.
func AssistantEntry(text string) Entry {
	return Entry{Kind: EntryAssistant, Content: []llm.Part{llm.TextPart(text)}, Text: text, Time: time.Now()}
}

// transcript is the ordered entries plus counters kept up to date on
// append, so Stats is O(1). Not safe for concurrent use (Session.mu).
type transcript struct {
	entries []*Entry
	counts  entryCounts
}

type entryCounts struct {
	user, assistant, toolCalls, toolResults int
	lastUpdated                             time.Time
}

func (c *entryCounts) add(e *Entry) {
	switch e.Kind {
	case EntryUser:
		if e.Source != SourceSummary { // the summary is not a user message
			c.user++
		}
	case EntryAssistant:
		c.assistant++
	case EntryToolCalls:
		c.toolCalls += len(e.ToolCalls)
	case EntryToolOutput:
		c.toolResults++
	}
	if e.Time.After(c.lastUpdated) {
		c.lastUpdated = e.Time
	}
}

func (t *transcript) append(e Entry) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.FillText()
	t.entries = append(t.entries, &e)
	t.counts.add(&e)
}

// prefix returns a transcript of the first n entries, sharing them.
func (t *transcript) prefix(n int) transcript {
	p := transcript{entries: make([]*Entry, n, n+16)}
	copy(p.entries, t.entries[:n])
	if n == len(t.entries) {
		p.counts = t.counts
		return p
	}
	for _, e := range p.entries {
		p.counts.add(e)
	}
	return p
}

// FillText sets Text, when it is empty, to the text of Content's text
// parts, as a transcript holds an entry (a stored user or assistant
// entry keeps only its parts).
func (e *Entry) FillText() {
	if e.Text == "" && len(e.Content) > 0 {
		e.Text = partsText(e.Content)
	}
}

func partsText(parts []llm.Part) string {
	var s string
	for _, p := range parts {
		if p.Type == llm.PartText {
			if s != "" {
				s += "\n"
			}
			s += p.Text
		}
	}
	return s
}

// messages turns the transcript into the model's conversation: an
// assistant entry and the tool calls after it form one assistant message.
func (t *transcript) messages() []llm.Message {
	out := make([]llm.Message, 0, len(t.entries))
	for _, e := range t.entries {
		switch e.Kind {
		case EntryUser:
			if e.Reminder != "" {
				out = append(out, llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(e.Reminder)}})
			}
			out = append(out, llm.Message{Role: llm.RoleUser, Content: e.Content})
		case EntryAssistant:
			out = append(out, llm.Message{Role: llm.RoleAssistant, Content: e.Content, Reasoning: e.Reasoning,
				ReasoningSignature: e.ReasoningSignature, RedactedReasoning: e.RedactedReasoning})
		case EntryToolCalls:
			if n := len(out); n > 0 && out[n-1].Role == llm.RoleAssistant && len(out[n-1].ToolCalls) == 0 {
				out[n-1].ToolCalls = e.ToolCalls
			} else {
				out = append(out, llm.Message{Role: llm.RoleAssistant, ToolCalls: e.ToolCalls})
			}
		case EntryToolOutput:
			content := []llm.Part{llm.TextPart(e.Text)}
			if hasImage(e.Content) {
				content = e.Content // the text, then the images the tool returned
			}
			out = append(out, llm.Message{Role: llm.RoleTool, Content: content, ToolCallID: e.ToolCallID, ToolName: e.ToolName, IsError: e.IsError})
		}
	}
	return out
}

// EventSource says where an Event comes from.
type EventSource string

const (
	EventSourceTranscript EventSource = "transcript"
	EventSourceSession    EventSource = "session"
)

// Event is a structured view of the transcript (seed 000 scenario 9).
type Event struct {
	Type   string      `json:"type"` // message, tool_call, tool_execution_update, tool_result, pending_message
	Source EventSource `json:"source"`
	// EntryIndex is the transcript entry the event comes from (nil for
	// session events). Events of one entry share it.
	EntryIndex *int   `json:"entryIndex,omitempty"`
	Role       string `json:"role,omitempty"`
	Text       string `json:"text,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	Arguments  string `json:"arguments,omitempty"`
	Status     string `json:"status,omitempty"` // started, completed, failed; queued, resolved, failed
	// PendingSource and Error describe a pending_message session event.
	PendingSource PendingSource `json:"pendingSource,omitempty"`
	Error         string        `json:"error,omitempty"`
	Time          time.Time     `json:"time"`
}

func (t *transcript) events() []Event {
	var out []Event
	for i, e := range t.entries {
		idx := i
		base := Event{Source: EventSourceTranscript, EntryIndex: &idx, Time: e.Time}
		switch e.Kind {
		case EntryUser, EntryAssistant:
			ev := base
			ev.Type, ev.Role, ev.Text = "message", string(e.Kind), e.Text
			out = append(out, ev)
		case EntryToolCalls:
			for _, c := range e.ToolCalls {
				call := base
				call.Type, call.ToolCallID, call.ToolName, call.Arguments = "tool_call", c.ID, c.Name, c.Arguments
				started := base
				started.Type, started.ToolCallID, started.ToolName, started.Status = "tool_execution_update", c.ID, c.Name, "started"
				out = append(out, call, started)
			}
		case EntryToolOutput:
			res := base
			res.Type, res.ToolCallID, res.ToolName, res.Text = "tool_result", e.ToolCallID, e.ToolName, e.Text
			done := base
			done.Type, done.ToolCallID, done.ToolName, done.Status = "tool_execution_update", e.ToolCallID, e.ToolName, "completed"
			if e.IsError {
				done.Status = "failed"
			}
			out = append(out, res, done)
		}
	}
	return out
}

// ToolDisplay is how a finished tool call was shown to the client, kept
// with its output so a reloaded session can show it again.
type ToolDisplay struct {
	Title     string
	Kind      ToolKind
	Locations []Location
	RawInput  json.RawMessage
	Content   []ToolContent
}

// Messages is the conversation a model is sent for entries.
func Messages(entries []Entry) []llm.Message {
	var tr transcript
	for _, e := range entries {
		tr.append(e)
	}
	return tr.messages()
}

// Shown is a user entry's content as the user wrote it: a slash command's
// line (Typed) in place of the prompt it expanded to, then what they
// attached; otherwise the content itself.
func (e *Entry) Shown() []llm.Part {
	if e.Typed == "" || len(e.Content) == 0 || e.Content[0].Type != llm.PartText {
		return e.Content
	}
	return append([]llm.Part{llm.TextPart(e.Typed)}, e.Content[1:]...)
}
