package acpagent

import (
	"context"
	"strings"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// The model endpoints a client chooses (providers/*) are its
// connection's: the sessions it opens use them, other connections of
// `serve` never do (one client's key or gateway must not carry another's
// prompts). They last as long as the connection and are never stored.

var (
	_ acp.ProviderConfigurer = (*Agent)(nil)
	_ acp.AuthStatusReporter = (*Agent)(nil)
)

type routesKey struct{}

// routesOf is the model endpoints conn's client chose (never nil; none
// outside a connection).
func routesOf(conn *acp.Connection) *host.Routes {
	if conn == nil {
		return nil
	}
	return conn.Value(routesKey{}, func() any { return new(host.Routes) }).(*host.Routes)
}

// usable is why no session can start for conn's client (nil: they can),
// with its ACP error.
func (a *Agent) usable(conn *acp.Connection) error {
	if a.h.UsableWith(routesOf(conn)) == nil {
		return nil
	}
	return a.unusable()
}

// ListProviders implements acp.ProviderConfigurer: the providers the
// client may route, without their headers.
func (a *Agent) ListProviders(_ context.Context, conn *acp.Connection) ([]acp.ProviderInfo, error) {
	var out []acp.ProviderInfo
	for _, p := range a.h.Providers(routesOf(conn)) {
		info := acp.ProviderInfo{ProviderID: p.ID, Supported: p.Protocols, Required: p.Required}
		if p.Current != nil {
			info.Current = &acp.ProviderCurrentConfig{APIType: p.Current.Protocol, BaseURL: p.Current.BaseURL}
		}
		out = append(out, info)
	}
	return out, nil
}

// SetProvider implements acp.ProviderConfigurer: the sessions of the
// connection send the provider's requests there from their next one.
func (a *Agent) SetProvider(_ context.Context, conn *acp.Connection, req *acp.SetProviderRequest) error {
	return wireError(a.h.SetProvider(routesOf(conn), req.ProviderID, req.APIType, req.BaseURL, req.Headers))
}

// DisableProvider implements acp.ProviderConfigurer.
func (a *Agent) DisableProvider(_ context.Context, conn *acp.Connection, id acp.ProviderId) error {
	return wireError(a.h.DisableProvider(routesOf(conn), id))
}

// AuthStatus implements acp.AuthStatusReporter: authenticated when the
// default model can answer for this client (its key from the agent's
// environment, or its provider routed by the client), not_required for
// a provider without keys (replay), unauthenticated otherwise. The
// accounts name where the key comes from, never the key.
func (a *Agent) AuthStatus(_ context.Context, conn *acp.Connection) (*acp.AuthStatusResponse, error) {
	routes := routesOf(conn)
	if a.h.UsableWith(routes) != nil {
		return &acp.AuthStatusResponse{State: acp.AuthStateUnauthenticated}, nil
	}
	spec := a.h.DefaultModelSpec()
	provider, _, _ := strings.Cut(spec, "/")
	active := true
	for _, p := range a.h.Providers(routes) {
		if p.ID == provider && routes.Routed(provider) {
			return &acp.AuthStatusResponse{State: acp.AuthStateAuthenticated, Accounts: []acp.AuthAccount{{
				Label: provider + ": the editor's endpoint " + p.Current.BaseURL + " (providers/set)", Active: &active}}}, nil
		}
	}
	info, ok := llm.LookupProvider(provider)
	if !ok || info.APIKeyEnv == "" {
		return &acp.AuthStatusResponse{State: acp.AuthStateNotRequired}, nil
	}
	return &acp.AuthStatusResponse{State: acp.AuthStateAuthenticated, Accounts: []acp.AuthAccount{{
		Label: provider + ": the key in " + info.APIKeyEnv, Active: &active}}}, nil
}
