package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/acp-agent/acp-agent/policy"
)

// TypedTool is a tool whose arguments are the Go value In: the JSON Schema
// the model is offered is inferred from In, and Describe and Run get the
// arguments decoded into In once the session has checked them against
// that schema. NewTool turns it into a Tool.
type TypedTool[In any] struct {
	Name             string
	Description      string
	ShortDescription string
	// Concurrent, Modes: see Tool.
	Concurrent bool
	Modes      []policy.Mode
	// Describe, if set, describes each call (see Tool.Describe).
	Describe func(args In) (ToolCallInfo, error)
	// Run runs a call.
	Run func(ctx context.Context, args In) (ToolResult, error)
	// Redact, if set, returns args without their secrets and whether it
	// changed anything (see Tool.Redact).
	Redact func(args In) (In, bool)
	// Coming: see Tool.
	Coming func()
}

// NewTool returns t as a Tool. In must be a struct; its schema is
// inferred by github.com/google/jsonschema-go (jsonschema.For): every
// exported field is a property named by its json tag, required unless
// tagged omitempty (or omitzero), described by its jsonschema tag; no
// other properties are allowed. A schema tag adds what a Go type cannot
// say, as comma-separated keywords:
//
//	minLength=N  maxLength=N  minimum=N  maximum=N  minItems=N  maxItems=N
//	uniqueItems  enum=a|b|c (strings)  items.KEYWORD (for a slice's items)
//
// so that
//
//	Pattern string   `json:"pattern" jsonschema:"a regular expression" schema:"minLength=1"`
//	Tags    []string `json:"tags,omitempty" schema:"maxItems=20,items.minLength=1"`
//
// is a required non-empty string and an optional list of at most 20
// non-empty strings. Slices are arrays (never null). The schema is built
// once per type and shared. NewTool panics if In's schema cannot be built
// (a field of a type JSON Schema cannot describe, a bad schema tag): a
// mistake in the program that any test building the tool finds.
func NewTool[In any](t TypedTool[In]) Tool {
	tool := Tool{
		Name: t.Name, Description: t.Description, ShortDescription: t.ShortDescription,
		Concurrent: t.Concurrent, Modes: t.Modes, Parameters: SchemaFor[In](), Coming: t.Coming, inferred: true,
	}
	if run := t.Run; run != nil {
		tool.Run = func(ctx context.Context, args json.RawMessage) (ToolResult, error) {
			a, err := decodeArgs[In](args)
			if err != nil {
				return ToolResult{}, err
			}
			return run(ctx, a)
		}
	}
	if describe := t.Describe; describe != nil {
		tool.Describe = func(args json.RawMessage) (ToolCallInfo, error) {
			a, err := decodeArgs[In](args)
			if err != nil {
				return ToolCallInfo{}, err
			}
			return describe(a)
		}
	}
	if redact := t.Redact; redact != nil {
		tool.Redact = func(args json.RawMessage) json.RawMessage {
			a, err := decodeArgs[In](args)
			if err != nil {
				return args
			}
			r, changed := redact(a)
			if !changed {
				return args
			}
			data, err := json.Marshal(r)
			if err != nil {
				return args
			}
			return data
		}
	}
	return tool
}

// decodeArgs unmarshals schema-checked arguments.
func decodeArgs[In any](args json.RawMessage) (In, error) {
	var v In
	if err := json.Unmarshal(args, &v); err != nil {
		return v, fmt.Errorf("invalid arguments: %w", err)
	}
	return v, nil
}

// schemas caches SchemaFor's result per type: every session registers the
// same built-in tools, and equal bytes also hit the compiled-schema cache
// (toolargs.go).
var schemas sync.Map // reflect.Type → json.RawMessage

// SchemaFor returns the JSON Schema of In's arguments as NewTool infers
// it (see NewTool). The bytes are shared: do not modify them. It panics
// if the schema cannot be built.
func SchemaFor[In any]() json.RawMessage {
	rt := reflect.TypeFor[In]()
	if s, ok := schemas.Load(rt); ok {
		return s.(json.RawMessage)
	}
	data, err := inferSchema(rt)
	if err != nil {
		panic(fmt.Sprintf("agent: the argument schema of %v: %v", rt, err))
	}
	s, _ := schemas.LoadOrStore(rt, json.RawMessage(data))
	return s.(json.RawMessage)
}

func inferSchema(rt reflect.Type) ([]byte, error) {
	if rt.Kind() != reflect.Struct {
		return nil, fmt.Errorf("arguments must be a struct, not %v", rt.Kind())
	}
	s, err := jsonschema.ForType(rt, nil)
	if err != nil {
		return nil, err
	}
	if err := refine(rt, s); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// refine walks rt beside its inferred schema s: slices become plain
// arrays, and each field's schema tag is applied to its property.
func refine(rt reflect.Type, s *jsonschema.Schema) error {
	for rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	switch rt.Kind() {
	case reflect.Slice, reflect.Array:
		if slices.Equal(s.Types, []string{"null", "array"}) {
			s.Type, s.Types = "array", nil
		}
		if s.Items != nil {
			return refine(rt.Elem(), s.Items)
		}
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(rt) {
			name, ok := jsonName(f)
			p := s.Properties[name]
			if !ok || p == nil {
				continue
			}
			if err := refine(f.Type, p); err != nil {
				return fmt.Errorf("%s: %w", f.Name, err)
			}
			if tag, ok := f.Tag.Lookup("schema"); ok {
				if err := applyKeywords(p, tag); err != nil {
					return fmt.Errorf("%s: schema tag %q: %w", f.Name, tag, err)
				}
			}
		}
	}
	return nil
}

// jsonName is the property name of f, as encoding/json names it; false
// for a field JSON leaves out.
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() || f.Anonymous {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return "", false
	case "":
		return f.Name, true
	}
	return name, true
}

// applyKeywords applies a schema tag's keywords to s.
func applyKeywords(s *jsonschema.Schema, tag string) error {
	for kw := range strings.SplitSeq(tag, ",") {
		target := s
		if rest, ok := strings.CutPrefix(kw, "items."); ok {
			if s.Items == nil {
				return fmt.Errorf("%s: not an array", kw)
			}
			target, kw = s.Items, rest
		}
		key, value, hasValue := strings.Cut(kw, "=")
		count := func() (*int, error) {
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s: not a count", kw)
			}
			return &n, nil
		}
		number := func() (*float64, error) {
			x, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: not a number", kw)
			}
			return &x, nil
		}
		var err error
		switch {
		case key == "uniqueItems" && !hasValue:
			target.UniqueItems = true
		case key == "enum" && hasValue && target.Type == "string":
			for v := range strings.SplitSeq(value, "|") {
				target.Enum = append(target.Enum, v)
			}
		case key == "minLength" && hasValue:
			target.MinLength, err = count()
		case key == "maxLength" && hasValue:
			target.MaxLength, err = count()
		case key == "minItems" && hasValue:
			target.MinItems, err = count()
		case key == "maxItems" && hasValue:
			target.MaxItems, err = count()
		case key == "minimum" && hasValue:
			target.Minimum, err = number()
		case key == "maximum" && hasValue:
			target.Maximum, err = number()
		default:
			return fmt.Errorf("unknown keyword %q", kw)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
