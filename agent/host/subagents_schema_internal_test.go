package host

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/acp-agent/acp-agent/agent/internal/testkit"
)

// updateGolden rewrites the golden file: go test ./agent/host -run TaskToolSchema -update
var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// The task tool's argument schema, as the model gets it, is pinned beside
// the built-in tools' (testdata/golden/tools), compared as JSON values.
func TestTaskToolSchemaMatchesTheGoldenFile(t *testing.T) {
	testkit.JSONGolden(t, filepath.Join("..", "..", "testdata", "golden", "tools", ToolTask+".json"), (*Session)(nil).taskTool().Parameters, *updateGolden)
}
