package host

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"

	// The model choices may name any built-in provider.
	_ "github.com/acp-agent/acp-agent/agent/llm/providers"
	"github.com/acp-agent/acp-agent/agent/pricing"
	"github.com/acp-agent/acp-agent/policy"
)

// ModelChoice is one model a session can be switched to with the "model"
// option. The choices come from the config file; without one, the
// agent's single model is the only choice.
type ModelChoice struct {
	// Spec is "PROVIDER/MODEL"; it is also the option's value.
	Spec string
	// Name is shown in the editor; empty means Spec.
	Name string
	// Description is shown under the name.
	Description string
	// BaseURL overrides the provider's base URL (OPENAI_BASE_URL,
	// ANTHROPIC_BASE_URL) for this model: an Ollama or vLLM server, a
	// gateway.
	BaseURL string
	// APIKeyEnv names the environment variable holding this model's API key,
	// instead of OPENAI_API_KEY / ANTHROPIC_API_KEY.
	APIKeyEnv string
	// ThoughtLevels are the reasoning effort levels offered for this model.
	// Nil means the provider's levels when the model table says the model
	// reasons; empty means none.
	ThoughtLevels []string
	// ThoughtLevel is the level a session starts with; empty means the
	// provider's default level.
	ThoughtLevel string
	// ContextWindow is the model's context window in tokens, where the
	// model table does not know it (a local model); 0 means the table's
	// or the server's.
	ContextWindow int
}

// The options of a session (Session.Options), by id; each is also its
// category.
const (
	OptionMode         = "mode"
	OptionModel        = "model"
	OptionThoughtLevel = "thought_level"
)

// Option is one setting of a session a client offers as a choice: its
// mode, its model, and (when the model has them) its thought level.
type Option struct {
	ID, Name, Description string
	Category              string // the option's id
	Current               string
	Choices               []Choice
}

// Choice is one value of an Option.
type Choice struct {
	Value, Name, Description string
}

// levelName is a thought level's name for the user ("" and false for no
// level of ours). Switches here, not maps: nothing to build at package init.
func levelName(l string) (string, bool) {
	switch l {
	case llm.EffortOff:
		return "Off", true
	case llm.EffortLow:
		return "Low", true
	case llm.EffortMedium:
		return "Medium", true
	case llm.EffortHigh:
		return "High", true
	}
	return "", false
}

// modelEntry is a usable (or not) model choice.
type modelEntry struct {
	choice ModelChoice
	spec   agent.ModelSpec
	model  agent.Model
	err    error // why the model cannot be used
	info   *pricing.Model
	levels []string
	level  string // the default level
}

// openModels resolves the choices. The default model (cfg.Model) is
// always one of them, first if the choices do not list it.
func openModels(cfg Config) ([]*modelEntry, error) {
	choices := slices.Clone(cfg.Choices)
	if !slices.ContainsFunc(choices, func(c ModelChoice) bool { return c.Spec == cfg.Model }) {
		choices = append([]ModelChoice{{Spec: cfg.Model}}, choices...)
	}
	seen := map[string]bool{}
	var out []*modelEntry
	for _, c := range choices {
		if seen[c.Spec] {
			return nil, fmt.Errorf("%w: model %q is listed twice", agent.ErrNoModel, c.Spec)
		}
		seen[c.Spec] = true
		e := &modelEntry{choice: c}
		e.spec, e.err = agent.ParseModelSpec(c.Spec)
		if e.err == nil {
			getenv := choiceEnv(c, e.spec, cfg.Getenv)
			e.model, e.err = agent.OpenModel(e.spec, getenv, cfg.HTTPClient)
			if p, ok := llm.LookupProvider(e.spec.Provider); e.err != nil && ok && c.APIKeyEnv != "" && p.APIKeyEnv != "" && getenv(p.APIKeyEnv) == "" {
				// The provider's message names its own variable, which
				// this model does not read: name the one it does.
				e.err = fmt.Errorf("%w: %s is not set (the apiKeyEnv of model %s in the config file); set it in the environment the editor starts acp-agent with, or run offline with --model replay/default", agent.ErrNoModel, c.APIKeyEnv, c.Spec)
			}
		}
		if info, ok := cfg.Models.Lookup(e.spec.Provider, e.spec.Model); ok {
			e.info = &info
		}
		if c.ContextWindow > 0 {
			// The config's window: the context meter (usage_update)
			// and compaction use it.
			info := pricing.Model{Provider: e.spec.Provider, ID: e.spec.Model, Source: "the config file"}
			if e.info != nil {
				info = *e.info
			}
			info.ContextTokens = c.ContextWindow
			e.info = &info
		}
		if err := e.setLevels(); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (e *modelEntry) setLevels() error {
	// The provider's reasoning levels and the level sessions start
	// with: none for a provider that has none.
	pl, _ := llm.LookupProvider(e.spec.Provider)
	switch {
	case e.choice.ThoughtLevels != nil:
		for _, l := range e.choice.ThoughtLevels {
			if _, ok := levelName(l); !ok {
				return fmt.Errorf("%w: model %s: unknown thought level %q (use off, low, medium or high)", agent.ErrNoModel, e.choice.Spec, l)
			}
		}
		e.levels = e.choice.ThoughtLevels
	case e.info != nil && e.info.Reasoning:
		e.levels = pl.ReasoningLevels
	}
	if len(e.levels) == 0 {
		if e.choice.ThoughtLevel != "" {
			return fmt.Errorf("%w: model %s: thought level %q set, but the model has no thought levels", agent.ErrNoModel, e.choice.Spec, e.choice.ThoughtLevel)
		}
		return nil
	}
	e.level = e.choice.ThoughtLevel
	if e.level == "" && slices.Contains(e.levels, pl.DefaultReasoningLevel) {
		e.level = pl.DefaultReasoningLevel
	}
	if e.level == "" {
		e.level = e.levels[0]
	}
	if !slices.Contains(e.levels, e.level) {
		return fmt.Errorf("%w: model %s: thought level %q is not one of %s", agent.ErrNoModel, e.choice.Spec, e.level, strings.Join(e.levels, ", "))
	}
	return nil
}

// choiceEnv is getenv with the choice's base URL and key variable in
// place of the provider's (llm.ProviderInfo's BaseURLEnv, APIKeyEnv).
func choiceEnv(c ModelChoice, spec agent.ModelSpec, getenv func(string) string) func(string) string {
	if c.BaseURL == "" && c.APIKeyEnv == "" {
		return getenv
	}
	p, _ := llm.LookupProvider(spec.Provider)
	return func(k string) string {
		switch {
		case k != "" && k == p.BaseURLEnv && c.BaseURL != "":
			return c.BaseURL
		case k != "" && k == p.APIKeyEnv && c.APIKeyEnv != "":
			return getenv(c.APIKeyEnv)
		}
		return getenv(k)
	}
}

func (e *modelEntry) name() string {
	if e.choice.Name != "" {
		return e.choice.Name
	}
	return e.choice.Spec
}

// modelByID returns the entry with spec id.
func (h *Host) modelByID(id string) (*modelEntry, bool) {
	for _, e := range h.modelEntries() {
		if e.choice.Spec == id {
			return e, true
		}
	}
	return nil, false
}

// modelOptions are the model option of a session on model id at thought
// level level, and its thought-level option when the model has levels.
func (h *Host) modelOptions(id, level string) []Option {
	model := Option{ID: OptionModel, Name: "Model", Category: OptionModel,
		Description: "The model that answers this session's prompts.", Current: id}
	var cur *modelEntry
	for _, e := range h.modelEntries() {
		if e.choice.Spec == id {
			cur = e
		}
		desc := e.choice.Description
		if e.err != nil {
			// Listed so the user sees it, with what to set.
			desc = strings.TrimSpace(desc + " (unavailable: " + strings.TrimPrefix(e.err.Error(), agent.ErrNoModel.Error()+": ") + ")")
		}
		model.Choices = append(model.Choices, Choice{Value: e.choice.Spec, Name: e.name(), Description: desc})
	}
	opts := []Option{model}
	if cur != nil && len(cur.levels) > 0 {
		tl := Option{ID: OptionThoughtLevel, Name: "Thought level", Category: OptionThoughtLevel,
			Description: "How much the model reasons before it answers.", Current: level}
		for _, l := range cur.levels {
			name, _ := levelName(l)
			tl.Choices = append(tl.Choices, Choice{Value: l, Name: name})
		}
		opts = append(opts, tl)
	}
	return opts
}

// ModeInfo describes a session mode to the user.
type ModeInfo struct {
	ID                policy.Mode
	Name, Description string
}

// modeInfo describes a session mode to the user: its name and
// description.
func modeInfo(m policy.Mode) [2]string {
	switch m {
	case policy.ModeReadOnly:
		return [2]string{"Read only", "Plan: read and search; no edits, no commands."}
	case policy.ModeDefault:
		return [2]string{"Default", "Read freely; ask before edits and commands."}
	case policy.ModeAcceptEdits:
		return [2]string{"Accept edits", "Edit files freely; ask before commands."}
	case policy.ModeFullAccess:
		return [2]string{"Full access", "Edit and run commands without asking."}
	}
	return [2]string{}
}

// Modes are the session modes, in order.
func Modes() []ModeInfo {
	out := make([]ModeInfo, len(policy.Modes))
	for i, m := range policy.Modes {
		out[i] = ModeInfo{ID: m, Name: modeInfo(m)[0], Description: modeInfo(m)[1]}
	}
	return out
}

// modeOption is the mode option.
func modeOption(current policy.Mode) Option {
	o := Option{ID: OptionMode, Name: "Mode", Category: OptionMode, Description: "What the agent may do without asking.", Current: string(current)}
	for _, m := range Modes() {
		o.Choices = append(o.Choices, Choice{Value: string(m.ID), Name: m.Name, Description: m.Description})
	}
	return o
}

// Options is the complete option list of the session: mode, model, and
// thought level when the model has levels.
func (s *Session) Options() []Option {
	cur := s.s.CurrentModel()
	return append([]Option{modeOption(s.s.Mode())}, s.h.modelOptions(cur.ID, cur.ReasoningEffort)...)
}

// SetMode switches the session to mode and tells the client (the mode,
// and the options, whose mode option changed).
func (s *Session) SetMode(mode string) error {
	m, err := policy.ParseMode(mode)
	if err != nil {
		return paramError("modeId", err)
	}
	s.s.SetMode(m)
	s.narrowChildren(m)
	s.c.ModeChanged(m)
	s.c.OptionsChanged(s.Options())
	return nil
}

// SetOption applies one option change and returns the complete option
// list. Nothing changes when it fails. A mode change is told the client
// (ModeChanged); the options are the caller's to send.
func (s *Session) SetOption(id, value string) ([]Option, error) {
	switch id {
	case OptionModel:
		e, ok := s.h.modelByID(value)
		if !ok {
			return nil, paramError("value", fmt.Errorf("unknown model %q; the models are %s", value, s.h.modelList()))
		}
		if !usableWith(e, s.routes) {
			return nil, paramError("value", fmt.Errorf("model %s cannot be used: %v", value, e.err))
		}
		// A new model starts at its own default level: levels differ
		// between providers.
		s.s.SetModel(agent.SessionModel{ID: e.choice.Spec, Model: s.h.modelFor(e, s.routes), Name: e.spec.Model, Info: e.info, ReasoningEffort: e.level})
	case OptionMode:
		m, err := policy.ParseMode(value)
		if err != nil {
			return nil, paramError("value", err)
		}
		s.s.SetMode(m)
		s.narrowChildren(m)
		// The answer carries the options; the mode itself is announced.
		s.c.ModeChanged(m)
	case OptionThoughtLevel:
		cur := s.s.CurrentModel()
		e, ok := s.h.modelByID(cur.ID)
		if !ok || len(e.levels) == 0 {
			return nil, paramError("configId", fmt.Errorf("model %s has no thought levels", cur.ID))
		}
		if !slices.Contains(e.levels, value) {
			return nil, paramError("value", fmt.Errorf("unknown thought level %q for model %s; its levels are %s", value, cur.ID, strings.Join(e.levels, ", ")))
		}
		s.s.SetReasoningEffort(value)
	default:
		var ids []string
		for _, o := range s.Options() {
			ids = append(ids, o.ID)
		}
		return nil, paramError("configId", fmt.Errorf("unknown config option %q; the options are %s", id, strings.Join(ids, ", ")))
	}
	return s.Options(), nil
}

// modelList is the model choices' ids, for an error: at most 10, then
// how many more.
func (h *Host) modelList() string {
	var ids []string
	for _, e := range h.modelEntries() {
		ids = append(ids, e.choice.Spec)
	}
	if len(ids) > 10 {
		ids = append(ids[:10], fmt.Sprintf("and %d more", len(ids)-10))
	}
	return strings.Join(ids, ", ")
}

// KeyAdvice says where the key of the session's current model comes
// from, for the error of a provider that refused it: the variable the
// agent read (the model's own in the config file, else the provider's),
// or the client's providers/set when the client routed the provider.
func (s *Session) KeyAdvice() string {
	e, ok := s.h.modelByID(s.s.CurrentModel().ID)
	if !ok {
		return "check the model's API key"
	}
	if s.routes.Routed(e.spec.Provider) {
		return "check the key the editor set for " + e.spec.Provider + " (providers/set)"
	}
	if env := e.choice.APIKeyEnv; env != "" {
		// The config file's own variable: acp-agent login does not set it.
		return "check " + env + " in the environment the editor starts acp-agent with"
	}
	p, _ := llm.LookupProvider(e.spec.Provider)
	if p.APIKeyEnv == "" {
		return "check the model's API key"
	}
	// The environment's variable beats what acp-agent login stored.
	return "check the API key: " + p.APIKeyEnv + " in the environment the editor starts acp-agent with, else the one acp-agent login stored"
}
