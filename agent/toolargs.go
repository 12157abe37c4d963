package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/acp-agent/acp-agent/agent/internal/jsonvalidate"
)

// compileToolSchema compiles a tool's parameter schema once: at
// registration, where a tool whose schema does not compile is refused, or
// at the first call of a tool built by NewTool (registeredTool.compiled).
// schemaCache holds compiled tool schemas by their text, for the whole
// process: every session registers the same built-in tools, and a
// compiled schema is immutable (safe to share and to use concurrently).
var schemaCache sync.Map // string -> *jsonvalidate.Schema

func compileToolSchema(name string, params json.RawMessage) (*jsonvalidate.Schema, error) {
	if len(bytes.TrimSpace(params)) == 0 {
		return nil, nil
	}
	if s, ok := schemaCache.Load(string(params)); ok {
		return s.(*jsonvalidate.Schema), nil
	}
	s, err := compileToolSchemaUncached(name, params)
	if err == nil {
		schemaCache.Store(string(params), s)
	}
	return s, err
}

func compileToolSchemaUncached(name string, params json.RawMessage) (*jsonvalidate.Schema, error) {
	s, err := jsonvalidate.Compile(params)
	if err != nil {
		return nil, fmt.Errorf("agent: tool %q: parameters: %w", name, err)
	}
	return s, nil
}

// maxArgProblems bounds the problems told to the model for one call.
const maxArgProblems = 8

// checkToolArgs checks the model's (untrusted) arguments against the
// tool's schema. The error names every failing argument (its JSON
// Pointer) and why, for the model to fix the call.
func checkToolArgs(schema *jsonvalidate.Schema, args json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(args))
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
	var ve *jsonvalidate.Error
	if !errors.As(err, &ve) {
		return err
	}
	if len(ve.Problems) > maxArgProblems {
		ve = &jsonvalidate.Error{Problems: ve.Problems[:maxArgProblems]}
	}
	return fmt.Errorf("the arguments do not match the tool's schema: %v", ve)
}
