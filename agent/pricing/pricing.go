package pricing

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// FormatVersion is the only "version" a models file may declare.
const FormatVersion = 1

// DefaultCurrency is the currency of a file that names none.
const DefaultCurrency = "USD"

// Model is one entry of a models file: what one model costs and how much it
// can read and write. Prices are per million tokens in Currency. A zero
// price or limit means unknown, never free or unlimited.
type Model struct {
	// Provider is the provider name as in --model PROVIDER/MODEL, lower case.
	Provider string `json:"provider"`
	// ID is the provider's model id.
	ID string `json:"model"`
	// Aliases are other ids of the same model (dated snapshots, "-latest").
	Aliases []string `json:"aliases,omitempty"`
	// ContextTokens is the context window: prompt plus output, in tokens.
	ContextTokens int `json:"contextWindow,omitempty"`
	// MaxInputTokens is the prompt limit, where the provider sets one below
	// the context window.
	MaxInputTokens int `json:"maxInputTokens,omitempty"`
	// MaxOutputTokens is the most the model writes in one response.
	MaxOutputTokens int `json:"maxOutputTokens,omitempty"`
	// Reasoning says the model takes a reasoning effort (OpenAI
	// reasoning_effort, Anthropic extended thinking): the agent then
	// offers a thought_level config option for it.
	Reasoning bool `json:"reasoning,omitempty"`
	// ImageInput says whether the model reads images (in prompts and in
	// tool results); nil means unknown, and the agent then assumes so only
	// for Anthropic's models.
	ImageInput *bool `json:"imageInput,omitempty"`

	InputPerMTok      float64 `json:"inputPerMTok,omitempty"`
	OutputPerMTok     float64 `json:"outputPerMTok,omitempty"`
	CacheReadPerMTok  float64 `json:"cacheReadPerMTok,omitempty"`
	CacheWritePerMTok float64 `json:"cacheWritePerMTok,omitempty"`

	// Source says where the figures come from; free text.
	Source string `json:"source,omitempty"`

	// Currency is the file's currency, set when the file is parsed.
	Currency string `json:"-"`
}

// ContextWindow returns the model's context window in tokens; 0 means
// unknown.
func (m Model) ContextWindow() int { return m.ContextTokens }

// InputLimit returns the most prompt tokens the model accepts: the smaller
// of MaxInputTokens and the context window, whichever are known; 0 means
// unknown.
func (m Model) InputLimit() int {
	switch {
	case m.MaxInputTokens > 0 && (m.ContextTokens == 0 || m.MaxInputTokens < m.ContextTokens):
		return m.MaxInputTokens
	default:
		return m.ContextTokens
	}
}

// Priced reports whether the model has both an input and an output price,
// which is what Cost needs to say anything.
func (m Model) Priced() bool { return m.InputPerMTok > 0 && m.OutputPerMTok > 0 }

// Name returns "provider/model".
func (m Model) Name() string { return m.Provider + "/" + m.ID }

// Table is a set of models to look up by provider and id. It is immutable
// and safe for concurrent use.
type Table struct {
	updated string
	source  string
	models  []Model
	// byID and byAlias index models by (lower-case provider, id).
	byID    map[key]int
	byAlias map[key]int
}

type key struct{ provider, id string }

func keyOf(provider, id string) key { return key{strings.ToLower(provider), id} }

// yes and no are what defaultModels' ImageInput points to.
var yes, no = true, false

// defaultTable indexes defaultModels (models_table.go: models.json as Go
// values, so that no start parses JSON for it).
var defaultTable = sync.OnceValue(func() *Table {
	t := &Table{updated: defaultUpdated, source: defaultSource, models: make([]Model, 0, len(defaultModels)),
		byID: make(map[key]int, len(defaultModels)), byAlias: make(map[key]int)}
	for i, m := range defaultModels {
		if err := t.add(i, m); err != nil {
			panic("pricing: models_table.go: " + err.Error())
		}
	}
	return t
})

// Default returns the table of the built-in models.json, made once.
func Default() *Table { return defaultTable() }

// Updated returns the file's "updated" date (YYYY-MM-DD), or "".
func (t *Table) Updated() string { return t.updated }

// Source returns the file's "source" text, or "".
func (t *Table) Source() string { return t.source }

// Len returns the number of entries.
func (t *Table) Len() int { return len(t.models) }

// Models returns a copy of the entries, in file order (after Merge: the
// base file's order, replaced entries in place, added entries last).
func (t *Table) Models() []Model {
	out := make([]Model, len(t.models))
	for i, m := range t.models {
		out[i] = m.clone()
	}
	return out
}

func (m Model) clone() Model {
	m.Aliases = slices.Clone(m.Aliases)
	return m
}

// Lookup finds the model by provider (case-insensitive) and id: an exact
// id, then an alias, then the same two with a trailing date removed (see
// the package documentation). ok is false for a model the table does not
// know, which then has no price and no known context window.
func (t *Table) Lookup(provider, model string) (m Model, ok bool) {
	if t == nil {
		return Model{}, false
	}
	k := keyOf(provider, model)
	if i, ok := t.find(k); ok {
		return t.models[i].clone(), true
	}
	if base, ok := stripDate(model); ok {
		k.id = base
		if i, ok := t.find(k); ok {
			return t.models[i].clone(), true
		}
	}
	return Model{}, false
}

func (t *Table) find(k key) (int, bool) {
	if i, ok := t.byID[k]; ok {
		return i, true
	}
	i, ok := t.byAlias[k]
	return i, ok
}

// stripDate removes a trailing snapshot date: "-YYYY-MM-DD" (OpenAI) or
// "-YYYYMMDD" (Anthropic). The base must not be empty and the month and day
// must be plausible (01-12, 01-31).
func stripDate(id string) (string, bool) {
	n := len(id)
	if n > 11 && id[n-11] == '-' && id[n-6] == '-' && id[n-3] == '-' &&
		digits(id[n-10:n-6]) && digits(id[n-5:n-3]) && digits(id[n-2:]) &&
		validMonthDay(id[n-5:n-3], id[n-2:]) {
		return id[:n-11], true
	}
	if n > 9 && id[n-9] == '-' && digits(id[n-8:]) && validMonthDay(id[n-4:n-2], id[n-2:]) {
		return id[:n-9], true
	}
	return "", false
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func validMonthDay(mm, dd string) bool {
	m := int(mm[0]-'0')*10 + int(mm[1]-'0')
	d := int(dd[0]-'0')*10 + int(dd[1]-'0')
	return m >= 1 && m <= 12 && d >= 1 && d <= 31
}

// Merge returns a new table: t with the entries of override added, an
// override entry replacing t's entry of the same provider and model id
// whole (fields it leaves out become unknown; they are not inherited).
// Where an alias of an override entry names the same id as an alias of a
// base entry, the override wins; a model id always wins over an alias.
// Neither table is changed. override may be nil.
func (t *Table) Merge(override *Table) *Table {
	if override == nil || len(override.models) == 0 {
		return t
	}
	out := &Table{updated: t.updated, source: t.source}
	out.models = make([]Model, len(t.models), len(t.models)+len(override.models))
	copy(out.models, t.models)
	fromOverride := make([]bool, len(t.models), cap(out.models))
	for _, m := range override.models {
		if i, ok := t.byID[keyOf(m.Provider, m.ID)]; ok {
			out.models[i] = m
			fromOverride[i] = true
			continue
		}
		out.models = append(out.models, m)
		fromOverride = append(fromOverride, true)
	}
	out.byID = make(map[key]int, len(out.models))
	out.byAlias = make(map[key]int)
	for i, m := range out.models {
		out.byID[keyOf(m.Provider, m.ID)] = i
	}
	// Base aliases first, so override aliases overwrite them.
	for _, wantOverride := range []bool{false, true} {
		for i, m := range out.models {
			if fromOverride[i] != wantOverride {
				continue
			}
			for _, a := range m.Aliases {
				out.byAlias[keyOf(m.Provider, a)] = i
			}
		}
	}
	return out
}

// DefaultOverridePath returns where the user's override file lives:
// $XDG_CONFIG_HOME/acp-agent/models.json, or $HOME/.config/acp-agent/models.json
// when XDG_CONFIG_HOME is unset or not absolute; "" when neither is known.
// The file need not exist.
func DefaultOverridePath(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "acp-agent", "models.json")
}
