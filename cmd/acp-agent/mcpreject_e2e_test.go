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
	var ran atomic.Int32
	m := startMCPPing(t, func() { ran.Add(1) })
	asked := 0
	call := func(text string) {
		t.Helper()
		m.prompt(text, func(acptest.Message) string { asked++; return "reject_always" })
	}

	call("[call] first")
	require.Equal(t, 1, asked, "the first call asks")
	require.Zero(t, ran.Load(), "rejected")
	resp, _ := m.p.Call(acp.MethodSessionSetMode, &acp.SetSessionModeRequest{SessionID: m.sid, ModeID: "full-access"})
	require.Nil(t, resp.Error)
	call("[call] in full access")
	require.Zero(t, ran.Load(), "the reject holds in full-access mode (control)")
	require.Equal(t, 1, asked, "and asks nothing (control)")

	m.change("answers pong, now politely")
	call("[call] after the change")
	assert.Zero(t, ran.Load(), "the rejected tool ran once its description changed")
	assert.Equal(t, 1, asked, "the rejected tool was asked about again")
}

// mcpPing is a session of the built agent (sandbox off) with an HTTP MCP
// server "remote" offering the tool ping, which a scripted model calls
// for a prompt holding "[call]".
type mcpPing struct {
	t       *testing.T
	p       *proc
	sid     acp.SessionId
	srv     *mcp.Server
	handler func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error)
}

// startMCPPing starts an mcpPing whose tool calls ran at each call.
func startMCPPing(t *testing.T, ran func()) *mcpPing {
	t.Helper()
	m := &mcpPing{t: t, srv: mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1.0.0"}, nil)}
	m.handler = func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		ran()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	}
	mcp.AddTool(m.srv, &mcp.Tool{Name: "ping", Description: "answers pong"}, m.handler)
	live := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m.srv }, nil))
	t.Cleanup(live.Close)
	model := promptModel(t, map[string][]modelCall{"[call]": {{"mcp__remote__ping", map[string]any{}}}})
	m.p = startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}, "--model", "openai/test-model", "--sandbox", "off")
	m.p.Initialize(nil)
	resp, _ := m.p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{
		{HTTP: &acp.McpServerHttp{Name: "remote", URL: live.URL}},
	}})
	var ns acp.NewSessionResponse
	acptest.MustResult(t, resp, &ns)
	m.sid = ns.SessionID
	return m
}

// prompt sends text, answers each permission request with the option
// answer gives, and returns the messages before the answer.
func (m *mcpPing) prompt(text string, answer func(acptest.Message) string) []acptest.Message {
	m.t.Helper()
	id := m.p.Request(acp.MethodSessionPrompt, promptReq(string(m.sid), text))
	resp, before := awaitAnswering(m.t, m.p, id, func(msg acptest.Message) {
		require.Equal(m.t, acp.MethodSessionRequestPermission, msg.Method)
		m.p.Respond(msg.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": answer(msg)}})
	})
	require.Nil(m.t, resp.Error)
	return before
}

// change has the server change ping's description, and waits until the
// session offers the changed tool (the server says its tools changed;
// the agent lists them again on its own).
func (m *mcpPing) change(description string) {
	m.t.Helper()
	mcp.AddTool(m.srv, &mcp.Tool{Name: "ping", Description: description}, m.handler)
	deadline := time.Now().Add(waitBudget(m.t))
	for !strings.Contains(m.description(), description) {
		require.True(m.t, time.Now().Before(deadline), "the session never took the changed tool: %q", m.description())
		time.Sleep(20 * time.Millisecond)
	}
}

// description is ping's description as the session offers it.
func (m *mcpPing) description() string {
	r, werr := ext(m.t, m.p, acp.MethodExtSessionTools, map[string]any{"sessionId": m.sid})
	require.Nil(m.t, werr)
	for _, tool := range r["tools"].([]any) {
		if tm := tool.(map[string]any); tm["name"] == "mcp__remote__ping" {
			return fmt.Sprint(tm["description"])
		}
	}
	return ""
}
