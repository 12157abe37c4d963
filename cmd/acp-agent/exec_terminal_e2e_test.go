package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// acp-agent exec prints what the model and a hostile repository control
// (the model's text, tool titles and results, diffs of files the
// repository holds) to the user's terminal: escape sequences and other
// control characters in them are shown replaced, never sent, so they
// cannot set the clipboard (OSC 52), retitle the window, clear the
// screen, move the cursor up over what ran, or hide text; nor can bidi
// overrides reorder a diff's line. The rest of the text is kept.
func TestExecNeverSendsControlSequencesToTheTerminal(t *testing.T) {
	ws := t.TempDir()
	hostile := "safe\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b[2J\x1b[1A\x1b[2K\x1b[8mhidden\x1b[0m\u009b31m\rover\u202eevil\x7f"
	require.NoError(t, os.WriteFile(filepath.Join(ws, "readme.txt"), []byte("line "+hostile+"\n"), 0o644))
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "go", "events": []any{
			map[string]any{"toolCall": map[string]any{"name": "read_file", "arguments": map[string]any{"path": "readme.txt"}}},
			map[string]any{"toolCall": map[string]any{"name": "write_file", "arguments": map[string]any{"path": "readme.txt", "content": "new " + hostile + "\n"}}},
		}},
		map[string]any{"events": []any{map[string]any{"text": "done " + hostile + "\x00"}}},
	}})
	stdout, stderr, code := runExecBin(t, ws, "", nil, "--model", "replay/"+script, "--allow", "edits", "go")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
		for _, bad := range []string{"\x1b", "\x07", "\u009b", "\r", "\u202e", "\x00", "\x7f"} {
			assert.NotContains(t, out, bad, "%s sends %q to the terminal", name, bad)
		}
	}
	assert.Contains(t, stdout, "done safe", "the text around them is kept")
	assert.Contains(t, stdout, "hidden")
	assert.Contains(t, stdout, "+new safe", "the diff")
	assert.Contains(t, stderr, "+new safe", "the permission request's diff")
	assert.True(t, strings.Contains(stdout, "over") && strings.Contains(stdout, "evil"))
}
