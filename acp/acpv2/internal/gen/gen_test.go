package gen

// The generator of types_gen.go: every definition of the SDK 2.4.0 v2
// schema (testdata/acp-schema/npm-sdk-2.4.0/v2/schema.unstable.json, the
// stable schema plus the unstable additions) becomes a Go type, except the
// few that are hand-written (special.go) or have no place in an agent
// (skipped). It lives in a test so that it never ships in the binary;
// TestGeneratedTypesAreCurrent fails when types_gen.go is not what it
// generates, and
//
//	go test ./acp/acpv2/internal/gen -update
//
// rewrites it (after a new SDK's schema is copied into testdata).

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite types_gen.go from the schema")

var schemaDir = filepath.Join("..", "..", "..", "..", "testdata", "acp-schema", "npm-sdk-2.4.0", "v2")

// handWritten are the definitions special.go writes by hand, with the
// reason the generator does not.
var handWritten = map[string]string{
	"SessionConfigOption":           "members beside a tagged union",
	"SetSessionConfigOptionRequest": "members beside a tagged union",
	"CreateElicitationRequest":      "members beside two unions (mode, scope)",
	"CreateElicitationResponse":     "members beside a tagged union",
	"DiffChange":                    "members beside a tagged union",
	"IdleStateUpdate":               "a stop reason whose one variant adds a member",
	"ElicitationFormMode":           "folded into CreateElicitationRequest",
	"ElicitationUrlMode":            "folded into CreateElicitationRequest",
	"EmbeddedResourceResource":      "untagged union",
	"SessionConfigSelectOptions":    "untagged union of two arrays",
	"MultiSelectItems":              "tagged union with an untagged variant",
	"MessageMcpResponse":            "untagged union",
	"Error":                         "the JSON-RPC error object",
	"ErrorCode":                     "an open set of integers",
	"ErrorData":                     "any JSON",
	"ElicitationContentValue":       "any JSON",
	"RequestId":                     "a JSON-RPC id: string or integer",
	"ExtNotification":               "any JSON",
	"ExtRequest":                    "any JSON",
	"ExtResponse":                   "any JSON",
}

// skipped are the definitions with no Go type here.
var skipped = map[string]string{
	"AgentNotification":          "the JSON-RPC envelope (the connection's)",
	"AgentRequest":               "the JSON-RPC envelope (the connection's)",
	"AgentResponse":              "the JSON-RPC envelope (the connection's)",
	"ClientNotification":         "the JSON-RPC envelope (the connection's)",
	"ClientRequest":              "the JSON-RPC envelope (the connection's)",
	"ClientResponse":             "the JSON-RPC envelope (the connection's)",
	"ProxyNotification":          "proxies only: an agent is not a proxy",
	"ProxyRequest":               "proxies only: an agent is not a proxy",
	"ProxyResponse":              "proxies only: an agent is not a proxy",
	"InitializeProxyRequest":     "proxies only: an agent is not a proxy",
	"InitializeProxyResponse":    "proxies only: an agent is not a proxy",
	"ProxySuccessorNotification": "proxies only: an agent is not a proxy",
	"ProxySuccessorRequest":      "proxies only: an agent is not a proxy",
	"ProxySuccessorResponse":     "proxies only: an agent is not a proxy",
}

// upserts are the definitions whose optional members patch what the
// client stored: omitted leaves a value, null clears it (Nullable).
var upserts = map[string]bool{
	"ToolCallUpdate": true, "TerminalUpdate": true, "AgentMessage": true, "UserMessage": true,
	"AgentThought": true, "SessionMessage": true, "SubagentUpdate": true, "SessionInfoUpdate": true,
	"UsageUpdate": true,
}

// refClass is how a definition is held in a member.
type refClass int

const (
	classStruct refClass = iota // a pointer when optional
	classString                 // a string type: omitempty when optional
	classNumber                 // a pointer when optional
	classRaw                    // json.RawMessage: omitempty
)

// handClass is the class of each hand-written definition.
var handClass = map[string]refClass{
	"ErrorCode": classNumber, "ErrorData": classRaw, "ElicitationContentValue": classRaw,
	"RequestId": classRaw, "ExtNotification": classRaw, "ExtRequest": classRaw, "ExtResponse": classRaw,
}

type schemaNode = map[string]any

type generator struct {
	defs, stable map[string]schemaNode
	class        map[string]refClass
	buf          bytes.Buffer
}

func loadDefs(t testing.TB, file string) map[string]schemaNode {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(schemaDir, file))
	require.NoError(t, err)
	var doc struct {
		Defs map[string]schemaNode `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	return doc.Defs
}

// generate returns types_gen.go for the unstable schema's definitions,
// marking what the stable schema lacks as unstable.
func generate(defs, stable map[string]schemaNode) ([]byte, error) {
	g := &generator{defs: defs, stable: stable, class: map[string]refClass{}}
	names := make([]string, 0, len(defs))
	for name := range defs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if c, ok := handClass[name]; ok {
			g.class[name] = c
			continue
		}
		switch shapeOf(defs[name]) {
		case shapeString, shapeEnum:
			g.class[name] = classString
		case shapeInteger:
			g.class[name] = classNumber
		default:
			g.class[name] = classStruct
		}
	}
	g.printf("// Code generated by acp/acpv2/internal/gen (go test -update) from\n")
	g.printf("// testdata/acp-schema/npm-sdk-2.4.0/v2/schema.unstable.json. DO NOT EDIT.\n\n")
	g.printf("package acpv2\n\nimport \"encoding/json\"\n\n")
	g.methods()
	for _, name := range names {
		if handWritten[name] != "" || skipped[name] != "" {
			continue
		}
		if err := g.definition(name); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	g.unstableTable(names)
	g.requiredTable(names)
	src, err := format.Source(g.buf.Bytes())
	if err != nil {
		return g.buf.Bytes(), err
	}
	return src, nil
}

func (g *generator) printf(format string, args ...any) { fmt.Fprintf(&g.buf, format, args...) }

type shape int

const (
	shapeObject shape = iota
	shapeString
	shapeEnum
	shapeInteger
	shapeUnion
	shapeOther
)

func shapeOf(n schemaNode) shape {
	if n["type"] == "string" && n["anyOf"] == nil {
		return shapeString
	}
	if n["type"] == "integer" {
		return shapeInteger
	}
	if alts, ok := n["anyOf"].([]any); ok && n["properties"] == nil {
		if enumValues(n) != nil {
			return shapeEnum
		}
		if len(alts) > 0 {
			return shapeUnion
		}
	}
	if alts, ok := n["oneOf"].([]any); ok && len(alts) > 0 && n["properties"] == nil {
		if enumValues(n) != nil {
			return shapeEnum
		}
	}
	if n["type"] == "object" {
		return shapeObject
	}
	return shapeOther
}

// enumValues returns the constants of a string enum (anyOf/oneOf of
// consts, with or without an open {"type":"string"} branch), or nil.
func enumValues(n schemaNode) []string {
	alts, _ := n["anyOf"].([]any)
	if alts == nil {
		alts, _ = n["oneOf"].([]any)
	}
	var vals []string
	for _, a := range alts {
		m := a.(schemaNode)
		if c, ok := m["const"].(string); ok {
			vals = append(vals, c)
			continue
		}
		if m["type"] == "string" && m["properties"] == nil {
			continue // the open branch: custom values
		}
		return nil
	}
	return vals
}

func (g *generator) definition(name string) error {
	n := g.defs[name]
	g.doc(name, "", n, g.stable[name] == nil)
	switch shapeOf(n) {
	case shapeString:
		g.printf("type %s = string\n\n", name)
	case shapeInteger:
		g.printf("type %s %s\n\n", name, intType(n))
	case shapeEnum:
		g.enum(name, n)
	case shapeUnion:
		return g.union(name, n)
	case shapeObject:
		return g.object(name, n)
	default:
		return fmt.Errorf("no rule for this shape; write it by hand (special.go) or skip it")
	}
	return nil
}

func (g *generator) enum(name string, n schemaNode) {
	g.printf("type %s string\n\n", name)
	stableVals := map[string]bool{}
	if s := g.stable[name]; s != nil {
		for _, v := range enumValues(s) {
			stableVals[v] = true
		}
	}
	g.printf("// %s values.\nconst (\n", name)
	for _, v := range enumValues(n) {
		note := ""
		if g.stable[name] != nil && !stableVals[v] {
			note = " // unstable"
		}
		g.printf("\t%s%s %s = %q%s\n", name, goIdent(v), name, v, note)
	}
	g.printf(")\n\n")
}

// variant is one branch of a tagged union.
type variant struct {
	tag, ref string
}

// unionVariants reads a tagged union: the tag key, its variants, and
// whether it has an open branch for other tags.
func unionVariants(n schemaNode) (key string, vs []variant, open bool, err error) {
	for _, a := range n["anyOf"].([]any) {
		m := a.(schemaNode)
		props, _ := m["properties"].(schemaNode)
		if _, hasNot := m["not"]; hasNot {
			open = true
			continue
		}
		if len(props) != 1 {
			return "", nil, false, fmt.Errorf("a union branch without exactly one tag member")
		}
		for k, p := range props {
			c, ok := p.(schemaNode)["const"].(string)
			if !ok {
				return "", nil, false, fmt.Errorf("branch tag %q is not a constant", k)
			}
			if key != "" && key != k {
				return "", nil, false, fmt.Errorf("two tag keys %q and %q", key, k)
			}
			key = k
			ref := ""
			if all, ok := m["allOf"].([]any); ok && len(all) == 1 {
				ref = refName(all[0].(schemaNode))
			}
			if ref == "" {
				return "", nil, false, fmt.Errorf("branch %q has no single $ref", c)
			}
			vs = append(vs, variant{tag: c, ref: ref})
		}
	}
	if key == "" {
		return "", nil, false, fmt.Errorf("not a tagged union")
	}
	return key, vs, open, nil
}

func (g *generator) union(name string, n schemaNode) error {
	key, vs, open, err := unionVariants(n)
	if err != nil {
		return err
	}
	stableTags := map[string]bool{}
	if s := g.stable[name]; s != nil {
		_, svs, _, _ := unionVariants(s)
		for _, v := range svs {
			stableTags[v.tag] = true
		}
	}
	g.printf("type %s struct {\n", name)
	for _, v := range vs {
		note := ""
		if g.stable[name] != nil && !stableTags[v.tag] {
			note = " (unstable)"
		}
		g.printf("\t%s *%s // %q%s\n", goIdent(v.tag), v.ref, v.tag, note)
	}
	if open {
		g.printf("\t// Other is a variant of another %q: a newer schema's, or a custom one (\"_\"...).\n", key)
		g.printf("\tOther *UnknownVariant\n")
	}
	g.printf("}\n\n")
	g.printf("// %s tags (%q values).\nconst (\n", name, key)
	for _, v := range vs {
		g.printf("\t%sTag%s = %q\n", name, goIdent(v.tag), v.tag)
	}
	g.printf(")\n\n")
	recv := strings.ToLower(name[:1])
	g.printf("// Tag returns the %q of the variant set, or \"\".\n", key)
	g.printf("func (%s %s) Tag() string {\n\tswitch {\n", recv, name)
	for _, v := range vs {
		g.printf("\tcase %s.%s != nil:\n\t\treturn %sTag%s\n", recv, goIdent(v.tag), name, goIdent(v.tag))
	}
	if open {
		g.printf("\tcase %s.Other != nil:\n\t\treturn %s.Other.Tag\n", recv, recv)
	}
	g.printf("\t}\n\treturn \"\"\n}\n\n")
	g.printf("// MarshalJSON encodes the variant set with its %q.\n", key)
	g.printf("func (%s %s) MarshalJSON() ([]byte, error) {\n\tswitch {\n", recv, name)
	for _, v := range vs {
		g.printf("\tcase %s.%s != nil:\n\t\treturn marshalTagged(%q, %sTag%s, %s.%s)\n", recv, goIdent(v.tag), key, name, goIdent(v.tag), recv, goIdent(v.tag))
	}
	if open {
		g.printf("\tcase %s.Other != nil:\n\t\treturn %s.Other.marshal(%q)\n", recv, recv, name)
	}
	g.printf("\t}\n\treturn nil, emptyUnion(%q)\n}\n\n", name)
	g.printf("// UnmarshalJSON decodes the variant its %q names", key)
	if open {
		g.printf("; others go to Other")
	}
	g.printf(".\nfunc (%s *%s) UnmarshalJSON(data []byte) error {\n", recv, name)
	g.printf("\tif isNull(data) {\n\t\treturn nil\n\t}\n")
	g.printf("\ttag, err := requireTag(data, %q, %q)\n\tif err != nil {\n\t\treturn err\n\t}\n", key, name)
	g.printf("\t*%s = %s{}\n\tswitch tag {\n", recv, name)
	for _, v := range vs {
		g.printf("\tcase %sTag%s:\n\t\t%s.%s, err = decodeVariant[%s](data)\n", name, goIdent(v.tag), recv, goIdent(v.tag), v.ref)
	}
	g.printf("\tdefault:\n")
	if open {
		g.printf("\t\t%s.Other = unknownVariant(tag, data)\n", recv)
	} else {
		g.printf("\t\terr = unknownTag(%q, %q, tag)\n", name, key)
	}
	g.printf("\t}\n\treturn err\n}\n\n")
	return nil
}

func (g *generator) object(name string, n schemaNode) error {
	props, _ := n["properties"].(schemaNode)
	required := map[string]bool{}
	if req, ok := n["required"].([]any); ok {
		for _, r := range req {
			required[r.(string)] = true
		}
	}
	for r := range required {
		if _, ok := props[r]; !ok {
			return fmt.Errorf("required member %q has no schema", r)
		}
	}
	stableProps := map[string]bool{}
	if s := g.stable[name]; s != nil {
		if sp, ok := s["properties"].(schemaNode); ok {
			for k := range sp {
				stableProps[k] = true
			}
		}
	}
	keys := orderedKeys(name, props)
	var requiredArrays, requiredMaps []string
	g.printf("type %s struct {\n", name)
	for _, k := range keys {
		p := props[k].(schemaNode)
		if k == "_meta" {
			if upserts[name] {
				g.printf("\t// Meta patches the stored _meta by top-level key (null clears it).\n")
			}
			g.printf("\tMeta json.RawMessage `json:\"_meta,omitempty\"`\n")
			continue
		}
		g.doc(name, k, p, g.stable[name] != nil && !stableProps[k])
		typ, class, optional, err := g.memberType(p)
		if err != nil {
			return fmt.Errorf("member %q: %w", k, err)
		}
		field := goField(k)
		switch {
		case required[k]:
			switch {
			case strings.HasPrefix(typ, "[]"):
				requiredArrays = append(requiredArrays, field)
				g.printf("\t%s %s `json:%q` // required: nil encodes as []\n", field, typ, k)
			case strings.HasPrefix(typ, "map["):
				requiredMaps = append(requiredMaps, field)
				g.printf("\t%s %s `json:%q` // required: nil encodes as {}\n", field, typ, k)
			default:
				g.printf("\t%s %s `json:%q`\n", field, typ, k)
			}
		case upserts[name] && class != classRaw:
			g.printf("\t%s Nullable[%s] `json:\"%s,omitzero\"`\n", field, typ, k)
		case strings.HasPrefix(typ, "[]") || strings.HasPrefix(typ, "map["):
			g.printf("\t%s %s `json:\"%s,omitzero\"`\n", field, typ, k)
		case p["default"] != nil && class == classStruct:
			g.printf("\t%s %s `json:\"%s,omitzero\"`\n", field, typ, k)
		case class == classString || class == classRaw:
			g.printf("\t%s %s `json:\"%s,omitempty\"`\n", field, typ, k)
		default:
			_ = optional
			g.printf("\t%s *%s `json:\"%s,omitempty\"`\n", field, typ, k)
		}
	}
	g.printf("}\n\n")
	if len(requiredArrays)+len(requiredMaps) > 0 {
		g.printf("// MarshalJSON sends required arrays and maps as [] and {} when they are nil.\n")
		g.printf("func (v %s) MarshalJSON() ([]byte, error) {\n\ttype plain %s\n\tp := plain(v)\n", name, name)
		for _, f := range requiredArrays {
			g.printf("\tp.%s = nonNil(p.%s)\n", f, f)
		}
		for _, f := range requiredMaps {
			g.printf("\tp.%s = nonNilMap(p.%s)\n", f, f)
		}
		g.printf("\treturn json.Marshal(p)\n}\n\n")
	}
	return nil
}

// orderedKeys is the members of an object in the schema file's order
// (memberOrder), _meta last.
func orderedKeys(name string, props schemaNode) []string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == "_meta") != (keys[j] == "_meta") {
			return keys[j] == "_meta"
		}
		return schemaOrder(name, keys[i]) < schemaOrder(name, keys[j])
	})
	return keys
}

// memberOrder is each definition's member order as the schema file lists
// it, filled by TestGeneratedTypesAreCurrent from the raw file.
var memberOrder = map[string]map[string]int{}

func schemaOrder(def, member string) int {
	if o, ok := memberOrder[def][member]; ok {
		return o
	}
	return 1 << 20
}

// memberType resolves a member's schema to a Go type.
func (g *generator) memberType(p schemaNode) (typ string, class refClass, optional bool, err error) {
	if ref := refName(p); ref != "" {
		return g.refType(ref)
	}
	if all, ok := p["allOf"].([]any); ok && len(all) == 1 {
		return g.memberType(all[0].(schemaNode))
	}
	if alts, ok := p["anyOf"].([]any); ok && len(alts) == 2 {
		other, nullFirst := alts[0].(schemaNode), true
		if alts[1].(schemaNode)["type"] == "null" {
			other, nullFirst = alts[0].(schemaNode), false
		} else if alts[0].(schemaNode)["type"] == "null" {
			other = alts[1].(schemaNode)
		} else {
			return "", 0, false, fmt.Errorf("anyOf without null")
		}
		_ = nullFirst
		typ, class, _, err = g.memberType(other)
		return typ, class, true, err
	}
	base, nullable := schemaType(p["type"])
	switch base {
	case "string":
		return "string", classString, nullable, nil
	case "boolean":
		return "bool", classNumber, nullable, nil
	case "integer":
		return intType(p), classNumber, nullable, nil
	case "number":
		return "float64", classNumber, nullable, nil
	case "array":
		items, ok := p["items"].(schemaNode)
		if !ok {
			return "", 0, false, fmt.Errorf("array without items")
		}
		et, _, _, err := g.memberType(items)
		if err != nil {
			return "", 0, false, err
		}
		return "[]" + et, classStruct, nullable, nil
	case "object":
		if ap, ok := p["additionalProperties"].(schemaNode); ok {
			vt, _, _, err := g.memberType(ap)
			if err != nil {
				return "", 0, false, err
			}
			return "map[string]" + vt, classStruct, nullable, nil
		}
		return "json.RawMessage", classRaw, true, nil
	case "":
		if len(withoutDocs(p)) == 0 {
			return "json.RawMessage", classRaw, true, nil // any JSON
		}
	}
	return "", 0, false, fmt.Errorf("no rule for member schema %v", withoutDocs(p))
}

func (g *generator) refType(ref string) (string, refClass, bool, error) {
	class, ok := g.class[ref]
	if !ok {
		return "", 0, false, fmt.Errorf("$ref to unknown definition %s", ref)
	}
	if skipped[ref] != "" {
		return "", 0, false, fmt.Errorf("$ref to skipped definition %s", ref)
	}
	if class == classRaw {
		return ref, classRaw, true, nil
	}
	return ref, class, false, nil
}

func refName(n schemaNode) string {
	ref, _ := n["$ref"].(string)
	return strings.TrimPrefix(ref, "#/$defs/")
}

func schemaType(t any) (base string, nullable bool) {
	switch t := t.(type) {
	case string:
		return t, false
	case []any:
		for _, x := range t {
			if x == "null" {
				nullable = true
			} else {
				base = x.(string)
			}
		}
	}
	return base, nullable
}

func intType(n schemaNode) string {
	switch n["format"] {
	case "uint16":
		return "uint16"
	case "uint32":
		return "uint32"
	case "uint64":
		return "uint64"
	case "int32":
		return "int32"
	}
	return "int64"
}

func withoutDocs(n schemaNode) schemaNode {
	out := schemaNode{}
	for k, v := range n {
		if k == "description" || k == "title" || strings.HasPrefix(k, "x-") {
			continue
		}
		out[k] = v
	}
	return out
}

// methods writes the method names of the schema and their table.
func (g *generator) methods() {
	type side struct{ method, side string }
	params, results := map[side]string{}, map[side]string{}
	for name, n := range g.defs {
		m, _ := n["x-method"].(string)
		s, _ := n["x-side"].(string)
		if m == "" || s == "proxy" || skipped[name] != "" {
			continue
		}
		if strings.HasSuffix(name, "Response") {
			results[side{m, s}] = name
		} else {
			params[side{m, s}] = name
		}
	}
	var all []side
	for k := range params {
		all = append(all, k)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].method != all[j].method {
			return all[i].method < all[j].method
		}
		return all[i].side < all[j].side
	})
	g.printf("// Method names of ACP v2 (agent methods are called by the client, client\n// methods by the agent).\nconst (\n")
	seen := map[string]bool{}
	for _, k := range all {
		if seen[k.method] {
			continue
		}
		seen[k.method] = true
		g.printf("\t%s = %q\n", methodConst(k.method), k.method)
	}
	g.printf(")\n\n")
	g.printf("// schemaMethods are the methods of the schema, by side.\nvar schemaMethods = []MethodInfo{\n")
	for _, k := range all {
		p := params[k]
		g.printf("\t{Name: %s, Side: %q, Params: %q, Result: %q, Unstable: %v},\n", methodConst(k.method), k.side, p, results[k], g.stable[p] == nil)
	}
	g.printf("}\n\n")
}

func methodConst(method string) string {
	return "Method" + goIdent(strings.TrimPrefix(method, "$/"))
}

// unstableTable lists the unstable definitions and union variants.
func (g *generator) unstableTable(names []string) {
	g.printf("// newUnstableDefs returns the definitions only the unstable schema has.\nfunc newUnstableDefs() map[string]bool {\n\treturn map[string]bool{\n")
	for _, name := range names {
		if g.stable[name] == nil && skipped[name] == "" {
			g.printf("\t%q: true,\n", name)
		}
	}
	g.printf("}\n}\n\n")
	g.printf("// newUnstableVariants returns the variants of stable unions only the\n// unstable schema has, by union.\nfunc newUnstableVariants() map[string]map[string]bool {\n\treturn map[string]map[string]bool{\n")
	for _, name := range names {
		s := g.stable[name]
		if s == nil || shapeOf(g.defs[name]) != shapeUnion || handWritten[name] != "" {
			continue
		}
		_, vs, _, err := unionVariants(g.defs[name])
		if err != nil {
			continue
		}
		_, svs, _, _ := unionVariants(s)
		in := map[string]bool{}
		for _, v := range svs {
			in[v.tag] = true
		}
		var extra []string
		for _, v := range vs {
			if !in[v.tag] {
				extra = append(extra, v.tag)
			}
		}
		if len(extra) > 0 {
			g.printf("\t%q: {", name)
			for i, e := range extra {
				if i > 0 {
					g.printf(", ")
				}
				g.printf("%q: true", e)
			}
			g.printf("},\n")
		}
	}
	g.printf("}\n}\n")
}

// requiredTable lists the required members of the params of the
// methods the agent serves, for Decode.
func (g *generator) requiredTable(names []string) {
	g.printf("\n// newRequiredMembers returns the members the params of each agent\n// method require.\nfunc newRequiredMembers() map[string][]string {\n\treturn map[string][]string{\n")
	for _, name := range names {
		n := g.defs[name]
		if n["x-side"] != "agent" || strings.HasSuffix(name, "Response") || skipped[name] != "" {
			continue
		}
		g.printf("\t%q: {", name)
		for i, r := range asStrings(n["required"]) {
			if i > 0 {
				g.printf(", ")
			}
			g.printf("%q", r)
		}
		g.printf("},\n")
	}
	g.printf("}\n}\n")
}

func asStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		out = append(out, x.(string))
	}
	return out
}

// doc writes a definition's or member's description: its first
// paragraph, without the unstable boilerplate, which becomes a mark.
func (g *generator) doc(def, member string, n schemaNode, unstable bool) {
	d, _ := n["description"].(string)
	d = strings.TrimSpace(unstableNote.ReplaceAllString(d, ""))
	if i := strings.Index(d, "\n\n"); i >= 0 {
		d = d[:i]
	}
	d = mdLink.ReplaceAllString(d, "$1")
	d = strings.Join(strings.Fields(d), " ")
	name := def
	indent := ""
	if member != "" {
		name, indent = goField(member), "\t"
	}
	switch {
	case d == "":
		d = name + " is the schema's " + strings.TrimPrefix(def+"."+member, ".") + "."
	case member == "" && !strings.HasPrefix(d, name+" "):
		d = name + ": " + d
	}
	if unstable {
		d += " (unstable)"
	}
	for _, line := range wrap(d, 76-len(indent)) {
		g.printf("%s// %s\n", indent, line)
	}
}

var (
	unstableNote = regexp.MustCompile(`(?s)\*\*UNSTABLE\*\*\s*This capability is not part of the spec yet, and may be removed or changed at any point\.`)
	mdLink       = regexp.MustCompile(`\[([^\]]+)\]\([^)]+\)`)
)

func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

// initialisms are written in capitals in Go names.
var initialisms = map[string]string{
	"id": "ID", "url": "URL", "uri": "URI", "http": "HTTP", "mcp": "MCP", "cwd": "CWD",
	"api": "API", "acp": "ACP", "json": "JSON", "sse": "SSE",
}

// goIdent is a Go identifier for a schema value: words split at '_', '-',
// '/' and before capitals, each capitalised (initialisms in capitals).
func goIdent(s string) string {
	var words []string
	word := []rune{}
	flush := func() {
		if len(word) > 0 {
			words = append(words, string(word))
			word = word[:0]
		}
	}
	for _, r := range s {
		switch {
		case r == '_' || r == '-' || r == '/' || r == '$' || r == '.':
			flush()
		case unicode.IsUpper(r):
			flush()
			word = append(word, unicode.ToLower(r))
		default:
			word = append(word, r)
		}
	}
	flush()
	var b strings.Builder
	for _, w := range words {
		if up, ok := initialisms[w]; ok {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

func goField(member string) string { return goIdent(member) }

// TestGeneratedTypesAreCurrent: types_gen.go is what the generator makes
// of the schema (rewrite it with -update).
func TestGeneratedTypesAreCurrent(t *testing.T) {
	defs, stable := loadDefs(t, "schema.unstable.json"), loadDefs(t, "schema.json")
	readMemberOrder(t)
	src, err := generate(defs, stable)
	require.NoError(t, err, "%s", src)
	registry := definitions(defs)
	for file, want := range map[string][]byte{"types_gen.go": src, "definitions_gen_test.go": registry} {
		path := filepath.Join("..", "..", file)
		if *update {
			require.NoError(t, os.WriteFile(path, want, 0o644))
			continue
		}
		have, err := os.ReadFile(path)
		require.NoError(t, err)
		if !bytes.Equal(have, want) {
			t.Errorf("%s is not what the schema generates; run: go test ./acp/acpv2/internal/gen -update", file)
		}
	}
}

// definitions is the test file that maps each definition to a new value
// of its Go type, so that acpv2's tests can check every type against its
// definition.
func definitions(defs map[string]schemaNode) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by acp/acpv2/internal/gen (go test -update). DO NOT EDIT.\n\n")
	b.WriteString("package acpv2\n\n// definitions makes a new value of each definition's Go type.\nvar definitions = map[string]func() any{\n")
	names := make([]string, 0, len(defs))
	for name := range defs {
		if skipped[name] == "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, "\t%q: func() any { return new(%s) },\n", name, name)
	}
	b.WriteString("}\n\n// skippedDefinitions have no Go type, for the reason given.\nvar skippedDefinitions = map[string]string{\n")
	var skip []string
	for name := range skipped {
		skip = append(skip, name)
	}
	sort.Strings(skip)
	for _, name := range skip {
		fmt.Fprintf(&b, "\t%q: %q,\n", name, skipped[name])
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return b.Bytes()
	}
	return src
}

// readMemberOrder reads each definition's members in file order, which
// a map loses.
func readMemberOrder(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(schemaDir, "schema.unstable.json"))
	require.NoError(t, err)
	var doc struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	for name, raw := range doc.Defs {
		var d struct {
			Properties json.RawMessage `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(raw, &d))
		if len(d.Properties) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(d.Properties))
		_, _ = dec.Token()
		order := map[string]int{}
		for i := 0; dec.More(); i++ {
			tok, err := dec.Token()
			require.NoError(t, err)
			order[tok.(string)] = i
			var skip json.RawMessage
			require.NoError(t, dec.Decode(&skip))
		}
		memberOrder[name] = order
	}
}
