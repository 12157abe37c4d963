package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

// Issue 31, through the built binary: grep over a tree big enough for
// its parallel search gives the matches in path order, the first
// max_matches of them with the note that it stopped, skips a binary
// file, and finds a word in any case with Unicode case folding (the
// Kelvin sign is a K).
func TestBinaryGrepOrderCapBinaryAndCase(t *testing.T) {
	ws := t.TempDir()
	var want []string
	for i := range 150 {
		rel := filepath.Join(fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%03d.txt", i))
		write(t, filepath.Join(ws, rel), fmt.Sprintf("line one\nNEEDLE %d\n", i))
		want = append(want, fmt.Sprintf("%s:2: NEEDLE %d", rel, i))
	}
	slices.Sort(want) // d0/f000, d0/f004, ...: the walk's order
	write(t, filepath.Join(ws, "a.bin"), "NEEDLE\x00\x01\n")
	write(t, filepath.Join(ws, "k.txt"), "\u212aelvin scale\n")
	model := stepModel(t,
		calls(modelCall{"grep", map[string]any{"pattern": "NEEDLE", "max_matches": 1000}}),
		calls(modelCall{"grep", map[string]any{"pattern": "NEEDLE", "max_matches": 40}}),
		calls(modelCall{"grep", map[string]any{"pattern": "kelvin", "ignore_case": true}}),
		says("done"),
	)
	conn, sid := qualityAgent(t, model, newToolClient(ws, "allow_once"), ws, "openai/test-model", "")
	promptE2E(t, conn, sid, "search")
	bodies := model.all()
	require.Len(t, bodies, 4)
	assert.Equal(t, strings.Join(want, "\n")+"\n", lastToolResult(t, bodies[1]), "all matches, in path order, no binary file")
	assert.Equal(t, strings.Join(want[:40], "\n")+"\n[... stopped after 40 matches; narrow the pattern, path or include ...]", lastToolResult(t, bodies[2]))
	assert.Equal(t, "k.txt:1: \u212aelvin scale\n", lastToolResult(t, bodies[3]))
}
