package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 16, search, through the built binary: grep and glob leave out
// what the repository's .gitignore ignores, and include_ignored brings it
// back.
func TestBinarySearchHonoursGitignore(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	write(t, filepath.Join(ws, ".gitignore"), "gen/\n*.min.js\n")
	write(t, filepath.Join(ws, "gen", "big.txt"), "NEEDLE in generated code\n")
	write(t, filepath.Join(ws, "app.min.js"), "NEEDLE minified\n")
	write(t, filepath.Join(ws, "src", "main.txt"), "NEEDLE in source\n")
	model := promptModel(t, map[string][]modelCall{
		"[grep]":     {{"grep", map[string]any{"pattern": "NEEDLE"}}},
		"[grep-all]": {{"grep", map[string]any{"pattern": "NEEDLE", "include_ignored": true}}},
		"[glob]":     {{"glob", map[string]any{"pattern": "**/*.txt"}}},
	})
	client := newToolClient(ws, "allow_once")
	cmd := exec.Command(agentBin, "--model", "openai/test-model")
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
	conn, sid := startE2EWith(t, cmd, client, ws, sdk.ClientCapabilities{})
	// last is the newest tool result the model was sent.
	last := func() string {
		model.mu.Lock()
		body := model.bodies[len(model.bodies)-1]
		model.mu.Unlock()
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &req))
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if req.Messages[i].Role == "tool" {
				return req.Messages[i].Content
			}
		}
		return ""
	}
	promptE2E(t, conn, sid, "[grep]")
	body := last()
	assert.Contains(t, body, "in source")
	assert.NotContains(t, body, "generated code", "gen/ is ignored")
	assert.NotContains(t, body, "minified", "*.min.js is ignored")
	promptE2E(t, conn, sid, "[grep-all]")
	body = last()
	assert.Contains(t, body, "generated code")
	assert.Contains(t, body, "minified")
	promptE2E(t, conn, sid, "[glob]")
	body = last()
	assert.Contains(t, body, "main.txt")
	assert.NotContains(t, body, "big.txt")
}
