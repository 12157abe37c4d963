// Package schemacheck validates JSON against the official ACP JSON Schemas
// kept in testdata/acp-schema at the module root. It is meant for tests:
// each schema "$defs" entry is compiled on first use and cached.
//
// For ACP v2 it also has strict copies of the SDK 2.4.0 v2 schemas, for
// what an agent sends: v2 lets enums and tagged unions carry values it
// does not list, and reserves those that start with "_" for custom use
// (the others for future versions of the protocol). In the strict copies
// every such open value must start with "_", so an agent that sends a
// value the schema does not define, without marking it custom, fails.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Schema files, relative to testdata/acp-schema, and the URLs they are
// registered under so that their internal "#/$defs/..." references resolve.
const (
	stableFile   = "v1/schema.json"
	unstableFile = "v1/schema.unstable.json"
	sdkFile      = "npm-sdk-2.4.0/v1/schema.json"
	// sdkUnstableFile has the SDK's unstable methods (session/set_title,
	// session/status, session/archive, elicitation, subagents).
	sdkUnstableFile = "npm-sdk-2.4.0/v1/schema.unstable.json"
	// v2File and v2UnstableFile are ACP v2 (Preview) as the SDK ships
	// it: stable, and stable plus unstable.
	v2File         = "npm-sdk-2.4.0/v2/schema.json"
	v2UnstableFile = "npm-sdk-2.4.0/v2/schema.unstable.json"
	// strictPrefix names the strict copies of the v2 files.
	strictPrefix = "strict/"
	// extFile is acp-agent's own schema for its extension updates; it
	// lives next to the official copy, in testdata/acp-agent-schema.
	extFile = "../acp-agent-schema/extensions.json"

	urlBase = "file:///acp-schema/"
)

// Checker validates JSON documents against schema definitions. It is safe
// for concurrent use.
type Checker struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	defs     map[string]map[string]struct{} // file → $defs names
	cache    map[string]*jsonschema.Schema  // URL with fragment → schema
}

// Load finds testdata/acp-schema by walking up from the current directory
// to the module root (the directory holding go.mod) and loads the stable,
// unstable and SDK 2.4.0 v1 and v2 schemas.
func Load() (*Checker, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return LoadDir(filepath.Join(dir, "testdata", "acp-schema"))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, errors.New("schemacheck: no go.mod found above the current directory")
		}
		dir = parent
	}
}

// LoadDir loads the schemas from dir (a copy of testdata/acp-schema).
func LoadDir(dir string) (*Checker, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("schemacheck: refusing to load external schema %s", s)
	}
	ch := &Checker{
		compiler: c,
		defs:     make(map[string]map[string]struct{}),
		cache:    make(map[string]*jsonschema.Schema),
	}
	add := func(f string, data []byte) error {
		var doc struct {
			Defs map[string]json.RawMessage `json:"$defs"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("schemacheck: %s: %w", f, err)
		}
		names := make(map[string]struct{}, len(doc.Defs))
		for name := range doc.Defs {
			names[name] = struct{}{}
		}
		ch.defs[f] = names
		if err := c.AddResource(schemaURL(f), bytes.NewReader(data)); err != nil {
			return fmt.Errorf("schemacheck: %s: %w", f, err)
		}
		return nil
	}
	for _, f := range []string{stableFile, unstableFile, sdkFile, sdkUnstableFile, v2File, v2UnstableFile, extFile} {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, fmt.Errorf("schemacheck: %w", err)
		}
		if err := add(f, data); err != nil {
			return nil, err
		}
		if f == v2File || f == v2UnstableFile {
			strict, err := strictSchema(data)
			if err != nil {
				return nil, fmt.Errorf("schemacheck: %s: %w", f, err)
			}
			if err := add(strictPrefix+f, strict); err != nil {
				return nil, err
			}
		}
	}
	return ch, nil
}

// strictSchema returns the schema with every open value closed to custom
// ones: the open branch of an enum ({"type":"string"} beside constants)
// and the tag of a union's open branch (the one with "not") must match
// "^_".
func strictSchema(data []byte) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	closeOpenValues(doc)
	return json.Marshal(doc)
}

func closeOpenValues(v any) {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			closeOpenValues(x)
		}
	case map[string]any:
		for _, key := range []string{"anyOf", "oneOf"} {
			alts, _ := v[key].([]any)
			consts := 0
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && m["const"] != nil {
					consts++
				}
			}
			for _, a := range alts {
				m, ok := a.(map[string]any)
				if !ok {
					continue
				}
				if consts > 0 && m["type"] == "string" && m["const"] == nil && m["properties"] == nil {
					m["pattern"] = "^_" // an enum's custom value
				}
				if _, open := m["not"]; open {
					// A union's open branch: its tag is the member the
					// other branches hold constant.
					props, _ := m["properties"].(map[string]any)
					for _, p := range props {
						if pm, ok := p.(map[string]any); ok && pm["type"] == "string" && pm["const"] == nil {
							pm["pattern"] = "^_"
						}
					}
				}
			}
		}
		for _, x := range v {
			closeOpenValues(x)
		}
	}
}

// Validate validates data against the stable v1 schema's $defs/<def>.
func (c *Checker) Validate(def string, data []byte) error {
	return c.validate(stableFile, def, data)
}

// ValidateUnstable validates data against the v1 unstable schema's
// $defs/<def> (for session/fork, PromptResponse.usage and other unstable
// items).
func (c *Checker) ValidateUnstable(def string, data []byte) error {
	return c.validate(unstableFile, def, data)
}

// ValidateSDK validates data against the stable v1 schema shipped in the npm
// SDK 2.4.0 (for notice, compaction updates and ToolCall.name).
func (c *Checker) ValidateSDK(def string, data []byte) error {
	return c.validate(sdkFile, def, data)
}

// ValidateSDKUnstable validates data against the unstable v1 schema
// shipped in the npm SDK 2.4.0 (session/set_title, session/status,
// session/archive, the archived filter and flag of session/list).
func (c *Checker) ValidateSDKUnstable(def string, data []byte) error {
	return c.validate(sdkUnstableFile, def, data)
}

// ValidateV2 validates data against the SDK 2.4.0 stable v2 schema.
func (c *Checker) ValidateV2(def string, data []byte) error {
	return c.validate(v2File, def, data)
}

// ValidateV2Unstable validates data against the SDK 2.4.0 v2 schema with
// its unstable additions.
func (c *Checker) ValidateV2Unstable(def string, data []byte) error {
	return c.validate(v2UnstableFile, def, data)
}

// ValidateV2Strict is ValidateV2 where open values must be custom ones
// (start with "_"): what an agent may send.
func (c *Checker) ValidateV2Strict(def string, data []byte) error {
	return c.validate(strictPrefix+v2File, def, data)
}

// ValidateV2UnstableStrict is ValidateV2Unstable where open values must be
// custom ones (start with "_").
func (c *Checker) ValidateV2UnstableStrict(def string, data []byte) error {
	return c.validate(strictPrefix+v2UnstableFile, def, data)
}

// ValidateExtension validates data against acp-agent's extension schema
// (testdata/acp-agent-schema/extensions.json): the execution_state_update
// and retry_update session updates.
func (c *Checker) ValidateExtension(def string, data []byte) error {
	return c.validate(extFile, def, data)
}

// HasDef reports whether the schema file ("stable", "unstable", "sdk",
// "sdk-unstable", "v2", "v2-unstable" or "extension") defines def.
func (c *Checker) HasDef(schema, def string) bool {
	f := map[string]string{"stable": stableFile, "unstable": unstableFile, "sdk": sdkFile, "sdk-unstable": sdkUnstableFile,
		"v2": v2File, "v2-unstable": v2UnstableFile, "extension": extFile}[schema]
	_, ok := c.defs[f][def]
	return ok
}

func (c *Checker) validate(file, def string, data []byte) error {
	sch, err := c.schema(file, def)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("schemacheck: invalid JSON: %w", err)
	}
	if dec.More() {
		return errors.New("schemacheck: trailing data after the JSON value")
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("schemacheck: %s#/$defs/%s: %w", file, def, err)
	}
	return nil
}

// schemaURL is the URL file is registered under; ".." is dropped so the
// compiler does not have to resolve it.
func schemaURL(file string) string { return urlBase + strings.ReplaceAll(file, "../", "") }

func (c *Checker) schema(file, def string) (*jsonschema.Schema, error) {
	if _, ok := c.defs[file][def]; !ok {
		return nil, fmt.Errorf("schemacheck: %s has no $defs/%s", file, def)
	}
	url := schemaURL(file) + "#/$defs/" + def
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.cache[url]; ok {
		return s, nil
	}
	s, err := c.compiler.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schemacheck: compile %s: %w", url, err)
	}
	c.cache[url] = s
	return s, nil
}
