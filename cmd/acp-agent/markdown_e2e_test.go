package main

import (
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ACP says clients should render text content as Markdown. A file's, a
// search's and a command's output is data: the client gets it as a code
// block that holds it exactly (no `#` line made a heading, no
// `__init__.py` made bold, no tag dropped, no image fetched), fenced
// longer than any run of backticks in it so that a fence inside cannot end
// the block; the model gets the output itself.
func TestBinaryToolOutputIsShownToTheClientAsACodeBlock(t *testing.T) {
	dir := t.TempDir()
	src := "# not a heading\n__init__.py <b>kept</b> ![pixel](http://127.0.0.1:9/p.png)\n````\nafter the fence\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.md"), []byte(src), 0o600))
	show := "cat notes.md"
	if goruntime.GOOS == "windows" {
		show = "type notes.md"
	}
	model := newScriptedModel(t, "openai",
		modelCall{"read_file", map[string]any{"path": "notes.md"}},
		modelCall{"grep", map[string]any{"pattern": "heading", "path": "."}},
		modelCall{"run_command", map[string]any{"command": show}})
	client := newToolClient(dir, "allow_once")
	conn, sid := e2eSession(t, "openai", model, client, sdk.ClientCapabilities{})
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "look at notes.md"))

	for id, c := range map[string]struct {
		fence string // the longest backtick run inside is 4, or none
		holds string
	}{
		"call_0": {"`````", "     1\t# not a heading\n     2\t__init__.py <b>kept</b> ![pixel](http://127.0.0.1:9/p.png)\n     3\t````\n     4\tafter the fence\n"},
		"call_1": {"```", "notes.md:1: # not a heading\n"},
		"call_2": {"`````", src},
	} {
		u, ok := client.final(id)
		require.True(t, ok, id)
		require.Len(t, u.Content, 1, id)
		require.NotNil(t, u.Content[0].Content, id)
		require.NotNil(t, u.Content[0].Content.Content.Text, id)
		shown := u.Content[0].Content.Content.Text.Text
		first, rest, _ := strings.Cut(shown, "\n")
		assert.Equal(t, c.fence, first, "%s opens with a fence longer than any inside: %q", id, shown)
		assert.True(t, strings.HasSuffix(rest, "\n"+c.fence), "%s closes with the same fence: %q", id, shown)
		assert.Contains(t, unfenced(shown), c.holds, id)
	}
	// The model is sent the outputs, not the blocks.
	body := model.body(t, 1)
	assert.Contains(t, body, `# not a heading`)
	assert.NotContains(t, body, "`````", "the model's tool results carry no fence of the agent's")
}
