package jsonvalidate_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/internal/jsonvalidate"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

// problems validates value against schema and returns each problem as
// "path: message", or nil when the value is valid.
func problems(t *testing.T, schema, value string) []string {
	t.Helper()
	s, err := jsonvalidate.Compile([]byte(schema))
	require.NoError(t, err)
	err = s.Validate(decode(t, value))
	if err == nil {
		return nil
	}
	var ve *jsonvalidate.Error
	require.ErrorAs(t, err, &ve)
	var out []string
	for _, p := range ve.Problems {
		out = append(out, p.Path+": "+p.Message)
	}
	return out
}

// Schemas come from MCP servers in every draft: each is read with its
// draft's meaning, and a bad value is refused with its location.
func TestSchemasOfEveryDraftValidateWithTheirMeaning(t *testing.T) {
	tests := []struct {
		name, schema, bad, good string
		want                    []string
	}{
		{"draft-07 as zod-to-json-schema emits it",
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"string"},"n":{"type":"number","exclusiveMinimum":0}},"required":["a"],"additionalProperties":false}`,
			`{"n":0,"x":1}`, `{"a":"s","n":0.5}`,
			[]string{": additionalProperties 'x' not allowed", ": missing properties: 'a'", "/n: must be > 0 but found 0"}},
		{"draft-04 boolean exclusiveMinimum",
			`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true},"m":{"type":"number","minimum":0,"exclusiveMinimum":false}}}`,
			`{"n":0,"m":-1}`, `{"n":1,"m":0}`,
			[]string{"/m: must be >= 0 but found -1", "/n: must be > 0 but found 0"}},
		{"draft-06",
			`{"$schema":"http://json-schema.org/draft-06/schema#","type":"object","properties":{"n":{"type":"number","exclusiveMaximum":10}}}`,
			`{"n":10}`, `{"n":9}`, []string{"/n: must be < 10 but found 10"}},
		{"draft-07 tuple items",
			`{"$schema":"http://json-schema.org/draft-07/schema","type":"array","items":[{"type":"string"}],"additionalItems":{"type":"integer"}}`,
			`[1,"x"]`, `["x",1]`, []string{"/0: expected string, but got number", "/1: expected integer, but got string"}},
		{"2019-09 tuple items",
			`{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"array","items":[{"type":"string"}],"additionalItems":false}`,
			`["x",1]`, `["x"]`, []string{"/1: not allowed"}},
		{"2020-12 prefixItems",
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"l":{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"}}}}`,
			`{"l":[1,"x"]}`, `{"l":["x",1]}`, []string{"/l/0: expected string, but got number", "/l/1: expected integer, but got string"}},
		{"no $schema is 2020-12",
			`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":1}`, `{"a":"1"}`,
			[]string{"/a: expected string, but got number"}},
		{"definitions and $ref",
			`{"type":"object","properties":{"p":{"$ref":"#/definitions/P"}},"definitions":{"P":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}}`,
			`{"p":{"x":"s"}}`, `{"p":{"x":1}}`, []string{"/p/x: expected integer, but got string"}},
		{"$defs, $ref and an anchor",
			`{"type":"object","properties":{"p":{"$ref":"#/$defs/P"},"q":{"$ref":"#q"}},"$defs":{"P":{"required":["x"]},"Q":{"$anchor":"q","type":"boolean"}}}`,
			`{"p":{},"q":1}`, `{"p":{"x":0},"q":true}`, []string{"/p: missing properties: 'x'", "/q: expected boolean, but got number"}},
		{"a recursive schema",
			`{"type":"object","properties":{"c":{"$ref":"#"},"v":{"type":"integer"}}}`,
			`{"c":{"c":{"v":"x"}}}`, `{"c":{"c":{"v":1}}}`, []string{"/c/c/v: expected integer, but got string"}},
		{"boolean schemas", `{"type":"object","properties":{"a":false,"b":true}}`, `{"a":1,"b":2}`, `{"b":[]}`,
			[]string{"/a: not allowed"}},
		{"unknown keywords are ignored",
			`{"type":"object","x-foo":1,"properties":{"a":{"type":"string","whatever":{"type":"integer"}}}}`, `{"a":1}`, `{"a":"s"}`,
			[]string{"/a: expected string, but got number"}},
		{"formats", `{"type":"object","properties":{"e":{"format":"email"},"u":{"format":"uri"},"d":{"format":"date-time"},"i":{"format":"ipv4"},"x":{"format":"unknown-format"}}}`,
			`{"e":"nobody","u":"relative/path","d":"yesterday","i":"1.2.3","x":"anything"}`,
			`{"e":"a@b.example","u":"https://example.com/x","d":"2026-11-27T05:00:00Z","i":"10.0.0.1","x":"anything"}`,
			[]string{`/d: "yesterday" is not a valid date-time`, `/e: "nobody" is not a valid email`, `/i: "1.2.3" is not a valid ipv4`, `/u: "relative/path" is not a valid uri`}},
		{"oneOf with two matches", `{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `1`, `1.5`,
			[]string{": matches oneOf's schemas 0 and 1; it must match exactly one"}},
		{"a keyword the walk does not explain falls back to the library's words",
			`{"type":"object","unevaluatedProperties":false,"allOf":[{"properties":{"a":{}}}]}`, `{"a":1,"b":2}`, `{"a":1}`,
			[]string{": validating root: validating /unevaluatedProperties: not: validated against <anonymous schema>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, problems(t, tt.schema, tt.bad))
			assert.Nil(t, problems(t, tt.schema, tt.good))
		})
	}
}

// A schema that does not compile is an error at Compile, never a
// validator that refuses (or accepts) everything: the registry refuses a
// native tool with it, and an MCP tool falls back to an object check.
func TestSchemasThatDoNotCompile(t *testing.T) {
	tests := []struct{ name, schema, want string }{
		{"unknown type", `{"type":"nonsense"}`, `type "nonsense" is not a JSON type`},
		{"bad pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`, "missing closing )"},
		{"negative minLength", `{"properties":{"a":{"minLength":-1}}}`, "minLength is negative"},
		{"zero multipleOf", `{"multipleOf":0}`, "multipleOf must be greater than 0"},
		{"required not an array", `{"type":"object","required":"a"}`, "not a JSON schema"},
		{"dangling $ref", `{"properties":{"a":{"$ref":"#/$defs/none"}}}`, `"none"`},
		{"tuple items in 2020-12", `{"type":"array","items":[{"type":"string"}]}`, "prefixItems"},
		{"unknown $schema", `{"$schema":"http://127.0.0.1:1/meta.json","type":"object"}`, "is not draft-04"},
		{"not JSON", `{"type":`, "not a JSON schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jsonvalidate.Compile([]byte(tt.schema))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// A $ref out of the schema is never followed: no request reaches a
// server, no file is read (the file holds a valid schema: read, it would
// compile), the schema does not compile.
func TestRemoteReferencesAreNeverLoaded(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"type":"string"}`), 0o644))
	for _, ref := range []string{
		srv.URL + "/s.json",
		"file://" + file,
		"s.json", // relative to an $id on the server
	} {
		t.Run(ref, func(t *testing.T) {
			schema := `{"$id":"` + srv.URL + `/root.json","type":"object","properties":{"a":{"$ref":"` + ref + `"}}}`
			_, err := jsonvalidate.Compile([]byte(schema))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "cannot resolve remote schemas")
		})
	}
	assert.Zero(t, hits.Load(), "a schema reference was fetched")
}

// References that come back to the same value without descending into
// it would make validation recurse until the stack overflows (a crash of
// the process, not a panic): they do not compile. A fan-out of
// references that would take exponential time does not either; deep
// nesting compiles and validates.
func TestSchemasThatWouldNeverFinishDoNotCompile(t *testing.T) {
	fan := `{"$defs":{"d0":{"type":"integer"}`
	for i := 1; i <= 20; i++ {
		p := `"#/$defs/d` + itoa(i-1) + `"`
		fan += `,"d` + itoa(i) + `":{"allOf":[{"$ref":` + p + `},{"$ref":` + p + `}]}`
	}
	fan += `},"$ref":"#/$defs/d20"}`
	for name, schema := range map[string]string{
		"root refers to itself":     `{"$ref":"#"}`,
		"two definitions in a loop": `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`,
		"through allOf":             `{"allOf":[{"$ref":"#"}]}`,
		"through anyOf and not":     `{"anyOf":[{"not":{"$ref":"#"}}]}`,
		"2^20 subschemas":           fan,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := jsonvalidate.Compile([]byte(schema))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "not a usable JSON schema")
		})
	}
	t.Run("nested deeper than MaxDepth", func(t *testing.T) {
		deep := func(n int) string {
			return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat(`}}`, n)
		}
		_, err := jsonvalidate.Compile([]byte(deep(3000)))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "nested more than 100 levels deep")
		// Just under the limit, a bad leaf is named with its whole path.
		value := strings.Repeat(`{"a":`, 49) + `1` + strings.Repeat(`}`, 49)
		got := problems(t, deep(49), value)
		require.Len(t, got, 1)
		assert.Equal(t, strings.Repeat("/a", 49)+": expected string, but got number", got[0])
	})
	t.Run("a value nested 9,000 deep under a recursive schema", func(t *testing.T) {
		value := strings.Repeat(`{"c":`, 9000) + `{}` + strings.Repeat(`}`, 9000)
		got := problems(t, `{"type":"object","properties":{"c":{"$ref":"#"}}}`, value)
		assert.Equal(t, []string{": the value is nested more than 100 levels deep"}, got)
	})
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
