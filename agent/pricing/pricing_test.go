package pricing

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEmbeddedFileParsesWithKnownWindowsAndSources(t *testing.T) {
	tab := Default()
	require.NotNil(t, tab)
	assert.Same(t, tab, Default(), "Default parses once")
	assert.Regexp(t, `^\d{4}-\d{2}-\d{2}$`, tab.Updated())
	assert.Contains(t, tab.Source(), "models.dev")
	require.Greater(t, tab.Len(), 0)

	providers := map[string]bool{}
	for i, m := range tab.Models() {
		name := m.Name()
		providers[m.Provider] = true
		assert.Greater(t, m.ContextWindow(), 0, "models[%d] %s: context window", i, name)
		assert.Greater(t, m.MaxOutputTokens, 0, "models[%d] %s: max output", i, name)
		assert.True(t, m.Priced(), "models[%d] %s: input and output prices", i, name)
		assert.NotEmpty(t, m.Source, "models[%d] %s: source", i, name)
		assert.Equal(t, "USD", m.Currency, "models[%d] %s", i, name)
		assert.Equal(t, strings.ToLower(m.Provider), m.Provider, "models[%d] %s", i, name)
	}
	for _, p := range []string{"openai", "anthropic", "google"} {
		assert.True(t, providers[p], "provider %s covered", p)
	}
}

func TestDefaultModelIsPriced(t *testing.T) {
	// agent.DefaultModel is "openai/gpt-4.1".
	m, ok := Default().Lookup("openai", "gpt-4.1")
	require.True(t, ok)
	assert.Equal(t, 1047576, m.ContextWindow())
	assert.Equal(t, 32768, m.MaxOutputTokens)
	assert.Equal(t, 2.0, m.InputPerMTok)
	assert.Equal(t, 8.0, m.OutputPerMTok)
	assert.Equal(t, 0.5, m.CacheReadPerMTok)
	assert.Zero(t, m.CacheWritePerMTok, "no figure: unknown")
}

func TestLookup(t *testing.T) {
	tab, err := Parse([]byte(`{"version":1,"models":[
	 {"provider":"openai","model":"gpt-4.1","aliases":["gpt-4.1-latest"],"contextWindow":1000,"inputPerMTok":2,"outputPerMTok":8},
	 {"provider":"openai","model":"gpt-4o","contextWindow":128000,"inputPerMTok":2.5,"outputPerMTok":10},
	 {"provider":"openai","model":"gpt-4o-2024-05-13","contextWindow":128000,"inputPerMTok":5,"outputPerMTok":15},
	 {"provider":"Anthropic","model":"claude-sonnet-4-5","contextWindow":200000,"inputPerMTok":3,"outputPerMTok":15},
	 {"provider":"anthropic","model":"claude-opus-4-0","aliases":["claude-opus-4-20250514"],"contextWindow":200000,"inputPerMTok":15,"outputPerMTok":75}
	]}`))
	require.NoError(t, err)

	tests := []struct {
		name, provider, model string
		want                  string // "provider/model" found, "" for not found
	}{
		{"exact id", "openai", "gpt-4.1", "openai/gpt-4.1"},
		{"alias", "openai", "gpt-4.1-latest", "openai/gpt-4.1"},
		{"dashed date suffix falls back to the base id", "openai", "gpt-4.1-2025-04-14", "openai/gpt-4.1"},
		{"compact date suffix falls back to the base id", "anthropic", "claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5"},
		{"an exact dated entry wins over the date rule", "openai", "gpt-4o-2024-05-13", "openai/gpt-4o-2024-05-13"},
		{"another snapshot of the same model uses the base", "openai", "gpt-4o-2024-08-06", "openai/gpt-4o"},
		{"dated alias is found exactly", "anthropic", "claude-opus-4-20250514", "anthropic/claude-opus-4-0"},
		{"provider is case-insensitive", "OpenAI", "gpt-4.1", "openai/gpt-4.1"},
		{"provider in the file is case-insensitive too", "anthropic", "claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"},
		{"model id is case-sensitive", "openai", "GPT-4.1", ""},
		{"wrong provider", "anthropic", "gpt-4.1", ""},
		{"local model through the openai provider", "openai", "llama3.1:8b", ""},
		{"slashed model through the openai provider", "openai", "meta-llama/Llama-3.3-70B-Instruct", ""},
		{"date rule needs a known base", "openai", "unknown-2025-04-14", ""},
		{"impossible month is not a date", "openai", "gpt-4.1-2025-13-01", ""},
		{"impossible day is not a date", "anthropic", "claude-sonnet-4-5-20250900", ""},
		{"prefix of an id is not a match", "openai", "gpt-4", ""},
		{"version number is not a date", "openai", "gpt-4.1-mini", ""},
		{"empty model", "openai", "", ""},
		{"empty provider", "", "gpt-4.1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := tab.Lookup(tt.provider, tt.model)
			if tt.want == "" {
				assert.False(t, ok, "found %s", m.Name())
				assert.Zero(t, m.ContextWindow())
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want, m.Name())
		})
	}
}

func TestLookupOnNilTableFindsNothing(t *testing.T) {
	var tab *Table
	_, ok := tab.Lookup("openai", "gpt-4.1")
	assert.False(t, ok)
}

func TestLookupResultDoesNotAliasTheTable(t *testing.T) {
	m, ok := Default().Lookup("anthropic", "claude-sonnet-4-5")
	require.True(t, ok)
	require.NotEmpty(t, m.Aliases)
	m.Aliases[0] = "changed"
	again, _ := Default().Lookup("anthropic", "claude-sonnet-4-5")
	assert.Equal(t, "claude-sonnet-4-5-20250929", again.Aliases[0])
}

func TestEmbeddedDatedIDsResolve(t *testing.T) {
	tests := []struct{ provider, model, want string }{
		{"openai", "gpt-4.1-2025-04-14", "gpt-4.1"},
		{"openai", "gpt-5-mini-2025-08-07", "gpt-5-mini"},
		{"anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"anthropic", "claude-haiku-4-5-20251001", "claude-haiku-4-5"},
		{"openai", "gpt-4o-2024-05-13", "gpt-4o-2024-05-13"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			m, ok := Default().Lookup(tt.provider, tt.model)
			require.True(t, ok)
			assert.Equal(t, tt.want, m.ID)
		})
	}
}

func TestMerge(t *testing.T) {
	base, err := Parse([]byte(`{"version":1,"updated":"2026-01-02","models":[
	 {"provider":"openai","model":"gpt-4.1","aliases":["gpt-4.1-latest"],"contextWindow":1000,"maxOutputTokens":100,"inputPerMTok":2,"outputPerMTok":8,"cacheReadPerMTok":0.5},
	 {"provider":"openai","model":"gpt-4o","aliases":["shared"],"contextWindow":128000,"inputPerMTok":2.5,"outputPerMTok":10},
	 {"provider":"anthropic","model":"claude-x","aliases":["claude-x-latest"],"contextWindow":200000,"inputPerMTok":3,"outputPerMTok":15}
	]}`))
	require.NoError(t, err)
	over, err := Parse([]byte(`{"version":1,"currency":"EUR","models":[
	 {"provider":"OpenAI","model":"gpt-4.1","contextWindow":2000,"inputPerMTok":1,"outputPerMTok":4},
	 {"provider":"openai","model":"llama3.1:8b","aliases":["shared"],"contextWindow":8192},
	 {"provider":"anthropic","model":"claude-x-latest","contextWindow":3000}
	]}`))
	require.NoError(t, err)

	merged := base.Merge(over)

	t.Run("override replaces an entry by provider and model, whole", func(t *testing.T) {
		m, ok := merged.Lookup("openai", "gpt-4.1")
		require.True(t, ok)
		assert.Equal(t, 2000, m.ContextWindow())
		assert.Equal(t, 1.0, m.InputPerMTok)
		assert.Zero(t, m.MaxOutputTokens, "left out: unknown, not inherited")
		assert.Zero(t, m.CacheReadPerMTok, "left out: unknown, not inherited")
		assert.Empty(t, m.Aliases)
		assert.Equal(t, "EUR", m.Currency, "an entry keeps its own file's currency")
	})
	t.Run("override adds an entry", func(t *testing.T) {
		m, ok := merged.Lookup("openai", "llama3.1:8b")
		require.True(t, ok)
		assert.Equal(t, 8192, m.ContextWindow())
		assert.False(t, m.Priced())
	})
	t.Run("override id wins over a base alias", func(t *testing.T) {
		m, ok := merged.Lookup("anthropic", "claude-x-latest")
		require.True(t, ok)
		assert.Equal(t, "claude-x-latest", m.ID)
		assert.Equal(t, 3000, m.ContextWindow())
	})
	t.Run("override alias wins over a base alias", func(t *testing.T) {
		m, ok := merged.Lookup("openai", "shared")
		require.True(t, ok)
		assert.Equal(t, "llama3.1:8b", m.ID)
	})
	t.Run("untouched entries stay", func(t *testing.T) {
		m, ok := merged.Lookup("anthropic", "claude-x")
		require.True(t, ok)
		assert.Equal(t, 3.0, m.InputPerMTok)
		assert.Equal(t, "USD", m.Currency)
	})
	t.Run("order: base order, replaced in place, added last", func(t *testing.T) {
		var names []string
		for _, m := range merged.Models() {
			names = append(names, m.Name())
		}
		assert.Equal(t, []string{"openai/gpt-4.1", "openai/gpt-4o", "anthropic/claude-x", "openai/llama3.1:8b", "anthropic/claude-x-latest"}, names)
		assert.Equal(t, "2026-01-02", merged.Updated(), "the base file's header is kept")
	})
	t.Run("neither input table changes", func(t *testing.T) {
		m, _ := base.Lookup("openai", "gpt-4.1")
		assert.Equal(t, 1000, m.ContextWindow())
		m, _ = base.Lookup("openai", "gpt-4.1-latest")
		assert.Equal(t, "gpt-4.1", m.ID)
		m, _ = base.Lookup("anthropic", "claude-x-latest")
		assert.Equal(t, "claude-x", m.ID)
		assert.Equal(t, 3, base.Len())
		assert.Equal(t, 3, over.Len())
	})
	t.Run("nil or empty override returns the base", func(t *testing.T) {
		assert.Same(t, base, base.Merge(nil))
		empty, err := Parse([]byte(`{"version":1,"models":[]}`))
		require.NoError(t, err)
		assert.Same(t, base, base.Merge(empty))
	})
}

func TestParseRejects(t *testing.T) {
	entry := func(extra string) string {
		return `{"version":1,"models":[{"provider":"openai","model":"a","inputPerMTok":1,"outputPerMTok":2},` +
			`{"provider":"openai","model":"b"` + extra + `}]}`
	}
	tests := []struct {
		name, data string
		want       []string // substrings of the error
	}{
		{"unknown entry field names the entry and field", entry(`,"inputPerMtok":1`),
			[]string{"pricing: models[1] (openai/b): ", `unknown field "inputPerMtok" (did you mean "inputPerMTok"? names are case-sensitive)`}},
		{"unknown top-level field", `{"version":1,"modles":[]}`,
			[]string{`unknown field "modles" at top level`}},
		{"field names are case-sensitive at the top level", `{"version":1,"Models":[]}`,
			[]string{`unknown field "Models" (did you mean "models"? names are case-sensitive) at top level`}},
		{"several unknown entry fields are all named", entry(`,"zeta":1,"Alpha":2`),
			[]string{"models[1] (openai/b)", `unknown fields "Alpha", "zeta"`}},
		{"a lower-case variant of a known field is unknown", entry(`,"contextwindow":5`),
			[]string{"models[1] (openai/b)", `unknown field "contextwindow"`}},
		{"negative input price", entry(`,"inputPerMTok":-1`),
			[]string{"models[1] (openai/b)", `"inputPerMTok" is negative`}},
		{"negative cache write price", entry(`,"cacheWritePerMTok":-0.5`),
			[]string{"models[1] (openai/b)", `"cacheWritePerMTok" is negative`}},
		{"negative context window", entry(`,"contextWindow":-1`),
			[]string{"models[1] (openai/b)", `"contextWindow" is negative`}},
		{"duplicate provider/model", entry(`}, {"provider":"OPENAI","model":"a"`),
			[]string{"models[2] (openai/a): duplicate of models[0]"}},
		{"alias naming another model", entry(`,"aliases":["a"]`),
			[]string{"models[1] (openai/b)", `alias "a" is already the model of models[0]`}},
		{"model naming an earlier alias", `{"version":1,"models":[{"provider":"openai","model":"a","aliases":["x"]},{"provider":"openai","model":"x"}]}`,
			[]string{"models[1] (openai/x)", `model "x" is already an alias of models[0] (openai/a)`}},
		{"alias repeated in an entry", entry(`,"aliases":["c","c"]`),
			[]string{"models[1] (openai/b)", `alias "c" repeats`}},
		{"wrong type names the entry", entry(`,"contextWindow":"big"`),
			[]string{"models[1] (openai/b)", "contextWindow"}},
		{"missing provider", `{"version":1,"models":[{"model":"a"}]}`,
			[]string{"models[0]: ", `"provider"`}},
		{"missing model", `{"version":1,"models":[{"provider":"openai"}]}`,
			[]string{"models[0]: ", `"model"`}},
		{"null entry", `{"version":1,"models":[null]}`,
			[]string{"models[0]: entry is null"}},
		{"missing version", `{"models":[]}`, []string{`missing "version"`}},
		{"unsupported version", `{"version":2,"models":[]}`, []string{`unsupported "version" 2`}},
		{"bad updated date", `{"version":1,"updated":"yesterday"}`, []string{`"updated" "yesterday"`}},
		{"bad currency", `{"version":1,"currency":"usd"}`, []string{`"currency" "usd"`}},
		{"syntax error has a line", "{\"version\":1,\n\"models\":[,]}", []string{"line 2, column"}},
		{"trailing data", `{"version":1}{}`, []string{"unexpected data after the top-level object"}},
		{"empty input", ``, []string{"empty file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := Parse([]byte(tt.data))
			require.Error(t, err)
			assert.Nil(t, tab)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestParseAcceptsAMinimalOverride(t *testing.T) {
	tab, err := Parse([]byte(`{"version":1,"models":[{"provider":"ollama","model":"qwen3:8b","contextWindow":40960}]}`))
	require.NoError(t, err)
	m, ok := tab.Lookup("ollama", "qwen3:8b")
	require.True(t, ok)
	assert.Equal(t, 40960, m.ContextWindow())
	assert.Equal(t, "USD", m.Currency)
	_, priced := m.Cost(usage(1000, 0, 0, 100), DialectOpenAI)
	assert.False(t, priced, "no prices: no cost")
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()

	t.Run("reads a file", func(t *testing.T) {
		p := filepath.Join(dir, "ok.json")
		require.NoError(t, os.WriteFile(p, []byte(`{"version":1,"models":[{"provider":"openai","model":"m","contextWindow":1}]}`), 0o600))
		tab, err := Load(p)
		require.NoError(t, err)
		assert.Equal(t, 1, tab.Len())
	})
	t.Run("a missing file matches fs.ErrNotExist", func(t *testing.T) {
		_, err := Load(filepath.Join(dir, "missing.json"))
		require.Error(t, err)
		assert.True(t, errors.Is(err, fs.ErrNotExist), "%v", err)
	})
	t.Run("a bad file's error names the path and the entry", func(t *testing.T) {
		p := filepath.Join(dir, "bad.json")
		require.NoError(t, os.WriteFile(p, []byte(`{"version":1,"models":[{"provider":"openai","model":"m","price":1}]}`), 0o600))
		_, err := Load(p)
		require.Error(t, err)
		assert.Contains(t, err.Error(), p)
		assert.Contains(t, err.Error(), `models[0] (openai/m): unknown field "price"`)
		assert.False(t, errors.Is(err, fs.ErrNotExist))
	})
}

func TestDefaultOverridePath(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"XDG_CONFIG_HOME", map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"}, "/x/cfg/acp-agent/models.json"},
		{"HOME when XDG_CONFIG_HOME is unset", map[string]string{"HOME": "/home/u"}, "/home/u/.config/acp-agent/models.json"},
		{"HOME when XDG_CONFIG_HOME is relative", map[string]string{"XDG_CONFIG_HOME": "cfg", "HOME": "/home/u"}, "/home/u/.config/acp-agent/models.json"},
		{"nothing known", map[string]string{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DefaultOverridePath(func(k string) string { return tt.env[k] })
			assert.Equal(t, filepath.FromSlash(tt.want), got)
		})
	}
}

func TestInputLimit(t *testing.T) {
	tests := []struct {
		name         string
		window, maxI int
		want         int
	}{
		{"window only", 200000, 0, 200000},
		{"input limit below the window", 400000, 272000, 272000},
		{"input limit only", 0, 8000, 8000},
		{"input limit above the window is ignored", 1000, 2000, 1000},
		{"unknown", 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Model{ContextTokens: tt.window, MaxInputTokens: tt.maxI}.InputLimit())
		})
	}
}

func TestConcurrentUseIsSafe(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				m, ok := Default().Lookup("openai", "gpt-4.1-2025-04-14")
				if ok {
					_, _ = m.Cost(usage(100, 10, 0, 5), DialectOpenAI)
				}
				_ = Default().Merge(Default())
			}
		})
	}
	wg.Wait()
}

func BenchmarkLookup(b *testing.B) {
	tab := Default()
	cases := []struct{ name, provider, model string }{
		{"exact", "openai", "gpt-4.1"},
		{"alias", "anthropic", "claude-sonnet-4-5-20250929"},
		{"dated", "openai", "gpt-5-mini-2025-08-07"},
		{"unknown", "openai", "llama3.1:8b"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tab.Lookup(c.provider, c.model)
			}
		})
	}
}
