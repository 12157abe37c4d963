package jsonvalidate

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// maxApplications bounds how many times checking one value may apply a
// subschema to a part of it. A schema that applies itself twice to each
// member ({"properties":{"a":{"allOf":[{"$ref":"#"},{"$ref":"#"}]}}})
// compiles, but on a value nested n deep the library applies it 2^n
// times (depth 18 took 0.8s, 30 would take hours, and the work cannot be
// interrupted): a value that costs more is refused before the library
// sees it. A million applications take about a second.
const maxApplications = 1 << 20

// tooCostly reports whether checking v against the schema would apply
// more than limit subschemas. The count is an upper bound on the
// library's work (every pattern property, every alternative counted),
// computed once per (part of v, subschema): polynomial, whatever the
// schema.
func (s *Schema) tooCostly(v any, limit int) bool {
	c := costCounter{s: s, memo: map[costKey]int{}, limit: limit}
	return c.cost(v, s.root) > limit
}

type costKey struct {
	node uintptr
	n    int
	sc   *jsonschema.Schema
}

type costCounter struct {
	s     *Schema
	memo  map[costKey]int
	limit int
}

// cost is how many subschema applications checking v against sc takes at
// most, saturated just past the limit.
func (c *costCounter) cost(v any, sc *jsonschema.Schema) int {
	if sc == nil {
		return 0
	}
	var key costKey
	switch x := v.(type) {
	case map[string]any:
		key = costKey{reflect.ValueOf(x).Pointer(), -1, sc}
	case []any:
		if len(x) > 0 {
			key = costKey{reflect.ValueOf(x).Pointer(), len(x), sc}
		}
	}
	if key.sc != nil {
		if n, ok := c.memo[key]; ok {
			return n
		}
		c.memo[key] = c.limit + 1 // a loop through the same part is refused at compile time
	}
	total := 1
	add := func(n int) {
		total = min(total+n, c.limit+1)
	}
	if to := c.s.refs[sc]; to != nil {
		add(c.cost(v, to))
	}
	for _, next := range sameValueNoRef(sc) {
		add(c.cost(v, next))
	}
	switch x := v.(type) {
	case map[string]any:
		for k, m := range x {
			add(c.cost(m, sc.Properties[k]))
			for _, p := range sc.PatternProperties {
				add(c.cost(m, p))
			}
			add(c.cost(m, sc.AdditionalProperties))
			add(c.cost(m, sc.UnevaluatedProperties))
			add(c.cost(k, sc.PropertyNames))
		}
	case []any:
		for i, m := range x {
			if i < len(sc.PrefixItems) {
				add(c.cost(m, sc.PrefixItems[i]))
			}
			if i < len(sc.ItemsArray) {
				add(c.cost(m, sc.ItemsArray[i]))
			}
			add(c.cost(m, sc.Items))
			add(c.cost(m, sc.AdditionalItems))
			add(c.cost(m, sc.Contains))
			add(c.cost(m, sc.UnevaluatedItems))
		}
	}
	if key.sc != nil {
		c.memo[key] = total
	}
	return total
}

// sameValueNoRef is sameValue without the reference.
func sameValueNoRef(sc *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	out = append(out, sc.AllOf...)
	out = append(out, sc.AnyOf...)
	out = append(out, sc.OneOf...)
	for _, c := range []*jsonschema.Schema{sc.Not, sc.If, sc.Then, sc.Else} {
		if c != nil {
			out = append(out, c)
		}
	}
	for _, c := range sc.DependentSchemas {
		out = append(out, c)
	}
	for _, c := range sc.DependencySchemas {
		out = append(out, c)
	}
	return out
}
