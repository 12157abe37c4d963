package host

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/policy"
)

// Routes are the model endpoints a client chose for its sessions (ACP's
// providers/*): per provider, a server and the headers its requests
// carry in place of the configured ones, or the provider disabled. A
// session opened with Routes reads them at each model request, so a
// change reaches its next request without a restart. The headers may
// hold keys: they are never logged, stored, put in an error or shown to
// the model, and the configured key is never sent to a server a client
// chose. Routes are safe for concurrent use; the zero value routes
// nothing.
type Routes struct {
	mu     sync.Mutex
	routes map[string]*route // by provider
}

// route is one provider's endpoint, or its disabling. It never changes
// once published: a change replaces it.
type route struct {
	disabled bool
	endpoint llm.Endpoint
	// secrets are the header values (and their words of 8 bytes or
	// more, a bearer token among them): what redact removes.
	secrets []string

	mu     sync.Mutex
	models map[string]agent.Model // opened through it, by model name
}

func (r *Routes) get(provider string) *route {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.routes[provider]
}

// Routed reports whether the client routed provider to an endpoint of
// its own (and did not disable it).
func (r *Routes) Routed(provider string) bool {
	rt := r.get(provider)
	return rt != nil && !rt.disabled
}

func (r *Routes) set(provider string, rt *route) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.routes == nil {
		r.routes = map[string]*route{}
	}
	r.routes[provider] = rt
}

// ProviderInfo is a provider a client may route: its protocol, whether it
// may be disabled (the default model's provider may not), and where its
// requests go now (nil: disabled). It holds no header.
type ProviderInfo struct {
	ID        string
	Protocols []string
	Required  bool
	Current   *ProviderEndpoint
}

// ProviderEndpoint is where a provider's requests go, as shown: the
// protocol and the base URL without credentials or query.
type ProviderEndpoint struct {
	Protocol, BaseURL string
}

// routable are the registered providers a client may route: those with
// a server and a way to open it at another endpoint.
func routable() []llm.ProviderInfo {
	return slices.DeleteFunc(llm.Providers(), func(p llm.ProviderInfo) bool { return p.Protocol == "" || p.OpenEndpoint == nil })
}

// Providers lists the providers r may route, and where each sends its
// requests for r's sessions.
func (h *Host) Providers(r *Routes) []ProviderInfo {
	def := h.defaultModel()
	var out []ProviderInfo
	for _, p := range routable() {
		info := ProviderInfo{ID: p.Name, Protocols: []string{p.Protocol}, Required: def != nil && def.spec.Provider == p.Name}
		switch rt := r.get(p.Name); {
		case rt != nil && rt.disabled:
		case rt != nil:
			info.Current = &ProviderEndpoint{Protocol: p.Protocol, BaseURL: shownURL(rt.endpoint.BaseURL)}
		default:
			base := h.cfg.Getenv(p.BaseURLEnv)
			if base == "" {
				base = p.DefaultBaseURL
			}
			info.Current = &ProviderEndpoint{Protocol: p.Protocol, BaseURL: shownURL(base)}
		}
		out = append(out, info)
	}
	return out
}

// shownURL is a base URL as it may be shown: without user information,
// query or fragment (where a key could hide).
func shownURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(not a URL)"
	}
	u.User, u.RawQuery, u.Fragment, u.ForceQuery = nil, "", "", false
	return u.String()
}

// SetProvider routes provider id's requests for r's sessions to baseURL
// with headers (which replace the configured key), speaking protocol.
// The sessions' next model requests go there.
func (h *Host) SetProvider(r *Routes, id, protocol, baseURL string, headers map[string]string) error {
	i := slices.IndexFunc(routable(), func(p llm.ProviderInfo) bool { return p.Name == id })
	if i < 0 {
		return fmt.Errorf("%w: providerId: unknown provider %q (%s)", ErrInvalidParams, id, strings.Join(routableNames(), ", "))
	}
	if p := routable()[i]; protocol != p.Protocol {
		return fmt.Errorf("%w: apiType: provider %q speaks %q, not %q", ErrInvalidParams, id, p.Protocol, protocol)
	}
	if err := checkBaseURL(baseURL); err != nil {
		return fmt.Errorf("%w: baseUrl: %w", ErrInvalidParams, err)
	}
	rt := &route{endpoint: llm.Endpoint{BaseURL: baseURL, Headers: maps(headers)}}
	for _, v := range headers {
		rt.secrets = append(rt.secrets, v)
		for _, w := range strings.Fields(v) {
			if len(w) >= 8 {
				rt.secrets = append(rt.secrets, w)
			}
		}
	}
	// Longest first: a whole header value goes before its words.
	slices.SortFunc(rt.secrets, func(a, b string) int { return len(b) - len(a) })
	r.set(id, rt)
	names := make([]string, 0, len(headers))
	for k := range headers {
		names = append(names, k)
	}
	slices.Sort(names)
	h.log.Info("model provider routed by the client", "provider", id, "baseUrl", shownURL(baseURL), "headers", names)
	return nil
}

// checkBaseURL refuses a base URL a client routes a provider to that is
// not the root its paths are appended to: a query or fragment ("?", "#"
// anywhere: "http://h/reset#" sends the requests to /reset) would let
// the client choose the exact path and query of the agent's requests,
// and user information is a credential in a URL (the headers carry
// those), which errors and logs could show. The URL is never echoed.
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return errors.New("must be an absolute http or https URL")
	case strings.ContainsAny(s, "?#"):
		return errors.New("must not have a query or fragment (\"?\", \"#\"): the provider's paths are appended to it")
	case u.User != nil:
		return errors.New("must not hold user information (\"user:password@\"): send credentials in headers")
	}
	return nil
}

// DisableProvider stops r's sessions from using provider id: their
// requests to its models fail until SetProvider routes it again. The
// default model's provider cannot be disabled; an unknown one is not an
// error.
func (h *Host) DisableProvider(r *Routes, id string) error {
	if def := h.defaultModel(); def != nil && def.spec.Provider == id {
		return fmt.Errorf("%w: providerId: %q is the provider of the default model (%s) and cannot be disabled", ErrInvalidParams, id, def.choice.Spec)
	}
	if !slices.ContainsFunc(routable(), func(p llm.ProviderInfo) bool { return p.Name == id }) {
		return nil
	}
	r.set(id, &route{disabled: true})
	h.log.Info("model provider disabled by the client", "provider", id)
	return nil
}

func routableNames() []string {
	var names []string
	for _, p := range routable() {
		names = append(names, p.Name)
	}
	return names
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// UsableWith is Usable for a client with routes r: the default model,
// unusable as configured for want of a key, is usable once the client
// routed its provider.
func (h *Host) UsableWith(r *Routes) error {
	if h.modelErr == nil || h.cfg.SetupError != nil {
		return h.modelErr
	}
	if def := h.defaultModel(); def != nil {
		if rt := r.get(def.spec.Provider); rt != nil && !rt.disabled {
			return nil
		}
	}
	return h.modelErr
}

// usableWith reports whether choice e can answer for a client with
// routes r: as configured, or through the route of its provider.
func usableWith(e *modelEntry, r *Routes) bool {
	if e.err == nil {
		return true
	}
	rt := r.get(e.spec.Provider)
	return rt != nil && !rt.disabled && e.spec.Provider != ""
}

// ErrProviderDisabled is the error of a model request to a provider the
// client disabled.
var ErrProviderDisabled = errors.New("provider disabled")

// modelFor is the model of choice e for a session with routes r: e's own
// when r routes nothing, else one that takes its provider's route at
// each request.
func (h *Host) modelFor(e *modelEntry, r *Routes) agent.Model {
	if r == nil {
		return e.model
	}
	return &routedModel{h: h, e: e, r: r}
}

// routedModel sends each request where the session's client routed the
// model's provider at that moment (or through the configured model).
type routedModel struct {
	h *Host
	e *modelEntry
	r *Routes
}

func (m *routedModel) Name() string { return m.e.spec.Provider }

func (m *routedModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	rt := m.r.get(m.e.spec.Provider)
	switch {
	case rt == nil && m.e.model != nil:
		return m.e.model.Stream(ctx, req)
	case rt == nil:
		return failed(m.e.err)
	case rt.disabled:
		return failed(fmt.Errorf("%w: the editor disabled the %s provider (providers/disable); route it again or pick another model", ErrProviderDisabled, m.e.spec.Provider))
	}
	model, err := rt.model(m.h, m.e)
	if err != nil {
		return failed(rt.redactErr(err))
	}
	return func(yield func(llm.Event, error) bool) {
		for ev, err := range model.Stream(ctx, req) {
			if err != nil {
				err = rt.redactErr(err)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// model opens e's model through rt (once per model).
func (rt *route) model(h *Host, e *modelEntry) (agent.Model, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if m, ok := rt.models[e.spec.Model]; ok {
		return m, nil
	}
	p, ok := llm.LookupProvider(e.spec.Provider)
	if !ok || p.OpenEndpoint == nil {
		return nil, fmt.Errorf("provider %q cannot be routed", e.spec.Provider)
	}
	m, err := p.OpenEndpoint(e.spec.Model, rt.endpoint, routedClient(h.cfg.HTTPClient))
	if err != nil {
		return nil, err
	}
	if rt.models == nil {
		rt.models = map[string]agent.Model{}
	}
	rt.models[e.spec.Model] = m
	return m, nil
}

// redact removes the route's secrets from s.
func (rt *route) redact(s string) string {
	for _, v := range rt.secrets {
		if v != "" {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// redactErr is err without the route's secrets: a provider error keeps
// its kind (retries and context overflow depend on it), a cancellation
// stays one.
func (rt *route) redactErr(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if pe, ok := errors.AsType[*llm.ProviderError](err); ok {
		cp := *pe
		cp.Message, cp.Type = rt.redact(cp.Message), rt.redact(cp.Type)
		return &cp
	}
	if msg := rt.redact(err.Error()); msg != err.Error() {
		return errors.New(msg)
	}
	return err
}

// failed is a stream that fails at once with err.
func failed(err error) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, err) }
}

// routedClient is base (nil: a default client) with a transport that
// never connects to a link-local or cloud metadata address
// (policy.CheckDialAddress), for the endpoints a client routes a provider
// to. The client chose the URL and the headers (over serve, a remote
// client), no model provider answers at those addresses, and the
// machine's credentials do: a request there (Google's wants only a
// Metadata-Flavor header) would read them from the agent, whatever the
// sandbox's network rule. A proxy from the environment still carries the
// requests it is set for, but never one to such an address. A base client with a transport of another kind
// is its owner's to guard.
func routedClient(base *http.Client) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	var tr *http.Transport
	switch t := c.Transport.(type) {
	case nil:
		tr = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		tr = t.Clone()
	default:
		return c
	}
	tr.DialContext = policy.Dialer().DialContext
	// A proxy dials for the agent: the dialler never sees the address,
	// so an address in the URL is checked before the proxy is asked (a
	// name is the proxy's to resolve).
	if proxy := tr.Proxy; proxy != nil {
		tr.Proxy = func(r *http.Request) (*url.URL, error) {
			if err := policy.CheckURLAddress(r.URL); err != nil {
				return nil, err
			}
			return proxy(r)
		}
	}
	c.Transport = tr
	return c
}
