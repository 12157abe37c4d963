package settings

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Seed 004 §1: Agently.set_settings("test", "test") makes
// Agently.settings["test"] == "test".
func TestSeed004_SetSettingsThenGet(t *testing.T) {
	s := New(nil)
	s.Set("test", "test")
	v, ok := s.Get("test")
	require.True(t, ok)
	assert.Equal(t, "test", v)
	assert.Equal(t, "test", s.String("test", ""))
}

func TestDottedKeysCreateNestedMaps(t *testing.T) {
	s := New(nil)
	s.Set("prompt.output_format", "json")
	v, ok := s.Get("prompt")
	require.True(t, ok)
	assert.Equal(t, map[string]any{"output_format": "json"}, v)
	assert.Equal(t, "json", s.String("prompt.output_format", "markdown"))

	// A leaf in the way of a deeper Set is replaced by a map.
	s.Set("a", 1)
	s.Set("a.b", 2)
	assert.Equal(t, 2, s.Int("a.b", 0))
	assert.Equal(t, map[string]any{"a": map[string]any{"b": 2}, "prompt": map[string]any{"output_format": "json"}}, s.All())
}

func TestInvalidKeysNameNothing(t *testing.T) {
	s := New(nil)
	for _, k := range []string{"", ".", "a..b", ".a", "a."} {
		s.Set(k, 1)
		_, ok := s.Get(k)
		assert.False(t, ok, "key %q", k)
	}
	assert.Empty(t, s.All())
}

func TestLayersOverlayWithoutChangingParents(t *testing.T) {
	defaults := New(map[string]any{
		"prompt": map[string]any{"output_format": "markdown", "role": "user"},
		"model":  map[string]any{"timeout": "30s"},
	})
	config := defaults.Layer("config")
	config.Update(map[string]any{"model": map[string]any{"name": "gpt"}, "model.retries": 3})
	session := config.Child()
	session.Set("prompt.output_format", "json")

	assert.Equal(t, "json", session.String("prompt.output_format", ""))
	assert.Equal(t, "markdown", config.String("prompt.output_format", ""))
	assert.Equal(t, "markdown", defaults.String("prompt.output_format", ""))

	// Maps merge across layers: the session still sees the default role.
	v, ok := session.Get("prompt")
	require.True(t, ok)
	assert.Equal(t, map[string]any{"output_format": "json", "role": "user"}, v)
	v, _ = session.Get("model")
	assert.Equal(t, map[string]any{"timeout": "30s", "name": "gpt", "retries": 3}, v)

	src, ok := session.Source("prompt.output_format")
	assert.True(t, ok)
	assert.Equal(t, "", src)
	src, _ = session.Source("model.name")
	assert.Equal(t, "config", src)
	src, _ = session.Source("model.timeout")
	assert.Equal(t, "defaults", src)
	assert.Equal(t, "config", config.Name())
	assert.Same(t, defaults, config.Parent())

	// Delete lets the parent's value show through again.
	session.Delete("prompt.output_format")
	assert.Equal(t, "markdown", session.String("prompt.output_format", ""))

	// A non-map override hides the parents' map entirely.
	session.Set("model", "local")
	v, _ = session.Get("model")
	assert.Equal(t, "local", v)
	assert.Equal(t, "30s", config.String("model.timeout", ""))
}

func TestUpdateMergesDeeply(t *testing.T) {
	s := New(map[string]any{"a": map[string]any{"b": 1, "c": 2}})
	s.Update(map[string]any{"a": map[string]any{"b": 10}, "x.y": "z", "empty": map[string]any{}})
	v, _ := s.Get("a")
	assert.Equal(t, map[string]any{"b": 10, "c": 2}, v)
	assert.Equal(t, "z", s.String("x.y", ""))
	v, ok := s.Get("empty")
	assert.True(t, ok)
	assert.Equal(t, map[string]any{}, v)
	s.Set("n", nil) // nil hides, it does not delete
	v, ok = s.Get("n")
	assert.True(t, ok)
	assert.Nil(t, v)
	s.Delete("nope.deeper") // missing keys are ignored
	s.Delete("")
}

func TestCopiesPreventAliasing(t *testing.T) {
	in := map[string]any{"list": []any{1, 2}, "m": map[string]any{"k": "v"}}
	s := New(nil)
	s.Set("x", in)
	in["m"].(map[string]any)["k"] = "changed"
	in["list"].([]any)[0] = 99

	got, _ := s.Get("x")
	gm := got.(map[string]any)
	assert.Equal(t, "v", gm["m"].(map[string]any)["k"])
	assert.Equal(t, []any{1, 2}, gm["list"])
	gm["m"].(map[string]any)["k"] = "mutated"
	assert.Equal(t, "v", s.String("x.m.k", ""))

	s.Set("ss", map[string]string{"a": "b"})
	assert.Equal(t, "b", s.String("ss.a", ""))
}

func TestTypedGetters(t *testing.T) {
	s := New(map[string]any{
		"str": "hello", "num": 42.0, "numstr": " 7 ", "frac": 1.5, "big": int64(1) << 60,
		"b": true, "bs": "false", "bad": []any{1},
		"d": "1m30s", "dsec": 2, "dnum": json.Number("0.5"), "dd": 3 * time.Second,
		"jn": json.Number("12"),
	})
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"String string", s.String("str", "d"), "hello"},
		{"String number", s.String("num", "d"), "42"},
		{"String bool", s.String("b", "d"), "true"},
		{"String missing", s.String("nope", "d"), "d"},
		{"String list", s.String("bad", "d"), "d"},
		{"Int float", s.Int("num", -1), 42},
		{"Int string", s.Int("numstr", -1), 7},
		{"Int fractional", s.Int("frac", -1), -1},
		{"Int int64", s.Int("big", -1), 1 << 60},
		{"Int json.Number", s.Int("jn", -1), 12},
		{"Int wrong type", s.Int("b", -1), -1},
		{"Float", s.Float("frac", 0), 1.5},
		{"Float missing", s.Float("nope", 9), 9.0},
		{"Bool", s.Bool("b", false), true},
		{"Bool string", s.Bool("bs", true), false},
		{"Bool wrong", s.Bool("str", true), true},
		{"Duration string", s.Duration("d", 0), 90 * time.Second},
		{"Duration seconds", s.Duration("dsec", 0), 2 * time.Second},
		{"Duration json.Number", s.Duration("dnum", 0), 500 * time.Millisecond},
		{"Duration native", s.Duration("dd", 0), 3 * time.Second},
		{"Duration bad", s.Duration("str", time.Minute), time.Minute},
		{"Duration missing", s.Duration("nope", time.Hour), time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.got) })
	}
}

// TestConcurrentUse runs readers and writers on several layers at once;
// run under -race it checks the locking contract.
func TestConcurrentUse(t *testing.T) {
	root := New(map[string]any{"prompt.output_format": "markdown"})
	cfg := root.Layer("config")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := cfg.Child()
			for i := range 200 {
				key := fmt.Sprintf("k%d.v", g)
				sess.Set(key, i)
				cfg.Set(fmt.Sprintf("cfg.g%d", g), i)
				assert.Equal(t, i, sess.Int(key, -1))
				_ = sess.String("prompt.output_format", "")
				_, _ = sess.Get("cfg")
				_ = sess.All()
				if i%10 == 0 {
					root.Set("prompt.output_format", "markdown")
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, "markdown", cfg.String("prompt.output_format", ""))
	for g := range 8 {
		assert.Equal(t, 199, cfg.Int(fmt.Sprintf("cfg.g%d", g), -1))
	}
}
