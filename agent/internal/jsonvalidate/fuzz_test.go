package jsonvalidate_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/acp-agent/acp-agent/agent/internal/jsonvalidate"
)

// Any schema text and any value: Compile and Validate return, without a
// panic (an MCP server's schema and a model's arguments are untrusted).
func FuzzCompileAndValidate(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"type":"object","properties":{"a":{"type":"string","minLength":1}},"required":["a"],"additionalProperties":false}`, `{"a":"","b":1}`},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"n":{"minimum":0,"exclusiveMinimum":true}}}`, `{"n":0}`},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","items":[{"type":"string"}],"additionalItems":false}`, `["x",1]`},
		{`{"$defs":{"n":{"$dynamicAnchor":"n","properties":{"c":{"$dynamicRef":"#n"}}}},"$ref":"#/$defs/n"}`, `{"c":{"c":1}}`},
		{`{"anyOf":[{"$ref":"#/$defs/a"}],"$defs":{"a":{"not":{"enum":[1]}}}}`, `1`},
		{`{"if":{"const":1},"then":{"multipleOf":2},"else":{"format":"email"}}`, `"x"`},
		{`{"properties":{"a":{"$ref":"#/properties/b"},"b":{"$ref":"#/properties/a"}}}`, `{"a":1}`},
		{`{"dependentSchemas":{"a":{"$ref":"#"}}}`, `{"a":1}`},
		{`false`, `null`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, schema, value string) {
		timer := time.AfterFunc(2*time.Second, func() { panic("HANG: " + schema + " || " + value) })
		defer timer.Stop()
		s, err := jsonvalidate.Compile([]byte(schema))
		if err != nil {
			return
		}
		var v any
		if json.Unmarshal([]byte(value), &v) != nil {
			return
		}
		_ = s.Validate(v)
	})
}
