package settings

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Settings is one layer of dotted-key settings over an optional parent
// layer. The zero value is not usable; create layers with New, Layer or
// Child. See the package documentation for the lookup and copy contract.
type Settings struct {
	name   string
	parent *Settings

	mu   sync.RWMutex
	data map[string]any
}

// New returns a root layer named "defaults" holding a deep copy of
// defaults (which may be nil). Keys of defaults may themselves be dotted:
// {"prompt.output_format": "json"} is the same as the nested form.
func New(defaults map[string]any) *Settings {
	s := &Settings{name: "defaults", data: map[string]any{}}
	s.Update(defaults)
	return s
}

// Layer returns a new, empty layer named name whose parent is s. Reads
// through the new layer fall back to s; writes to it never reach s.
func (s *Settings) Layer(name string) *Settings {
	return &Settings{name: name, parent: s, data: map[string]any{}}
}

// Child returns a new, empty, unnamed overlay of s (Layer("")), e.g. for a
// session's overrides of the agent's settings.
func (s *Settings) Child() *Settings { return s.Layer("") }

// Name returns the layer's name ("defaults" for a root made by New).
func (s *Settings) Name() string { return s.name }

// Parent returns the layer s overlays, or nil for a root layer.
func (s *Settings) Parent() *Settings { return s.parent }

// splitKey splits a dotted key; it returns nil when the key names nothing.
func splitKey(key string) []string {
	if key == "" {
		return nil
	}
	parts := strings.Split(key, ".")
	for _, p := range parts {
		if p == "" {
			return nil
		}
	}
	return parts
}

// Set stores a deep copy of value under the dotted key in this layer only,
// creating intermediate maps (and replacing any non-map value in their way).
// Setting a nil value stores nil, which hides the parents' value; use
// Delete to let it show through again.
func (s *Settings) Set(key string, value any) {
	parts := splitKey(key)
	if parts == nil {
		return
	}
	v := normalize(value)
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.data
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

// Update deep-merges values into this layer: nested maps are merged key by
// key, any other value replaces what the layer held. Keys may be dotted at
// any level. It is how a configuration file's contents become a layer.
func (s *Settings) Update(values map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v := values[k]
		if sub, ok := asMap(v); ok {
			// Merge rather than replace, so Update({"a": {"b": 1}}) keeps
			// the layer's a.c.
			if len(sub) == 0 {
				s.ensureMap(k)
			}
			for _, sk := range slices.Sorted(maps.Keys(sub)) {
				s.Update(map[string]any{k + "." + sk: sub[sk]})
			}
			continue
		}
		s.Set(k, v)
	}
}

// ensureMap makes key hold a map in this layer, keeping an existing one.
func (s *Settings) ensureMap(key string) {
	parts := splitKey(key)
	if parts == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.data
	for _, p := range parts {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
}

// Delete removes the dotted key from this layer only; parents are untouched,
// so their value (if any) becomes visible again. Missing keys are ignored.
func (s *Settings) Delete(key string) {
	parts := splitKey(key)
	if parts == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.data
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, parts[len(parts)-1])
}

// lookupLocal returns the value at parts in this layer.
func (s *Settings) lookupLocal(parts []string) (any, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var cur any = s.data
	for _, p := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[p]
		if !ok {
			return nil, false
		}
	}
	return deepCopy(cur), true
}

// Get returns a copy of the value of the dotted key, searching this layer
// and then its parents. Map values are merged across layers (nearer layers
// win key by key) down to the first layer that holds a non-map value there.
func (s *Settings) Get(key string) (any, bool) {
	parts := splitKey(key)
	if parts == nil {
		return nil, false
	}
	return s.get(parts)
}

func (s *Settings) get(parts []string) (any, bool) {
	var found []map[string]any // nearest first
	for l := s; l != nil; l = l.parent {
		v, ok := l.lookupLocal(parts)
		if !ok {
			continue
		}
		m, isMap := v.(map[string]any)
		if !isMap {
			if found == nil {
				return v, true
			}
			break // a non-map below maps is hidden by them
		}
		found = append(found, m)
	}
	if found == nil {
		return nil, false
	}
	merged := map[string]any{}
	for i := len(found) - 1; i >= 0; i-- {
		mergeInto(merged, found[i])
	}
	return merged, true
}

// Source returns the name of the nearest layer that holds key, and whether
// any layer does. It tells which layer a Get result (or, for a merged map,
// its top-most part) came from.
func (s *Settings) Source(key string) (string, bool) {
	parts := splitKey(key)
	if parts == nil {
		return "", false
	}
	for l := s; l != nil; l = l.parent {
		if _, ok := l.lookupLocal(parts); ok {
			return l.name, true
		}
	}
	return "", false
}

// All returns the merged view of every layer as one nested map (a copy).
func (s *Settings) All() map[string]any {
	var layers []*Settings
	for l := s; l != nil; l = l.parent {
		layers = append(layers, l)
	}
	out := map[string]any{}
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		l.mu.RLock()
		m := deepCopy(l.data).(map[string]any)
		l.mu.RUnlock()
		mergeInto(out, m)
	}
	return out
}

// String returns the value of key as a string: strings as they are, and
// numbers, booleans and fmt.Stringers formatted. Anything else, or a
// missing key, gives def.
func (s *Settings) String(key, def string) string {
	v, ok := s.Get(key)
	if !ok {
		return def
	}
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
		return fmt.Sprint(x)
	case fmt.Stringer:
		return x.String()
	}
	return def
}

// Int returns the value of key as an int: Go integers that fit, floats and
// json.Numbers with no fractional part, and strings that parse as such
// (surrounding spaces allowed). Anything else, or a missing key, gives def.
func (s *Settings) Int(key string, def int) int {
	v, ok := s.Get(key)
	if !ok {
		return def
	}
	switch x := v.(type) {
	case int:
		return x
	case int64: // exact, even beyond float64's 53 bits
		return int(x)
	case int32:
		return int(x)
	case uint32:
		return int(x)
	case uint64:
		if x <= math.MaxInt64 {
			return int(x)
		}
		return def
	}
	f, ok := toFloat(v)
	if !ok || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return def
	}
	return int(f)
}

// Float returns the value of key as a float64: any Go number, json.Number,
// or a string that parses as a number. Anything else gives def.
func (s *Settings) Float(key string, def float64) float64 {
	v, ok := s.Get(key)
	if !ok {
		return def
	}
	if f, ok := toFloat(v); ok {
		return f
	}
	return def
}

// Bool returns the value of key as a bool: booleans, and the strings
// accepted by strconv.ParseBool ("true", "1", "F", ...). Anything else, or
// a missing key, gives def.
func (s *Settings) Bool(key string, def bool) bool {
	v, ok := s.Get(key)
	if !ok {
		return def
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
			return b
		}
	}
	return def
}

// Duration returns the value of key as a time.Duration: a time.Duration as
// it is, a string in time.ParseDuration syntax ("1m30s"), or a plain number
// (Go number, json.Number or numeric string) taken as SECONDS, since that is
// what a hand-written config file means by "timeout: 30". Anything else, or
// a missing key, gives def.
func (s *Settings) Duration(key string, def time.Duration) time.Duration {
	v, ok := s.Get(key)
	if !ok {
		return def
	}
	switch x := v.(type) {
	case time.Duration:
		return x
	case string:
		if d, err := time.ParseDuration(strings.TrimSpace(x)); err == nil {
			return d
		}
	}
	if f, ok := toFloat(v); ok {
		d := f * float64(time.Second)
		if d >= math.MinInt64 && d < math.MaxInt64 {
			return time.Duration(d)
		}
	}
	return def
}

// toFloat converts numbers and numeric strings to float64.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// asMap reports whether v is a map with string keys usable as a subtree.
func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[string]string:
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[k] = x
		}
		return out, true
	}
	return nil, false
}

// normalize deep-copies v, turning map[string]string into map[string]any
// so that dotted lookups can descend into it.
func normalize(v any) any {
	if m, ok := asMap(v); ok {
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[k] = normalize(x)
		}
		return out
	}
	return deepCopy(v)
}

// deepCopy copies the maps and slices of v so the copy shares no mutable
// container with v.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	case []string:
		return slices.Clone(x)
	case map[string]string:
		return maps.Clone(x)
	}
	return v
}

// mergeInto deep-merges src into dst; src wins for non-map values. src's
// containers are taken over, so src must not be used afterwards.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		sm, ok := v.(map[string]any)
		if !ok {
			dst[k] = v
			continue
		}
		dm, ok := dst[k].(map[string]any)
		if !ok {
			dst[k] = sm
			continue
		}
		mergeInto(dm, sm)
	}
}
