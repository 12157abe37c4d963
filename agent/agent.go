package agent

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/acp"
)

// Config configures an Agent.
type Config struct {
	// Model is "PROVIDER/MODEL"; empty means DefaultModel.
	Model string
	// Getenv reads provider settings (API keys, base URLs); nil means
	// os.Getenv. Tests pass their own so they never see the real keys.
	Getenv func(string) string
	// HTTPClient is used for provider requests; nil means a default client.
	HTTPClient *http.Client
	// Logger receives diagnostics (never the API key); nil discards them.
	Logger *slog.Logger
	// Version is reported in agentInfo.
	Version string
}

// Agent implements acp.Agent: it creates sessions bound to one model.
type Agent struct {
	cfg      Config
	log      *slog.Logger
	spec     ModelSpec
	model    Model
	modelErr error // why no model is usable; reported at session/new

	mu       sync.Mutex
	sessions map[string]*Session
}

var _ acp.Agent = (*Agent)(nil)

// New returns an Agent. A model that cannot be used is not an error here:
// initialize must still succeed, and session/new explains what to set.
func New(cfg Config) *Agent {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := &Agent{cfg: cfg, log: cfg.Logger, sessions: make(map[string]*Session)}
	a.spec, a.modelErr = ParseModelSpec(cfg.Model)
	if a.modelErr == nil {
		a.model, a.modelErr = OpenModel(a.spec, cfg.Getenv, cfg.HTTPClient)
	}
	if a.modelErr != nil {
		a.log.Warn("no usable model", "error", a.modelErr)
	}
	return a
}

// authMethodID is the one authentication method we advertise when no model
// is usable: the user configures the provider and the client retries.
const authMethodID = "configure-model"

// Initialize implements acp.Agent. It advertises only what is implemented.
func (a *Agent) Initialize(_ context.Context, _ *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	resp := &acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionV1,
		AgentCapabilities: acp.AgentCapabilities{
			PromptCapabilities: acp.PromptCapabilities{Image: true, EmbeddedContext: true},
		},
		AgentInfo:   &acp.Implementation{Name: "acp-agent", Title: "ACP Agent", Version: a.cfg.Version},
		AuthMethods: []acp.AuthMethod{},
	}
	if a.modelErr != nil {
		resp.AuthMethods = append(resp.AuthMethods, acp.AuthMethod{Agent: &acp.AuthMethodAgent{
			ID: authMethodID, Name: "Configure a model", Description: a.modelErr.Error(),
		}})
	}
	return resp, nil
}

// Authenticate implements acp.Agent. The model is configured through the
// environment and flags, so authenticating only checks that it is usable.
func (a *Agent) Authenticate(_ context.Context, req *acp.AuthenticateRequest) error {
	if req.MethodID != authMethodID {
		return fmt.Errorf("%w: methodId: unknown authentication method %q", acp.ErrInvalidParams, req.MethodID)
	}
	if a.modelErr != nil {
		return fmt.Errorf("%w: %v", acp.ErrAuthRequired, a.modelErr)
	}
	return nil
}

// NewSession implements acp.Agent.
func (a *Agent) NewSession(_ context.Context, req *acp.NewSessionRequest, client *acp.ClientConn) (acp.Session, *acp.NewSessionResponse, error) {
	if a.modelErr != nil {
		return nil, nil, fmt.Errorf("%w: %v", acp.ErrAuthRequired, a.modelErr)
	}
	s := newSession(uuid.NewString(), req.CWD, a.model, a.spec, client, a.log)
	a.mu.Lock()
	a.sessions[s.id] = s
	a.mu.Unlock()
	a.log.Info("session created", "session", s.id, "cwd", s.cwd, "model", a.spec.String())
	return s, &acp.NewSessionResponse{SessionID: s.id}, nil
}

func (a *Agent) forget(id string) {
	a.mu.Lock()
	delete(a.sessions, id)
	a.mu.Unlock()
}
