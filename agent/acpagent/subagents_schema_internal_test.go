package acpagent

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// updateGolden rewrites the golden file: go test ./agent/acpagent -run TaskToolSchema -update
var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// The task tool's argument schema, as the model gets it, is pinned beside
// the built-in tools' (testdata/golden/tools), compared as JSON values.
func TestTaskToolSchemaMatchesTheGoldenFile(t *testing.T) {
	got := (*acpSession)(nil).taskTool().Parameters
	path := filepath.Join("..", "..", "testdata", "golden", "tools", ToolTask+".json")
	if *updateGolden {
		// Keys sorted, so a diff of the file shows what changed.
		var v any
		require.NoError(t, json.Unmarshal(got, &v))
		b, err := json.MarshalIndent(v, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to write it")
	assert.JSONEq(t, string(want), string(got))
}
