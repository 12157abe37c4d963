package acp

import (
	"encoding/json"
)

// This file holds the session updates of plan operations and of messages
// between sessions (SDK 2.4.0 unstable schema; stabilised on 2026-11-20):
// plan_update and plan_removed, sent only to clients that advertise
// clientCapabilities.plan, and session_message and session_message_chunk,
// sent only to clients that advertise clientCapabilities.subagents.

// PlanCapabilities marks a client that takes plan_update and
// plan_removed (clientCapabilities.plan).
type PlanCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PlanId names one plan of a session.
type PlanId = string

// PlanUpdate is a plan's whole new content (session update
// "plan_update"); the client replaces the plan with that id.
type PlanUpdate struct {
	Plan PlanUpdateContent `json:"plan"`
	Meta json.RawMessage   `json:"_meta,omitempty"`
}

// PlanRemoved dismisses a plan (session update "plan_removed").
type PlanRemoved struct {
	PlanID PlanId          `json:"planId"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// PlanUpdateContent is a plan in one of its forms (tag "type"): Items (a
// checklist, as the v1 plan update), Markdown, or File (a URI of a file
// holding it). Exactly one is set.
type PlanUpdateContent struct {
	Items    *PlanItems    // "items"
	Markdown *PlanMarkdown // "markdown"
	File     *PlanFile     // "file"
	Unknown  *UnknownVariant
}

// PlanUpdateContent tags.
const (
	PlanTypeItems    = "items"
	PlanTypeMarkdown = "markdown"
	PlanTypeFile     = "file"
)

var (
	prefixPlanItems    = unionPrefix("type", PlanTypeItems)
	prefixPlanMarkdown = unionPrefix("type", PlanTypeMarkdown)
	prefixPlanFile     = unionPrefix("type", PlanTypeFile)
)

// ID is the plan's id, whatever its form.
func (c PlanUpdateContent) ID() PlanId {
	switch {
	case c.Items != nil:
		return c.Items.PlanID
	case c.Markdown != nil:
		return c.Markdown.PlanID
	case c.File != nil:
		return c.File.PlanID
	}
	return ""
}

// MarshalJSON encodes the set variant with its "type".
func (c PlanUpdateContent) MarshalJSON() ([]byte, error) {
	switch {
	case c.Items != nil:
		return marshalTagged(prefixPlanItems, c.Items)
	case c.Markdown != nil:
		return marshalTagged(prefixPlanMarkdown, c.Markdown)
	case c.File != nil:
		return marshalTagged(prefixPlanFile, c.File)
	case c.Unknown != nil:
		return c.Unknown.marshal("PlanUpdateContent")
	}
	return nil, emptyUnionError("PlanUpdateContent")
}

// UnmarshalJSON decodes by "type"; unknown types go to Unknown.
func (c *PlanUpdateContent) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	tag, err := requireTag(data, "type", "plan")
	if err != nil {
		return err
	}
	*c = PlanUpdateContent{}
	switch tag {
	case PlanTypeItems:
		c.Items, err = decodeVariant[PlanItems](data)
	case PlanTypeMarkdown:
		c.Markdown, err = decodeVariant[PlanMarkdown](data)
	case PlanTypeFile:
		c.File, err = decodeVariant[PlanFile](data)
	default:
		c.Unknown = &UnknownVariant{Tag: tag, Raw: cloneRaw(data)}
	}
	return err
}

// PlanItems is a plan as a checklist: the complete list of entries.
type PlanItems struct {
	PlanID  PlanId          `json:"planId"`
	Entries []PlanEntry     `json:"entries"` // required: nil encodes as []
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil Entries as [].
func (p PlanItems) MarshalJSON() ([]byte, error) {
	type plain PlanItems
	p.Entries = nonNil(p.Entries)
	return json.Marshal(plain(p))
}

// PlanMarkdown is a plan as Markdown text.
type PlanMarkdown struct {
	PlanID  PlanId          `json:"planId"`
	Content string          `json:"content"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// PlanFile is a plan held in a file, named by its URI.
type PlanFile struct {
	PlanID PlanId          `json:"planId"`
	URI    string          `json:"uri"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// SessionMessage is an upsert of a message between two sessions (session
// update "session_message"): a parent's task for its subagent, or the
// subagent's answer. It is sent on both sessions: on the sender's (the
// outgoing view, RecipientMessageID naming the other view) and on the
// recipient's (the incoming view, with SenderMessageID). Omitted members
// keep their stored value.
type SessionMessage struct {
	MessageID          MessageId      `json:"messageId"`
	SenderSessionID    SessionId      `json:"senderSessionId,omitempty"`
	RecipientSessionID SessionId      `json:"recipientSessionId,omitempty"`
	SenderMessageID    MessageId      `json:"senderMessageId,omitempty"`
	RecipientMessageID MessageId      `json:"recipientMessageId,omitempty"`
	Content            []ContentBlock `json:"content,omitempty"`
	// Meta is omitted when nil (an explicit null would clear it).
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionMessageChunk appends one content block to a message between
// sessions (session update "session_message_chunk").
type SessionMessageChunk struct {
	MessageID MessageId       `json:"messageId"`
	Content   ContentBlock    `json:"content"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}
