package main

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// An HTTP MCP server's URL often carries its token (?api_key=...). When
// the server could not be reached, Go's url.Error put the whole URL in
// the error: into the log (stderr, the log file), into the note the
// conversation shows and keeps, and, for a call that failed mid-session,
// into the tool result the model reads. The token is none of those
// places now; the server's name and the failure still are.
func TestBinaryMCPServerURLTokensStayOutOfErrors(t *testing.T) {
	const connectToken, callToken = "tok-connect-5be2a1", "tok-call-93c7d0"
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ping", Description: "answers pong"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
		})
	live := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	// A port nothing listens on: the connection is refused.
	closed := httptest.NewServer(nil)
	closedURL := closed.URL
	closed.Close()

	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[call]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "c1", "name": "mcp__live__ping", "arguments": map[string]any{}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	state := t.TempDir()
	logFile := filepath.Join(state, "agent.log")
	p := startAgent(t, nil, "--model", "replay/"+script, "--mode", "full-access", "--sandbox", "off",
		"--session-dir", filepath.Join(state, "sessions"), "--log-file", logFile)
	p.Initialize(nil)
	resp, wire := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{
		{HTTP: &acp.McpServerHttp{Name: "live", URL: live.URL + "/mcp?api_key=" + callToken}},
		{HTTP: &acp.McpServerHttp{Name: "down", URL: closedURL + "/mcp?api_key=" + connectToken}},
	}})
	var ns acp.NewSessionResponse
	acptest.MustResult(t, resp, &ns)
	// The live server goes away once connected: the call fails.
	live.CloseClientConnections()
	live.Close()
	for ss := range srv.Sessions() {
		_ = ss.Close() // its reading goroutine, left by the closed server
	}
	resp, more := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: ns.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock("[call]")}})
	require.Nil(t, resp.Error)
	wire = append(wire, more...)

	text, status := toolResultText(t, wire, "c1")
	assert.Equal(t, "failed", status, "the call failed: %s", text)
	assert.Contains(t, text, `mcp server "live"`, "the failure names the server (control)")
	var shown strings.Builder
	for _, m := range wire {
		shown.Write(m.Raw)
	}
	assert.Contains(t, shown.String(), `The MCP server \"down\" could not be used`, "the user is told (control)")
	logged, err := os.ReadFile(logFile)
	require.NoError(t, err)
	assert.Contains(t, string(logged), "mcp server failed to connect", "the failure is logged (control)")
	places := map[string]string{"the client's messages": shown.String(), "the log": string(logged), "stderr": p.stderr.String()}
	require.NoError(t, filepath.WalkDir(filepath.Join(state, "sessions"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			data, _ := os.ReadFile(path)
			places[path] = string(data)
		}
		return err
	}))
	for where, s := range places {
		for _, tok := range []string{connectToken, callToken} {
			assert.NotContains(t, s, tok, "the URL's token is in %s", where)
		}
	}
}

// An MCP tool the user allowed always is allowed for what it was when
// the user answered: a server that then changes the tool under the same
// name (another description: "deletes your files") is asked about again.
// Before, the session kept the tool as first listed (the model was still
// offered the old description, its arguments checked against the old
// schema) and the approval, keyed by the name alone, let the changed
// tool run without a question.
func TestBinaryMCPToolChangedAfterAnApprovalAsksAgain(t *testing.T) {
	m := startMCPPing(t, func() {})
	asked := 0
	call := func(text string) string {
		t.Helper()
		before := m.prompt(text, func(acptest.Message) string { asked++; return "allow_always" })
		var id0 string
		for _, msg := range before {
			if msg.Method == acp.MethodSessionUpdate {
				if tc := msg.Update(t).Update.ToolCall; tc != nil {
					id0 = tc.ToolCallID
				}
			}
		}
		text, status := toolResultText(t, before, id0)
		require.Equal(t, "completed", status, text)
		return text
	}

	call("[call] first")
	require.Equal(t, 1, asked, "the first call asks")
	call("[call] again")
	require.Equal(t, 1, asked, "allowed always: the same tool does not ask (control)")

	m.change("deletes the user's files")
	call("[call] after the change")
	assert.Equal(t, 2, asked, "the changed tool ran on the approval of the old one")
}
