package structured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/acp-agent/acp-agent/agent/internal/jsonvalidate"
)

// ErrSchemaMismatch is wrapped by every *ValidationError.
var ErrSchemaMismatch = errors.New("structured: output does not match its schema")

// Problem is one way a value broke its schema.
type Problem struct {
	// Path is the JSON Pointer of the offending value ("" for the root).
	Path string
	// Message says what was wrong, e.g. "expected integer, but got string".
	Message string
}

func (p Problem) String() string {
	path := p.Path
	if path == "" {
		path = "(root)"
	}
	return path + ": " + p.Message
}

// ValidationError reports a value that does not match its output schema,
// naming the JSON path of each problem:
// "/items/2/price: expected integer, but got string".
type ValidationError struct {
	Problems []Problem
	cause    error
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "structured: output does not match its schema: " + strings.Join(parts, "; ")
}

// Unwrap returns ErrSchemaMismatch and the underlying
// *jsonvalidate.Error.
func (e *ValidationError) Unwrap() []error { return []error{ErrSchemaMismatch, e.cause} }

// OutputModel parses, coerces and validates a model's answer against an
// output definition. It is immutable and safe for concurrent use.
type OutputModel struct {
	node   *Node
	raw    []byte
	schema *jsonvalidate.Schema
}

// ErrNoOutput is returned by Prompt.OutputModel when the prompt has no
// Output.
var ErrNoOutput = errors.New("structured: prompt has no output definition")

// OutputModel returns the model of the prompt's Output.
func (p *Prompt) OutputModel() (*OutputModel, error) {
	if p.Output == nil {
		return nil, ErrNoOutput
	}
	return NewOutputModel(p.Output)
}

// NewOutputModel compiles the JSON Schema (draft 2020-12) of n.
func NewOutputModel(n *Node) (*OutputModel, error) {
	if n == nil {
		return nil, ErrNoOutput
	}
	raw, err := json.Marshal(n.Schema())
	if err != nil {
		return nil, fmt.Errorf("structured: encode output schema: %w", err)
	}
	s, err := jsonvalidate.Compile(raw)
	if err != nil {
		return nil, fmt.Errorf("structured: compile output schema: %w", err)
	}
	return &OutputModel{node: n, raw: raw, schema: s}, nil
}

// JSONSchema returns the JSON Schema of m as JSON text (a copy).
func (m *OutputModel) JSONSchema() []byte { return bytes.Clone(m.raw) }

// Parse extracts the JSON value from a model's answer (a ```json fence, or
// the first JSON value after any leading prose; see Parser), coerces it to
// the schema (Coerce) and validates it (Validate). The result has
// encoding/json's types: float64, string, bool, nil, []any, map[string]any.
func (m *OutputModel) Parse(text string) (any, error) {
	p := NewParser(WithMode(EmitNone))
	_, _ = p.WriteString(text)
	if err := p.Close(); err != nil {
		return nil, fmt.Errorf("structured: extract JSON from answer: %w", err)
	}
	v := m.Coerce(p.Value())
	if err := m.Validate(v); err != nil {
		return nil, err
	}
	return v, nil
}

// ParseInto is Parse followed by decoding the result into dst (a pointer),
// for callers that want a Go struct.
func (m *OutputModel) ParseInto(text string, dst any) error {
	v, err := m.Parse(text)
	if err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("structured: re-encode output: %w", err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("structured: decode output: %w", err)
	}
	return nil
}

// Validate checks v (with encoding/json's types) against the schema. A
// failure is a *ValidationError listing every problem, sorted by JSON
// path.
func (m *OutputModel) Validate(v any) error {
	err := m.schema.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonvalidate.Error
	if !errors.As(err, &ve) {
		return fmt.Errorf("structured: validate output: %w", err)
	}
	out := &ValidationError{cause: ve}
	for _, p := range ve.Problems {
		out.Problems = append(out.Problems, Problem{Path: p.Path, Message: p.Message})
	}
	return out
}

// Coerce adapts v to the schema where the intent is unambiguous, returning
// a new value (v is not modified):
//
//   - a single value where a list is expected is wrapped in a list;
//   - a numeric string becomes a number for integer and number leaves
//     ("456" → 456), a float with no fraction is accepted as an integer;
//   - a number or boolean becomes its text for string leaves (1 → "1");
//   - "true" and "false" (any case, spaces trimmed) become booleans;
//   - for enum leaves, a value whose text equals an allowed value's text
//     becomes that value ("1" → 1);
//   - a string holding a JSON object or array, where one is expected, is
//     decoded.
//
// Anything else is left for Validate to report. Null stays null.
func (m *OutputModel) Coerce(v any) any { return coerce(v, m.node) }

func coerce(v any, n *Node) any {
	if n == nil || v == nil {
		return v
	}
	switch n.Kind {
	case KindObject:
		obj, ok := v.(map[string]any)
		if !ok {
			obj, ok = decodeJSONString(v, '{').(map[string]any)
			if !ok {
				return v
			}
		}
		out := make(map[string]any, len(obj))
		for k, x := range obj {
			out[k] = x
		}
		for _, f := range n.Fields {
			if x, ok := out[f.Name]; ok {
				out[f.Name] = coerce(x, f.Node)
			}
		}
		return out
	case KindArray:
		arr, ok := v.([]any)
		if !ok {
			if d, ok2 := decodeJSONString(v, '[').([]any); ok2 {
				arr = d
			} else {
				arr = []any{v}
			}
		}
		out := make([]any, len(arr))
		for i, x := range arr {
			out[i] = coerceItem(x, n.Items)
		}
		return out
	}
	if len(n.Enum) > 0 {
		return coerceEnum(v, n.Enum)
	}
	switch jsonType(n.Type) {
	case "integer", "number":
		if s, ok := v.(string); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return f
			}
		}
	case "string":
		switch x := v.(type) {
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			return strconv.FormatBool(x)
		}
	case "boolean":
		if s, ok := v.(string); ok {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true":
				return true
			case "false":
				return false
			}
		}
	case "object":
		return decodeJSONString(v, '{')
	case "array":
		if d, ok := decodeJSONString(v, '[').([]any); ok {
			return d
		}
		if _, ok := v.([]any); !ok {
			return []any{v}
		}
	}
	return v
}

// coerceItem coerces an array element with the first alternative that
// then validates structurally (its kind and leaf type match).
func coerceItem(x any, items []*Node) any {
	switch len(items) {
	case 0:
		return x
	case 1:
		return coerce(x, items[0])
	}
	for _, it := range items {
		c := coerce(x, it)
		if kindMatches(c, it) {
			return c
		}
	}
	return x
}

func kindMatches(v any, n *Node) bool {
	if n == nil {
		return true
	}
	switch n.Kind {
	case KindObject:
		_, ok := v.(map[string]any)
		return ok
	case KindArray:
		_, ok := v.([]any)
		return ok
	}
	switch jsonType(n.Type) {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "number":
		_, ok := v.(float64)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	}
	return true
}

func coerceEnum(v any, enum []any) any {
	for _, e := range enum {
		if equalJSON(e, v) {
			return normalizeJSON(e)
		}
	}
	s := strings.TrimSpace(fmt.Sprint(v))
	for _, e := range enum {
		if fmt.Sprint(e) == s {
			return normalizeJSON(e)
		}
	}
	return v
}

// equalJSON compares two values by their JSON encoding.
func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// normalizeJSON converts a Go value (an enum given as int, say) to
// encoding/json's types, so it validates against the schema's enum.
func normalizeJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// decodeJSONString decodes v when it is a string holding a JSON value that
// starts with open ('{' or '['); otherwise it returns v.
func decodeJSONString(v any, open byte) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	t := strings.TrimSpace(s)
	if t == "" || t[0] != open {
		return v
	}
	var out any
	if json.Unmarshal([]byte(t), &out) != nil {
		return v
	}
	return out
}
