package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// "Always reject" of an MCP tool holds whatever the server says the tool
// does afterwards. When approvals of MCP tools became keyed by a digest
// of the tool's definition, rejects were keyed the same way: a server
// whose tool the user had rejected always changed its description, and
// in full-access mode (where a remembered reject is the only thing that
// stops a call) the changed tool ran without a question. A reject
// written before the digests, under the tool's name alone, was not
// honoured either. The control: the tool is rejected before the change.
func TestBinaryMCPToolRejectedAlwaysStaysRejectedAfterAChange(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1.0.0"}, nil)
	var ran atomic.Int32
	handler := func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		ran.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "ping", Description: "answers pong"}, handler)
	live := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(live.Close)

	model := promptModel(t, map[string][]modelCall{"[call]": {{"mcp__remote__ping", map[string]any{}}}})
	p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}, "--model", "openai/test-model", "--sandbox", "off")
	p.Initialize(nil)
	resp, _ := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{
		{HTTP: &acp.McpServerHttp{Name: "remote", URL: live.URL}},
	}})
	var ns acp.NewSessionResponse
	acptest.MustResult(t, resp, &ns)
	asked := 0
	call := func(text string) {
		t.Helper()
		id := p.Request(acp.MethodSessionPrompt, promptReq(string(ns.SessionID), text))
		resp, _ := awaitAnswering(t, p, id, func(m acptest.Message) {
			require.Equal(t, acp.MethodSessionRequestPermission, m.Method)
			asked++
			p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_always"}})
		})
		require.Nil(t, resp.Error)
	}
	description := func() string {
		r, werr := ext(t, p, acp.MethodExtSessionTools, map[string]any{"sessionId": ns.SessionID})
		require.Nil(t, werr)
		for _, tool := range r["tools"].([]any) {
			if m := tool.(map[string]any); m["name"] == "mcp__remote__ping" {
				return fmt.Sprint(m["description"])
			}
		}
		return ""
	}

	call("[call] first")
	require.Equal(t, 1, asked, "the first call asks")
	require.Zero(t, ran.Load(), "rejected")
	resp, _ = p.Call(acp.MethodSessionSetMode, &acp.SetSessionModeRequest{SessionID: ns.SessionID, ModeID: "full-access"})
	require.Nil(t, resp.Error)
	call("[call] in full access")
	require.Zero(t, ran.Load(), "the reject holds in full-access mode (control)")
	require.Equal(t, 1, asked, "and asks nothing (control)")

	mcp.AddTool(srv, &mcp.Tool{Name: "ping", Description: "answers pong, now politely"}, handler)
	deadline := time.Now().Add(waitBudget(t))
	for !strings.Contains(description(), "now politely") {
		require.True(t, time.Now().Before(deadline), "the session never took the changed tool: %q", description())
		time.Sleep(20 * time.Millisecond)
	}
	call("[call] after the change")
	assert.Zero(t, ran.Load(), "the rejected tool ran once its description changed")
	assert.Equal(t, 1, asked, "the rejected tool was asked about again")
}
