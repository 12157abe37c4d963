package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// builtinSchemas are the built-in tools' argument schemas as the model
// gets them (testdata/golden/tools).
func builtinSchemas(b *testing.B) map[string]json.RawMessage {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "golden", "tools", "*.json"))
	if err != nil || len(files) == 0 {
		b.Fatal("no schemas", err)
	}
	out := map[string]json.RawMessage{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = data
	}
	return out
}

// BenchmarkCompileBuiltinToolSchemas compiles every built-in tool's
// schema once, uncached: what a process pays over its first calls (an
// exec turn, the first session of acp-agent).
func BenchmarkCompileBuiltinToolSchemas(b *testing.B) {
	schemas := builtinSchemas(b)
	b.ReportAllocs()
	for b.Loop() {
		for name, s := range schemas {
			if _, err := compileToolSchemaUncached(name, s); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCheckToolArgs validates one call's arguments: good ones, and
// bad ones that make the error text for the model.
func BenchmarkCheckToolArgs(b *testing.B) {
	schemas := builtinSchemas(b)
	for _, c := range []struct{ name, tool, args string }{
		{"valid-grep", "grep", `{"pattern":"func main","path":"cmd","include":"*.go","context":2}`},
		{"valid-edit-4KB", "edit_file", `{"path":"a.go","old_string":"` + strings.Repeat("x", 2048) + `","new_string":"` + strings.Repeat("y", 2048) + `"}`},
		{"invalid-grep-3-problems", "grep", `{"pattern":"","context":11,"files_only":"yes"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := compileToolSchemaUncached(c.tool, schemas[c.tool])
			if err != nil {
				b.Fatal(err)
			}
			args := json.RawMessage(c.args)
			valid := strings.HasPrefix(c.name, "valid")
			b.ReportAllocs()
			for b.Loop() {
				if err := checkToolArgs(s, args); (err == nil) != valid {
					b.Fatal(err)
				}
			}
		})
	}
}
