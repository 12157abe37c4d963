package jsonvalidate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	v5 "github.com/santhosh-tekuri/jsonschema/v5"
)

func v5Valid(schema string, v any) (bool, error) {
	c := v5.NewCompiler()
	c.AssertFormat = true
	if err := c.AddResource("mem:///s.json", strings.NewReader(schema)); err != nil {
		return false, err
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		return false, err
	}
	return s.Validate(v) == nil, nil
}

// The validator this package replaced (jsonschema/v5, kept for tests)
// and this one agree on every pair here: real-world tool schemas (zod's
// draft-07 with #/definitions and #/properties references, pydantic's
// $defs and anyOf nulls), each keyword, and the formats. multipleOf 0.01
// rejected 0.07 and 19.99 (the library divides floats), a leap second was
// not a date-time, and an IPv6 address with a zone was one.
func TestValidationAgreesWithTheValidatorItReplaced(t *testing.T) {
	cases := []struct {
		schema string
		values []string
	}{
		{`{"type":"number","multipleOf":0.01}`, []string{`0.07`, `1.1`, `0.3`, `19.99`, `0.015`}},
		{`{"type":"integer"}`, []string{`1.0`, `1e300`, `1.5`, `-0`}},
		{`{"type":"string","format":"email"}`, []string{`"a@b.c"`, `"Bob <bob@x.com>"`, `"a"`, `"a@b"`}},
		{`{"type":"string","format":"uri"}`, []string{`"file:///x"`, `"x/y"`, `"http://a b"`, `"mailto:a@b"`, `"urn:isbn:1"`, `"//x"`}},
		{`{"type":"string","format":"date-time"}`, []string{`"2024-01-01T00:00:00Z"`, `"2024-01-01t00:00:00z"`, `"2024-01-01 00:00:00Z"`, `"2024-01-01T00:00:00"`, `"2024-02-30T00:00:00Z"`, `"2024-01-01T23:59:60Z"`}},
		{`{"type":"string","format":"time"}`, []string{`"12:00:00Z"`, `"12:00:00"`, `"12:00:00+01:00"`, `"12:00:00.5Z"`}},
		{`{"type":"string","format":"date"}`, []string{`"2024-01-01"`, `"2024-1-1"`, `"2023-02-29"`}},
		{`{"type":"string","format":"hostname"}`, []string{`"a.b"`, `"-a"`, `"a_b"`, `"localhost"`, `"a..b"`}},
		{`{"type":"string","format":"ipv4"}`, []string{`"1.2.3.4"`, `"01.2.3.4"`, `"::1"`}},
		{`{"type":"string","format":"ipv6"}`, []string{`"::1"`, `"fe80::1%eth0"`, `"::ffff:1.2.3.4"`, `"1.2.3.4"`}},
		{`{"type":"string","format":"uuid"}`, []string{`"123e4567-e89b-12d3-a456-426614174000"`, `"123E4567-E89B-12D3-A456-426614174000"`, `"123e4567e89b12d3a456426614174000"`}},
		{`{"type":"string","format":"regex"}`, []string{`"a+"`, `"(?=x)"`, `"["`}},
		{`{"type":"string","minLength":2,"maxLength":2}`, []string{`"é1"`, `"日本"`, `"a"`}},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/x","type":"string"}},"definitions":{"x":{"type":"number"}}}`, []string{`{"a":1}`, `{"a":"s"}`}},
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/x","minimum":5}},"$defs":{"x":{"type":"number"}}}`, []string{`{"a":1}`, `{"a":6}`}},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}},"c":{"$ref":"#/properties/a"}},"additionalProperties":false}`, []string{`{"a":{"b":"x"},"c":{"b":"y"}}`, `{"c":{"b":1}}`, `{"d":1}`}},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"a":["b"]}}`, []string{`{"a":1}`, `{"a":1,"b":2}`}},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`, []string{`["a"]`, `["a",1]`, `[1]`}},
		{`{"uniqueItems":true}`, []string{`[1,1.0]`, `[{"a":1,"b":2},{"b":2,"a":1}]`, `[1,"1"]`}},
		{`{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null}},"required":["x"]}`, []string{`{"x":null}`, `{"x":1}`, `{}`}},
		{`{"type":["string","null"],"enum":["a",null]}`, []string{`null`, `"b"`}},
		{`{"const":{"a":[1,2]}}`, []string{`{"a":[1,2]}`, `{"a":[1,2.0]}`, `{"a":[2,1]}`}},
		{`{"propertyNames":{"pattern":"^[a-z]+$"}}`, []string{`{"ab":1}`, `{"A":1}`}},
		{`{"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false}`, []string{`{"x-a":"s"}`, `{"x-a":1}`, `{"y":1}`}},
		{`{"contains":{"type":"string"},"minContains":2}`, []string{`["a","b"]`, `["a",1]`}},
		{`{"if":{"properties":{"a":{"const":1}}},"then":{"required":["b"]},"else":{"required":["c"]}}`, []string{`{"a":1}`, `{"a":2}`, `{"a":1,"b":1}`}},
		{`{"oneOf":[{"type":"number"},{"type":"integer"}]}`, []string{`1`, `1.5`, `"x"`}},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","maximum":5,"exclusiveMaximum":true}`, []string{`5`, `4.9`}},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","exclusiveMinimum":0}`, []string{`0`, `0.1`}},
		{`{"type":"string","pattern":"\\p{L}+"}`, []string{`"é"`, `"1"`}},
		{`{"type":"string","pattern":"^\\d+$"}`, []string{`"١٢"`, `"12"`}},
		{`{"type":"object","properties":{"a":true,"b":false}}`, []string{`{"a":1}`, `{"b":1}`}},
		{`{"maxProperties":1,"minProperties":1}`, []string{`{}`, `{"a":1}`, `{"a":1,"b":2}`}},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"n":{"type":"object","properties":{"c":{"type":"array","items":{"$ref":"#/definitions/n"}}}}},"$ref":"#/definitions/n"}`, []string{`{"c":[{"c":[]}]}`, `{"c":[{"c":1}]}`}},
		{`{"unevaluatedProperties":false,"properties":{"a":true},"allOf":[{"properties":{"b":true}}]}`, []string{`{"a":1,"b":1}`, `{"c":1}`}},
		{`{"type":"object","nullable":true,"example":{"a":1},"discriminator":{"propertyName":"t"}}`, []string{`{}`, `null`}},
		{`{"maximum":9007199254740993}`, []string{`9007199254740993`, `9007199254740994`}},
		{`{"type":"string","contentEncoding":"base64"}`, []string{`"!!!"`}},
		{`{"$id":"https://example.com/t","type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, []string{`{"a":"s"}`, `{"a":1}`}},
		{`{"$id":"https://example.com/t","type":"object","properties":{"a":{"$ref":"https://example.com/t#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, []string{`{"a":"s"}`, `{"a":1}`}},
		{`{"$schema":"http://json-schema.org/draft-07/schema","type":"object"}`, []string{`{}`}},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema#","type":"object"}`, []string{`{}`}},
		{`{"type":"object","properties":{"amount":{"type":"number","multipleOf":0.01,"minimum":0},"qty":{"type":"integer","multipleOf":5}}}`, []string{`{"amount":19.99,"qty":10}`, `{"amount":0.001}`, `{"qty":7}`, `{"amount":1e300}`}},
		// multipleOf where a failure is not the value's: the library's
		// float division stays (19.99 fails an anyOf branch of 0.01).
		{`{"not":{"multipleOf":2}}`, []string{`3`, `4`, `"x"`}},
		{`{"anyOf":[{"multipleOf":2},{"type":"string"}]}`, []string{`3`, `4`, `"x"`}},
		{`{"if":{"multipleOf":2},"then":{"minimum":10}}`, []string{`4`, `3`, `12`}},
		{`{"$defs":{"even":{"multipleOf":2}},"not":{"$ref":"#/$defs/even"},"properties":{"a":{"$ref":"#/$defs/even"}}}`, []string{`3`, `{"a":3}`, `{"a":4}`}},
		// zod-to-json-schema (Playwright's and the filesystem server's tools).
		{`{"type":"object","properties":{"element":{"type":"string","description":"x"},"ref":{"type":"string"},"values":{"type":"array","items":{"type":"string"}},"opts":{"$ref":"#/definitions/Opts"},"again":{"$ref":"#/properties/opts"}},"required":["element","ref"],"additionalProperties":false,"definitions":{"Opts":{"type":"object","properties":{"timeout":{"type":["number","null"]},"mode":{"type":"string","enum":["a","b"],"default":"a"}},"additionalProperties":false}},"$schema":"http://json-schema.org/draft-07/schema#"}`,
			[]string{`{"element":"e","ref":"r"}`, `{"element":"e","ref":"r","opts":{"timeout":null,"mode":"b"},"again":{"timeout":5}}`, `{"element":"e","ref":"r","opts":{"mode":"c"}}`, `{"element":"e"}`, `{"element":"e","ref":"r","x":1}`}},
		// pydantic (FastMCP).
		{`{"$defs":{"Item":{"properties":{"name":{"title":"Name","type":"string"},"tags":{"anyOf":[{"items":{"type":"string"},"type":"array"},{"type":"null"}],"default":null,"title":"Tags"}},"required":["name"],"title":"Item","type":"object"}},"properties":{"items":{"items":{"$ref":"#/$defs/Item"},"title":"Items","type":"array"},"limit":{"default":10,"exclusiveMinimum":0,"title":"Limit","type":"integer"}},"required":["items"],"title":"addArguments","type":"object"}`,
			[]string{`{"items":[{"name":"a","tags":null},{"name":"b","tags":["x"]}],"limit":5}`, `{"items":[{"tags":[]}]}`, `{"items":[],"limit":0}`}},
	}
	for _, c := range cases {
		s, err := Compile([]byte(c.schema))
		for _, raw := range c.values {
			var v any
			dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			old, oerr := v5Valid(c.schema, v)
			if err != nil || oerr != nil {
				t.Errorf("compiling %s: %v here, %v by jsonschema/v5", c.schema, err, oerr)
				break
			}
			verr := s.Validate(v)
			nw := verr == nil
			tag := "  "
			if nw != old {
				tag = "!!"
			}
			fallback := ""
			if ve, ok := verr.(*Error); ok && ve.Cause != nil && len(ve.Problems) == 1 && !strings.HasPrefix(ve.Problems[0].Message, "expected") {
				fallback = ve.Problems[0].Message
			}
			if nw != old || fallback != "" {
				t.Logf("%s %s %s: new=%v old=%v %s", tag, c.schema, raw, nw, old, fmt.Sprint(verr))
			}
			if nw != old {
				t.Errorf("%s on %s: valid %v here, %v by jsonschema/v5 (%v)", raw, c.schema, nw, old, verr)
			}
		}
	}
}
