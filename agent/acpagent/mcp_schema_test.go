package acpagent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// A tool schema from an MCP server is untrusted input. One the agent
// understands (draft-04 here) checks the model's arguments, and a bad
// argument goes back to the model naming it; one that does not compile
// (a reference loop, which validation would follow forever, or a remote
// reference, never fetched) leaves the tool usable with its arguments
// checked as an object only, as before.
func TestMCPToolSchemasAreUntrustedInput(t *testing.T) {
	var fetched atomic.Int64
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetched.Add(1)
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	t.Cleanup(remote.Close)
	var got []string
	srv := mcp.NewServer(&mcp.Implementation{Name: "odd", Version: "1"}, nil)
	add := func(name, schema string) {
		var s map[string]any
		require.NoError(t, json.Unmarshal([]byte(schema), &s))
		srv.AddTool(&mcp.Tool{Name: name, Title: name, InputSchema: s}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			got = append(got, name+":"+string(req.Params.Arguments))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + name}}}, nil
		})
	}
	add("old", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true}},"required":["n"]}`)
	add("loop", `{"type":"object","properties":{"n":{"type":"string"}},"allOf":[{"$ref":"#"}]}`)
	add("remote", `{"type":"object","properties":{"n":{"$ref":"`+remote.URL+`/n.json"}}}`)
	// A schema that applies itself twice to each member: on a value 60
	// deep, 2^60 checks, which no cancel would stop.
	add("twice", `{"type":"object","$defs":{"n":{"type":"object","properties":{"a":{"allOf":[{"$ref":"#/$defs/n"},{"$ref":"#/$defs/n"}]}}}},"$ref":"#/$defs/n"}`)
	add("price", `{"type":"object","properties":{"amount":{"type":"number","multipleOf":0.01}},"required":["amount"]}`)
	deep := map[string]any{}
	for range 60 {
		deep = map[string]any{"a": deep}
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close) // after the agent's own clean-up (registered later) ends its MCP stream

	c, _, _ := toolAgent(t, nil, nil, toolTurn(
		[2]any{"mcp__odd__old", map[string]any{"n": 0}},
		[2]any{"mcp__odd__old", map[string]any{"n": 2}},
		[2]any{"mcp__odd__loop", map[string]any{"n": 5}},
		[2]any{"mcp__odd__remote", map[string]any{"n": 5}},
		[2]any{"mcp__odd__remote", []any{"not an object"}},
		[2]any{"mcp__odd__twice", deep},
		[2]any{"mcp__odd__price", map[string]any{"amount": 19.99}},
	), textTurn("done"))
	sid, _ := newSessionWithMCP(t, c, t.TempDir(), acp.McpServer{HTTP: &acp.McpServerHttp{Name: "odd", URL: ts.URL, Headers: []acp.HttpHeader{}}})
	r := runPrompt(t, c, sid, "go", answerPermission("allow_once"))
	_, finals := r.calls()
	want := map[string]struct {
		status acp.ToolCallStatus
		text   string
	}{
		"call_mcp__odd__old_0":    {acp.ToolCallStatusFailed, "invalid arguments for mcp__odd__old: the arguments do not match the tool's schema: at /n: must be > 0 but found 0"},
		"call_mcp__odd__old_1":    {acp.ToolCallStatusCompleted, "ran old"},
		"call_mcp__odd__loop_2":   {acp.ToolCallStatusCompleted, "ran loop"},
		"call_mcp__odd__remote_3": {acp.ToolCallStatusCompleted, "ran remote"},
		"call_mcp__odd__remote_4": {acp.ToolCallStatusFailed, "the arguments must be a JSON object"},
		"call_mcp__odd__twice_5":  {acp.ToolCallStatusFailed, "checking the value against the schema would take more than"},
		"call_mcp__odd__price_6":  {acp.ToolCallStatusCompleted, "ran price"},
	}
	for id, w := range want {
		require.NotNil(t, finals[id], id)
		assert.Equal(t, w.status, finals[id].Status, id)
		assert.Contains(t, contentText(finals[id].Content), w.text, id)
	}
	assert.Equal(t, []string{`old:{"n":2}`, `loop:{"n":5}`, `remote:{"n":5}`, `price:{"amount":19.99}`}, got)
	assert.Zero(t, fetched.Load(), "a remote $ref of a tool schema was fetched")
}
