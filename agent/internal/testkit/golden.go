package testkit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// JSONGolden compares got with the golden file at path as JSON values;
// with update it rewrites the file instead, keys sorted and indented, so
// that a diff of the file shows what changed.
func JSONGolden(t *testing.T, path string, got json.RawMessage, update bool) {
	t.Helper()
	if update {
		var v any
		require.NoError(t, json.Unmarshal(got, &v))
		b, err := json.MarshalIndent(v, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run the test with -update to write %s", path)
	assert.JSONEq(t, string(want), string(got), path)
}
