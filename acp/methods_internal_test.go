package acp

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// schemaMethods reads a schema file's definitions: for each, the method
// it belongs to ("x-method") and the side that serves it ("x-side").
func schemaMethods(t *testing.T, file string) map[string]struct{ Method, Side string } {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "acp-schema", filepath.FromSlash(file)))
	require.NoError(t, err)
	var schema struct {
		Defs map[string]struct {
			Method string `json:"x-method"`
			Side   string `json:"x-side"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(data, &schema))
	defs := make(map[string]struct{ Method, Side string })
	for name, d := range schema.Defs {
		if d.Method != "" {
			defs[name] = struct{ Method, Side string }{d.Method, d.Side}
		}
	}
	return defs
}

var schemaFiles = map[Schemas]string{
	SchemaV1:          "v1/schema.json",
	SchemaV1Unstable:  "v1/schema.unstable.json",
	SchemaSDKUnstable: "npm-sdk-2.4.0/v1/schema.unstable.json",
	SchemaV2:          "npm-sdk-2.4.0/v2/schema.json",
	SchemaV2Unstable:  "npm-sdk-2.4.0/v2/schema.unstable.json",
}

// TestMethodTableCoversTheStableSchema: every method of the stable v1
// schema is in the table, on the side the schema says, and the agent's
// are dispatched. (logout had a constant and types but no dispatch before
// the table.)
func TestMethodTableCoversTheStableSchema(t *testing.T) {
	for def, d := range schemaMethods(t, schemaFiles[SchemaV1]) {
		m := methodIndex[d.Method]
		if !assert.NotNil(t, m, "%s (%s) is not in the method table", d.Method, def) {
			continue
		}
		switch d.Side {
		case "agent":
			assert.NotZero(t, m.Direction&ToAgent, "%s is served by the agent", d.Method)
			assert.True(t, m.handle != nil || m.notify != nil, "%s has no handler", d.Method)
		case "client":
			assert.NotZero(t, m.Direction&ToClient, "%s is served by the client", d.Method)
		case "protocol":
			assert.Equal(t, ToAgent|ToClient, m.Direction, "%s goes both ways", d.Method)
		}
	}
}

// TestMethodTableNamesSchemaDefinitions: the params and result of every
// row are definitions of that method in each schema file the row names.
func TestMethodTableNamesSchemaDefinitions(t *testing.T) {
	files := map[Schemas]map[string]struct{ Method, Side string }{}
	for s, f := range schemaFiles {
		files[s] = schemaMethods(t, f)
	}
	for _, m := range methods {
		t.Run(m.Name, func(t *testing.T) {
			if m.Extension {
				assert.Zero(t, m.Schemas, "extensions have no official schema")
				assert.True(t, strings.HasPrefix(m.Name, "_"))
				return
			}
			require.NotZero(t, m.Schemas)
			for s, defs := range files {
				if m.Schemas&s == 0 {
					continue
				}
				for _, def := range []string{m.Params, m.Result, m.ClientNotification} {
					if def == "" {
						continue
					}
					assert.Equal(t, m.Name, defs[def].Method, "%s in %s", def, schemaFiles[s])
				}
			}
			assert.Equal(t, m.Notification, m.Result == "", "a notification has no result, a request has one")
		})
	}
}

// TestMethodTableRows: each method the agent serves has exactly the
// handler its kind needs; the capability of a method is set only when
// the agent serves it.
func TestMethodTableRows(t *testing.T) {
	for _, m := range methods {
		if m.Direction&ToAgent == 0 {
			assert.Nil(t, m.handle, "%s is the client's", m.Name)
			assert.Equal(t, m.ClientNotification != "", m.notify != nil, "%s: the client's notification of the same name has a handler", m.Name)
			continue
		}
		if m.Notification {
			assert.True(t, m.notify != nil && m.handle == nil, "%s is a notification", m.Name)
		} else {
			assert.True(t, m.handle != nil && m.notify == nil, "%s is a request", m.Name)
		}
	}
	var caps AgentCapabilities
	for _, m := range methods {
		if m.capability != nil {
			m.capability(&caps, true)
		}
	}
	on, err := json.Marshal(caps)
	require.NoError(t, err)
	assert.JSONEq(t, `{"loadSession":true,"auth":{"logout":{},"status":{}},"providers":{},"mcpCapabilities":{"acp":true},
		"sessionCapabilities":{"list":{},"delete":{},"resume":{},"close":{},"fork":{},"title":{},"status":{},"archive":{}}}`, string(on))
	for _, m := range methods {
		if m.capability != nil {
			m.capability(&caps, false)
		}
	}
	off, err := json.Marshal(caps)
	require.NoError(t, err)
	assert.JSONEq(t, `{}`, string(off))
}

// TestEveryExtensionConstantIsInTheTable: an extension name declared in
// methods.go without a row would be neither dispatched nor advertised.
func TestEveryExtensionConstantIsInTheTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "methods.go", nil, 0)
	require.NoError(t, err)
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Values) == 1 {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, _ := strconv.Unquote(lit.Value); strings.HasPrefix(v, ExtPrefix) && v != ExtPrefix {
					names = append(names, v)
				}
			}
		}
		return true
	})
	require.NotEmpty(t, names)
	assert.ElementsMatch(t, names, ExtensionMethods())
	for _, name := range names {
		assert.True(t, methodIndex[name].Extension, name)
	}
}

// notInTableV2 are the methods of the v2 schemas the v2 table leaves out,
// and why (docs/protocol.md says the same).
var notInTableV2 = map[string]string{
	acpv2.MethodMCPMessage: "MCP over ACP is planned (v1 first): mcp/message both ways",
}

// TestMethodTableV2CoversTheSchema: every method of the v2 schemas, stable
// and unstable, is in the v2 table on the side the schema says, and the
// agent's are dispatched; or it is left out with a reason.
func TestMethodTableV2CoversTheSchema(t *testing.T) {
	for _, sm := range acpv2.SchemaMethods() {
		if why := notInTableV2[sm.Name]; why != "" {
			assert.Nil(t, tableV2().index[sm.Name], "%s is in the table, and in notInTableV2", sm.Name)
			continue
		}
		m := tableV2().index[sm.Name]
		if !assert.NotNil(t, m, "%s (%s) is not in the v2 method table", sm.Name, sm.Params) {
			continue
		}
		assert.Equal(t, sm.Params, m.Params, sm.Name)
		assert.Equal(t, sm.Result, m.Result, sm.Name)
		if sm.Unstable {
			assert.Equal(t, SchemaV2Unstable, m.Schemas, "%s is unstable: the unstable file only", sm.Name)
		} else {
			assert.Equal(t, SchemaV2|SchemaV2Unstable, m.Schemas, "%s is stable: both files", sm.Name)
		}
		switch sm.Side {
		case "agent":
			assert.NotZero(t, m.Direction&ToAgent, "%s is served by the agent", sm.Name)
			assert.True(t, m.handle != nil || m.notify != nil, "%s has no handler", sm.Name)
		case "client":
			assert.NotZero(t, m.Direction&ToClient, "%s is served by the client", sm.Name)
		case "protocol":
			assert.Equal(t, ToAgent|ToClient, m.Direction, "%s goes both ways", sm.Name)
		}
	}
	for _, m := range tableV2().rows {
		if !m.Extension {
			assert.Contains(t, schemaMethodNames(), m.Name, "a v2 row for a method the schema does not have")
		}
	}
}

func schemaMethodNames() []string {
	var names []string
	for _, sm := range acpv2.SchemaMethods() {
		names = append(names, sm.Name)
	}
	return names
}

// TestMethodTableV2Rows: each v2 method the agent serves has exactly the
// handler its kind needs; the capabilities of the table are set only when
// the agent serves their method, and cleared otherwise.
func TestMethodTableV2Rows(t *testing.T) {
	for _, m := range tableV2().rows {
		if m.Direction&ToAgent == 0 {
			assert.True(t, m.handle == nil && m.notify == nil, "%s is the client's", m.Name)
			continue
		}
		if m.Notification {
			assert.True(t, m.notify != nil && m.handle == nil, "%s is a notification", m.Name)
		} else {
			assert.True(t, m.handle != nil && m.notify == nil, "%s is a request", m.Name)
		}
		if m.Extension {
			assert.True(t, strings.HasPrefix(m.Name, "_"), m.Name)
			assert.Zero(t, m.Schemas)
		}
	}
	var caps acpv2.AgentCapabilities
	for _, m := range tableV2().rows {
		if m.capability != nil {
			m.capability(&caps, true)
		}
	}
	on, err := json.Marshal(caps)
	require.NoError(t, err)
	assert.JSONEq(t, `{"auth":{"status":{}},"providers":{},"session":{"delete":{},"fork":{},"title":{},"status":{},"archive":{}}}`, string(on))
	for _, m := range tableV2().rows {
		if m.capability != nil {
			m.capability(&caps, false)
		}
	}
	off, err := json.Marshal(caps)
	require.NoError(t, err)
	assert.JSONEq(t, `{"auth":{},"session":{}}`, string(off), "session: {} is the baseline every v2 agent serves")
}
