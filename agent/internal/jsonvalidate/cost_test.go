package jsonvalidate

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func nested(key string, depth int, leaf any) any {
	v := leaf
	for range depth {
		v = map[string]any{key: v}
	}
	return v
}

// A schema that applies itself twice to each member compiles, but on a
// value nested deep the library would apply it 2^depth times: such a
// value is refused, quickly, before the library sees it.
func TestValuesThatWouldTakeExponentialTimeAreRefused(t *testing.T) {
	s, err := Compile([]byte(`{"$defs":{"n":{"type":"object","properties":{"a":{"allOf":[{"$ref":"#/$defs/n"},{"$ref":"#/$defs/n"}]}}}},"$ref":"#/$defs/n"}`))
	require.NoError(t, err)
	require.NoError(t, s.Validate(nested("a", 10, map[string]any{})))

	start := time.Now()
	err = s.Validate(nested("a", 60, map[string]any{}))
	require.Error(t, err)
	require.Contains(t, err.Error(), "would take more than")
	// Without the bound this never ends (2^60 applications); with it, the
	// count is one pass per (part, subschema). Generous for a loaded machine.
	require.Less(t, time.Since(start), 10*time.Second)
}

// A recursive schema of any JSON value, on a large value nested to the
// limit, is not refused: the count follows the value, not every way the
// schema could go.
func TestRecursiveSchemasOnLargeValuesAreNotTooCostly(t *testing.T) {
	s, err := Compile([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"v":{"anyOf":[{"type":"string"},{"type":"number"},{"type":"array","items":{"$ref":"#/definitions/v"}},{"type":"object","additionalProperties":{"$ref":"#/definitions/v"}}]}},"$ref":"#/definitions/v"}`))
	require.NoError(t, err)
	items := make([]any, 20000)
	for i := range items {
		items[i] = map[string]any{"name": strings.Repeat("x", 3), "n": float64(i)}
	}
	require.NoError(t, s.Validate(map[string]any{"items": items, "deep": nested("a", MaxDepth-2, "x")}))
}
