package acpagent

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	// The model choices may name any built-in provider.
	_ "github.com/acp-agent/acp-agent/agent/llm/providers"
	"github.com/acp-agent/acp-agent/agent/pricing"
	"github.com/acp-agent/acp-agent/policy"
)

// ModelChoice is one model a session can be switched to with the "model"
// config option. The choices come from the config file; without one, the
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

// Config option ids.
const (
	ConfigOptionModel        = "model"
	ConfigOptionThoughtLevel = "thought_level"
)

var levelNames = map[string]string{
	llm.EffortOff: "Off", llm.EffortLow: "Low", llm.EffortMedium: "Medium", llm.EffortHigh: "High",
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
			e.model, e.err = agent.OpenModel(e.spec, choiceEnv(c, e.spec, cfg.Getenv), cfg.HTTPClient)
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
			if _, ok := levelNames[l]; !ok {
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
func (a *Agent) modelByID(id string) (*modelEntry, bool) {
	for _, e := range a.modelEntries() {
		if e.choice.Spec == id {
			return e, true
		}
	}
	return nil, false
}

// configOptions is the complete config option list of a session on model
// id at thought level level.
func (a *Agent) configOptions(id, level string) []acp.SessionConfigOption {
	model := acp.SessionConfigOption{
		ID: ConfigOptionModel, Name: "Model", Category: acp.SessionConfigOptionCategoryModel,
		Description: "The model that answers this session's prompts.",
		Select:      &acp.SessionConfigSelect{CurrentValue: acp.SessionConfigValueId(id)},
	}
	var cur *modelEntry
	for _, e := range a.modelEntries() {
		if e.choice.Spec == id {
			cur = e
		}
		desc := e.choice.Description
		if e.err != nil {
			// Listed so the user sees it, with what to set.
			desc = strings.TrimSpace(desc + " (unavailable: " + strings.TrimPrefix(e.err.Error(), agent.ErrNoModel.Error()+": ") + ")")
		}
		model.Select.Options.Options = append(model.Select.Options.Options, acp.SessionConfigSelectOption{
			Value: acp.SessionConfigValueId(e.choice.Spec), Name: e.name(), Description: desc,
		})
	}
	opts := []acp.SessionConfigOption{model}
	if cur != nil && len(cur.levels) > 0 {
		tl := acp.SessionConfigOption{
			ID: ConfigOptionThoughtLevel, Name: "Thought level", Category: acp.SessionConfigOptionCategoryThoughtLevel,
			Description: "How much the model reasons before it answers.",
			Select:      &acp.SessionConfigSelect{CurrentValue: acp.SessionConfigValueId(level)},
		}
		for _, l := range cur.levels {
			tl.Select.Options.Options = append(tl.Select.Options.Options, acp.SessionConfigSelectOption{
				Value: acp.SessionConfigValueId(l), Name: levelNames[l],
			})
		}
		opts = append(opts, tl)
	}
	return opts
}

// ConfigOptionMode is the id of the mode config option, kept in sync with
// the session mode.
const ConfigOptionMode = "mode"

// modeInfo describes the session modes to the user.
var modeInfo = map[policy.Mode][2]string{
	policy.ModeReadOnly:    {"Read only", "Plan: read and search; no edits, no commands."},
	policy.ModeDefault:     {"Default", "Read freely; ask before edits and commands."},
	policy.ModeAcceptEdits: {"Accept edits", "Edit files freely; ask before commands."},
	policy.ModeFullAccess:  {"Full access", "Edit and run commands without asking."},
}

// modeState is session/new's modes.
func modeState(current policy.Mode) *acp.SessionModeState {
	st := &acp.SessionModeState{CurrentModeID: acp.SessionModeId(current)}
	for _, m := range policy.Modes {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{ID: acp.SessionModeId(m), Name: modeInfo[m][0], Description: modeInfo[m][1]})
	}
	return st
}

// modeOption is the mode config option.
func modeOption(current policy.Mode) acp.SessionConfigOption {
	o := acp.SessionConfigOption{ID: ConfigOptionMode, Name: "Mode", Category: acp.SessionConfigOptionCategoryMode,
		Description: "What the agent may do without asking.",
		Select:      &acp.SessionConfigSelect{CurrentValue: acp.SessionConfigValueId(current)}}
	for _, m := range policy.Modes {
		o.Select.Options.Options = append(o.Select.Options.Options, acp.SessionConfigSelectOption{
			Value: acp.SessionConfigValueId(m), Name: modeInfo[m][0], Description: modeInfo[m][1]})
	}
	return o
}

// sessionOptions is the complete config option list of s: mode, model,
// and thought level when the model has levels.
func (a *Agent) sessionOptions(s *agent.Session) []acp.SessionConfigOption {
	cur := s.CurrentModel()
	return append([]acp.SessionConfigOption{modeOption(s.Mode())}, a.configOptions(cur.ID, cur.ReasoningEffort)...)
}

// setMode switches s to mode and tells the client (current_mode_update,
// and the config options, whose mode option changed). It runs on the read
// loop, so the updates are posted without waiting.
func (a *Agent) setMode(as *acpSession, mode string) error {
	s := as.s
	m, err := policy.ParseMode(mode)
	if err != nil {
		return fmt.Errorf("%w: modeId: %v", acp.ErrInvalidParams, err)
	}
	s.SetMode(m)
	as.post(acp.SessionUpdate{CurrentModeUpdate: &acp.CurrentModeUpdate{CurrentModeID: acp.SessionModeId(m)}})
	as.post(acp.SessionUpdate{ConfigOptionUpdate: &acp.ConfigOptionUpdate{ConfigOptions: a.sessionOptions(s)}})
	return nil
}

// errUnknownConfigValue is wrapped for a value that is not one of an
// option's choices.
var errUnknownConfigValue = errors.New("not one of the option's values")

// setConfigOption applies one config change to s and returns the complete
// option list. Nothing changes when it fails.
func (a *Agent) setConfigOption(as *acpSession, req *acp.SetSessionConfigOptionRequest) ([]acp.SessionConfigOption, error) {
	s := as.s
	if req.Value.ValueID == nil {
		return nil, fmt.Errorf("%w: value: option %q takes a value id, not a boolean", acp.ErrInvalidParams, req.ConfigID)
	}
	value := string(*req.Value.ValueID)
	switch req.ConfigID {
	case ConfigOptionModel:
		e, ok := a.modelByID(value)
		if !ok {
			return nil, fmt.Errorf("%w: value: %q is %w %q", acp.ErrInvalidParams, value, errUnknownConfigValue, ConfigOptionModel)
		}
		if e.err != nil {
			return nil, fmt.Errorf("%w: value: model %s cannot be used: %v", acp.ErrInvalidParams, value, e.err)
		}
		// A new model starts at its own default level: levels differ
		// between providers.
		s.SetModel(agent.SessionModel{ID: e.choice.Spec, Model: e.model, Name: e.spec.Model, Info: e.info, ReasoningEffort: e.level})
	case ConfigOptionMode:
		m, err := policy.ParseMode(value)
		if err != nil {
			return nil, fmt.Errorf("%w: value: %v", acp.ErrInvalidParams, err)
		}
		s.SetMode(m)
		// The answer carries the options; the mode itself is announced.
		as.post(acp.SessionUpdate{CurrentModeUpdate: &acp.CurrentModeUpdate{CurrentModeID: acp.SessionModeId(m)}})
	case ConfigOptionThoughtLevel:
		cur := s.CurrentModel()
		e, ok := a.modelByID(cur.ID)
		if !ok || len(e.levels) == 0 {
			return nil, fmt.Errorf("%w: configId: model %s has no thought levels", acp.ErrInvalidParams, cur.ID)
		}
		if !slices.Contains(e.levels, value) {
			return nil, fmt.Errorf("%w: value: %q is %w %q (%s)", acp.ErrInvalidParams, value, errUnknownConfigValue, ConfigOptionThoughtLevel, strings.Join(e.levels, ", "))
		}
		s.SetReasoningEffort(value)
	default:
		return nil, fmt.Errorf("%w: configId: unknown config option %q", acp.ErrInvalidParams, req.ConfigID)
	}
	return a.sessionOptions(s), nil
}
