package mcpclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acp-agent/acp-agent/agent/mcpclient"
)

func ExampleConnect() {
	// An MCP server with one tool, served over streamable HTTP.
	srv := mcp.NewServer(&mcp.Implementation{Name: "demo", Version: "1"}, nil)
	type in struct {
		Message string `json:"message"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + a.Message}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()

	// The servers a client names for a session, one of which fails.
	servers := []mcpclient.Server{
		{HTTP: &mcpclient.HTTPServer{Name: "demo", URL: ts.URL}},
		{Stdio: &mcpclient.StdioServer{Name: "missing", Command: "/nonexistent/server"}},
	}
	m, failures := mcpclient.Connect(context.Background(), servers, mcpclient.Options{ClientName: "example"})
	defer m.Close()
	for _, f := range failures {
		fmt.Println("failed:", f.Server)
	}
	for _, t := range m.Tools() {
		fmt.Println("tool:", t.QualifiedName, string(t.InputSchema))
	}
	res, err := m.Call(context.Background(), "mcp__demo__echo", json.RawMessage(`{"message":"hi"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// failed: missing
	// tool: mcp__demo__echo {"additionalProperties":false,"properties":{"message":{"type":"string"}},"required":["message"],"type":"object"}
	// Echo: hi
}
