package host

import (
	"context"
	"fmt"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// ModelProbe is what ProbeModel found out about the default model.
type ModelProbe struct {
	// Spec is the model ("PROVIDER/MODEL"); Server the host it talks to.
	Spec, Server string
	// Unusable is why no session can start (no API key, a bad spec, a
	// setup error); nil when the model can be used.
	Unusable error
	// Reached: the server answered the model list with Models entries
	// in Took; Err is why it did not. Neither is set for a model with no
	// server (the replay model) or when the probe was skipped.
	Reached bool
	Models  int
	Took    time.Duration
	Err     error
	// NoServer: the model runs in the agent (replay).
	NoServer bool
}

// ProbeModel checks the default model as acp-agent doctor reports it:
// usable (a key, a valid spec) and, unless offline, reachable with its
// key: one model-list request, bounded by timeout. It sends no prompt.
func (h *Host) ProbeModel(ctx context.Context, offline bool, timeout time.Duration) ModelProbe {
	p := ModelProbe{Spec: h.cfg.Model}
	if h.modelErr != nil {
		p.Unusable = h.modelErr
		return p
	}
	def := h.defaultModel()
	_, p.Server = serverKey(def, h.cfg.Getenv)
	lister, ok := def.model.(llm.ModelLister)
	if !ok {
		p.NoServer = true
		return p
	}
	if offline {
		return p
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	found, err := lister.ListModels(ctx)
	p.Took = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s: %w", timeout, err)
		}
		p.Err = err
		return p
	}
	p.Reached, p.Models = true, len(found)
	return p
}
