package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docRow is one row of a table of docs/protocol.md: its first column and
// its status.
type docRow struct{ name, status string }

var docRowRE = regexp.MustCompile("^\\| `([^`]+)` \\|.*\\| \\*\\*(yes|planned|no)\\*\\* \\|")

// protocolDoc reads the tables of docs/protocol.md by section.
func protocolDoc(t *testing.T) map[string][]docRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	require.NoError(t, err)
	sections := map[string][]docRow{}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = h
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		m := docRowRE.FindStringSubmatch(line)
		require.NotNil(t, m, "a row of %q without a status (**yes**, **planned** or **no**): %s", section, line)
		sections[section] = append(sections[section], docRow{m[1], m[2]})
	}
	return sections
}

// schemaNames reads the methods (by x-method) and the session/update tags
// of schema files under testdata/acp-schema.
func schemaNames(t *testing.T, files ...string) (methods, updates []string) {
	t.Helper()
	ms, us := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "acp-schema", filepath.FromSlash(f)))
		require.NoError(t, err)
		var doc struct {
			Defs map[string]json.RawMessage `json:"$defs"`
		}
		require.NoError(t, json.Unmarshal(data, &doc))
		for _, raw := range doc.Defs {
			var d struct {
				Method string `json:"x-method"`
			}
			require.NoError(t, json.Unmarshal(raw, &d))
			if d.Method != "" {
				ms[d.Method] = true
			}
		}
		for _, m := range regexp.MustCompile(`"sessionUpdate":\{"const":"([a-z_]+)"`).FindAllSubmatch(compact(t, doc.Defs["SessionUpdate"]), -1) {
			us[string(m[1])] = true
		}
	}
	return sortedKeys(ms), sortedKeys(us)
}

func compact(t *testing.T, raw json.RawMessage) []byte {
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func docNames(rows []docRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.name)
	}
	sort.Strings(out)
	return out
}

// TestProtocolDocCoversTheSchemas: docs/protocol.md has a row for every
// method and update of the SDK 2.4.0 schemas of both versions (stable and
// unstable), and no other; what it calls implemented the method tables
// serve.
func TestProtocolDocCoversTheSchemas(t *testing.T) {
	doc := protocolDoc(t)
	v1Methods, v1Updates := schemaNames(t, "npm-sdk-2.4.0/v1/schema.json", "npm-sdk-2.4.0/v1/schema.unstable.json")
	v2Methods, v2Updates := schemaNames(t, "npm-sdk-2.4.0/v2/schema.json", "npm-sdk-2.4.0/v2/schema.unstable.json")
	assert.Equal(t, v1Methods, docNames(doc["ACP v1 methods"]), "ACP v1 methods")
	assert.Equal(t, v1Updates, docNames(doc["ACP v1 session updates"]), "ACP v1 session updates")
	assert.Equal(t, v2Methods, docNames(doc["ACP v2 methods"]), "ACP v2 methods")
	assert.Equal(t, v2Updates, docNames(doc["ACP v2 session updates"]), "ACP v2 session updates")
	for _, r := range doc["ACP v1 methods"] {
		if m := methodIndex[r.name]; r.status == "yes" {
			assert.NotNil(t, m, "%s: implemented, but not in the v1 method table", r.name)
		} else {
			assert.True(t, m == nil || m.handle == nil && m.notify == nil, "%s: %s, but the v1 table serves it", r.name, r.status)
		}
	}
	for _, r := range doc["ACP v2 methods"] {
		if r.status == "yes" {
			assert.NotNil(t, tableV2().index[r.name], "%s: implemented, but not in the v2 method table", r.name)
		}
	}
}
