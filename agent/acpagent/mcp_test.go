package acpagent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// mcpServer is an in-process MCP server over streamable HTTP with a
// "greet" tool; the handler records the header the editor configured.
func mcpServer(t *testing.T) (acp.McpServer, *mcp.Server) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "demo", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Title: "Greet", Description: "Greets someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Demo-Token") != "secret" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return acp.McpServer{HTTP: &acp.McpServerHttp{Name: "demo", URL: ts.URL,
		Headers: []acp.HttpHeader{{Name: "X-Demo-Token", Value: "secret"}}}}, srv
}

func newSessionWithMCP(t *testing.T, c *acptest.Client, cwd string, servers ...acp.McpServer) (string, []acptest.Message) {
	t.Helper()
	resp, _ := c.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: cwd, MCPServers: servers})
	var ns acp.NewSessionResponse
	acptest.MustResult(t, resp, &ns)
	var after []acptest.Message
	for {
		m, ok := c.NextWithin(500 * time.Millisecond)
		if !ok {
			break
		}
		after = append(after, m)
	}
	return ns.SessionID, after
}

func TestMCPToolsJoinTheSessionAndAskPermission(t *testing.T) {
	server, _ := mcpServer(t)
	c, _, _ := toolAgent(t, nil, nil, toolTurn([2]any{"mcp__demo__greet", map[string]any{"name": "Ada"}}), textTurn("done"))
	sid, _ := newSessionWithMCP(t, c, t.TempDir(), server)

	tools, _ := c.Call(acp.MethodExtSessionTools, map[string]any{"sessionId": sid})
	var list struct {
		Tools []struct {
			Name, Source, Description string
		} `json:"tools"`
	}
	acptest.MustResult(t, tools, &list)
	var mcpTools []string
	for _, tool := range list.Tools {
		if tool.Source == "mcp" {
			mcpTools = append(mcpTools, tool.Name)
			assert.Contains(t, tool.Description, `MCP server "demo"`)
		}
	}
	assert.Equal(t, []string{"mcp__demo__greet"}, mcpTools)

	r := runPrompt(t, c, sid, "go", answerPermission("allow_once"))
	require.Len(t, r.requests, 1, "an MCP tool call asks, like a command")
	var req acp.RequestPermissionRequest
	require.NoError(t, json.Unmarshal(r.requests[0].Params, &req))
	assert.Equal(t, "demo: Greet (MCP)", req.ToolCall.Title, "the server and the tool are named")
	_, finals := r.calls()
	final := finals["call_mcp__demo__greet_0"]
	require.NotNil(t, final)
	assert.Equal(t, acp.ToolCallStatusCompleted, final.Status)
	assert.Equal(t, "Hello, Ada!", contentText(final.Content))
}

func TestAFailingMCPServerDoesNotFailTheSession(t *testing.T) {
	good, _ := mcpServer(t)
	bad := acp.McpServer{Stdio: &acp.McpServerStdio{Name: "broken", Command: "/nonexistent/mcp-server", Args: []string{}, Env: []acp.EnvVariable{}}}
	c, _, _ := toolAgent(t, nil, nil, textTurn("hi"))
	sid, after := newSessionWithMCP(t, c, t.TempDir(), good, bad)
	var told bool
	for _, m := range after {
		if ch := m.Update(t).Update.AgentMessageChunk; ch != nil && ch.Content.Text != nil {
			told = told || strings.Contains(ch.Content.Text.Text, `"broken"`)
		}
	}
	assert.True(t, told, "the user is told about the failed server")
	tools, _ := c.Call(acp.MethodExtSessionTools, map[string]any{"sessionId": sid})
	assert.Contains(t, string(tools.Result), "mcp__demo__greet", "the good server's tools are there")
}

// A tool the server adds later joins the session (tools/list_changed), and
// one it removes leaves it, so the model is offered what exists.
func TestMCPToolListChangesUpdateTheSession(t *testing.T) {
	server, srv := mcpServer(t)
	c, _, _ := toolAgent(t, nil, nil, textTurn("hi"))
	sid, _ := newSessionWithMCP(t, c, t.TempDir(), server)
	names := func() []string {
		resp, _ := c.Call(acp.MethodExtSessionTools, map[string]any{"sessionId": sid})
		var list struct {
			Active []string `json:"activeToolNames"`
		}
		acptest.MustResult(t, resp, &list)
		var out []string
		for _, n := range list.Active {
			if strings.HasPrefix(n, "mcp__") {
				out = append(out, n)
			}
		}
		return out
	}
	require.Equal(t, []string{"mcp__demo__greet"}, names())
	mcp.AddTool(srv, &mcp.Tool{Name: "wave", Description: "Waves."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "o/"}}}, nil, nil
	})
	require.Eventually(t, func() bool { return len(names()) == 2 }, 5*time.Second, 20*time.Millisecond, "the added tool joins")
	srv.RemoveTools("greet")
	require.Eventually(t, func() bool {
		n := names()
		return len(n) == 1 && n[0] == "mcp__demo__wave"
	}, 5*time.Second, 20*time.Millisecond, "the removed tool leaves")
}
