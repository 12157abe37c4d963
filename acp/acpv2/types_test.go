package acpv2

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp/schemacheck"
)

// The types are checked against the schema they come from: for every
// definition, samples made from the schema itself (every member set, one
// sample per alternative of a union; and only the required members)
// decode into the Go type and encode back to the same JSON, which
// validates. A member the Go type loses, renames, omits when it is
// required or sends as null where the schema wants a value fails.

type schema = map[string]any

func loadSchemaDefs(t *testing.T, file string) map[string]schema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "acp-schema", "npm-sdk-2.4.0", "v2", file))
	require.NoError(t, err)
	var doc struct {
		Defs map[string]schema `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	return doc.Defs
}

// sampler makes sample values from a schema.
type sampler struct {
	defs    map[string]schema
	minimal bool // only required members
}

// alternatives returns how many top-level samples n has: one per branch
// of its union, else one.
func (s *sampler) alternatives(n schema) int {
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := n[key].([]any); ok {
			count := 0
			for _, a := range alts {
				if a.(schema)["type"] != "null" {
					count++
				}
			}
			return count
		}
	}
	return 1
}

// sample returns a value for n; branch picks the alternative of a union
// at this level (nested unions take their first).
func (s *sampler) sample(n schema, branch, depth int) any {
	if ref, ok := n["$ref"].(string); ok {
		if depth > 12 { // $ref hops: deep enough for every definition
			return nil
		}
		return s.sample(s.defs[strings.TrimPrefix(ref, "#/$defs/")], branch, depth+1)
	}
	if c, ok := n["const"]; ok {
		return c
	}
	var out any
	if props, ok := n["properties"].(schema); ok || n["type"] == "object" {
		obj := map[string]any{}
		required := map[string]bool{}
		for _, r := range asList(n["required"]) {
			required[r.(string)] = true
		}
		for k, p := range props {
			if s.minimal && !required[k] {
				continue
			}
			if v := s.member(p.(schema), depth); v != nil {
				obj[k] = v
			}
		}
		if ap, ok := n["additionalProperties"].(schema); ok && props == nil {
			obj["key"] = s.sample(ap, 0, depth)
		}
		if len(obj) > 0 || n["type"] == "object" {
			out = obj
		}
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		alts := asList(n[key])
		if len(alts) == 0 {
			continue
		}
		if key != "allOf" {
			var nonNull []any
			for _, a := range alts {
				if a.(schema)["type"] != "null" {
					nonNull = append(nonNull, a)
				}
			}
			alts = []any{nonNull[branch%len(nonNull)]}
			branch = 0
		}
		for _, a := range alts {
			am := a.(schema)
			v := s.sample(am, branch, depth)
			if _, open := am["not"]; open {
				v = customTag(v)
			}
			out = merge(out, v)
		}
	}
	if out != nil {
		return out
	}
	return s.scalar(n, depth)
}

// member samples an object member; a nullable member gets its value.
func (s *sampler) member(p schema, depth int) any {
	return s.sample(p, 0, depth)
}

func (s *sampler) scalar(n schema, depth int) any {
	typ := n["type"]
	if list, ok := typ.([]any); ok {
		for _, t := range list {
			if t != "null" {
				typ = t
			}
		}
	}
	switch typ {
	case "string":
		switch n["format"] {
		case "uri":
			return "https://example.com/a"
		case "date-time":
			return "2026-11-20T10:00:00Z"
		case "regex":
			return "^a+$"
		}
		if n["contentEncoding"] == "base64" {
			return "aGk="
		}
		return "text"
	case "integer":
		v := 1.0
		if m, ok := n["minimum"].(float64); ok && m > v {
			v = m
		}
		return v
	case "number":
		return 0.5
	case "boolean":
		return true
	case "array":
		item := s.sample(n["items"].(schema), 0, depth)
		if item == nil {
			return []any{}
		}
		return []any{item}
	case nil:
		return map[string]any{"any": "json"} // {}: any value
	}
	return nil
}

// customTag gives the sample of a union's open branch a custom tag, and a
// member no variant has (kept by the types that keep custom variants
// whole).
func customTag(v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for k, x := range obj {
		if x == "text" {
			obj[k] = "_custom"
		}
	}
	obj["_extra"] = "kept"
	return obj
}

// flatCustom are the types that hold a custom variant's tag in a plain
// member and drop the members only it has: the agent sends the first two
// only with known variants, and refuses or reads as "cancel" the last
// two's custom ones, as the schema asks.
var flatCustom = map[string]bool{
	"DiffChange": true, "IdleStateUpdate": true,
	"SetSessionConfigOptionRequest": true, "CreateElicitationResponse": true,
}

// modeOf are the definitions that are a mode of CreateElicitationRequest,
// whose Go type holds only the mode's members: their samples are checked
// as the request they are part of.
var modeOf = map[string]string{"ElicitationFormMode": "form", "ElicitationUrlMode": "url"}

func merge(a, b any) any {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if b != nil {
			return b
		}
		return a
	}
	for k, v := range bm {
		am[k] = v
	}
	return am
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestEveryDefinitionHasAType: each definition of the unstable schema
// (the stable one plus the unstable additions) has a Go type, or a
// reason it has none; a definition a new schema adds fails here until
// the types are regenerated.
func TestEveryDefinitionHasAType(t *testing.T) {
	defs := loadSchemaDefs(t, "schema.unstable.json")
	for name := range defs {
		_, typed := definitions[name]
		_, skip := skippedDefinitions[name]
		assert.True(t, typed != skip, "%s: a Go type or a reason to skip, exactly one", name)
	}
	for name := range definitions {
		assert.Contains(t, defs, name, "a type for a definition the schema no longer has")
	}
}

// TestTypesKeepEverySchemaMember: for every definition, samples with
// every member set (one per alternative of a union) and with only the
// required ones decode into its Go type and encode back as they were,
// and what is encoded validates against the definition.
func TestTypesKeepEverySchemaMember(t *testing.T) {
	defs := loadSchemaDefs(t, "schema.unstable.json")
	checker, err := schemacheck.Load()
	require.NoError(t, err)
	names := make([]string, 0, len(definitions))
	for name := range definitions {
		names = append(names, name)
	}
	sort.Strings(names)
	samples := 0
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			for _, minimal := range []bool{false, true} {
				s := &sampler{defs: defs, minimal: minimal}
				for branch := range s.alternatives(defs[name]) {
					sample := s.sample(defs[name], branch, 0)
					if obj, ok := sample.(map[string]any); ok && flatCustom[name] {
						delete(obj, "_extra")
					}
					want, err := json.Marshal(sample)
					require.NoError(t, err)
					if string(want) == "null" {
						continue
					}
					samples++
					label := fmt.Sprintf("minimal=%v branch=%d: %s", minimal, branch, want)
					require.NoError(t, checker.ValidateV2Unstable(name, want), "the sample itself: %s", label)
					def, v := name, definitions[name]()
					if mode := modeOf[name]; mode != "" {
						sample.(map[string]any)["mode"] = mode
						sample.(map[string]any)["message"] = "text"
						want, _ = json.Marshal(sample)
						def, v = "CreateElicitationRequest", new(CreateElicitationRequest)
					}
					require.NoError(t, json.Unmarshal(want, v), label)
					got, err := json.Marshal(v)
					require.NoError(t, err, label)
					assert.JSONEq(t, string(want), string(got), label)
					assert.NoError(t, checker.ValidateV2Unstable(def, got), label)
				}
			}
		})
	}
	assert.Greater(t, samples, 400)
}

// TestZeroValuesSendRequiredMembers: a Go value with nothing set still
// sends every required member, never as null (a nil required array goes
// out as []): what the schema requires cannot be lost by leaving a field
// unset. Unions with no variant set refuse to encode instead.
func TestZeroValuesSendRequiredMembers(t *testing.T) {
	defs := loadSchemaDefs(t, "schema.unstable.json")
	checked := 0
	for name, newValue := range definitions {
		required := asList(defs[name]["required"])
		if len(required) == 0 {
			continue
		}
		data, err := json.Marshal(newValue())
		if err != nil {
			// A union (maybe a member's) with no variant set, or an
			// elicitation with no scope.
			assert.ErrorContains(t, err, "acpv2: ", name)
			continue
		}
		var members map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(data, &members), name)
		for _, r := range required {
			if rawID(defs[name], r.(string)) {
				continue // a JSON-RPC id: no zero value means anything
			}
			raw, ok := members[r.(string)]
			if assert.True(t, ok, "%s: required %q missing from %s", name, r, data) {
				assert.NotEqual(t, "null", string(raw), "%s: required %q is null", name, r)
			}
		}
		checked++
	}
	assert.Greater(t, checked, 100)
}

// rawID reports whether member of def is a RequestId.
func rawID(def schema, member string) bool {
	p, _ := def["properties"].(schema)[member].(schema)
	b, _ := json.Marshal(p)
	return strings.Contains(string(b), `"#/$defs/RequestId"`)
}
