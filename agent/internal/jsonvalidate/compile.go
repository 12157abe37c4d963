package jsonvalidate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// maxExpansion bounds the subschemas one value is checked against before
// any of its members or items: more means a schema built to make
// validation explode (allOf of the same $ref, nested).
const maxExpansion = 4096

// MaxDepth bounds the nesting of a schema's subschemas and of a value:
// the library's error for a value n levels down names every schema on
// the way (n² bytes), and deeper is no tool's argument.
const MaxDepth = 100

// Schema is a compiled JSON Schema. It is immutable.
type Schema struct {
	root     *jsonschema.Schema
	resolved *jsonschema.Resolved
	base     map[*jsonschema.Schema]*jsonschema.Schema // each schema's resource (the nearest $id, or the root)
	anchors  map[*jsonschema.Schema]map[string]*jsonschema.Schema
	ids      map[string]*jsonschema.Schema
	refs     map[*jsonschema.Schema]*jsonschema.Schema // $ref and $dynamicRef targets
	// multipleOf holds the multipleOf of the schemas that apply to a
	// value only as its must (not under not, if, anyOf, oneOf or
	// contains), taken from the library: it divides floats (0.07 is not
	// a multiple of 0.01 there), the walk divides the decimals as
	// written. Elsewhere a failure is not a problem of the value (a
	// branch of anyOf may fail) and the library keeps it.
	multipleOf map[*jsonschema.Schema]float64
	// ownChecks: the walk asserts a keyword the library does not (format,
	// multipleOf), so it runs on every value.
	ownChecks bool
}

// The "$schema" values of the drafts this package reads.
const (
	draft07   = "http://json-schema.org/draft-07/schema#"
	draft2020 = "https://json-schema.org/draft/2020-12/schema"
)

// Compile reads and checks a JSON Schema. It never loads anything: a
// reference that does not point into the schema is an error.
func Compile(raw []byte) (*Schema, error) {
	// Checked on the text first: the library's checks take time
	// quadratic in the depth (3,000 levels took seconds).
	if jsonDepth(raw) > 2*MaxDepth+2 {
		return nil, fmt.Errorf("not a usable JSON schema: subschemas nested more than %d levels deep", MaxDepth)
	}
	raw, draft, err := normalize(raw)
	if err != nil {
		return nil, err
	}
	root := new(jsonschema.Schema)
	if err := json.Unmarshal(raw, root); err != nil {
		return nil, fmt.Errorf("not a JSON schema: %w", err)
	}
	s := &Schema{
		root:       root,
		base:       map[*jsonschema.Schema]*jsonschema.Schema{},
		anchors:    map[*jsonschema.Schema]map[string]*jsonschema.Schema{},
		ids:        map[string]*jsonschema.Schema{},
		refs:       map[*jsonschema.Schema]*jsonschema.Schema{},
		multipleOf: map[*jsonschema.Schema]float64{},
	}
	// The library checks that the subschemas form a tree (a JSON document
	// always does) and resolves the references; without a loader, one
	// that leaves the schema is an error, never a fetch.
	if s.resolved, err = root.Resolve(nil); err != nil {
		return nil, fmt.Errorf("not a valid JSON schema: %w", err)
	}
	if err := s.index(root, root, "", draft, 0); err != nil {
		return nil, fmt.Errorf("not a valid JSON schema: %w", err)
	}
	for from := range s.base {
		for _, ref := range []string{from.Ref, from.DynamicRef} {
			if ref == "" {
				continue
			}
			to, err := s.lookup(from, ref)
			if err != nil {
				return nil, fmt.Errorf("not a valid JSON schema: %w", err)
			}
			s.refs[from] = to
		}
	}
	if err := s.checkExpansion(); err != nil {
		return nil, fmt.Errorf("not a usable JSON schema: %w", err)
	}
	s.takeMultipleOf()
	return s, nil
}

// takeMultipleOf moves into s.multipleOf the multipleOf of every schema
// no not, if, anyOf, oneOf or contains reaches, through references too.
func (s *Schema) takeMultipleOf() {
	maybe := map[*jsonschema.Schema]bool{}
	var mark func(sc *jsonschema.Schema)
	mark = func(sc *jsonschema.Schema) {
		if sc == nil || maybe[sc] {
			return
		}
		maybe[sc] = true
		if to := s.refs[sc]; to != nil {
			mark(to)
		}
		eachChild(sc, func(_, _ string, c *jsonschema.Schema) bool {
			mark(c)
			return true
		})
	}
	for sc := range s.base {
		eachChild(sc, func(kw, _ string, c *jsonschema.Schema) bool {
			switch kw {
			case "not", "if", "anyOf", "oneOf", "contains":
				mark(c)
			}
			return true
		})
	}
	for sc := range s.base {
		if sc.MultipleOf != nil && !maybe[sc] {
			s.multipleOf[sc] = *sc.MultipleOf
			sc.MultipleOf = nil
			s.ownChecks = true
		}
	}
}

// jsonDepth is the deepest nesting of arrays and objects in a JSON text
// (a subschema is one or two levels below its parent).
func jsonDepth(raw []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// normalize reads draft-04, -06 and 2019-09 schemas as the library's
// draft-07 and 2020-12, and returns the draft the library will apply.
func normalize(raw []byte) ([]byte, string, error) {
	if !bytes.Contains(raw, []byte(`"$schema"`)) {
		return raw, draft2020, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers go back as they were written
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, "", fmt.Errorf("not a JSON schema: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return raw, draft2020, nil
	}
	uri, _ := obj["$schema"].(string)
	switch strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(uri, "http://"), "https://"), "#") {
	case "json-schema.org/draft-07/schema":
		obj["$schema"] = draft07
	case "json-schema.org/draft-06/schema":
		obj["$schema"] = draft07
	case "json-schema.org/draft-04/schema":
		obj["$schema"] = draft07
		eachSchemaObject(obj, draft04Bounds)
	case "json-schema.org/draft/2020-12/schema":
		obj["$schema"] = draft2020
	case "json-schema.org/draft/2019-09/schema":
		obj["$schema"] = draft2020
		eachSchemaObject(obj, tupleItems)
	default:
		return nil, "", fmt.Errorf("not a usable JSON schema: $schema %q is not draft-04, -06, -07, 2019-09 or 2020-12", uri)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, "", fmt.Errorf("not a JSON schema: %w", err)
	}
	return out, obj["$schema"].(string), nil
}

// valueKeyword reports whether a keyword holds JSON values, not schemas:
// rewrites stay out of them. (Switches, not maps: nothing at package
// init.)
func valueKeyword(k string) bool {
	switch k {
	case "enum", "const", "default", "examples":
		return true
	}
	return false
}

// eachSchemaObject calls fn for every object of a schema document
// outside value keywords, parents first.
func eachSchemaObject(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		for k, c := range x {
			if !valueKeyword(k) {
				eachSchemaObject(c, fn)
			}
		}
	case []any:
		for _, c := range x {
			eachSchemaObject(c, fn)
		}
	}
}

// draft04Bounds rewrites draft-04's boolean exclusiveMinimum and
// exclusiveMaximum (modifiers of minimum and maximum) as the numbers later
// drafts use.
func draft04Bounds(x map[string]any) {
	for _, b := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		if excl, ok := x[b[0]].(bool); ok {
			delete(x, b[0])
			if bound, ok := x[b[1]]; ok && excl {
				x[b[0]] = bound
				delete(x, b[1])
			}
		}
	}
}

// tupleItems rewrites 2019-09's tuple form of items (an array, with
// additionalItems for the rest) as 2020-12's prefixItems and items.
func tupleItems(x map[string]any) {
	if tuple, ok := x["items"].([]any); ok {
		x["prefixItems"] = tuple
		delete(x, "items")
		if rest, ok := x["additionalItems"]; ok {
			x["items"] = rest
			delete(x, "additionalItems")
		}
	}
}

func jsonType(t string) bool {
	switch t {
	case "null", "boolean", "object", "array", "number", "string", "integer":
		return true
	}
	return false
}

// index records each subschema's resource, anchors and $ids, and checks
// what a meta-schema would have refused and the library does not check.
func (s *Schema) index(sc, base *jsonschema.Schema, at, draft string, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("subschemas nested more than %d levels deep", MaxDepth)
	}
	if sc.ID != "" {
		base = sc
		s.ids[sc.ID] = sc
	}
	s.base[sc] = base
	for _, a := range []string{sc.Anchor, sc.DynamicAnchor} {
		if a != "" {
			if s.anchors[base] == nil {
				s.anchors[base] = map[string]*jsonschema.Schema{}
			}
			s.anchors[base][a] = sc
		}
	}
	where := at
	if where == "" {
		where = "the root"
	}
	for _, t := range append([]string{sc.Type}, sc.Types...) {
		if t != "" && !jsonType(t) {
			return fmt.Errorf("at %s: type %q is not a JSON type", where, t)
		}
	}
	for name, n := range map[string]*int{"minLength": sc.MinLength, "maxLength": sc.MaxLength, "minItems": sc.MinItems,
		"maxItems": sc.MaxItems, "minProperties": sc.MinProperties, "maxProperties": sc.MaxProperties,
		"minContains": sc.MinContains, "maxContains": sc.MaxContains} {
		if n != nil && *n < 0 {
			return fmt.Errorf("at %s: %s is negative", where, name)
		}
	}
	if sc.MultipleOf != nil && *sc.MultipleOf <= 0 {
		return fmt.Errorf("at %s: multipleOf must be greater than 0", where)
	}
	if draft == draft2020 && sc.ItemsArray != nil {
		return fmt.Errorf("at %s: items must be a schema (a tuple is prefixItems since 2020-12)", where)
	}
	if sc.Format != "" {
		s.ownChecks = true
	}
	var err error
	eachChild(sc, func(kw, key string, c *jsonschema.Schema) bool {
		p := at + "/" + kw
		if key != "" {
			p += "/" + escape(key)
		}
		err = s.index(c, base, p, draft, depth+1)
		return err == nil
	})
	return err
}

// eachChild calls fn for every subschema of sc with its keyword (and the
// member name or index for keywords holding several), until fn is false.
func eachChild(sc *jsonschema.Schema, fn func(kw, key string, c *jsonschema.Schema) bool) {
	for _, one := range []struct {
		kw string
		c  *jsonschema.Schema
	}{{"items", sc.Items}, {"additionalItems", sc.AdditionalItems}, {"contains", sc.Contains},
		{"unevaluatedItems", sc.UnevaluatedItems}, {"additionalProperties", sc.AdditionalProperties},
		{"propertyNames", sc.PropertyNames}, {"unevaluatedProperties", sc.UnevaluatedProperties},
		{"not", sc.Not}, {"if", sc.If}, {"then", sc.Then}, {"else", sc.Else}, {"contentSchema", sc.ContentSchema}} {
		if one.c != nil && !fn(one.kw, "", one.c) {
			return
		}
	}
	for _, list := range []struct {
		kw string
		cs []*jsonschema.Schema
	}{{"prefixItems", sc.PrefixItems}, {"items", sc.ItemsArray}, {"allOf", sc.AllOf}, {"anyOf", sc.AnyOf}, {"oneOf", sc.OneOf}} {
		for i, c := range list.cs {
			if !fn(list.kw, strconv.Itoa(i), c) {
				return
			}
		}
	}
	for _, m := range []struct {
		kw string
		cs map[string]*jsonschema.Schema
	}{{"$defs", sc.Defs}, {"definitions", sc.Definitions}, {"properties", sc.Properties},
		{"patternProperties", sc.PatternProperties}, {"dependentSchemas", sc.DependentSchemas}, {"dependencies", sc.DependencySchemas}} {
		for k, c := range m.cs {
			if !fn(m.kw, k, c) {
				return
			}
		}
	}
}

// child returns sc's subschema at one or two JSON Pointer segments
// (keyword, then member name or index), and how many segments it used.
func child(sc *jsonschema.Schema, seg []string) (*jsonschema.Schema, int) {
	var found *jsonschema.Schema
	used := 0
	eachChild(sc, func(kw, key string, c *jsonschema.Schema) bool {
		if kw != seg[0] {
			return true
		}
		if key == "" {
			found, used = c, 1
			return false
		}
		if len(seg) > 1 && key == seg[1] {
			found, used = c, 2
			return false
		}
		return true
	})
	return found, used
}

// lookup finds the schema a $ref names, within the schema only.
func (s *Schema) lookup(from *jsonschema.Schema, ref string) (*jsonschema.Schema, error) {
	doc, frag, _ := strings.Cut(ref, "#")
	base := s.base[from]
	if doc != "" {
		if base = s.ids[doc]; base == nil {
			return nil, fmt.Errorf("$ref %q: only references within the schema are followed", ref)
		}
	}
	if frag == "" {
		return base, nil
	}
	if !strings.HasPrefix(frag, "/") {
		if a := s.anchors[base][frag]; a != nil {
			return a, nil
		}
		return nil, fmt.Errorf("$ref %q: no such anchor", ref)
	}
	var segs []string
	for _, seg := range strings.Split(frag[1:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		segs = append(segs, seg)
	}
	at := base
	for len(segs) > 0 {
		c, used := child(at, segs)
		if c == nil {
			return nil, fmt.Errorf("$ref %q: nothing there", ref)
		}
		at, segs = c, segs[used:]
	}
	return at, nil
}

var errLoop = errors.New("its references loop without reaching a member or item of the value (e.g. {\"$ref\":\"#\"})")

// checkExpansion refuses a schema under which checking one value would
// never end: references that come back to where they started without
// descending into the value, or a fan-out past maxExpansion subschemas.
func (s *Schema) checkExpansion() error {
	const visiting = -1
	cost := map[*jsonschema.Schema]int{}
	var visit func(sc *jsonschema.Schema) (int, error)
	visit = func(sc *jsonschema.Schema) (int, error) {
		switch c := cost[sc]; {
		case c == visiting:
			return 0, errLoop
		case c > 0:
			return c, nil
		}
		cost[sc] = visiting
		total := 1
		for _, next := range s.sameValue(sc) {
			c, err := visit(next)
			if err != nil {
				return 0, err
			}
			if total += c; total > maxExpansion {
				return 0, fmt.Errorf("a value is checked against more than %d subschemas before its members", maxExpansion)
			}
		}
		cost[sc] = total
		return total, nil
	}
	for sc := range s.base {
		if _, err := visit(sc); err != nil {
			return err
		}
	}
	return nil
}

// sameValue lists the subschemas that apply to the same value as sc.
func (s *Schema) sameValue(sc *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	if to := s.refs[sc]; to != nil {
		out = append(out, to)
	}
	return append(out, sameValueNoRef(sc)...)
}

func escape(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}
