package structured

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/internal/jsonvalidate"
)

func mustModel(t *testing.T, n *Node) *OutputModel {
	t.Helper()
	m, err := NewOutputModel(n)
	require.NoError(t, err)
	return m
}

// Seed 004 §6 to_output_model: a list field accepts a single value, which
// is wrapped, and list elements are cast (1 → "1").
func TestSeed004_OutputModelWrapsSingleValueAndCastsToString(t *testing.T) {
	p := &Prompt{Output: Object(
		Prop("thinking", List(String("Your plan to reply"))),
		Prop("reply", OneOf("Your actually reply", 1, 2, 3)),
		Prop("number", Integer("")),
	)}
	om, err := p.OutputModel()
	require.NoError(t, err)
	v, err := om.Parse(`{"thinking": 1, "number": "123"}`)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"thinking": []any{"1"}, "number": 123.0}, v)
	// The definition itself is unchanged by building the model.
	assert.Equal(t, "Your plan to reply", p.Output.Fields[0].Items[0].Desc)
}

// Seed 004 §6 to_output_model: a list of integers casts "456" to 456, from
// a list or from a single value.
func TestSeed004_OutputModelCastsListElements(t *testing.T) {
	om := mustModel(t, List(Integer("")))
	v, err := om.Parse(`["456"]`)
	require.NoError(t, err)
	assert.Equal(t, []any{456.0}, v)
	v, err = om.Parse(`"456"`)
	require.NoError(t, err)
	assert.Equal(t, []any{456.0}, v)
	var ints []int
	require.NoError(t, om.ParseInto("Here you go:\n```json\n[\"456\", 7]\n```", &ints))
	assert.Equal(t, []int{456, 7}, ints)
}

func TestCoercion(t *testing.T) {
	tests := []struct {
		name string
		node *Node
		in   string
		want any
	}{
		{"string to integer", Integer(""), `"456"`, 456.0},
		{"spaced string to number", Number(""), `" 4.5 "`, 4.5},
		{"integer stays", Integer(""), `7`, 7.0},
		{"number to string", String(""), `1`, "1"},
		{"float to string", String(""), `1.5`, "1.5"},
		{"bool to string", String(""), `true`, "true"},
		{"string true", Boolean(""), `"true"`, true},
		{"string FALSE", Boolean(""), `" FALSE "`, false},
		{"single into list", List(Integer("")), `3`, []any{3.0}},
		{"object into list", List(Object(Prop("a", Integer("")))), `{"a":"1"}`, []any{map[string]any{"a": 1.0}}},
		{"nested cast", Object(Prop("items", List(Object(Prop("price", Integer("")))))), `{"items":[{"price":"12"},{"price":3}]}`,
			map[string]any{"items": []any{map[string]any{"price": 12.0}, map[string]any{"price": 3.0}}}},
		{"enum by text", OneOf("", 1, 2), `"2"`, 2.0},
		{"enum string", OneOf("", "open", "closed"), `"open"`, "open"},
		{"json string object", Object(Prop("a", Integer(""))), `"{\"a\": \"5\"}"`, map[string]any{"a": 5.0}},
		{"json string list", List(String("")), `"[1, 2]"`, []any{"1", "2"}},
		{"unknown fields kept", Object(Prop("a", Integer(""))), `{"a":1,"b":"x"}`, map[string]any{"a": 1.0, "b": "x"}},
		{"null optional", Object(Prop("a", Integer(""))), `{"a":null}`, map[string]any{"a": nil}},
		{"free-form type", Leaf("YYYY-MM-DD", ""), `"2024-01-02"`, "2024-01-02"},
		{"any", Any(""), `{"x":[1]}`, map[string]any{"x": []any{1.0}}},
		{"list alternatives", List(Integer(""), Object(Prop("a", String("")))), `[1, "2", {"a": 3}]`,
			[]any{1.0, 2.0, map[string]any{"a": "3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := mustModel(t, tt.node).Parse(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, v)
		})
	}
}

func TestCoerceDoesNotModifyInput(t *testing.T) {
	om := mustModel(t, Object(Prop("a", Integer("")), Prop("l", List(String("")))))
	in := map[string]any{"a": "1", "l": []any{1.0}}
	out := om.Coerce(in)
	assert.Equal(t, map[string]any{"a": 1.0, "l": []any{"1"}}, out)
	assert.Equal(t, map[string]any{"a": "1", "l": []any{1.0}}, in)
}

func TestValidationErrors(t *testing.T) {
	shop := Object(
		Req("items", List(Object(Req("title", String("")), Req("price", Integer(""))))),
		Prop("note", String("")),
		Prop("status", OneOf("", "open", "closed")),
	)
	tests := []struct {
		name string
		node *Node
		in   string
		want []string // substrings, one per problem, in order
	}{
		{"wrong leaf type", shop, `{"items":[{"title":"a","price":1},{"title":"b","price":2},{"title":"c","price":"abc"}]}`,
			[]string{"/items/2/price: expected integer"}},
		{"fraction for integer", shop, `{"items":[{"title":"a","price":1.5}]}`, []string{"/items/0/price: expected integer"}},
		{"missing required", shop, `{"items":[{"title":"a"}]}`, []string{"/items/0: missing properties: 'price'"}},
		{"missing required root", shop, `{"note":"x"}`, []string{"(root): missing properties: 'items'"}},
		{"enum", shop, `{"items":[],"status":"pending"}`, []string{"/status: value must be one of"}},
		{"object for string", shop, `{"items":[],"note":{"a":1}}`, []string{"/note: expected string or null, but got object"}},
		{"two problems", shop, `{"items":[{"title":[1],"price":"x"}]}`, []string{"/items/0/price: expected integer", "/items/0/title: expected string"}},
		{"root type", Object(Req("a", String(""))), `[1]`, []string{"(root): expected object, but got array"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mustModel(t, tt.node).Parse(tt.in)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrSchemaMismatch)
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			var sve *jsonvalidate.Error
			assert.ErrorAs(t, err, &sve, "the validator's error is wrapped too")
			require.Len(t, ve.Problems, len(tt.want), "%v", ve.Problems)
			for i, w := range tt.want {
				assert.Contains(t, ve.Problems[i].String(), w)
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestParseExtractionErrors(t *testing.T) {
	om := mustModel(t, Object(Prop("a", Integer(""))))
	_, err := om.Parse("I cannot answer that.")
	assert.ErrorIs(t, err, ErrNoJSON)
	_, err = om.Parse(`{"a": 1`)
	assert.ErrorIs(t, err, ErrIncomplete)
	v, err := om.Parse("Sure!\n```json\n{\"a\": \"2\"}\n```\nDone.")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": 2.0}, v)
	_, err = (&Prompt{Input: "x"}).OutputModel()
	assert.ErrorIs(t, err, ErrNoOutput)
}

func TestSchemaDerivation(t *testing.T) {
	n := Object(
		Req("name", String("the name")),
		Prop("tags", List(String(""))),
		Prop("level", OneOf("", "low", "high")),
		Prop("misc", Any("")),
	).WithDesc("root")
	got, err := json.Marshal(n.Schema())
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object", "description": "root",
		"required": ["name"],
		"properties": {
			"name": {"type": "string", "description": "the name"},
			"tags": {"type": ["array", "null"], "items": {"type": "string"}},
			"level": {"enum": ["low", "high", null]},
			"misc": {}
		}
	}`, string(got))
	assert.JSONEq(t, string(got), string(mustModel(t, n).JSONSchema()))
}

func TestFromJSONSchema(t *testing.T) {
	n, err := FromJSONSchema([]byte(`{
		"type": "object",
		"properties": {
			"zeta": {"type": "string", "description": "last letter"},
			"alpha": {"type": ["integer", "null"]},
			"items": {"type": "array", "items": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}},
			"kind": {"enum": ["a", "b"]},
			"fixed": {"const": 3},
			"num": {"type": "number"},
			"free": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
		},
		"required": ["zeta"]
	}`))
	require.NoError(t, err)
	want := Object(
		Req("zeta", String("last letter")),
		Prop("alpha", Integer("")),
		Prop("items", List(Object(Req("ok", Boolean(""))))),
		Prop("kind", OneOf("", "a", "b")),
		Prop("fixed", OneOf("", 3.0)),
		Prop("num", Number("")),
		Prop("free", Any("")),
	)
	assert.Equal(t, want, n)
	assert.Equal(t, "{\n  \"zeta\": <str>, // last letter\n  \"alpha\": <int>,\n  \"items\": [\n    {\n      \"ok\": <bool>\n    },\n    ...\n  ],\n"+
		"  \"kind\": <Literal[a, b]>,\n  \"fixed\": <Literal[3]>,\n  \"num\": <float>,\n  \"free\": <any>\n}", n.Describe())

	_, err = FromJSONSchema([]byte(`{"$ref": "#/defs/x"}`))
	assert.True(t, errors.Is(err, ErrUnsupportedSchema), err)
	_, err = FromJSONSchema([]byte(`{"type": 5}`))
	assert.Error(t, err)
	_, err = FromJSONSchema([]byte(`not json`))
	assert.Error(t, err)

	arr, err := FromJSONSchema([]byte(`{"type":"array"}`))
	require.NoError(t, err)
	assert.Equal(t, List(Any("")), arr)
}
