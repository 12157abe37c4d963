package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// startEditorSDKServer runs a real MCP server built with the Go SDK
// behind the editor's bridge, over a pair of pipes as its stdio. Its tool
// unlock adds the tool secret, after which the SDK sends
// notifications/tools/list_changed (on the subscription the client
// opened with subscriptions/listen, which stays in flight).
func startEditorSDKServer(t *testing.T) *editorMCP {
	srv := mcp.NewServer(&mcp.Implementation{Name: "editor-tools", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "unlock", Description: "unlocks the secret tool"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(srv, &mcp.Tool{Name: "secret", Description: "tells the secret"},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the secret is 42"}}}, nil, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "unlocked"}}}, nil, nil
		})
	serverIn, editorOut := io.Pipe()
	editorIn, serverOut := io.Pipe()
	ss, err := srv.Connect(context.Background(), &mcp.IOTransport{Reader: serverIn, Writer: serverOut}, nil)
	require.NoError(t, err)
	e, read := newEditorMCP(t, editorOut, editorIn)
	t.Cleanup(func() {
		editorOut.Close()
		_ = ss.Close()
		_ = ss.Wait()
		editorIn.Close()
		<-read
	})
	return e
}

// MCP over ACP, notifications from the editor: the editor's server
// changes its tool list while a call of the agent's is in flight and
// says so (notifications/tools/list_changed, passed on as an mcp/message
// notification about that call). The agent re-lists the server's tools
// through mcp/message and offers the new one: the session's tools name
// it, and the model is offered it in the next turn (it was not before).
func TestBinaryMCPOverACPToolListChanged(t *testing.T) {
	editor := startEditorSDKServer(t)
	model := newScriptedModel(t, "openai", modelCall{"mcp__editor__unlock", map[string]any{}})
	p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}, "--model", "openai/test-model")
	p.Initialize(nil)
	ns, answer := editor.newSession(t, p, "editor")
	tools := func() string {
		id := p.Request(acp.MethodExtSessionTools, map[string]any{"sessionId": ns.SessionID})
		resp, _ := awaitAnswering(t, p, id, answer)
		var r extResult
		acptest.MustResult(t, resp, &r)
		return fmt.Sprint(r["activeToolNames"])
	}
	require.Contains(t, tools(), "mcp__editor__unlock")
	require.NotContains(t, tools(), "mcp__editor__secret")

	id := p.Request(acp.MethodSessionPrompt, promptReq(ns.SessionID, "unlock it"))
	resp, before := awaitAnswering(t, p, id, answer)
	acptest.MustResult(t, resp, nil)
	text, status := toolResultText(t, before, "call_0")
	assert.Equal(t, "completed", status)
	assert.Contains(t, text, "unlocked")
	assert.NotContains(t, offeredTools(t, model.body(t, 0)), "mcp__editor__secret", "not offered before the change")

	// The re-listing runs on its own (the turn does not wait for it):
	// the session's tools are asked until they name the new one.
	deadline := time.Now().Add(waitBudget(t))
	for !strings.Contains(tools(), "mcp__editor__secret") {
		require.True(t, time.Now().Before(deadline), "the agent never offered the tool the server added")
		time.Sleep(20 * time.Millisecond)
	}
	editor.mu.Lock()
	assert.Contains(t, editor.notified, "notifications/tools/list_changed", "passed on as an mcp/message notification")
	editor.mu.Unlock()
	listed := 0
	for _, m := range editor.innerMethods() {
		if m == "tools/list" {
			listed++
		}
	}
	assert.Equal(t, 2, listed, "the agent re-listed the server's tools once, through mcp/message")

	n := len(model.all())
	id = p.Request(acp.MethodSessionPrompt, promptReq(ns.SessionID, "and now"))
	resp, _ = awaitAnswering(t, p, id, answer)
	acptest.MustResult(t, resp, nil)
	assert.Contains(t, offeredTools(t, model.body(t, n)), "mcp__editor__secret", "the model is offered the new tool")
}
