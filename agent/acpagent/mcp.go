package acpagent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/mcpclient"
	"github.com/acp-agent/acp-agent/policy"
)

// mcpConnectTimeout bounds the connection to each MCP server: session/new
// waits for them (concurrently), so a server that hangs must not hold the
// session for long.
const mcpConnectTimeout = 15 * time.Second

// connectMCP connects the session to the editor's MCP servers and
// registers their tools (source mcp). A server that fails does not fail
// the session: the user is told and the failure logged. The connections
// end with the session.
func (a *Agent) connectMCP(ctx context.Context, as *acpSession, servers []acp.McpServer, caps acp.ClientCapabilities) {
	s := as.s
	as.mu.Lock()
	as.mcpServers = servers
	as.mu.Unlock()
	if len(servers) == 0 {
		return
	}
	var holder struct{ m *mcpclient.Manager }
	ready := make(chan struct{})
	m, failures := mcpclient.Connect(ctx, servers, mcpclient.Options{
		ClientName: "acp-agent", ClientVersion: a.cfg.Version, Logger: a.log.With("session", s.ID()),
		ConnectTimeout: mcpConnectTimeout, Dir: s.CWD(),
		OnToolsChanged: func() {
			<-ready
			as.syncMCPTools(holder.m)
		},
		Elicit:              as.mcpElicit,
		ElicitForm:          caps.Elicitation != nil && caps.Elicitation.Form != nil,
		ElicitURL:           caps.Elicitation != nil && caps.Elicitation.URL != nil,
		ElicitationComplete: as.mcpElicitationComplete,
	})
	holder.m = m
	close(ready)
	as.mu.Lock()
	as.mcp = m
	as.mu.Unlock()
	as.syncMCPTools(m)
	for _, f := range failures {
		a.log.Warn("MCP server failed", "session", s.ID(), "server", f.Server, "error", f.Err)
		msg := fmt.Sprintf("The MCP server %q could not be used: %v. The session goes on without its tools.", f.Server, f.Err)
		if caps.Session != nil && caps.Session.Notices != nil {
			as.post(acp.SessionUpdate{Notice: &acp.Notice{Severity: acp.NoticeSeverityWarning, Title: "MCP server " + f.Server + " failed", Description: msg}})
		} else {
			as.post(acp.AgentMessageChunk(msg + "\n"))
		}
	}
}

// syncMCPTools makes the registry's MCP tools those the servers offer now:
// gone ones are unregistered (and so no longer offered to the model), new
// ones registered.
func (as *acpSession) syncMCPTools(m *mcpclient.Manager) {
	if m == nil {
		return
	}
	tools := as.s.Tools()
	want := map[string]mcpclient.Tool{}
	for _, t := range m.Tools() {
		want[t.QualifiedName] = t
	}
	for _, d := range tools.Descriptors() {
		if d.Source != agent.ToolSourceMCP {
			continue
		}
		if _, ok := want[d.Name]; !ok {
			tools.UnregisterMCP(d.Name)
		} else {
			delete(want, d.Name) // already registered
		}
	}
	for _, t := range want {
		tool := mcpTool(m, t)
		if err := tools.Register(tool); err != nil {
			// A schema our validator cannot compile: keep the tool, check
			// only that the arguments are an object.
			as.log.Warn("MCP tool schema not usable; arguments are checked as an object only", "tool", t.QualifiedName, "error", err)
			tool.Parameters = json.RawMessage(`{"type":"object"}`)
			if err := tools.Register(tool); err != nil {
				as.log.Error("registering an MCP tool", "tool", t.QualifiedName, "error", err)
			}
		}
	}
}

// mcpTool is an MCP server's tool as a session tool: named by server and
// tool in its title, asking permission like any tool with effects.
func mcpTool(m *mcpclient.Manager, t mcpclient.Tool) agent.Tool {
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return agent.Tool{
		Name: t.QualifiedName, Description: fmt.Sprintf("%s (tool %q of the MCP server %q)", desc, t.Name, t.Server),
		ShortDescription: fmt.Sprintf("MCP %s: %s", t.Server, t.Title),
		Parameters:       t.InputSchema, Source: agent.ToolSourceMCP,
		Describe: func(json.RawMessage) (agent.ToolCallInfo, error) {
			return agent.ToolCallInfo{Kind: agent.ToolKindOther, Title: fmt.Sprintf("%s: %s (MCP)", t.Server, t.Title), Action: policy.ActionOther}, nil
		},
		Run: func(ctx context.Context, args json.RawMessage) (agent.ToolResult, error) {
			res, err := m.Call(ctx, t.QualifiedName, args)
			if err != nil {
				return agent.ToolResult{}, err
			}
			out := agent.ToolResult{Text: res.Text, IsError: res.IsError}
			for _, b := range res.Content {
				if cb, ok := fromACPBlock(b); ok {
					out.Content = append(out.Content, agent.ToolContent{Block: &cb})
				}
				// Images go to the model too (the core drops types and
				// sizes it cannot send).
				if b.Image != nil {
					out.Images = append(out.Images, llm.Part{Type: llm.PartImage, MIMEType: b.Image.MimeType, Data: b.Image.Data})
				}
			}
			return out, nil
		},
	}
}

// closeMCP ends the session's MCP connections (servers are shut down).
func (as *acpSession) closeMCP() {
	as.mu.Lock()
	m := as.mcp
	as.mcp = nil
	as.mu.Unlock()
	if m != nil {
		if err := m.Close(); err != nil {
			as.log.Warn("closing MCP servers", "error", err)
		}
	}
}
