package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// A glob pattern the model writes is matched in time polynomial in its
// length and the path's depth: "**/*/" twenty times against a file forty
// directories deep tried every way of splitting the path between the
// twenty "**" (about 10^11 ways; the call never answered). It answers,
// with nothing found, and a pattern of the same shape that does match
// still finds the file.
func TestBinaryGlobPatternsCannotTakeExponentialTime(t *testing.T) {
	ws := t.TempDir()
	deep := filepath.Join(append([]string{ws}, strings.Split(strings.Repeat("d/", 40), "/")...)...)
	require.NoError(t, os.MkdirAll(deep, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(deep, "f.txt"), []byte("x\n"), 0o644))
	hard := strings.Repeat("**/*/", 20) + "nomatch.txt"
	matching := strings.Repeat("**/*/", 20) + "f.txt"
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "go", "events": []any{
			map[string]any{"toolCall": map[string]any{"name": "glob", "arguments": map[string]any{"pattern": hard}}},
			map[string]any{"toolCall": map[string]any{"name": "glob", "arguments": map[string]any{"pattern": matching}}},
		}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script)
	p.Initialize(nil)
	sid := p.NewSession(ws)
	start := time.Now()
	resp, updates := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("go")}})
	require.Nil(t, resp.Error, "%s", resp.Raw)
	t.Logf("both globs took %v", time.Since(start))
	var results []string
	for _, m := range updates {
		u := m.Update(t).Update
		if tc := u.ToolCallUpdate; tc != nil && tc.Status == acp.ToolCallStatusCompleted {
			var b strings.Builder
			for _, c := range tc.Content {
				if c.Content != nil && c.Content.Content.Text != nil {
					b.WriteString(c.Content.Content.Text.Text)
				}
			}
			results = append(results, b.String())
		}
	}
	require.Len(t, results, 2, "both calls completed")
	assert.NotContains(t, results[0], "f.txt")
	assert.Contains(t, results[1], "f.txt", "the matching pattern finds the file")
}
