package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp/acphttp"
	"github.com/acp-agent/acp-agent/internal/winetest"
)

// TestServeRootCheckDoesNotTellWhatIsOutside (security review): a remote
// client naming a path outside --root gets the same answer whether that
// path is a directory, a file or nothing at all, on every method that
// takes one (session/new's cwd and additionalDirectories, load, resume,
// fork, and v2's new), so serve cannot be used to probe the machine's
// file system; a symbolic link in the root to a place outside answers
// alike, whether its target is there or not. A stored session whose directory outside has since been
// deleted answers as an unknown id, as one whose directory is there.
func TestServeRootCheckDoesNotTellWhatIsOutside(t *testing.T) {
	s := startServe(t, nil)
	outside := t.TempDir()
	file := filepath.Join(outside, "notes.txt")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	probes := map[string]string{
		"a directory":      outside,
		"a file":           file,
		"nothing":          filepath.Join(outside, "missing"),
		"nothing under it": filepath.Join(outside, "missing", "deeper"),
	}
	if !winetest.Active { // Wine makes no symbolic links
		for name, target := range map[string]string{"a link in the root to a directory outside": outside,
			"a link in the root to nothing outside": filepath.Join(outside, "missing")} {
			link := filepath.Join(s.root, fmt.Sprintf("link%d", len(probes)))
			require.NoError(t, os.Symlink(target, link))
			probes[name] = link
		}
	}
	const marker = "<PATH>"

	// A session stored outside whose directory is gone, and one whose
	// directory is there (the user's editor made them, on stdio).
	sessionDir := filepath.Join(s.state, "sessions")
	gone := filepath.Join(outside, "gone")
	require.NoError(t, os.Mkdir(gone, 0o755))
	p := startAgent(t, nil, "--model", "replay/"+serveScript(t), "--session-dir", sessionDir)
	p.Initialize(nil)
	goneID := p.NewSession(gone)
	askText(t, p, goneID, "stream please")
	thereID := p.NewSession(outside)
	askText(t, p, thereID, "stream please")
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, waitBudget(t)))
	require.NoError(t, os.Remove(gone))

	c := dialServe(t, s, false)
	defer c.Close()
	v2 := dialServeV2(t, s, false)
	defer v2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	live := c.newSession(t, ctx, s.root)
	source := c.newSession(t, ctx, s.root)
	answer := func(c *acphttp.Client, method string, params map[string]any) *acphttp.RPCError {
		t.Helper()
		err := c.Call(ctx, method, params, nil)
		var re *acphttp.RPCError
		require.ErrorAs(t, err, &re, "%s %v", method, params)
		return re
	}
	for _, tc := range []struct {
		method string
		v2     bool
		params func(path string) map[string]any
	}{
		{"session/new", false, func(p string) map[string]any { return map[string]any{"cwd": p, "mcpServers": []any{}} }},
		{"session/new", false, func(p string) map[string]any {
			return map[string]any{"cwd": s.root, "mcpServers": []any{}, "additionalDirectories": []string{p}}
		}},
		{"session/load", false, func(p string) map[string]any {
			return map[string]any{"sessionId": live, "cwd": p, "mcpServers": []any{}}
		}},
		{"session/resume", false, func(p string) map[string]any { return map[string]any{"sessionId": live, "cwd": p} }},
		{"session/fork", false, func(p string) map[string]any { return map[string]any{"sessionId": source, "cwd": p} }},
		{"session/fork", false, func(p string) map[string]any {
			return map[string]any{"sessionId": source, "cwd": s.root, "additionalDirectories": []string{p}}
		}},
		{"session/new", true, func(p string) map[string]any { return map[string]any{"cwd": p} }},
		{"session/new", true, func(p string) map[string]any {
			return map[string]any{"cwd": s.root, "additionalDirectories": []string{p}}
		}},
	} {
		client := c.Client
		if tc.v2 {
			client = v2
		}
		answers := map[string]string{}
		for what, path := range probes {
			re := answer(client, tc.method, tc.params(path))
			assert.Equal(t, int64(-32602), re.Code, "%s of %s", tc.method, what)
			answers[what] = strings.ReplaceAll(re.Message, path, marker) + " " + strings.ReplaceAll(string(re.Data), path, marker)
		}
		want := answers["a directory"]
		assert.Contains(t, want, "is outside the directories this agent serves", tc.method)
		for what, got := range answers {
			assert.Equal(t, want, got, "%s v2=%v: %s outside answers as a directory there does", tc.method, tc.v2, what)
		}
	}

	// The refused loads and resumes of live left it open: a fork of a
	// source that is not open must name its directories and servers.
	assert.NoError(t, c.Call(ctx, "session/fork", map[string]any{"sessionId": live, "cwd": s.root}, nil), "the live session survives refused loads")

	unknown := "0b7c8d4e-1111-4000-8000-000000000000"
	for _, method := range []string{"session/load", "session/resume", "session/fork"} {
		params := func(id string) map[string]any {
			return map[string]any{"sessionId": id, "cwd": s.root, "additionalDirectories": []string{}, "mcpServers": []any{}}
		}
		want := answer(c.Client, method, params(unknown))
		require.Equal(t, int64(-32002), want.Code, method)
		for what, id := range map[string]string{"directory gone": goneID, "directory there": thereID} {
			got := answer(c.Client, method, params(id))
			assert.Equal(t, want.Code, got.Code, "%s, %s", method, what)
			assert.Equal(t, strings.ReplaceAll(want.Message, unknown, id), got.Message, "%s, %s", method, what)
			assert.Equal(t, strings.ReplaceAll(string(want.Data), unknown, id), string(got.Data), "%s, %s", method, what)
		}
	}
}
