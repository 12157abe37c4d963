package structured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Kind is the shape of a Node.
type Kind uint8

const (
	// KindLeaf is a scalar (or free-form) value, described by Type.
	KindLeaf Kind = iota
	// KindObject is a JSON object with the ordered Fields.
	KindObject
	// KindArray is a JSON array whose elements are described by Items.
	KindArray
)

// Leaf type names. Type is free text shown to the model as <Type>; these
// names (and their JSON Schema spellings string, integer, number, boolean,
// object, array) also constrain the JSON Schema. Any other text, such as
// "YYYY-MM-DD" or "Literal[a, b]", is a hint for the model and does not
// constrain the value (use Enum for that).
const (
	TypeString  = "str"
	TypeInteger = "int"
	TypeNumber  = "float"
	TypeBoolean = "bool"
	TypeAny     = "any"
	TypeObject  = "object"
	TypeArray   = "list"
)

// Node is one node of an output definition: the description of the JSON a
// model must produce, rendered into the prompt (Describe) and turned into a
// JSON Schema (Schema) that the answer is coerced to and validated against.
// Build nodes with Object, List and the leaf constructors, or from a JSON
// Schema with FromJSONSchema. A Node is immutable once built by those
// helpers' callers: do not change a Node while a Prompt or OutputModel that
// uses it is in use.
type Node struct {
	Kind Kind
	// Type is the leaf type (see the Type constants); unused for objects
	// and arrays.
	Type string
	// Desc is shown after the value as a "// Desc" comment and becomes the
	// schema's description.
	Desc string
	// Fields are an object's members, in prompt order.
	Fields []Field
	// Items describe an array's elements. Normally one node; several nodes
	// are shown one per line and accepted as alternatives (anyOf).
	Items []*Node
	// Enum, if set, lists the only values a leaf may take.
	Enum []any
}

// Field is one member of an object Node.
type Field struct {
	Name string
	*Node
	// Required fields must be present and not null. Other fields may be
	// missing or null, as a model often leaves out what it does not know.
	Required bool
}

// Object returns an object node with the given fields, in order.
func Object(fields ...Field) *Node { return &Node{Kind: KindObject, Fields: fields} }

// List returns an array node whose elements match item (or, with several
// items, any of them).
func List(items ...*Node) *Node { return &Node{Kind: KindArray, Items: items} }

// Leaf returns a leaf of type typ (see the Type constants) described by desc.
func Leaf(typ, desc string) *Node { return &Node{Kind: KindLeaf, Type: typ, Desc: desc} }

// String returns a string leaf.
func String(desc string) *Node { return Leaf(TypeString, desc) }

// Integer returns an integer leaf.
func Integer(desc string) *Node { return Leaf(TypeInteger, desc) }

// Number returns a number leaf.
func Number(desc string) *Node { return Leaf(TypeNumber, desc) }

// Boolean returns a boolean leaf.
func Boolean(desc string) *Node { return Leaf(TypeBoolean, desc) }

// Any returns a leaf that accepts any JSON value.
func Any(desc string) *Node { return Leaf(TypeAny, desc) }

// OneOf returns a leaf restricted to values, shown as <Literal[v1, v2]>.
func OneOf(desc string, values ...any) *Node {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprint(v)
	}
	return &Node{Kind: KindLeaf, Type: "Literal[" + strings.Join(parts, ", ") + "]", Desc: desc, Enum: values}
}

// Prop returns an optional field.
func Prop(name string, n *Node) Field { return Field{Name: name, Node: n} }

// Req returns a required field.
func Req(name string, n *Node) Field { return Field{Name: name, Node: n, Required: true} }

// WithDesc returns a shallow copy of n with the description desc, e.g. to
// describe an object or a list: List(String("")).WithDesc("tags").
func (n *Node) WithDesc(desc string) *Node {
	c := *n
	c.Desc = desc
	return &c
}

// Describe renders n the way the prompt shows a data structure: JSON-like,
// two-space indentation, leaves as <type>, a "// desc" comment after each
// described member, and "..." as the last element of every list:
//
//	{
//	  "thinking": <str>, // describe how will you plan to reply?
//	  "reply": <str> // your final reply
//	}
func (n *Node) Describe() string {
	var sb strings.Builder
	n.describe(&sb, 0)
	return sb.String()
}

func (n *Node) describe(sb *strings.Builder, depth int) {
	if n == nil {
		sb.WriteString("<any>")
		return
	}
	indent := strings.Repeat("  ", depth)
	switch n.Kind {
	case KindObject:
		if len(n.Fields) == 0 {
			sb.WriteString("{}")
			return
		}
		sb.WriteString("{\n")
		for i, f := range n.Fields {
			sb.WriteString(indent + "  ")
			writeJSONString(sb, f.Name)
			sb.WriteString(": ")
			f.Node.describe(sb, depth+1)
			if i < len(n.Fields)-1 {
				sb.WriteByte(',')
			}
			if f.Node != nil && f.Desc != "" {
				sb.WriteString(" // " + oneLine(f.Desc))
			}
			sb.WriteByte('\n')
		}
		sb.WriteString(indent + "}")
	case KindArray:
		if len(n.Items) == 0 {
			sb.WriteString("[]")
			return
		}
		sb.WriteString("[\n")
		for _, it := range n.Items {
			sb.WriteString(indent + "  ")
			it.describe(sb, depth+1)
			sb.WriteByte(',')
			if it != nil && it.Desc != "" {
				sb.WriteString(" // " + oneLine(it.Desc))
			}
			sb.WriteByte('\n')
		}
		sb.WriteString(indent + "  ...\n" + indent + "]")
	default:
		t := n.Type
		if t == "" {
			t = TypeAny
		}
		sb.WriteString("<" + t + ">")
	}
}

// oneLine keeps a description on its comment line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func writeJSONString(sb *strings.Builder, s string) {
	b, _ := json.Marshal(s) // a string always marshals
	sb.Write(b)
}

// jsonType maps a leaf Type to its JSON Schema type, or "" when the type
// does not constrain the value.
func jsonType(t string) string {
	switch strings.ToLower(strings.TrimSpace(t)) {
	case "str", "string":
		return "string"
	case "int", "integer":
		return "integer"
	case "float", "number":
		return "number"
	case "bool", "boolean":
		return "boolean"
	case "object", "dict":
		return "object"
	case "list", "array":
		return "array"
	case "null", "none":
		return "null"
	}
	return ""
}

// Schema returns the JSON Schema (draft 2020-12) of n as a JSON-ready map:
// objects list their properties (required ones under "required") and
// allow additional properties; optional properties also accept null;
// arrays have "items"; leaves have their type, enum and description.
func (n *Node) Schema() map[string]any {
	s := n.schema(false)
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	return s
}

func (n *Node) schema(nullable bool) map[string]any {
	s := map[string]any{}
	if n == nil {
		return s
	}
	if n.Desc != "" {
		s["description"] = n.Desc
	}
	var typ string
	switch n.Kind {
	case KindObject:
		typ = "object"
		props := map[string]any{}
		var req []any
		for _, f := range n.Fields {
			props[f.Name] = f.Node.schema(!f.Required)
			if f.Required {
				req = append(req, f.Name)
			}
		}
		s["properties"] = props
		if len(req) > 0 {
			s["required"] = req
		}
	case KindArray:
		typ = "array"
		switch len(n.Items) {
		case 0:
		case 1:
			s["items"] = n.Items[0].schema(false)
		default:
			var alts []any
			for _, it := range n.Items {
				alts = append(alts, it.schema(false))
			}
			s["items"] = map[string]any{"anyOf": alts}
		}
	default:
		typ = jsonType(n.Type)
		if len(n.Enum) > 0 {
			enum := append([]any(nil), n.Enum...)
			if nullable {
				enum = append(enum, nil)
			}
			s["enum"] = enum
		}
	}
	if typ != "" {
		if nullable {
			s["type"] = []any{typ, "null"}
		} else {
			s["type"] = typ
		}
	}
	return s
}

// ErrUnsupportedSchema is returned (wrapped) by FromJSONSchema for schema
// features an output definition cannot express.
var ErrUnsupportedSchema = errors.New("structured: unsupported JSON Schema")

// FromJSONSchema builds an output definition from a JSON Schema. It keeps
// the order of "properties" as written, and understands type (a string, or
// a list whose non-null member is used), properties, required, items
// (a schema, or prefixItems' schemas as alternatives), enum, const,
// description, and anyOf/oneOf (an array's alternatives; elsewhere an
// untyped leaf). $ref is not supported. Other keywords are ignored.
func FromJSONSchema(schema []byte) (*Node, error) {
	n, err := fromSchema(schema, "#")
	if err != nil {
		return nil, fmt.Errorf("structured: from JSON Schema: %w", err)
	}
	return n, nil
}

type rawSchema struct {
	Type        json.RawMessage   `json:"type"`
	Description string            `json:"description"`
	Properties  json.RawMessage   `json:"properties"`
	Required    []string          `json:"required"`
	Items       json.RawMessage   `json:"items"`
	PrefixItems []json.RawMessage `json:"prefixItems"`
	Enum        []any             `json:"enum"`
	Const       *json.RawMessage  `json:"const"`
	AnyOf       []json.RawMessage `json:"anyOf"`
	OneOf       []json.RawMessage `json:"oneOf"`
	Ref         string            `json:"$ref"`
}

func fromSchema(b []byte, loc string) (*Node, error) {
	if t := bytes.TrimSpace(b); bytes.Equal(t, []byte("true")) || bytes.Equal(t, []byte("{}")) {
		return Any(""), nil
	}
	var rs rawSchema
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	if rs.Ref != "" {
		return nil, fmt.Errorf("%w: $ref at %s", ErrUnsupportedSchema, loc)
	}
	typ, err := schemaType(rs.Type)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	alts := rs.AnyOf
	if len(alts) == 0 {
		alts = rs.OneOf
	}
	if typ == "" {
		switch {
		case len(rs.Properties) > 0:
			typ = "object"
		case len(rs.Items) > 0 || len(rs.PrefixItems) > 0:
			typ = "array"
		}
	}
	switch typ {
	case "object":
		n := &Node{Kind: KindObject, Desc: rs.Description}
		names, raws, err := orderedObject(rs.Properties)
		if err != nil {
			return nil, fmt.Errorf("%s/properties: %w", loc, err)
		}
		req := map[string]bool{}
		for _, r := range rs.Required {
			req[r] = true
		}
		for i, name := range names {
			c, err := fromSchema(raws[i], loc+"/properties/"+name)
			if err != nil {
				return nil, err
			}
			n.Fields = append(n.Fields, Field{Name: name, Node: c, Required: req[name]})
		}
		return n, nil
	case "array":
		n := &Node{Kind: KindArray, Desc: rs.Description}
		var itemRaws []json.RawMessage
		if len(rs.Items) > 0 && !bytes.Equal(bytes.TrimSpace(rs.Items), []byte("false")) {
			itemRaws = append(itemRaws, rs.Items)
		}
		itemRaws = append(itemRaws, rs.PrefixItems...)
		for i, ir := range itemRaws {
			c, err := fromSchema(ir, fmt.Sprintf("%s/items/%d", loc, i))
			if err != nil {
				return nil, err
			}
			n.Items = append(n.Items, c)
		}
		if len(n.Items) == 0 {
			n.Items = []*Node{Any("")}
		}
		return n, nil
	}
	n := &Node{Kind: KindLeaf, Desc: rs.Description}
	switch typ {
	case "string":
		n.Type = TypeString
	case "integer":
		n.Type = TypeInteger
	case "number":
		n.Type = TypeNumber
	case "boolean":
		n.Type = TypeBoolean
	case "null":
		n.Type = "null"
	default:
		n.Type = TypeAny
	}
	if rs.Const != nil {
		var v any
		if err := json.Unmarshal(*rs.Const, &v); err != nil {
			return nil, fmt.Errorf("%s/const: %w", loc, err)
		}
		rs.Enum = []any{v}
	}
	if len(rs.Enum) > 0 {
		// The literals say more to the model than the type, and the enum
		// constrains the value on its own.
		e := OneOf(n.Desc, rs.Enum...)
		n.Enum, n.Type = e.Enum, e.Type
	}
	if typ == "" && len(alts) > 0 {
		n.Type = TypeAny
	}
	return n, nil
}

func schemaType(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return one, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return "", fmt.Errorf("type: %w", err)
	}
	typ := ""
	for _, t := range many {
		if t == "null" {
			continue
		}
		if typ != "" {
			return "", nil // several types: leave it unconstrained
		}
		typ = t
	}
	if typ == "" && len(many) > 0 {
		typ = "null"
	}
	return typ, nil
}

// orderedObject returns the keys and raw values of a JSON object in the
// order they are written.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("expected an object, got %v", tok)
	}
	var names []string
	var raws []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		names = append(names, name)
		raws = append(raws, v)
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	return names, raws, nil
}
