package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/acp/schemacheck"
)

// editorMCP is an MCP server that lives in the editor: the test's ACP
// client answers the agent's mcp/message requests by passing each inner
// request to the real server-everything over its stdio, as an editor
// hosting it would. Like such an editor it runs the MCP lifecycle itself:
// an initialize that succeeded is followed by notifications/initialized.
type editorMCP struct {
	t      *testing.T
	stdin  io.WriteCloser
	mu     sync.Mutex
	nextID int
	waits  map[int]chan json.RawMessage
	// methods are the inner methods the agent sent, in order.
	methods []string
}

func startEditorMCP(t *testing.T) *editorMCP {
	node, index := everything(t)
	cmd := exec.Command(node, index, "stdio")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr syncWriter
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	require.NoError(t, cmd.Start())
	e := &editorMCP{t: t, stdin: stdin, waits: map[int]chan json.RawMessage{}}
	read := make(chan struct{}) // the reader ends with the server's stdout
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m struct {
				ID *int `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
				continue // the server's own notifications stay in the editor
			}
			e.mu.Lock()
			ch := e.waits[*m.ID]
			delete(e.waits, *m.ID)
			e.mu.Unlock()
			if ch != nil {
				ch <- append(json.RawMessage(nil), sc.Bytes()...)
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		stopServer(cmd)
		<-read
		if t.Failed() {
			t.Logf("server-everything stderr:\n%s", stderr.String())
		}
	})
	return e
}

// call passes one inner request to the server and returns its response
// as mcp/message's result: {"result": ...} or {"error": ...}.
func (e *editorMCP) call(method string, params json.RawMessage) map[string]json.RawMessage {
	e.mu.Lock()
	e.nextID++
	id := e.nextID
	ch := make(chan json.RawMessage, 1)
	e.waits[id] = ch
	e.methods = append(e.methods, method)
	e.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if len(params) > 0 && string(params) != "null" {
		msg["params"] = params
	}
	e.send(msg)
	var resp map[string]json.RawMessage
	select {
	case raw := <-ch:
		require.NoError(e.t, json.Unmarshal(raw, &resp))
	case <-time.After(waitBudget(e.t)):
		e.t.Fatalf("server-everything did not answer %s", method)
	}
	out := map[string]json.RawMessage{}
	if r, ok := resp["result"]; ok {
		out["result"] = r
		if method == "initialize" {
			e.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
		}
	} else {
		out["error"] = resp["error"]
	}
	return out
}

func (e *editorMCP) send(msg map[string]any) {
	data, err := json.Marshal(msg)
	require.NoError(e.t, err)
	_, err = e.stdin.Write(append(data, '\n'))
	require.NoError(e.t, err)
}

// answer serves one request of the agent: mcp/message through the
// server (checking it names the server the client declared), permission
// requests with allow_once.
func (e *editorMCP) answer(t *testing.T, p *proc, serverID string, checker *schemacheck.Checker) func(m acptest.Message) {
	return func(m acptest.Message) {
		switch m.Method {
		case acp.MethodMCPMessage:
			var req acp.MessageMcpRequest
			require.NoError(t, json.Unmarshal(m.Params, &req))
			require.Equal(t, serverID, req.ServerID)
			require.NotEmpty(t, req.RequestID)
			out := e.call(req.Method, req.Params)
			data, err := json.Marshal(out)
			require.NoError(t, err)
			require.NoError(t, checker.ValidateSDKUnstable("MessageMcpResponse", data), "the editor's answer is a MessageMcpResponse")
			p.Respond(m.ID, out)
		case acp.MethodSessionRequestPermission:
			p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
		default:
			t.Fatalf("unexpected request %s", m.Raw)
		}
	}
}

// Issue 29: MCP over ACP. The editor declares a server it provides
// (type "acp"); the agent advertises mcpCapabilities.acp, reaches the real
// server-everything through mcp/message on the ACP connection (its inner
// handshake, tools/list, tools/call: the same MCP client as for stdio
// and HTTP servers), offers its tools to the model, and the echo tool's
// result comes back to the model. Every mcp/message the agent sends is
// validated by acptest against the SDK 2.4.0 unstable schema.
func TestBinaryMCPOverACP(t *testing.T) {
	editor := startEditorMCP(t)
	checker, err := schemacheck.Load()
	require.NoError(t, err)
	model := newScriptedModel(t, "openai", modelCall{"mcp__everything__echo", map[string]any{"message": "hi over acp"}})
	p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}, "--model", "openai/test-model")
	init := p.Initialize(nil)
	require.True(t, init.AgentCapabilities.MCPCapabilities.ACP, "mcpCapabilities.acp")

	const serverID = "editor-everything-1"
	answer := editor.answer(t, p, serverID, checker)
	id := p.Request(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(),
		MCPServers: []acp.McpServer{{ACP: &acp.McpServerAcp{Name: "everything", ServerID: serverID}}}})
	resp, _ := awaitAnswering(t, p, id, answer)
	var ns acp.NewSessionResponse
	acptest.MustResult(t, resp, &ns)
	p.TakeCommands(ns.SessionID)
	assert.Contains(t, editor.methods, "tools/list", "the agent listed the editor's server's tools through ACP")

	r, werr := ext(t, p, acp.MethodExtSessionTools, map[string]any{"sessionId": ns.SessionID})
	require.Nil(t, werr)
	assert.Contains(t, fmt.Sprint(r["activeToolNames"]), "mcp__everything__echo", "offered to the model")

	id = p.Request(acp.MethodSessionPrompt, promptReq(ns.SessionID, "echo something"))
	resp, before := awaitAnswering(t, p, id, answer)
	acptest.MustResult(t, resp, nil)
	assert.Contains(t, editor.methods, "tools/call")
	text, status := toolResultText(t, before, "call_0")
	assert.Equal(t, "completed", status)
	assert.Contains(t, text, "Echo: hi over acp")
	assert.Contains(t, model.body(t, 1), "Echo: hi over acp", "the result reached the model")
}

// Issue 29: a server the client declares but does not answer for (the
// client refuses its mcp/message) fails like any MCP server: the session
// starts without its tools, and the user is told.
func TestBinaryMCPOverACPServerThatFails(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/default")
	p.Initialize(nil)
	id := p.Request(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(),
		MCPServers: []acp.McpServer{{ACP: &acp.McpServerAcp{Name: "gone", ServerID: "nobody"}}}})
	resp, before := awaitAnswering(t, p, id, func(m acptest.Message) {
		require.Equal(t, acp.MethodMCPMessage, m.Method)
		p.RespondError(m.ID, acp.CodeInvalidParams, "unknown serverId")
	})
	var ns acp.NewSessionResponse
	acptest.MustResult(t, resp, &ns)
	var told string
	for _, m := range append(before, p.Next(), p.Next()) {
		if m.Method == acp.MethodSessionUpdate {
			if c := m.Update(t).Update.AgentMessageChunk; c != nil {
				told += c.Content.Text.Text
			}
		}
	}
	assert.Contains(t, told, `The MCP server "gone" could not be used`)
}
