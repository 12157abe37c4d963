package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// compileToolSchema compiles a tool's parameter schema once: at
// registration, where a tool whose schema does not compile is refused, or
// at the first call of a tool built by NewTool (registeredTool.compiled).
// schemaCache holds compiled tool schemas by their text, for the whole
// process: every session registers the same built-in tools, and a
// compiled schema is immutable (safe to share and to use concurrently).
var schemaCache sync.Map // string -> *jsonschema.Schema

func compileToolSchema(name string, params json.RawMessage) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(params)) == 0 {
		return nil, nil
	}
	if s, ok := schemaCache.Load(string(params)); ok {
		return s.(*jsonschema.Schema), nil
	}
	s, err := compileToolSchemaUncached(name, params)
	if err == nil {
		schemaCache.Store(string(params), s)
	}
	return s, err
}

func compileToolSchemaUncached(name string, params json.RawMessage) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	url := "tool:///" + name + ".json"
	if err := c.AddResource(url, bytes.NewReader(params)); err != nil {
		return nil, fmt.Errorf("agent: tool %q: parameters are not a JSON schema: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("agent: tool %q: parameters are not a valid JSON schema: %w", name, err)
	}
	return s, nil
}

// checkToolArgs checks the model's (untrusted) arguments against the
// tool's schema. The error names what is wrong and where, for the model.
func checkToolArgs(schema *jsonschema.Schema, args json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	if dec.More() {
		return errors.New("the arguments are not valid JSON: more than one JSON value")
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("the arguments must be a JSON object")
	}
	if schema == nil {
		return nil
	}
	err := schema.Validate(v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var problems []string
	for _, leaf := range leafErrors(ve) {
		at := leaf.InstanceLocation
		if at == "" {
			at = "/"
		}
		problems = append(problems, fmt.Sprintf("at %s: %s", at, leaf.Message))
	}
	return fmt.Errorf("the arguments do not match the tool's schema: %s", strings.Join(problems, "; "))
}

// leafErrors returns the most specific validation errors (at most 8).
func leafErrors(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leafErrors(c)...)
		if len(out) >= 8 {
			return out[:8]
		}
	}
	return out
}
