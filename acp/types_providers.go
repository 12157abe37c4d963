package acp

import (
	"encoding/json"
	"fmt"
	"net/url"
)

// This file holds the unstable methods of the SDK 2.4.0 schema about
// where the model runs and who may use it: providers/list, providers/set
// and providers/disable (the client picks the model endpoint and its
// key), and auth/status with its auth/status_update notification.

// ProvidersCapabilities marks support for the providers/* methods
// (agentCapabilities.providers).
type ProvidersCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ProviderId names a configurable model provider.
type ProviderId = string

// LlmProtocol is the wire protocol of a provider: "openai",
// "anthropic", ... (an open set; "_" starts custom ones).
type LlmProtocol = string

// ListProvidersRequest is the params of providers/list.
type ListProvidersRequest struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ListProvidersResponse is the result of providers/list.
type ListProvidersResponse struct {
	Providers []ProviderInfo  `json:"providers"` // required: nil encodes as []
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil Providers as [].
func (r ListProvidersResponse) MarshalJSON() ([]byte, error) {
	type plain ListProvidersResponse
	r.Providers = nonNil(r.Providers)
	return json.Marshal(plain(r))
}

// ProviderInfo is one configurable provider: its protocols, whether it
// may be disabled, and where it sends requests now (nil: disabled). It
// never carries a header: those may hold keys.
type ProviderInfo struct {
	ProviderID ProviderId             `json:"providerId"`
	Supported  []LlmProtocol          `json:"supported"` // nil encodes as []
	Required   bool                   `json:"required"`
	Current    *ProviderCurrentConfig `json:"current"` // null: disabled
	Meta       json.RawMessage        `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil Supported as [].
func (p ProviderInfo) MarshalJSON() ([]byte, error) {
	type plain ProviderInfo
	p.Supported = nonNil(p.Supported)
	return json.Marshal(plain(p))
}

// ProviderCurrentConfig is a provider's routing without its secrets.
type ProviderCurrentConfig struct {
	APIType LlmProtocol     `json:"apiType"`
	BaseURL string          `json:"baseUrl"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// SetProviderRequest is the params of providers/set: the whole new
// configuration of one provider. Headers may hold keys: they must never
// be logged, echoed or stored.
type SetProviderRequest struct {
	ProviderID ProviderId        `json:"providerId"`
	APIType    LlmProtocol       `json:"apiType"`
	BaseURL    string            `json:"baseUrl"`
	Headers    map[string]string `json:"headers,omitempty"`
	Meta       json.RawMessage   `json:"_meta,omitempty"`
}

// String never shows the header values (they may be keys).
func (r SetProviderRequest) String() string {
	names := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		names = append(names, k)
	}
	return fmt.Sprintf("providers/set %s %s %s headers %v", r.ProviderID, r.APIType, r.BaseURL, names)
}

// GoString is String: %#v must not print the headers either.
func (r SetProviderRequest) GoString() string { return r.String() }

// SetProviderResponse is the result of providers/set ({}).
type SetProviderResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// DisableProviderRequest is the params of providers/disable.
type DisableProviderRequest struct {
	ProviderID ProviderId      `json:"providerId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// DisableProviderResponse is the result of providers/disable ({}).
type DisableProviderResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Validate checks nothing: the request has no members.
func (r *ListProvidersRequest) Validate() error { return nil }

// Validate checks providerId, apiType, and that baseUrl is an absolute
// http(s) URL; header names must be non-empty.
func (r *SetProviderRequest) Validate() error {
	switch {
	case r.ProviderID == "":
		return errRequired("providerId")
	case r.APIType == "":
		return errRequired("apiType")
	case r.BaseURL == "":
		return errRequired("baseUrl")
	}
	u, err := url.Parse(r.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("baseUrl: must be an absolute http or https URL")
	}
	for k := range r.Headers {
		if k == "" {
			return fmt.Errorf("headers: a header name is empty")
		}
	}
	return nil
}

// Validate checks providerId.
func (r *DisableProviderRequest) Validate() error {
	if r.ProviderID == "" {
		return errRequired("providerId")
	}
	return nil
}

// AuthStatusCapabilities marks support for auth/status
// (agentCapabilities.auth.status).
type AuthStatusCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// AuthState is the agent's authentication state.
type AuthState = string

// AuthState values.
const (
	AuthStateAuthenticated   AuthState = "authenticated"
	AuthStateUnauthenticated AuthState = "unauthenticated"
	AuthStateNotRequired     AuthState = "not_required"
	AuthStateUnknown         AuthState = "unknown"
)

// AuthStatusRequest is the params of auth/status ({}).
type AuthStatusRequest struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Validate checks nothing: the request has no members.
func (r *AuthStatusRequest) Validate() error { return nil }

// AuthStatusResponse is the result of auth/status, and the params of the
// auth/status_update notification.
type AuthStatusResponse struct {
	State    AuthState       `json:"state"`
	Accounts []AuthAccount   `json:"accounts,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// AuthAccount is a credential the agent uses, for display only: it names
// where a key comes from, never the key.
type AuthAccount struct {
	Label        string          `json:"label"`
	Active       *bool           `json:"active,omitempty"`
	Name         string          `json:"name,omitempty"`
	Email        string          `json:"email,omitempty"`
	Organization string          `json:"organization,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// SystemPrompt is a client's system-level instructions for a session
// (session/new and the other lifecycle requests, SDK 2.4.0 unstable):
// Mode "append" adds Content to the agent's instructions, "override"
// replaces the agent's built-in instructions with it.
type SystemPrompt struct {
	Mode    string          `json:"mode"`
	Content []ContentBlock  `json:"content"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// SystemPrompt modes.
const (
	SystemPromptAppend   = "append"
	SystemPromptOverride = "override"
)

// SessionSystemPromptCapabilities advertises systemPrompt on the session
// lifecycle requests in append mode, and in the Mode's modes.
type SessionSystemPromptCapabilities struct {
	Mode *SessionSystemPromptModeCapabilities `json:"mode,omitempty"`
	Meta json.RawMessage                      `json:"_meta,omitempty"`
}

// SessionSystemPromptModeCapabilities are the modes besides append.
type SessionSystemPromptModeCapabilities struct {
	Override *SessionSystemPromptOverrideCapabilities `json:"override,omitempty"`
	Meta     json.RawMessage                          `json:"_meta,omitempty"`
}

// SessionSystemPromptOverrideCapabilities marks support for override.
type SessionSystemPromptOverrideCapabilities struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// validateSystemPrompt checks a lifecycle request's systemPrompt: a
// mode the agent supports, at least one block, text blocks only.
func validateSystemPrompt(p *SystemPrompt) error {
	if p == nil {
		return nil
	}
	switch p.Mode {
	case SystemPromptAppend, SystemPromptOverride:
	case "":
		return errRequired("systemPrompt.mode")
	default:
		return fmt.Errorf("systemPrompt.mode: %q is not supported (append, override)", p.Mode)
	}
	if len(p.Content) == 0 {
		return fmt.Errorf("systemPrompt.content: must hold at least one text block")
	}
	for i, b := range p.Content {
		if b.Text == nil {
			return fmt.Errorf("systemPrompt.content[%d]: only text blocks are supported", i)
		}
	}
	return nil
}
