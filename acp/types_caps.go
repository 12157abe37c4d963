package acp

import (
	"encoding/json"
	"fmt"
)

// InitializeRequest is the params of initialize (client → agent).
type InitializeRequest struct {
	ProtocolVersion    ProtocolVersion    `json:"protocolVersion"`
	ClientCapabilities ClientCapabilities `json:"clientCapabilities,omitzero"`
	ClientInfo         *Implementation    `json:"clientInfo,omitempty"`
	Meta               json.RawMessage    `json:"_meta,omitempty"`

	// protocolVersionMissing is set by UnmarshalJSON when the member was
	// absent, for Validate (0 is a valid value).
	protocolVersionMissing bool
}

// UnmarshalJSON decodes the request and records whether protocolVersion was
// present. A protocolVersion that is not an integer in [0, 65535] (such as
// the pre-release string "1.0.0") is an error naming the field.
func (r *InitializeRequest) UnmarshalJSON(data []byte) error {
	type plain InitializeRequest
	var v struct {
		plain
		ProtocolVersion *json.RawMessage `json:"protocolVersion"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*r = InitializeRequest(v.plain)
	if v.ProtocolVersion == nil || isJSONNull(*v.ProtocolVersion) {
		r.protocolVersionMissing = true
		return nil
	}
	var pv uint16
	if err := json.Unmarshal(*v.ProtocolVersion, &pv); err != nil {
		return fmt.Errorf("protocolVersion: must be an integer between 0 and 65535")
	}
	r.ProtocolVersion = ProtocolVersion(pv)
	return nil
}

// InitializeResponse is the result of initialize.
type InitializeResponse struct {
	ProtocolVersion   ProtocolVersion   `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities,omitzero"`
	AuthMethods       []AuthMethod      `json:"authMethods,omitzero"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	Meta              json.RawMessage   `json:"_meta,omitempty"`
}

// Implementation names a client or agent program.
type Implementation struct {
	Name    string          `json:"name"`
	Title   string          `json:"title,omitempty"`
	Version string          `json:"version"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// ClientCapabilities is what the client supports. Omitted capabilities are
// unsupported.
type ClientCapabilities struct {
	FS          FileSystemCapabilities     `json:"fs,omitzero"`
	Terminal    bool                       `json:"terminal,omitempty"`
	Session     *ClientSessionCapabilities `json:"session,omitempty"`
	Auth        AuthCapabilities           `json:"auth,omitzero"`
	Elicitation *ElicitationCapabilities   `json:"elicitation,omitempty"`
	// Subagents: the client shows child sessions (subagent_update and the
	// children's own updates); SDK 2.4.0 unstable.
	Subagents *SubagentCapabilities `json:"subagents,omitempty"`
	// Plan: the client takes plan_update and plan_removed (SDK 2.4.0
	// unstable); otherwise it gets the v1 plan update.
	Plan *PlanCapabilities `json:"plan,omitempty"`
	Meta json.RawMessage   `json:"_meta,omitempty"`
}

// SubagentCapabilities marks support for child sessions.
type SubagentCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// FileSystemCapabilities gates fs/read_text_file and fs/write_text_file.
type FileSystemCapabilities struct {
	ReadTextFile  bool            `json:"readTextFile,omitempty"`
	WriteTextFile bool            `json:"writeTextFile,omitempty"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// AuthCapabilities are the client's authentication capabilities.
type AuthCapabilities struct {
	// Terminal allows the agent to advertise type:"terminal" auth methods.
	Terminal bool            `json:"terminal,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// ClientSessionCapabilities are session-related client capabilities. Each
// marker is supported when non-nil.
type ClientSessionCapabilities struct {
	ConfigOptions *SessionConfigOptionsCapabilities `json:"configOptions,omitempty"`
	Notices       *NoticeCapabilities               `json:"notices,omitempty"`    // SDK 2.4.0
	Compaction    *CompactionCapabilities           `json:"compaction,omitempty"` // SDK 2.4.0
	Meta          json.RawMessage                   `json:"_meta,omitempty"`
}

// SessionConfigOptionsCapabilities are config option extensions the client
// supports.
type SessionConfigOptionsCapabilities struct {
	// Boolean allows type:"boolean" config options.
	Boolean *BooleanConfigOptionCapabilities `json:"boolean,omitempty"`
	Meta    json.RawMessage                  `json:"_meta,omitempty"`
}

// BooleanConfigOptionCapabilities marks support for boolean config options.
type BooleanConfigOptionCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// NoticeCapabilities marks support for "notice" updates (SDK 2.4.0).
type NoticeCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// CompactionCapabilities marks support for compaction updates (SDK 2.4.0).
type CompactionCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ElicitationCapabilities are the elicitation modes the client supports;
// each mode is supported when non-nil.
type ElicitationCapabilities struct {
	Form *ElicitationFormCapabilities `json:"form,omitempty"`
	URL  *ElicitationUrlCapabilities  `json:"url,omitempty"`
	Meta json.RawMessage              `json:"_meta,omitempty"`
}

// ElicitationFormCapabilities marks support for form elicitation.
type ElicitationFormCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ElicitationUrlCapabilities marks support for URL elicitation.
type ElicitationUrlCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// AgentCapabilities is what the agent supports.
type AgentCapabilities struct {
	LoadSession         bool                  `json:"loadSession,omitempty"`
	PromptCapabilities  PromptCapabilities    `json:"promptCapabilities,omitzero"`
	MCPCapabilities     McpCapabilities       `json:"mcpCapabilities,omitzero"`
	SessionCapabilities SessionCapabilities   `json:"sessionCapabilities,omitzero"`
	Auth                AgentAuthCapabilities `json:"auth,omitzero"`
	// Providers: providers/list, set and disable (SDK 2.4.0 unstable).
	Providers *ProvidersCapabilities `json:"providers,omitempty"`
	Meta      json.RawMessage        `json:"_meta,omitempty"`
}

// PromptCapabilities gates image, audio and resource blocks in prompts.
type PromptCapabilities struct {
	Image           bool            `json:"image,omitempty"`
	Audio           bool            `json:"audio,omitempty"`
	EmbeddedContext bool            `json:"embeddedContext,omitempty"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// McpCapabilities are the MCP transports the agent supports besides stdio.
type McpCapabilities struct {
	HTTP bool `json:"http,omitempty"`
	SSE  bool `json:"sse,omitempty"`
	// ACP: MCP servers the client provides, reached through the ACP
	// connection with mcp/message (SDK 2.4.0 unstable).
	ACP  bool            `json:"acp,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionCapabilities are optional session methods the agent supports; each
// is supported when non-nil (sent as {}).
type SessionCapabilities struct {
	List                  *SessionListCapabilities                  `json:"list,omitempty"`
	Delete                *SessionDeleteCapabilities                `json:"delete,omitempty"`
	AdditionalDirectories *SessionAdditionalDirectoriesCapabilities `json:"additionalDirectories,omitempty"`
	Resume                *SessionResumeCapabilities                `json:"resume,omitempty"`
	Close                 *SessionCloseCapabilities                 `json:"close,omitempty"`
	Fork                  *SessionForkCapabilities                  `json:"fork,omitempty"`         // unstable
	Title                 *SessionTitleCapabilities                 `json:"title,omitempty"`        // unstable
	Status                *SessionStatusCapabilities                `json:"status,omitempty"`       // unstable
	Archive               *SessionArchiveCapabilities               `json:"archive,omitempty"`      // unstable
	SystemPrompt          *SessionSystemPromptCapabilities          `json:"systemPrompt,omitempty"` // SDK 2.4.0 unstable
	Meta                  json.RawMessage                           `json:"_meta,omitempty"`
}

// SessionTitleCapabilities marks support for session/set_title.
type SessionTitleCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionStatusCapabilities marks support for session/status.
type SessionStatusCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionArchiveCapabilities marks support for session/archive,
// session/unarchive, the archived filter of session/list and
// SessionInfo.archived.
type SessionArchiveCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionListCapabilities marks support for session/list.
type SessionListCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionDeleteCapabilities marks support for session/delete.
type SessionDeleteCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionAdditionalDirectoriesCapabilities marks support for
// additionalDirectories on session requests.
type SessionAdditionalDirectoriesCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionResumeCapabilities marks support for session/resume.
type SessionResumeCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionCloseCapabilities marks support for session/close.
type SessionCloseCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionForkCapabilities marks support for session/fork (unstable).
type SessionForkCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// AgentAuthCapabilities are the agent's authentication capabilities.
type AgentAuthCapabilities struct {
	Logout *LogoutCapabilities `json:"logout,omitempty"`
	// Status: auth/status and auth/status_update (SDK 2.4.0 unstable).
	Status *AuthStatusCapabilities `json:"status,omitempty"`
	Meta   json.RawMessage         `json:"_meta,omitempty"`
}

// LogoutCapabilities marks support for logout.
type LogoutCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// AuthMethod is an authentication method the agent offers. Agent-handled
// methods have no "type" (the client calls authenticate); terminal methods
// have type "terminal" (the client reruns the agent interactively). Other
// types go to Unknown.
type AuthMethod struct {
	Agent    *AuthMethodAgent    // no "type"
	Terminal *AuthMethodTerminal // "terminal"
	Unknown  *UnknownVariant
}

// AuthMethodTypeTerminal is the "type" of a terminal auth method.
const AuthMethodTypeTerminal = "terminal"

var prefixAuthTerminal = unionPrefix("type", AuthMethodTypeTerminal)

// MarshalJSON encodes the set variant.
func (m AuthMethod) MarshalJSON() ([]byte, error) {
	switch {
	case m.Agent != nil:
		return json.Marshal(m.Agent)
	case m.Terminal != nil:
		return marshalTagged(prefixAuthTerminal, m.Terminal)
	case m.Unknown != nil:
		return m.Unknown.marshal("AuthMethod")
	}
	return nil, emptyUnionError("AuthMethod")
}

// UnmarshalJSON decodes by "type": none is Agent, "terminal" is Terminal.
func (m *AuthMethod) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	tag, ok, err := readTag(data, "type", "auth method")
	if err != nil {
		return err
	}
	*m = AuthMethod{}
	switch {
	case !ok:
		m.Agent, err = decodeVariant[AuthMethodAgent](data)
	case tag == AuthMethodTypeTerminal:
		m.Terminal, err = decodeVariant[AuthMethodTerminal](data)
	default:
		m.Unknown = &UnknownVariant{Tag: tag, Raw: cloneRaw(data)}
	}
	return err
}

// AuthMethodAgent is an auth method run by the agent via authenticate.
type AuthMethodAgent struct {
	ID          AuthMethodId    `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// AuthMethodTerminal is an auth method where the client runs the agent
// binary interactively with Args and Env. Only allowed when the client set
// clientCapabilities.auth.terminal.
type AuthMethodTerminal struct {
	ID          AuthMethodId      `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Args        []string          `json:"args,omitzero"`
	Env         map[string]string `json:"env,omitzero"`
	Meta        json.RawMessage   `json:"_meta,omitempty"`
}

// AuthenticateRequest is the params of authenticate.
type AuthenticateRequest struct {
	MethodID AuthMethodId    `json:"methodId"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// AuthenticateResponse is the result of authenticate ({}).
type AuthenticateResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// LogoutRequest is the params of logout ({}).
type LogoutRequest struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// LogoutResponse is the result of logout ({}).
type LogoutResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}
