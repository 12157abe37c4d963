package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp/acphttp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// dialServeV2 opens a v2 connection to serve.
func dialServeV2(t *testing.T, s *served, ws bool) *acphttp.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	c, init, err := acphttp.Dial(ctx, acphttp.ClientOptions{URL: s.url, Token: s.token, WebSocket: ws},
		&acpv2.InitializeRequest{ProtocolVersion: 2, Info: acpv2.Implementation{Name: "serve-v2-test", Version: "1"}})
	require.NoError(t, err)
	assert.Contains(t, string(init), `"protocolVersion":2`)
	return c
}

// TestServeConfinesV2SessionsToRoots: over serve, a v2 client is held to
// the same rules as a v1 one: no session (new, resume, fork) whose cwd or
// additionalDirectories is outside --root, through a symbolic link
// either, and no stdio MCP server.
func TestServeConfinesV2SessionsToRoots(t *testing.T) {
	s := startServe(t, nil)
	outside := t.TempDir()
	top, sys, link := escapes(t, s)
	inside := filepath.Join(s.root, "project")
	require.NoError(t, os.Mkdir(inside, 0o755))
	sid := storedConversation(t, s)
	for _, ws := range []bool{false, true} {
		c := dialServeV2(t, s, ws)
		ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
		for _, tc := range []struct {
			method string
			params map[string]any
			says   string
		}{
			{"session/new", map[string]any{"cwd": top}, "cwd: " + top + " is outside"},
			{"session/new", map[string]any{"cwd": outside}, "is outside the directories this agent serves"},
			{"session/new", map[string]any{"cwd": link}, "is outside"},
			{"session/new", map[string]any{"cwd": s.root + "/../"}, "is outside"},
			{"session/new", map[string]any{"cwd": inside, "additionalDirectories": []string{sys}}, "additionalDirectories[0]: " + sys + " is outside"},
			{"session/new", map[string]any{"cwd": inside, "mcpServers": []any{map[string]any{"type": "stdio", "name": "sh", "command": "/bin/sh", "args": []string{"-c", "id"}}}}, "stdio MCP servers"},
			{"session/resume", map[string]any{"sessionId": sid, "cwd": outside}, "is outside"},
			{"session/resume", map[string]any{"sessionId": sid, "cwd": s.root, "additionalDirectories": []string{link}}, "is outside"},
			{"session/fork", map[string]any{"sessionId": sid, "cwd": top}, "is outside"},
		} {
			err := c.Call(ctx, tc.method, tc.params, nil)
			var re *acphttp.RPCError
			require.ErrorAs(t, err, &re, "%s %v", tc.method, tc.params)
			assert.Equal(t, int64(-32602), re.Code, "%s %v", tc.method, tc.params)
			assert.Contains(t, re.Message, tc.says)
		}
		var created acpv2.NewSessionResponse
		require.NoError(t, c.Call(ctx, "session/new", map[string]any{"cwd": inside}, &created), "inside the root it works")
		err := c.Call(ctx, "session/fork", map[string]any{"sessionId": created.SessionID, "cwd": sys}, nil)
		var re *acphttp.RPCError
		require.ErrorAs(t, err, &re, "fork of a live session into /etc")
		assert.Contains(t, re.Message, "is outside")
		// A resume refused for its cwd leaves the live session open
		// (acp.LoadCheckerV2): it can still be closed.
		err = c.Call(ctx, "session/resume", map[string]any{"sessionId": created.SessionID, "cwd": outside}, nil)
		require.ErrorAs(t, err, &re, "resume of a live session into a directory outside")
		assert.Contains(t, re.Message, "is outside")
		assert.NoError(t, c.Call(ctx, "session/close", map[string]any{"sessionId": created.SessionID}, nil), "the live session survives a refused resume")
		var list acpv2.ListSessionsResponse
		require.NoError(t, c.Call(ctx, "session/list", map[string]any{}, &list))
		for _, info := range list.Sessions {
			real, err := filepath.EvalSymlinks(info.CWD)
			require.NoError(t, err)
			assert.True(t, real == s.root || filepath.Dir(real) == s.root, "listed %s", info.CWD)
		}
		cancel()
		c.Close()
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries)
	checkSurvived(t, s, sid)
}
