package host

import (
	"cmp"
	"context"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
)

// DiscoveryTimeout bounds one server's model listing.
const DiscoveryTimeout = 5 * time.Second

// discovery is the background model listing of a Host: started once,
// by the first session, and waited for by Close.
type discovery struct {
	once   sync.Once
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the listing has been merged
}

// startDiscovery lists the configured servers' models in the background,
// once, if the config asks for it; it never delays the caller.
func (h *Host) startDiscovery() {
	if !h.cfg.DiscoverModels {
		return
	}
	h.disc.once.Do(func() {
		h.disc.wg.Go(func() {
			defer close(h.disc.done)
			h.discoverModels(h.disc.ctx)
		})
	})
}

// DiscoveryDone is closed once the background model listing is merged
// (never, when discovery is off or no session has started it).
func (h *Host) DiscoveryDone() <-chan struct{} { return h.disc.done }

// Close stops the background work of the host (the model listing) and
// waits for it. Sessions are closed by their adapters.
func (h *Host) Close() {
	h.disc.cancel()
	h.disc.wg.Wait()
}

// modelServer is one server the configured models talk to: the provider
// instance of the first choice that uses it, which lists for all.
type modelServer struct {
	key    string
	host   string
	lister llm.ModelLister
	from   *modelEntry
	found  []llm.ServerModel
}

// discoverModels asks every server of a usable configured model which
// models it offers (each within DiscoveryTimeout, all at once), merges
// them into the model choices after the configured ones, fills context
// windows the table does not know, and sends each session the new
// options.
func (h *Host) discoverModels(ctx context.Context) {
	var servers []*modelServer
	for _, e := range h.modelEntries() {
		lister, ok := e.model.(llm.ModelLister)
		if e.err != nil || !ok {
			continue
		}
		key, host := serverKey(e, h.cfg.Getenv)
		if !slices.ContainsFunc(servers, func(s *modelServer) bool { return s.key == key }) {
			servers = append(servers, &modelServer{key: key, host: host, lister: lister, from: e})
		}
	}
	var wg sync.WaitGroup
	var failMu sync.Mutex
	var failed []string
	for _, s := range servers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, DiscoveryTimeout)
			defer cancel()
			found, err := s.lister.ListModels(ctx)
			if err != nil {
				h.log.Info("model discovery failed", "server", s.host, "error", err)
				failMu.Lock()
				failed = append(failed, s.host+": "+err.Error())
				failMu.Unlock()
				return
			}
			s.found = found
			h.log.Debug("models discovered", "server", s.host, "count", len(found))
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	if len(failed) > 0 {
		// Once (discovery runs once), in the sessions open now.
		slices.Sort(failed)
		n := Notice{Severity: NoticeWarning, Minor: true, Title: "Model discovery failed",
			Description: "The model picker lists only the configured models: listing the server's models failed (" + strings.Join(failed, "; ") +
				"). Prompts may fail the same way: check the base URL and the API key (acp-agent doctor checks both)."}
		for _, hs := range h.liveSessions() {
			hs.notify(n)
		}
	}
	if !h.mergeDiscovered(servers) {
		return
	}
	for _, hs := range h.liveSessions() {
		cur := hs.s.CurrentModel()
		if e, ok := h.modelByID(cur.ID); ok && cur.Info == nil && e.info != nil {
			hs.s.SetModelInfo(cur.ID, e.info)
		}
		hs.c.OptionsChanged(hs.Options())
	}
}

// serverKey names the server a choice's model talks to: its provider,
// base URL and key variable; host is for the log.
func serverKey(e *modelEntry, getenv func(string) string) (key, host string) {
	var base string
	if p, ok := llm.LookupProvider(e.spec.Provider); ok && p.BaseURLEnv != "" {
		base = choiceEnv(e.choice, e.spec, getenv)(p.BaseURLEnv)
	}
	host = e.spec.Provider
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		host = u.Host
	}
	return e.spec.Provider + "\x00" + base + "\x00" + e.choice.APIKeyEnv, host
}

// mergeDiscovered adds the servers' models to the choices and fills the
// context windows of known ones; it reports whether anything changed.
func (h *Host) mergeDiscovered(servers []*modelServer) bool {
	h.modelsMu.Lock()
	defer h.modelsMu.Unlock()
	models := slices.Clone(h.models)
	changed := false
	var added []*modelEntry
	for _, s := range servers {
		for _, m := range s.found {
			if !plausibleModelID(m.ID) {
				continue // a server's list is untrusted: nothing unprintable or huge in the picker
			}
			if !plausibleModelID(m.Name) {
				m.Name = ""
			}
			spec := s.from.spec.Provider + "/" + m.ID
			if i := slices.IndexFunc(models, func(e *modelEntry) bool { return e.choice.Spec == spec }); i >= 0 {
				if e := withServerLimits(models[i], m); e != models[i] {
					models[i], changed = e, true
				}
				continue
			}
			if slices.ContainsFunc(added, func(e *modelEntry) bool { return e.choice.Spec == spec }) {
				continue
			}
			e := &modelEntry{
				choice: ModelChoice{Spec: spec, Name: m.Name, Description: "Offered by " + s.host,
					BaseURL: s.from.choice.BaseURL, APIKeyEnv: s.from.choice.APIKeyEnv},
				spec:  agent.ModelSpec{Provider: s.from.spec.Provider, Model: m.ID},
				model: s.from.model,
			}
			if info, ok := h.cfg.Models.Lookup(e.spec.Provider, e.spec.Model); ok {
				e.info = &info
			}
			e = withServerLimits(e, m)
			if e.setLevels() != nil {
				continue
			}
			added = append(added, e)
		}
	}
	slices.SortFunc(added, func(x, y *modelEntry) int { return cmp.Compare(x.choice.Spec, y.choice.Spec) })
	if len(added) == 0 && !changed {
		return false
	}
	h.models = append(models, added...)
	if i := slices.IndexFunc(h.models, func(e *modelEntry) bool { return h.def != nil && e.choice.Spec == h.def.choice.Spec }); i >= 0 {
		h.def = h.models[i]
	}
	return true
}

// withServerLimits returns e with the context window and output limit the
// server reported where the table knows none (a copy; entries are not
// changed once published), or e itself.
func withServerLimits(e *modelEntry, m llm.ServerModel) *modelEntry {
	if m.ContextWindow <= 0 || (e.info != nil && e.info.ContextWindow() > 0) {
		return e
	}
	info := pricing.Model{Provider: e.spec.Provider, ID: e.spec.Model, Source: "the server's model list"}
	if e.info != nil {
		info = *e.info
	}
	info.ContextTokens = m.ContextWindow
	if info.MaxOutputTokens == 0 {
		info.MaxOutputTokens = m.MaxOutputTokens
	}
	c := *e
	c.info = &info
	return &c
}

// modelEntries is the current model choices (a snapshot).
func (h *Host) modelEntries() []*modelEntry {
	h.modelsMu.RLock()
	defer h.modelsMu.RUnlock()
	return h.models
}

// defaultModel is the default choice.
func (h *Host) defaultModel() *modelEntry {
	h.modelsMu.RLock()
	defer h.modelsMu.RUnlock()
	return h.def
}

// plausibleModelID reports whether a model id (or name) from a server is
// fit for the picker and for requests: at most 200 bytes of printable
// UTF-8 without spaces at its ends.
func plausibleModelID(id string) bool {
	if len(id) > 200 || !utf8.ValidString(id) || strings.TrimSpace(id) != id {
		return false
	}
	for _, r := range id {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
