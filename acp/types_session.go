package acp

import (
	"encoding/json"
	"fmt"
)

// NewSessionRequest is the params of session/new.
type NewSessionRequest struct {
	CWD                   string          `json:"cwd"`        // absolute
	MCPServers            []McpServer     `json:"mcpServers"` // required: nil encodes as []
	AdditionalDirectories []string        `json:"additionalDirectories,omitzero"`
	SystemPrompt          *SystemPrompt   `json:"systemPrompt,omitempty"` // SDK 2.4.0 unstable
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil MCPServers as [].
func (r NewSessionRequest) MarshalJSON() ([]byte, error) {
	type plain NewSessionRequest
	r.MCPServers = nonNil(r.MCPServers)
	return json.Marshal(plain(r))
}

// NewSessionResponse is the result of session/new.
type NewSessionResponse struct {
	SessionID     SessionId             `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// LoadSessionRequest is the params of session/load.
type LoadSessionRequest struct {
	SessionID             SessionId       `json:"sessionId"`
	CWD                   string          `json:"cwd"`        // absolute
	MCPServers            []McpServer     `json:"mcpServers"` // required: nil encodes as []
	AdditionalDirectories []string        `json:"additionalDirectories,omitzero"`
	SystemPrompt          *SystemPrompt   `json:"systemPrompt,omitempty"` // SDK 2.4.0 unstable
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil MCPServers as [].
func (r LoadSessionRequest) MarshalJSON() ([]byte, error) {
	type plain LoadSessionRequest
	r.MCPServers = nonNil(r.MCPServers)
	return json.Marshal(plain(r))
}

// LoadSessionResponse is the result of session/load.
type LoadSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// ResumeSessionRequest is the params of session/resume.
type ResumeSessionRequest struct {
	SessionID             SessionId       `json:"sessionId"`
	CWD                   string          `json:"cwd"` // absolute
	MCPServers            []McpServer     `json:"mcpServers,omitzero"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitzero"`
	SystemPrompt          *SystemPrompt   `json:"systemPrompt,omitempty"` // SDK 2.4.0 unstable
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// ResumeSessionResponse is the result of session/resume.
type ResumeSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// ForkSessionRequest is the params of session/fork (unstable).
type ForkSessionRequest struct {
	SessionID             SessionId       `json:"sessionId"`
	CWD                   string          `json:"cwd"` // absolute
	MCPServers            []McpServer     `json:"mcpServers,omitzero"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitzero"`
	SystemPrompt          *SystemPrompt   `json:"systemPrompt,omitempty"` // SDK 2.4.0 unstable
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// ForkSessionResponse is the result of session/fork (unstable); SessionID
// is the new session.
type ForkSessionResponse struct {
	SessionID     SessionId             `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// CloseSessionRequest is the params of session/close.
type CloseSessionRequest struct {
	SessionID SessionId       `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// CloseSessionResponse is the result of session/close ({}).
type CloseSessionResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ListSessionsRequest is the params of session/list.
type ListSessionsRequest struct {
	CWD    string `json:"cwd,omitempty"` // filter; absolute
	Cursor string `json:"cursor,omitempty"`
	// Archived is the archive filter: "" or "exclude" (the default),
	// "include" or "only" (unstable).
	Archived string          `json:"archived,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// ListSessionsResponse is the result of session/list.
type ListSessionsResponse struct {
	Sessions   []SessionInfo   `json:"sessions"` // required: nil encodes as []
	NextCursor string          `json:"nextCursor,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil Sessions as [].
func (r ListSessionsResponse) MarshalJSON() ([]byte, error) {
	type plain ListSessionsResponse
	r.Sessions = nonNil(r.Sessions)
	return json.Marshal(plain(r))
}

// SessionInfo describes a session in session/list.
type SessionInfo struct {
	SessionID             SessionId       `json:"sessionId"`
	CWD                   string          `json:"cwd"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitzero"`
	Title                 string          `json:"title,omitempty"`
	UpdatedAt             string          `json:"updatedAt,omitempty"` // ISO 8601
	Archived              *bool           `json:"archived,omitempty"`  // unstable
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// SetSessionTitleRequest is the params of session/set_title (unstable).
type SetSessionTitleRequest struct {
	SessionID SessionId       `json:"sessionId"`
	Title     *string         `json:"title"` // required, non-null
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// SetSessionTitleResponse is the result of session/set_title: the title
// stored, after normalization.
type SetSessionTitleResponse struct {
	Title string          `json:"title"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// SessionStatusRequest is the params of session/status (unstable).
type SessionStatusRequest struct {
	SessionID SessionId       `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// Session statuses (SessionStatusResponse.Status).
const (
	SessionStatusOpen  = "open"  // in memory
	SessionStatusSaved = "saved" // stored, can be loaded or resumed
)

// SessionStatusResponse is the result of session/status.
type SessionStatusResponse struct {
	Status string          `json:"status"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// ArchiveSessionRequest is the params of session/archive and
// session/unarchive (unstable).
type ArchiveSessionRequest struct {
	SessionID SessionId       `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// ArchiveSessionResponse is the result of session/archive and
// session/unarchive.
type ArchiveSessionResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// DeleteSessionRequest is the params of session/delete.
type DeleteSessionRequest struct {
	SessionID SessionId       `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// DeleteSessionResponse is the result of session/delete ({}).
type DeleteSessionResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SetSessionModeRequest is the params of session/set_mode.
type SetSessionModeRequest struct {
	SessionID SessionId       `json:"sessionId"`
	ModeID    SessionModeId   `json:"modeId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// SetSessionModeResponse is the result of session/set_mode ({}).
type SetSessionModeResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SetSessionConfigOptionRequest is the params of session/set_config_option.
// On the wire Value is flattened: {"value":"<valueId>"} for a select option,
// {"type":"boolean","value":true} for a boolean one.
type SetSessionConfigOptionRequest struct {
	SessionID SessionId                `json:"sessionId"`
	ConfigID  SessionConfigId          `json:"configId"`
	Value     SessionConfigOptionValue `json:"-"`
	Meta      json.RawMessage          `json:"_meta,omitempty"`
}

// SessionConfigOptionValue is the new value of a config option: exactly one
// of ValueID (a select option's value) and Bool (type "boolean"). Unknown
// holds another "type" (Tag) with the request's raw "value" (Raw).
type SessionConfigOptionValue struct {
	ValueID *SessionConfigValueId
	Bool    *bool
	Unknown *UnknownVariant
}

// MarshalJSON flattens Value into the request object.
func (r SetSessionConfigOptionRequest) MarshalJSON() ([]byte, error) {
	type plain SetSessionConfigOptionRequest
	base, err := json.Marshal(plain(r))
	if err != nil {
		return nil, err
	}
	var value []byte
	switch v := r.Value; {
	case v.ValueID != nil:
		b, err := json.Marshal(*v.ValueID)
		if err != nil {
			return nil, err
		}
		value = append(append([]byte(`{"value":`), b...), '}')
	case v.Bool != nil:
		if *v.Bool {
			value = []byte(`{"type":"boolean","value":true}`)
		} else {
			value = []byte(`{"type":"boolean","value":false}`)
		}
	case v.Unknown != nil:
		if len(v.Unknown.Raw) == 0 {
			return nil, fmt.Errorf("acp: SetSessionConfigOptionRequest: unknown value type %q has no raw value", v.Unknown.Tag)
		}
		t, err := json.Marshal(v.Unknown.Tag)
		if err != nil {
			return nil, err
		}
		value = fmt.Appendf(nil, `{"type":%s,"value":%s}`, t, v.Unknown.Raw)
	default:
		return nil, emptyUnionError("SetSessionConfigOptionRequest.Value")
	}
	return mergeObjects(base, value), nil
}

// UnmarshalJSON reads the flattened value: type "boolean" needs a boolean,
// no type needs a string; another type goes to Value.Unknown. A missing
// value leaves Value empty (Validate reports it).
func (r *SetSessionConfigOptionRequest) UnmarshalJSON(data []byte) error {
	type plain SetSessionConfigOptionRequest
	var v struct {
		plain
		Type  *string          `json:"type"`
		Value *json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*r = SetSessionConfigOptionRequest(v.plain)
	r.Value = SessionConfigOptionValue{}
	if v.Value == nil || isJSONNull(*v.Value) {
		return nil
	}
	switch {
	case v.Type == nil:
		var id string
		if err := json.Unmarshal(*v.Value, &id); err != nil {
			return fmt.Errorf("value: must be a string")
		}
		r.Value.ValueID = &id
	case *v.Type == "boolean":
		var b bool
		if err := json.Unmarshal(*v.Value, &b); err != nil {
			return fmt.Errorf("value: must be a boolean")
		}
		r.Value.Bool = &b
	default:
		r.Value.Unknown = &UnknownVariant{Tag: *v.Type, Raw: cloneRaw(*v.Value)}
	}
	return nil
}

// SetSessionConfigOptionResponse is the result of session/set_config_option:
// the complete list of config options.
type SetSessionConfigOptionResponse struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"` // required: nil encodes as []
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil ConfigOptions as [].
func (r SetSessionConfigOptionResponse) MarshalJSON() ([]byte, error) {
	type plain SetSessionConfigOptionResponse
	r.ConfigOptions = nonNil(r.ConfigOptions)
	return json.Marshal(plain(r))
}

// PromptRequest is the params of session/prompt.
type PromptRequest struct {
	SessionID SessionId       `json:"sessionId"`
	Prompt    []ContentBlock  `json:"prompt"` // required: nil encodes as []
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil Prompt as [].
func (r PromptRequest) MarshalJSON() ([]byte, error) {
	type plain PromptRequest
	r.Prompt = nonNil(r.Prompt)
	return json.Marshal(plain(r))
}

// PromptResponse is the result of session/prompt.
type PromptResponse struct {
	StopReason StopReason      `json:"stopReason"`
	Usage      *Usage          `json:"usage,omitempty"` // unstable
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// Usage is the token usage of a turn (unstable).
type Usage struct {
	TotalTokens       uint64          `json:"totalTokens"`
	InputTokens       uint64          `json:"inputTokens"`
	OutputTokens      uint64          `json:"outputTokens"`
	ThoughtTokens     *uint64         `json:"thoughtTokens,omitempty"`
	CachedReadTokens  *uint64         `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens *uint64         `json:"cachedWriteTokens,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// CancelNotification is the params of session/cancel (notification).
type CancelNotification struct {
	SessionID SessionId       `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// CancelRequestNotification is the params of $/cancel_request
// (notification, either direction).
type CancelRequestNotification struct {
	RequestID RequestId       `json:"requestId"` // nil encodes as null
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// SessionModeState is the current mode and the modes available.
type SessionModeState struct {
	CurrentModeID  SessionModeId   `json:"currentModeId"`
	AvailableModes []SessionMode   `json:"availableModes"` // required: nil encodes as []
	Meta           json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil AvailableModes as [].
func (s SessionModeState) MarshalJSON() ([]byte, error) {
	type plain SessionModeState
	s.AvailableModes = nonNil(s.AvailableModes)
	return json.Marshal(plain(s))
}

// SessionMode is a mode the agent can operate in.
type SessionMode struct {
	ID          SessionModeId   `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// SessionConfigOption is a session configuration option (a selector or a
// toggle). The common members are fields; the "type"-specific members are
// in Select ("select") or Boolean ("boolean"). An unknown type goes to
// Unknown (the whole object, re-encoded verbatim; the common fields are
// still decoded).
type SessionConfigOption struct {
	ID          SessionConfigId             `json:"id"`
	Name        string                      `json:"name"`
	Description string                      `json:"description,omitempty"`
	Category    SessionConfigOptionCategory `json:"category,omitempty"`
	Select      *SessionConfigSelect        `json:"-"`
	Boolean     *SessionConfigBoolean       `json:"-"`
	Unknown     *UnknownVariant             `json:"-"`
	Meta        json.RawMessage             `json:"_meta,omitempty"`
}

// SessionConfigOption types.
const (
	SessionConfigOptionTypeSelect  = "select"
	SessionConfigOptionTypeBoolean = "boolean"
)

var (
	prefixConfigSelect  = unionPrefix("type", SessionConfigOptionTypeSelect)
	prefixConfigBoolean = unionPrefix("type", SessionConfigOptionTypeBoolean)
)

// Tag returns the option's "type", or "" when no variant is set.
func (o SessionConfigOption) Tag() string {
	switch {
	case o.Select != nil:
		return SessionConfigOptionTypeSelect
	case o.Boolean != nil:
		return SessionConfigOptionTypeBoolean
	case o.Unknown != nil:
		return o.Unknown.Tag
	}
	return ""
}

// MarshalJSON encodes the common members and the variant's members.
func (o SessionConfigOption) MarshalJSON() ([]byte, error) {
	if o.Select == nil && o.Boolean == nil && o.Unknown != nil {
		return o.Unknown.marshal("SessionConfigOption")
	}
	type plain SessionConfigOption
	base, err := json.Marshal(plain(o))
	if err != nil {
		return nil, err
	}
	var variant []byte
	switch {
	case o.Select != nil:
		variant, err = marshalTagged(prefixConfigSelect, o.Select)
	case o.Boolean != nil:
		variant, err = marshalTagged(prefixConfigBoolean, o.Boolean)
	default:
		return nil, emptyUnionError("SessionConfigOption")
	}
	if err != nil {
		return nil, err
	}
	return mergeObjects(base, variant), nil
}

// UnmarshalJSON decodes the common members, then the variant by "type".
func (o *SessionConfigOption) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	type plain SessionConfigOption
	var base plain
	if err := json.Unmarshal(data, &base); err != nil {
		return err
	}
	tag, err := requireTag(data, "type", "config option")
	if err != nil {
		return err
	}
	*o = SessionConfigOption(base)
	switch tag {
	case SessionConfigOptionTypeSelect:
		o.Select, err = decodeVariant[SessionConfigSelect](data)
	case SessionConfigOptionTypeBoolean:
		o.Boolean, err = decodeVariant[SessionConfigBoolean](data)
	default:
		o.Unknown = &UnknownVariant{Tag: tag, Raw: cloneRaw(data)}
	}
	return err
}

// SessionConfigSelect is the "select" part of a config option. It has no
// _meta of its own: it is flattened into SessionConfigOption.
type SessionConfigSelect struct {
	CurrentValue SessionConfigValueId       `json:"currentValue"`
	Options      SessionConfigSelectOptions `json:"options"`
}

// SessionConfigBoolean is the "boolean" part of a config option (flattened
// into SessionConfigOption).
type SessionConfigBoolean struct {
	CurrentValue bool `json:"currentValue"`
}

// SessionConfigSelectOptions is the untagged union of a flat option list and
// a grouped one. Groups is used when non-nil; otherwise Options is sent (nil
// as []). On decode, an array whose first element has "group" and no
// "value" is grouped.
type SessionConfigSelectOptions struct {
	Options []SessionConfigSelectOption
	Groups  []SessionConfigSelectGroup
}

// MarshalJSON encodes Groups when non-nil, else Options.
func (s SessionConfigSelectOptions) MarshalJSON() ([]byte, error) {
	if s.Groups != nil {
		return json.Marshal(s.Groups)
	}
	return json.Marshal(nonNil(s.Options))
}

// UnmarshalJSON tells flat and grouped lists apart.
func (s *SessionConfigSelectOptions) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	var probe []struct {
		Group *json.RawMessage `json:"group"`
		Value *json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return fmt.Errorf("options: %w", err)
	}
	*s = SessionConfigSelectOptions{}
	if len(probe) > 0 && probe[0].Group != nil && probe[0].Value == nil {
		return json.Unmarshal(data, &s.Groups)
	}
	return json.Unmarshal(data, &s.Options)
}

// SessionConfigSelectOption is one choice of a select option.
type SessionConfigSelectOption struct {
	Value       SessionConfigValueId `json:"value"`
	Name        string               `json:"name"`
	Description string               `json:"description,omitempty"`
	Meta        json.RawMessage      `json:"_meta,omitempty"`
}

// SessionConfigSelectGroup is a named group of choices.
type SessionConfigSelectGroup struct {
	Group   SessionConfigGroupId        `json:"group"`
	Name    string                      `json:"name"`
	Options []SessionConfigSelectOption `json:"options"` // required: nil encodes as []
	Meta    json.RawMessage             `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil Options as [].
func (g SessionConfigSelectGroup) MarshalJSON() ([]byte, error) {
	type plain SessionConfigSelectGroup
	g.Options = nonNil(g.Options)
	return json.Marshal(plain(g))
}

// McpServer is an MCP server the agent should connect to. Stdio servers
// have no "type"; http, sse and acp (SDK 2.4.0 unstable: the client's
// own, types_mcp.go) ones do. Other types go to Unknown.
type McpServer struct {
	Stdio   *McpServerStdio // no "type"
	HTTP    *McpServerHttp  // "http"
	SSE     *McpServerSse   // "sse"
	ACP     *McpServerAcp   // "acp"
	Unknown *UnknownVariant
}

// McpServer types.
const (
	McpServerTypeHTTP = "http"
	McpServerTypeSSE  = "sse"
)

var (
	prefixMcpHTTP = unionPrefix("type", McpServerTypeHTTP)
	prefixMcpSSE  = unionPrefix("type", McpServerTypeSSE)
)

// Tag returns the server's "type": "" for stdio.
func (s McpServer) Tag() string {
	switch {
	case s.Stdio != nil:
		return ""
	case s.HTTP != nil:
		return McpServerTypeHTTP
	case s.SSE != nil:
		return McpServerTypeSSE
	case s.ACP != nil:
		return McpServerTypeACP
	case s.Unknown != nil:
		return s.Unknown.Tag
	}
	return ""
}

// MarshalJSON encodes the set variant.
func (s McpServer) MarshalJSON() ([]byte, error) {
	switch {
	case s.Stdio != nil:
		return json.Marshal(s.Stdio)
	case s.HTTP != nil:
		return marshalTagged(prefixMcpHTTP, s.HTTP)
	case s.SSE != nil:
		return marshalTagged(prefixMcpSSE, s.SSE)
	case s.ACP != nil:
		return marshalTagged(prefixMcpACP, s.ACP)
	case s.Unknown != nil:
		return s.Unknown.marshal("McpServer")
	}
	return nil, emptyUnionError("McpServer")
}

// UnmarshalJSON decodes by "type": none is stdio.
func (s *McpServer) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	tag, ok, err := readTag(data, "type", "MCP server")
	if err != nil {
		return err
	}
	*s = McpServer{}
	switch {
	case !ok:
		s.Stdio, err = decodeVariant[McpServerStdio](data)
	case tag == McpServerTypeHTTP:
		s.HTTP, err = decodeVariant[McpServerHttp](data)
	case tag == McpServerTypeSSE:
		s.SSE, err = decodeVariant[McpServerSse](data)
	case tag == McpServerTypeACP:
		s.ACP, err = decodeVariant[McpServerAcp](data)
	default:
		s.Unknown = &UnknownVariant{Tag: tag, Raw: cloneRaw(data)}
	}
	return err
}

// McpServerStdio is an MCP server launched as a subprocess.
type McpServerStdio struct {
	Name    string          `json:"name"`
	Command string          `json:"command"` // absolute path
	Args    []string        `json:"args"`    // required: nil encodes as []
	Env     []EnvVariable   `json:"env"`     // required: nil encodes as []
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes nil Args and Env as [].
func (s McpServerStdio) MarshalJSON() ([]byte, error) {
	type plain McpServerStdio
	s.Args = nonNil(s.Args)
	s.Env = nonNil(s.Env)
	return json.Marshal(plain(s))
}

// McpServerHttp is an MCP server reached over streamable HTTP.
type McpServerHttp struct {
	Name    string          `json:"name"`
	URL     string          `json:"url"`
	Headers []HttpHeader    `json:"headers"` // required: nil encodes as []
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil Headers as [].
func (s McpServerHttp) MarshalJSON() ([]byte, error) {
	type plain McpServerHttp
	s.Headers = nonNil(s.Headers)
	return json.Marshal(plain(s))
}

// McpServerSse is an MCP server reached over SSE (deprecated by MCP).
type McpServerSse struct {
	Name    string          `json:"name"`
	URL     string          `json:"url"`
	Headers []HttpHeader    `json:"headers"` // required: nil encodes as []
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil Headers as [].
func (s McpServerSse) MarshalJSON() ([]byte, error) {
	type plain McpServerSse
	s.Headers = nonNil(s.Headers)
	return json.Marshal(plain(s))
}

// EnvVariable is an environment variable.
type EnvVariable struct {
	Name  string          `json:"name"`
	Value string          `json:"value"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// HttpHeader is an HTTP header.
type HttpHeader struct {
	Name  string          `json:"name"`
	Value string          `json:"value"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}
