package acpv2

import (
	"encoding/json"
	"fmt"
)

// The definitions the generator leaves to this file (gen_test.go's
// handWritten says why, for each).

// Any JSON value, kept as it came.
type (
	ErrorData               = json.RawMessage
	ElicitationContentValue = json.RawMessage
	ExtNotification         = json.RawMessage
	ExtRequest              = json.RawMessage
	ExtResponse             = json.RawMessage
)

// RequestId is a JSON-RPC request id as raw JSON: a string or an integer.
type RequestId = json.RawMessage

// Error is the JSON-RPC error object.
type Error struct {
	Code    ErrorCode       `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// ErrorCode is a JSON-RPC error code; ACP's are these, and others may be
// used.
type ErrorCode int32

// ErrorCode values.
const (
	ErrorCodeParseError                 ErrorCode = -32700
	ErrorCodeInvalidRequest             ErrorCode = -32600
	ErrorCodeMethodNotFound             ErrorCode = -32601
	ErrorCodeInvalidParams              ErrorCode = -32602
	ErrorCodeInternalError              ErrorCode = -32603
	ErrorCodeRequestCancelled           ErrorCode = -32800
	ErrorCodeAuthRequired               ErrorCode = -32000
	ErrorCodeResourceNotFound           ErrorCode = -32002
	ErrorCodeUnsupportedProtocolVersion ErrorCode = -32022
)

// StopReason is why foreground work stopped (IdleStateUpdate.stopReason).
// Custom reasons start with "_".
type StopReason string

// StopReason values.
const (
	StopReasonEndTurn         StopReason = "end_turn"
	StopReasonMaxTokens       StopReason = "max_tokens"
	StopReasonMaxTurnRequests StopReason = "max_turn_requests"
	StopReasonRefusal         StopReason = "refusal"
	StopReasonCancelled       StopReason = "cancelled"
	// StopReasonError comes with IdleStateUpdate.Error.
	StopReasonError StopReason = "error"
)

// IdleStateUpdate: no foreground work is active; background activity may
// continue. StopReason says why the foreground work that just ended
// stopped ("" when the update does not end foreground work, or the agent
// does not say); Error goes only with StopReasonError.
type IdleStateUpdate struct {
	StopReason StopReason `json:"stopReason,omitempty"`
	// Error is the error that stopped the work (StopReasonError only).
	Error *Error `json:"error,omitempty"`
	// Usage is the token usage of the completed foreground work.
	// (unstable)
	Usage *Usage `json:"usage,omitempty"`
	// Background is a complete snapshot of the work running independently
	// of the foreground; nil means not reported, [] nothing running.
	Background []BackgroundWork `json:"background,omitzero"`
	Meta       json.RawMessage  `json:"_meta,omitempty"`
}

// SessionConfigOption is a session configuration option and its current
// state: its members, and its kind ("type"), exactly one of Select,
// Boolean and Other.
type SessionConfigOption struct {
	ConfigID SessionConfigId `json:"configId"`
	Name     string          `json:"name"`
	// Description is for the client to display to the user.
	Description string `json:"description,omitempty"`
	// Category is a semantic hint (UX only).
	Category SessionConfigOptionCategory `json:"category,omitempty"`
	Meta     json.RawMessage             `json:"_meta,omitempty"`

	Select  *SessionConfigSelect  `json:"-"` // "select"
	Boolean *SessionConfigBoolean `json:"-"` // "boolean"
	Other   *UnknownVariant       `json:"-"` // another "type" ("_"...), with the whole option
}

// SessionConfigOption kinds ("type" values).
const (
	SessionConfigOptionTagSelect  = "select"
	SessionConfigOptionTagBoolean = "boolean"
)

// MarshalJSON writes the option's members and its kind's.
func (o SessionConfigOption) MarshalJSON() ([]byte, error) {
	if o.Other != nil {
		return o.Other.marshal("SessionConfigOption")
	}
	type plain SessionConfigOption
	base, err := json.Marshal(plain(o))
	if err != nil {
		return nil, err
	}
	var kind []byte
	switch {
	case o.Select != nil:
		kind, err = marshalTagged("type", SessionConfigOptionTagSelect, o.Select)
	case o.Boolean != nil:
		kind, err = marshalTagged("type", SessionConfigOptionTagBoolean, o.Boolean)
	default:
		err = emptyUnion("SessionConfigOption")
	}
	if err != nil {
		return nil, err
	}
	return mergeObjects(kind, base), nil
}

// UnmarshalJSON reads the members and the kind its "type" names.
func (o *SessionConfigOption) UnmarshalJSON(data []byte) error {
	tag, err := requireTag(data, "type", "SessionConfigOption")
	if err != nil {
		return err
	}
	type plain SessionConfigOption
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*o = SessionConfigOption(p)
	switch tag {
	case SessionConfigOptionTagSelect:
		o.Select, err = decodeVariant[SessionConfigSelect](data)
	case SessionConfigOptionTagBoolean:
		o.Boolean, err = decodeVariant[SessionConfigBoolean](data)
	default:
		o.Other = unknownVariant(tag, data)
	}
	return err
}

// SetSessionConfigOptionRequest is the params of
// session/set_config_option: Type says what Value holds ("id": a
// SessionConfigValueId string, "boolean": a boolean, or a custom type).
type SetSessionConfigOptionRequest struct {
	SessionID SessionId       `json:"sessionId"`
	ConfigID  SessionConfigId `json:"configId"`
	Type      string          `json:"type"`
	Value     json.RawMessage `json:"value"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// SetSessionConfigOptionRequest value types ("type" values).
const (
	ConfigValueTypeID      = "id"
	ConfigValueTypeBoolean = "boolean"
)

// ValueID returns the value of a "type":"id" request.
func (r *SetSessionConfigOptionRequest) ValueID() (SessionConfigValueId, bool) {
	var id string
	if r.Type != ConfigValueTypeID || json.Unmarshal(r.Value, &id) != nil {
		return "", false
	}
	return id, true
}

// BoolValue returns the value of a "type":"boolean" request.
func (r *SetSessionConfigOptionRequest) BoolValue() (value, ok bool) {
	if r.Type != ConfigValueTypeBoolean || json.Unmarshal(r.Value, &value) != nil || isNull(r.Value) {
		return false, false
	}
	return value, true
}

// CreateElicitationRequest is the params of elicitation/create: a message,
// a mode (exactly one of Form, URL and Other) and a scope (SessionID,
// with ToolCallID when it is about a tool call, or RequestID).
type CreateElicitationRequest struct {
	Message string          `json:"message"`
	Meta    json.RawMessage `json:"_meta,omitempty"`

	Form  *ElicitationFormMode `json:"-"` // "form"
	URL   *ElicitationUrlMode  `json:"-"` // "url"
	Other *UnknownVariant      `json:"-"` // another "mode", with the whole request

	SessionID  SessionId  `json:"sessionId,omitempty"`
	ToolCallID ToolCallId `json:"toolCallId,omitempty"`
	RequestID  RequestId  `json:"requestId,omitempty"`
}

// ElicitationFormMode asks for structured input (mode "form").
type ElicitationFormMode struct {
	RequestedSchema ElicitationSchema `json:"requestedSchema"`
}

// ElicitationUrlMode sends the user to a URL (mode "url").
type ElicitationUrlMode struct {
	ElicitationID ElicitationId `json:"elicitationId"`
	URL           string        `json:"url"`
}

// CreateElicitationRequest modes ("mode" values).
const (
	ElicitationModeForm = "form"
	ElicitationModeURL  = "url"
)

// MarshalJSON writes the members, the mode's and the scope's.
func (r CreateElicitationRequest) MarshalJSON() ([]byte, error) {
	if r.Other != nil {
		return r.Other.marshal("CreateElicitationRequest")
	}
	if (r.SessionID == "") == (r.RequestID == nil) {
		return nil, fmt.Errorf("acpv2: CreateElicitationRequest: exactly one of sessionId and requestId")
	}
	type plain CreateElicitationRequest
	base, err := json.Marshal(plain(r))
	if err != nil {
		return nil, err
	}
	var mode []byte
	switch {
	case r.Form != nil:
		mode, err = marshalTagged("mode", ElicitationModeForm, r.Form)
	case r.URL != nil:
		mode, err = marshalTagged("mode", ElicitationModeURL, r.URL)
	default:
		err = emptyUnion("CreateElicitationRequest")
	}
	if err != nil {
		return nil, err
	}
	return mergeObjects(mode, base), nil
}

// UnmarshalJSON reads the members and the mode its "mode" names.
func (r *CreateElicitationRequest) UnmarshalJSON(data []byte) error {
	tag, err := requireTag(data, "mode", "CreateElicitationRequest")
	if err != nil {
		return err
	}
	type plain CreateElicitationRequest
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*r = CreateElicitationRequest(p)
	switch tag {
	case ElicitationModeForm:
		r.Form, err = decodeVariant[ElicitationFormMode](data)
	case ElicitationModeURL:
		r.URL, err = decodeVariant[ElicitationUrlMode](data)
	default:
		r.Other = unknownVariant(tag, data)
	}
	return err
}

// CreateElicitationResponse is the client's answer to elicitation/create:
// Action is "accept" (with Content), "decline", "cancel", or another
// action, which the agent must handle as "cancel".
type CreateElicitationResponse struct {
	Action  string                             `json:"action"`
	Content map[string]ElicitationContentValue `json:"content,omitempty"`
	Meta    json.RawMessage                    `json:"_meta,omitempty"`
}

// CreateElicitationResponse actions.
const (
	ElicitationActionAccept  = "accept"
	ElicitationActionDecline = "decline"
	ElicitationActionCancel  = "cancel"
)

// DiffChange is one file-level change of a Diff: Operation "add",
// "delete" or "modify" (Path), "move" or "copy" (OldPath and Path), or a
// custom one ("_"...).
type DiffChange struct {
	Operation string       `json:"operation"`
	OldPath   AbsolutePath `json:"oldPath,omitempty"`
	Path      AbsolutePath `json:"path,omitempty"` // required by every operation but custom ones
	// FileType and MimeType describe the file after the operation (for a
	// delete, the deleted file).
	FileType DiffFileType    `json:"fileType,omitempty"`
	MimeType MediaType       `json:"mimeType,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// DiffChange operations.
const (
	DiffOperationAdd    = "add"
	DiffOperationDelete = "delete"
	DiffOperationModify = "modify"
	DiffOperationMove   = "move"
	DiffOperationCopy   = "copy"
)

// EmbeddedResourceResource is a text or a blob resource, told apart by
// their "text" or "blob" member.
type EmbeddedResourceResource struct {
	Text *TextResourceContents
	Blob *BlobResourceContents
}

// MarshalJSON encodes the variant set.
func (r EmbeddedResourceResource) MarshalJSON() ([]byte, error) {
	switch {
	case r.Text != nil:
		return json.Marshal(r.Text)
	case r.Blob != nil:
		return json.Marshal(r.Blob)
	}
	return nil, emptyUnion("EmbeddedResourceResource")
}

// UnmarshalJSON decodes text contents when "text" is there, else blob
// contents when "blob" is.
func (r *EmbeddedResourceResource) UnmarshalJSON(data []byte) error {
	var probe struct {
		Text, Blob json.RawMessage
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return fmt.Errorf("resource: %w", err)
	}
	*r = EmbeddedResourceResource{}
	var err error
	switch {
	case probe.Text != nil:
		r.Text, err = decodeVariant[TextResourceContents](data)
	case probe.Blob != nil:
		r.Blob, err = decodeVariant[BlobResourceContents](data)
	default:
		err = fmt.Errorf("resource: neither \"text\" nor \"blob\" is present")
	}
	return err
}

// SessionConfigSelectOptions is a select's options: a flat list or named
// groups (exactly one, non-empty).
type SessionConfigSelectOptions struct {
	Options []SessionConfigSelectOption
	Groups  []SessionConfigSelectGroup
}

// MarshalJSON encodes the list set.
func (o SessionConfigSelectOptions) MarshalJSON() ([]byte, error) {
	if len(o.Groups) > 0 {
		return json.Marshal(o.Groups)
	}
	return json.Marshal(nonNil(o.Options))
}

// UnmarshalJSON decodes groups when the first item has "groupId", else
// options.
func (o *SessionConfigSelectOptions) UnmarshalJSON(data []byte) error {
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return fmt.Errorf("options: %w", err)
	}
	*o = SessionConfigSelectOptions{}
	if len(items) > 0 && items[0]["groupId"] != nil {
		return json.Unmarshal(data, &o.Groups)
	}
	return json.Unmarshal(data, &o.Options)
}

// MultiSelectItems are the items of a multi-select property: plain
// strings ("type":"string"), titled options (no "type", an "anyOf"), or
// another type.
type MultiSelectItems struct {
	String *StringMultiSelectItems
	Titled *TitledMultiSelectItems
	Other  *UnknownVariant
}

// MarshalJSON encodes the variant set.
func (m MultiSelectItems) MarshalJSON() ([]byte, error) {
	switch {
	case m.String != nil:
		return marshalTagged("type", "string", m.String)
	case m.Titled != nil:
		return json.Marshal(m.Titled)
	case m.Other != nil:
		return m.Other.marshal("MultiSelectItems")
	}
	return nil, emptyUnion("MultiSelectItems")
}

// UnmarshalJSON decodes by "type"; without one, titled options.
func (m *MultiSelectItems) UnmarshalJSON(data []byte) error {
	tag, ok, err := readTag(data, "type", "MultiSelectItems")
	if err != nil {
		return err
	}
	*m = MultiSelectItems{}
	switch {
	case !ok:
		m.Titled, err = decodeVariant[TitledMultiSelectItems](data)
	case tag == "string":
		m.String, err = decodeVariant[StringMultiSelectItems](data)
	default:
		m.Other = unknownVariant(tag, data)
	}
	return err
}

// MessageMcpResponse is the client's answer to an mcp/message request:
// the MCP result, or the MCP error.
type MessageMcpResponse struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *McpError       `json:"error,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}
