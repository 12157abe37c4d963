package acp

import "encoding/json"

// RequestPermissionRequest is the params of session/request_permission
// (agent → client).
type RequestPermissionRequest struct {
	SessionID SessionId          `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"` // required: nil encodes as []
	Meta      json.RawMessage    `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil Options as [].
func (r RequestPermissionRequest) MarshalJSON() ([]byte, error) {
	type plain RequestPermissionRequest
	r.Options = nonNil(r.Options)
	return json.Marshal(plain(r))
}

// PermissionOption is a choice offered to the user.
type PermissionOption struct {
	OptionID PermissionOptionId   `json:"optionId"`
	Name     string               `json:"name"`
	Kind     PermissionOptionKind `json:"kind"`
	Meta     json.RawMessage      `json:"_meta,omitempty"`
}

// RequestPermissionResponse is the result of session/request_permission.
type RequestPermissionResponse struct {
	Outcome RequestPermissionOutcome `json:"outcome"`
	Meta    json.RawMessage          `json:"_meta,omitempty"`
}

// RequestPermissionOutcome is the user's decision (tag "outcome").
// Cancelled is what the client answers when the turn was cancelled.
type RequestPermissionOutcome struct {
	Selected  *SelectedPermissionOutcome  // "selected"
	Cancelled *CancelledPermissionOutcome // "cancelled"
	Unknown   *UnknownVariant
}

// RequestPermissionOutcome tags.
const (
	PermissionOutcomeSelected  = "selected"
	PermissionOutcomeCancelled = "cancelled"
)

var (
	prefixOutcomeSelected  = unionPrefix("outcome", PermissionOutcomeSelected)
	prefixOutcomeCancelled = unionPrefix("outcome", PermissionOutcomeCancelled)
)

// Tag returns the "outcome" of the set variant, or "" when none is set.
func (o RequestPermissionOutcome) Tag() string {
	switch {
	case o.Selected != nil:
		return PermissionOutcomeSelected
	case o.Cancelled != nil:
		return PermissionOutcomeCancelled
	case o.Unknown != nil:
		return o.Unknown.Tag
	}
	return ""
}

// MarshalJSON encodes the set variant with its "outcome".
func (o RequestPermissionOutcome) MarshalJSON() ([]byte, error) {
	switch {
	case o.Selected != nil:
		return marshalTagged(prefixOutcomeSelected, o.Selected)
	case o.Cancelled != nil:
		return marshalTagged(prefixOutcomeCancelled, o.Cancelled)
	case o.Unknown != nil:
		return o.Unknown.marshal("RequestPermissionOutcome")
	}
	return nil, emptyUnionError("RequestPermissionOutcome")
}

// UnmarshalJSON decodes by "outcome"; unknown values go to Unknown.
func (o *RequestPermissionOutcome) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	tag, err := requireTag(data, "outcome", "outcome")
	if err != nil {
		return err
	}
	*o = RequestPermissionOutcome{}
	switch tag {
	case PermissionOutcomeSelected:
		o.Selected, err = decodeVariant[SelectedPermissionOutcome](data)
	case PermissionOutcomeCancelled:
		o.Cancelled, err = decodeVariant[CancelledPermissionOutcome](data)
	default:
		o.Unknown = &UnknownVariant{Tag: tag, Raw: cloneRaw(data)}
	}
	return err
}

// SelectedPermissionOutcome is the option the user chose.
type SelectedPermissionOutcome struct {
	OptionID PermissionOptionId `json:"optionId"`
	Meta     json.RawMessage    `json:"_meta,omitempty"`
}

// CancelledPermissionOutcome means the prompt turn was cancelled. The
// schema gives this variant no members besides "outcome"; Meta is kept for
// symmetry.
type CancelledPermissionOutcome struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ReadTextFileRequest is the params of fs/read_text_file.
type ReadTextFileRequest struct {
	SessionID SessionId       `json:"sessionId"`
	Path      string          `json:"path"`            // absolute
	Line      *uint32         `json:"line,omitempty"`  // 1-based
	Limit     *uint32         `json:"limit,omitempty"` // lines
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// ReadTextFileResponse is the result of fs/read_text_file.
type ReadTextFileResponse struct {
	Content string          `json:"content"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// WriteTextFileRequest is the params of fs/write_text_file.
type WriteTextFileRequest struct {
	SessionID SessionId       `json:"sessionId"`
	Path      string          `json:"path"` // absolute
	Content   string          `json:"content"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// WriteTextFileResponse is the result of fs/write_text_file ({}; clients
// may also answer null).
type WriteTextFileResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// CreateTerminalRequest is the params of terminal/create.
type CreateTerminalRequest struct {
	SessionID       SessionId       `json:"sessionId"`
	Command         string          `json:"command"`
	Args            []string        `json:"args,omitzero"`
	Env             []EnvVariable   `json:"env,omitzero"`
	CWD             string          `json:"cwd,omitempty"` // absolute
	OutputByteLimit *uint64         `json:"outputByteLimit,omitempty"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// CreateTerminalResponse is the result of terminal/create.
type CreateTerminalResponse struct {
	TerminalID TerminalId      `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// TerminalOutputRequest is the params of terminal/output.
type TerminalOutputRequest struct {
	SessionID  SessionId       `json:"sessionId"`
	TerminalID TerminalId      `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// TerminalOutputResponse is the result of terminal/output. ExitStatus is
// nil while the command runs.
type TerminalOutputResponse struct {
	Output     string              `json:"output"`
	Truncated  bool                `json:"truncated"`
	ExitStatus *TerminalExitStatus `json:"exitStatus,omitempty"`
	Meta       json.RawMessage     `json:"_meta,omitempty"`
}

// TerminalExitStatus is how a terminal command ended: an exit code, or the
// signal that killed it.
type TerminalExitStatus struct {
	ExitCode *uint32         `json:"exitCode,omitempty"`
	Signal   string          `json:"signal,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// WaitForTerminalExitRequest is the params of terminal/wait_for_exit.
type WaitForTerminalExitRequest struct {
	SessionID  SessionId       `json:"sessionId"`
	TerminalID TerminalId      `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// WaitForTerminalExitResponse is the result of terminal/wait_for_exit.
type WaitForTerminalExitResponse struct {
	ExitCode *uint32         `json:"exitCode,omitempty"`
	Signal   string          `json:"signal,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// KillTerminalRequest is the params of terminal/kill.
type KillTerminalRequest struct {
	SessionID  SessionId       `json:"sessionId"`
	TerminalID TerminalId      `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// KillTerminalResponse is the result of terminal/kill ({}).
type KillTerminalResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ReleaseTerminalRequest is the params of terminal/release.
type ReleaseTerminalRequest struct {
	SessionID  SessionId       `json:"sessionId"`
	TerminalID TerminalId      `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// ReleaseTerminalResponse is the result of terminal/release ({}).
type ReleaseTerminalResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}
